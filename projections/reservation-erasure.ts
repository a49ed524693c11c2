// Erasure in the `reservations` read model (docs/AUDIT.md, right to erasure): when a customer is
// deleted, what their reservations hold that the guest wrote (the fields src/privacy/seal.ts seals
// in reservation events) is blanked at once, as a replay after the key's destruction would show it.
// The reservations projection calls this on CustomerDeleted; idempotent through each document's _pos.
//
// A field is sealed with the key of the reservation's customer *when it is written*; it stays in
// that customer's box after the reservation changes hands unless the change restates it (the rule,
// shared with the sealing layer: src/privacy/reservation-text-owners.ts)
// (commands/reservations/decide-update.ts restates the guest text when another customer takes the
// reservation, not when it loses its customer, and never the feedback). So a document keeps, beside
// the snapshot, `text_owners`: for each such field whose box is not the current customer's, whose it
// is (null: written in clear, nobody's), and `text_owner_ids`, those customers (indexed). Erasing X
// blanks the fields X's boxes hold: those of X's reservations `text_owners` gives to nobody else, and
// those `text_owners` gives to X on anyone's. Documents written before these fields (no
// `text_owners`) are blanked whole when they are X's, as before.

import type { Feedback } from '../commands/reservations/events';
import { evolveReservation, initialReservation } from '../commands/reservations/evolve';
import type { DocumentStore } from '../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../src/ports/event-store';
import {
  foldTextOwners,
  NO_TEXT_OWNERS,
  otherOwnerIds,
  ownerOf,
  TEXT_FIELDS,
  type TextField,
  type TextOwnerMap,
  type TextOwnerState,
} from '../src/privacy/reservation-text-owners';
import { RESERVATIONS, type ReservationDoc } from './reservations';

/** The reservation fields a guest wrote, as they read once erased. */
export const ERASED_RESERVATION_FIELDS = {
  allergies: null,
  custom_message: null,
  metadata: {},
  cancellation_reason: null,
} as const;

/**
 * What these text fields of a reservation read once erased (its feedback keeps its score, not its
 * words): one rule for the read model's erasure and the webhook stand-ins (src/webhooks/payloads.ts).
 */
export function erasedValues(
  feedback: Feedback | null | undefined,
  fields: Iterable<TextField>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields)
    if (f === 'feedback') out.feedback = feedback ? { ...feedback, comment: null, answer: null } : null;
    else out[f] = ERASED_RESERVATION_FIELDS[f];
  return out;
}

/** The sealed fields a document tracks the box of (the feedback's comment and answer: `feedback`). */
export type { TextField } from '../src/privacy/reservation-text-owners';

/** Which customer's box holds each field, where it is not the reservation's current customer. */
export type TextOwners = TextOwnerMap;

/**
 * `text_owners` and `text_owner_ids` of the document after `event`, or null when every field is in
 * the current customer's boxes. `before`: the document before it (null on creation). The rule is the
 * sealing layer's (src/privacy/reservation-text-owners.ts), folded over the opened event.
 */
export function textOwners(
  before: ReservationDoc | null,
  event: RecordedEvent,
): { byField: TextOwners; ids: string[] } | null {
  const state: TextOwnerState =
    before === null
      ? NO_TEXT_OWNERS
      : { customer: before.customer_id ?? null, owners: (before.text_owners ?? {}) as TextOwners };
  const next = foldTextOwners(state, event.type, event.data);
  if (Object.keys(next.owners).length === 0) return null;
  return { byField: next.owners, ids: otherOwnerIds(next) };
}

export async function eraseCustomerReservations(event: RecordedEvent, docs: DocumentStore): Promise<void> {
  const { customer_id: customerId, restaurant_id: restaurantId } = event.data as {
    customer_id?: unknown;
    restaurant_id?: unknown;
  };
  if (typeof customerId !== 'string' || typeof restaurantId !== 'string') return;
  const pos = positionToString(event.position);
  const col = docs.collection<ReservationDoc>(RESERVATIONS);
  const found = new Map<string, ReservationDoc>();
  for (const doc of await col.find({ restaurant_id: restaurantId, customer_id: customerId }))
    found.set(doc._id, doc);
  for (const doc of await col.find({ restaurant_id: restaurantId, text_owner_ids: customerId }))
    found.set(doc._id, doc);
  for (const doc of found.values()) {
    if (doc._pos >= pos) continue;
    const owners = doc.text_owners as TextOwners | undefined;
    const state = { customer: doc.customer_id ?? null, owners: owners ?? {} };
    const erased = (f: TextField) => ownerOf(state, f) === customerId;
    // A reservation without feedback gets none written.
    const fields = TEXT_FIELDS.filter((f) => erased(f) && (f !== 'feedback' || doc.feedback));
    const set: Record<string, unknown> = { _pos: pos, ...erasedValues(doc.feedback, fields) };
    await col.updateOne({ _id: doc._id, _pos: doc._pos }, { $set: set });
  }
}

const isBlank = (v: unknown): boolean =>
  v === null ||
  v === undefined ||
  v === '' ||
  (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);

/**
 * The customers whose boxes hold what a reservation shows after the event at revision `upTo` of its
 * stream (`history`, read from the start): for each field it holds (not blank: an erased field reads
 * blank), its current customer's, or another's where `text_owners` says so (a reservation taken from
 * its customer, feedback given before a change). The webhook publisher seals a body with one of them.
 */
export function textHolders(history: readonly RecordedEvent[], upTo: number): string[] {
  return [
    ...new Set(Object.values(textOwnersAt(history, upTo)).filter((c): c is string => typeof c === 'string')),
  ];
}

/**
 * The fields the reservation holds (not blank) after the event at revision `upTo`, each with the
 * customer whose box holds it (null: nobody's, written in clear). The webhook publisher erases, in the
 * stand-in of a body describing two customers, the fields of the one it is not sealed for.
 */
export function textOwnersAt(
  history: readonly RecordedEvent[],
  upTo: number,
): Partial<Record<TextField, string | null>> {
  let state = initialReservation;
  let doc: ReservationDoc | null = null;
  for (const e of history) {
    if (e.revision > upTo) break;
    state = evolveReservation(state, e);
    if (!state.r) continue;
    const owners = textOwners(doc, e);
    doc = { ...(state.r as ReservationDoc), ...(owners ? { text_owners: owners.byField } : {}) };
    if (!owners) delete doc.text_owners;
  }
  const out: Partial<Record<TextField, string | null>> = {};
  if (!doc) return out;
  const owners = (doc.text_owners ?? {}) as TextOwners;
  for (const f of TEXT_FIELDS) {
    const v = doc[f];
    const held =
      f === 'feedback'
        ? v && !(isBlank((v as Feedback).comment) && isBlank((v as Feedback).answer))
        : !isBlank(v);
    if (!held) continue;
    out[f] = ownerOf({ customer: doc.customer_id ?? null, owners }, f);
  }
  return out;
}
