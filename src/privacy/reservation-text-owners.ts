// Whose sealed box holds each of a reservation's text fields: the one rule, read by both sides that
// need it (docs/AUDIT.md, right to erasure). Pure.
//
// A field is sealed with the key of the reservation's customer *when an event writes it* (creation
// writes them all, an update those its `changes` name, a cancellation or rejection the
// `cancellation_reason`, feedback the `feedback`), and stays in that customer's box when the
// reservation later changes hands or loses its customer, until an event writes it again.
//
// Two readers fold it over different inputs, and must agree (test/unit/reservation-text-owners):
//   - the sealing layer (src/privacy/sealing-event-store.ts) over the events *as stored* — a written
//     field that is not blank is no longer in `changes` but named in the box's paths — to seal a
//     move's `previous` values with the key of whoever's box held them (seal.ts, otherSubjects);
//   - the `reservations` projection (projections/reservation-erasure.ts) over the events *opened*
//     (every field back in place, erased or not), to know which fields an erasure blanks.

import type { ReservationStatus } from '../../commands/reservations/events';
import { CANCELED_STATUSES } from '../../commands/reservations/evolve';

/** What a guest (or a partner about the guest) wrote on a reservation: sealed in its events. */
export const RESERVATION_TEXT = ['allergies', 'custom_message', 'metadata', 'cancellation_reason'] as const;
/** The text fields whose box the rule follows: the above and the feedback (its comment and answer). */
export const TEXT_FIELDS = [...RESERVATION_TEXT, 'feedback'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** Text field → the customer whose box holds it (null: written in clear, nobody's). */
export type TextOwnerMap = Partial<Record<TextField, string | null>>;
/** A reservation stream folded for its text's owners (foldTextOwners). */
export interface TextOwnerState {
  /** The reservation's customer after the events folded. */
  customer: string | null;
  /** A field absent here is in the box of `customer`. */
  owners: TextOwnerMap;
}
export const NO_TEXT_OWNERS: TextOwnerState = { customer: null, owners: {} };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The dotted paths a stored event's boxes hold (its own and the others'), empty in clear. */
function boxedPaths(data: Record<string, unknown>): string[] {
  const sealed = data.sealed;
  if (!isObject(sealed) || !Array.isArray(sealed.paths)) return [];
  const out = sealed.paths.filter((p): p is string => typeof p === 'string');
  if (Array.isArray(sealed.more))
    for (const b of sealed.more)
      if (isObject(b) && Array.isArray(b.paths))
        for (const p of b.paths) if (typeof p === 'string') out.push(p);
  return out;
}

/**
 * The text fields an event of a reservation's stream writes (sealed with the key of the reservation's
 * customer after it), from the event as stored (sealed) or as opened (erased or not): the same answer.
 */
export function fieldsWritten(type: string, data: unknown): readonly TextField[] {
  if (!isObject(data)) return [];
  switch (type) {
    case 'ReservationCreated':
      return TEXT_FIELDS;
    case 'ReservationUpdated': {
      const changes = isObject(data.changes) ? data.changes : {};
      const boxed = 'sealed' in data ? boxedPaths(data) : [];
      return TEXT_FIELDS.filter((f) => Object.hasOwn(changes, f) || boxed.includes(`changes.${f}`));
    }
    case 'ReservationStatusChanged': // evolve sets the reason on these statuses only
      return CANCELED_STATUSES.includes(data.to as ReservationStatus) || data.to === 'REJECTED'
        ? ['cancellation_reason']
        : [];
    case 'ReservationFeedbackRecorded':
      return ['feedback'];
    default:
      return [];
  }
}

/** The reservation's customer after the event (its customer is never sealed: in clear either way). */
function customerAfter(customer: string | null, type: string, data: Record<string, unknown>): string | null {
  if (type === 'ReservationCreated') {
    const r = isObject(data.reservation) ? data.reservation : {};
    return typeof r.customer_id === 'string' ? r.customer_id : null;
  }
  if (type === 'ReservationUpdated') {
    const changes = isObject(data.changes) ? data.changes : {};
    if (Object.hasOwn(changes, 'customer_id'))
      return typeof changes.customer_id === 'string' ? changes.customer_id : null;
  }
  return customer;
}

/** The owner of a field in a state (a field it does not list is the reservation's customer's). */
export const ownerOf = (state: TextOwnerState, f: TextField): string | null =>
  Object.hasOwn(state.owners, f) ? (state.owners[f] ?? null) : state.customer;

/**
 * The reservation's customer and whose box holds each text field after this event of its stream
 * (pure; the event sealed, erased or in clear). Only fields whose box is not the customer's are
 * listed, so most reservations' states are `{customer, owners: {}}`.
 */
export function foldTextOwners(state: TextOwnerState, type: string, data: unknown): TextOwnerState {
  if (!isObject(data)) return state;
  const written = fieldsWritten(type, data);
  const customer = customerAfter(state.customer, type, data);
  if (written.length === 0 && customer === state.customer) return state;
  const owners: TextOwnerMap = {};
  for (const f of TEXT_FIELDS) {
    const owner = written.includes(f) ? customer : ownerOf(state, f);
    if (owner !== customer) owners[f] = owner;
  }
  return { customer, owners };
}

/** The customers (sorted, once each) other than the reservation's own whose boxes hold its text. */
export const otherOwnerIds = (state: TextOwnerState): string[] =>
  [...new Set(Object.values(state.owners).filter((c): c is string => typeof c === 'string'))].sort();
