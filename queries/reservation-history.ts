// GET /reservations/{id}/history: a reservation's events as its partner may see them. Actors are
// told relative to the caller (src/audit/actors.ts): never another partner's identity, and request
// ids only of the caller's own requests. Contact fields only with RESERVATIONS_READ_SENSITIVE.

import { customerStream } from '../commands/customers/events';
import { evolveCustomer, initialCustomer } from '../commands/customers/state';
import { asPartnerSees, isDistinctList } from '../commands/reservations/distinct-lists';
import {
  CUSTOMER_RELINKED,
  type Payment,
  type ReservationStatus,
  reservationStream,
} from '../commands/reservations/events';
import { CANCELED_STATUSES, evolveReservation, initialReservation } from '../commands/reservations/evolve';
import { API_KEYS, type ApiKeyDoc } from '../projections/api-keys';
import { auditorActor, PARTNER_ACTOR_LABELS, type PartnerActorType, partnerActor } from '../src/audit/actors';
import { changesOf, changesWithoutContact, type FieldChange } from '../src/audit/changes';
import { notFound } from '../src/core/errors';
import type { DocumentStore } from '../src/ports/document-store';
import type { EventStore, RecordedEvent } from '../src/ports/event-store';
import { partnerCustomersForReservations } from './customers';

export const HISTORY_ACTIONS = [
  'CREATED',
  'UPDATED',
  'STATUS_CHANGED',
  'PAYMENT_RECORDED',
  'FEEDBACK_RECORDED',
] as const;
export type HistoryAction = (typeof HISTORY_ACTIONS)[number];

const ACTIONS: Record<string, HistoryAction> = {
  ReservationCreated: 'CREATED',
  ReservationUpdated: 'UPDATED',
  ReservationStatusChanged: 'STATUS_CHANGED',
  ReservationPaymentRecorded: 'PAYMENT_RECORDED',
  ReservationFeedbackRecorded: 'FEEDBACK_RECORDED',
  // The customer it showed was merged into another or deleted: `customer_id` from → to, and `reason`.
  ReservationCustomerRelinked: 'UPDATED',
};

/** Fields of the events that describe the write, not the reservation. */
const HIDDEN_FIELDS = new Set(['actor_kind', 'reservation_id']);

/**
 * No position in the event log: its gaps between two changes of one reservation would tell a partner
 * how much every other restaurant wrote meanwhile. The revision counts this reservation's changes only.
 */
export interface HistoryItem {
  revision: number;
  occurred_at: string;
  action: HistoryAction;
  actor: { type: PartnerActorType; label: string };
  request_id: string | null;
  changes: FieldChange[];
}

export async function reservationHistory(
  events: EventStore,
  docs: DocumentStore,
  restaurantId: string,
  id: string,
  caller: { credential: ApiKeyDoc; sensitive: boolean },
): Promise<HistoryItem[]> {
  const visible = await docs.collection('reservations').findOne({ _id: id, restaurant_id: restaurantId });
  if (!visible) throw notFound(`reservation ${id}`);
  const stream = (await events.readStream(reservationStream(id))).filter(
    (e) =>
      ACTIONS[e.type] !== undefined && (e.data as { restaurant_id?: unknown }).restaurant_id === restaurantId,
  );
  const own = await ownCredentials(docs, caller.credential, stream);
  // The payment rows before and after each event: a recorded payment is told as a change of `payments`.
  let state = initialReservation;
  const items = stream.map((e) => {
    const before = state.r?.payments ?? [];
    state = evolveReservation(state, e);
    return item(e, id, own, caller.sensitive, { before, after: state.r?.payments ?? [] });
  });
  return withoutDraftCustomers(docs, restaurantId, await withoutDraftsRelinked(events, stream, items));
}

/**
 * A customer merged away or deleted is no longer in the read models, so the rule below cannot tell
 * whether it was a draft (a merged-away id resolves to its survivor): a customer change recorded by
 * the merge or deletion (ReservationCustomerRelinked) asks the customer's own log, and names a draft
 * `null` on its `from` side, as the reservation showed it.
 */
async function withoutDraftsRelinked(
  events: EventStore,
  stream: RecordedEvent[],
  items: HistoryItem[],
): Promise<HistoryItem[]> {
  const drafts = new Set<string>();
  for (const e of stream) {
    if (e.type !== CUSTOMER_RELINKED) continue;
    const was = (e.data as { previous?: { customer_id?: unknown } }).previous?.customer_id;
    if (typeof was !== 'string' || drafts.has(was)) continue;
    const customer = (await events.readStream(customerStream(was))).reduce(evolveCustomer, initialCustomer);
    if (customer.draft) drafts.add(was);
  }
  if (drafts.size === 0) return items;
  return items.map((item, i) =>
    stream[i]?.type === CUSTOMER_RELINKED
      ? {
          ...item,
          changes: item.changes.map((c) =>
            c.field === 'customer_id' && typeof c.from === 'string' && drafts.has(c.from)
              ? { ...c, from: null }
              : c,
          ),
        }
      : item,
  );
}

/**
 * A customer flagged as a messaging channel's draft is hidden from partners (docs/customers.md): the
 * reservation shows `customer: null`, GET /customers/{id} answers 404. Its id is not told here either:
 * a `customer_id` change naming a draft shows null on that side, as the reservation does. A draft
 * once published shows again, like everywhere else (the presentation's rule: partnerCustomersForReservations).
 */
async function withoutDraftCustomers(
  docs: DocumentStore,
  restaurantId: string,
  items: HistoryItem[],
): Promise<HistoryItem[]> {
  const ids = new Set<string>();
  for (const i of items)
    for (const c of i.changes)
      if (c.field === 'customer_id') for (const v of [c.from, c.to]) if (typeof v === 'string') ids.add(v);
  if (ids.size === 0) return items;
  const { hidden } = await partnerCustomersForReservations(docs, restaurantId, [...ids]);
  if (hidden.size === 0) return items;
  const hide = (v: unknown) => (typeof v === 'string' && hidden.has(v) ? null : v);
  return items.map((i) =>
    i.changes.some((c) => c.field === 'customer_id')
      ? {
          ...i,
          changes: i.changes.map((c) => {
            if (c.field !== 'customer_id') return c;
            const out: FieldChange = { field: c.field };
            if ('from' in c) out.from = hide(c.from);
            if ('to' in c) out.to = hide(c.to);
            return out;
          }),
        }
      : i,
  );
}

/**
 * The credentials that count as "this integration": the caller's own, and for an OAuth token the
 * other tokens of the same application at this restaurant (a reconnection issues a new one).
 */
async function ownCredentials(
  docs: DocumentStore,
  me: ApiKeyDoc,
  events: RecordedEvent[],
): Promise<string[]> {
  const own = [me._id];
  if (!me.application) return own;
  const others = new Set<string>();
  for (const e of events) {
    const a = auditorActor(e.metadata.actor);
    if (a.kind === 'credential' && a.id !== null && a.id !== me._id) others.add(a.id);
  }
  if (others.size === 0) return own;
  const keys = await docs
    .collection<ApiKeyDoc>(API_KEYS)
    .find({ _id: { $in: [...others] }, restaurant_id: me.restaurant_id });
  for (const k of keys) if (k.application?.id === me.application.id) own.push(k._id);
  return own;
}

/**
 * A recorded payment's event holds the row (`payment`); the reservation shows `payments`, so the
 * history tells the list before and after.
 * A status change's event says `reason`; the reservation calls what a cancellation or rejection sets
 * `cancellation_reason`, and the history names fields as the reservation does (its last `to` is the
 * value the reservation shows). Other status changes carry no reason (always null, changing no field):
 * left out.
 */
function asReservationFields(
  e: RecordedEvent,
  changes: FieldChange[],
  payments: { before: Payment[]; after: Payment[] },
): FieldChange[] {
  // The event names the one row it records (`payment`); the reservation shows the list.
  if (e.type === 'ReservationPaymentRecorded')
    return changes.map((c) =>
      c.field === 'payment' ? { field: 'payments', from: payments.before, to: payments.after } : c,
    );
  if (e.type === 'ReservationCreated' || e.type === 'ReservationUpdated') return changes.flatMap(asShown);
  if (e.type !== 'ReservationStatusChanged') return changes;
  const to = (e.data as { to: ReservationStatus }).to;
  const setsReason = CANCELED_STATUSES.includes(to) || to === 'REJECTED';
  return changes.flatMap((c) => {
    if (c.field !== 'reason') return [c];
    if (setsReason) return [{ ...c, field: 'cancellation_reason' }];
    return c.to === null || c.to === undefined ? [] : [c];
  });
}

/**
 * A tags or attached_files list as the reservation shows it (without the repeats an older one stored);
 * a change that was only a repeat dropped is none.
 */
function asShown(c: FieldChange): FieldChange[] {
  if (!isDistinctList(c.field)) return [c];
  const out: FieldChange = { field: c.field };
  if ('from' in c) out.from = asPartnerSees(c.field, c.from);
  if ('to' in c) out.to = asPartnerSees(c.field, c.to);
  if ('from' in c && 'to' in c && JSON.stringify(out.from) === JSON.stringify(out.to)) return [];
  return [out];
}

function item(
  e: RecordedEvent,
  id: string,
  own: string[],
  sensitive: boolean,
  payments: { before: Payment[]; after: Payment[] },
): HistoryItem {
  const type = partnerActor(e.metadata.actor, own);
  const all = asReservationFields(
    e,
    changesOf(e as { type: string; data: Record<string, unknown> }, id).filter(
      (c) => !HIDDEN_FIELDS.has(c.field),
    ),
    payments,
  );
  return {
    revision: e.revision,
    occurred_at: e.created,
    action: ACTIONS[e.type]!,
    actor: { type, label: PARTNER_ACTOR_LABELS[type] },
    request_id:
      type === 'THIS_INTEGRATION' && typeof e.metadata.request_id === 'string' ? e.metadata.request_id : null,
    changes: sensitive ? all : changesWithoutContact(all),
  };
}
