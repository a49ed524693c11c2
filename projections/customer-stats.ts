// Customer stats (spec §2.2) from reservation events. Each reservation keeps one row with what the
// stats need; a customer's stats are recomputed from its rows after every change that can move them
// (an event that leaves its row's owner and what the row counts as unchanged cannot), so applying an
// event twice, or in a rebuild, lands on the same figures. Stats never touch updated_at or the sync stamp.
import {
  RELEASED_STATUSES,
  type ReservationEvent,
  type ReservationSnapshot,
  type ReservationStatus,
} from '../commands/reservations/events';
import type { DocumentStore } from '../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../src/ports/event-store';
import {
  CUSTOMER_MERGES,
  CUSTOMER_RESERVATIONS,
  CUSTOMERS,
  type CustomerDoc,
  type CustomerStats,
  EMPTY_STATS,
} from './customer-docs';

export interface ReservationRow {
  _id: string;
  restaurant_id: string;
  /** As the reservation names it. */
  customer_id: string | null;
  /** Whose stats it counts in: customer_id, or the customer that absorbed it in a merge. */
  owner_id: string | null;
  /** The owner the last event took it from, whose stats that event also changed. */
  left_owner_id: string | null;
  status: ReservationStatus;
  party_size: number;
  service_date: string;
  /**
   * The restaurant's calendar date of start_at (spec §2.2 last_reservation_date), which differs from
   * service_date after midnight. Rows written before it existed lack it until the read model is
   * rebuilt; they count their service_date meanwhile.
   */
  calendar_date?: string;
  total_amount_paid: number;
  feedback_rating: number | null;
  _pos: string;
  [k: string]: unknown;
}

export const RESERVATION_EVENT_TYPES = [
  'ReservationCreated',
  'ReservationUpdated',
  'ReservationStatusChanged',
  'ReservationFeedbackRecorded',
  'ReservationPaymentRecorded',
] as const;

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Counted reservations are neither canceled nor rejected (upcoming and no-shows included); amounts,
 * covers and the last date are over those. Feedback counts wherever it was given.
 */
/** What computeStats reads of a row. */
type StatsFields = Pick<
  ReservationRow,
  'status' | 'party_size' | 'service_date' | 'calendar_date' | 'total_amount_paid' | 'feedback_rating'
>;

export function computeStats(rows: readonly StatsFields[]): CustomerStats {
  if (rows.length === 0) return EMPTY_STATS;
  let count = 0;
  let noShows = 0;
  let paid = 0;
  let covers = 0;
  let last: string | null = null;
  let feedbacks = 0;
  let ratingSum = 0;
  for (const r of rows) {
    if (r.feedback_rating !== null) {
      feedbacks++;
      ratingSum += r.feedback_rating;
    }
    if (RELEASED_STATUSES.includes(r.status)) continue;
    count++;
    if (r.status === 'NO_SHOW') noShows++;
    paid += r.total_amount_paid;
    covers += r.party_size;
    const date = r.calendar_date ?? r.service_date;
    if (last === null || date > last) last = date;
  }
  return {
    reservation_count: count,
    confirmed_count: count - noShows,
    no_show_count: noShows,
    feedback_count: feedbacks,
    average_feedback_score: feedbacks ? round2(ratingSum / feedbacks) : null,
    total_amount_paid: paid,
    average_basket: covers ? round2(paid / covers) : 0,
    last_reservation_date: last,
  };
}

/** The customer whose stats include `customerId` (itself unless it was merged away). */
export async function ownerOf(docs: DocumentStore, customerId: string | null): Promise<string | null> {
  if (customerId === null) return null;
  const merge = await docs
    .collection<{ _id: string; into: string }>(CUSTOMER_MERGES)
    .findOne({ _id: customerId });
  return merge?.into ?? customerId;
}

export async function recomputeStats(
  docs: DocumentStore,
  restaurantId: string,
  ownerId: string,
): Promise<CustomerStats> {
  const rows = await docs
    .collection<ReservationRow>(CUSTOMER_RESERVATIONS)
    .find({ restaurant_id: restaurantId, owner_id: ownerId });
  const stats = computeStats(rows);
  await docs.collection<CustomerDoc>(CUSTOMERS).updateOne({ _id: ownerId }, { $set: { stats } });
  return stats;
}

type RowFields = Partial<
  Pick<
    ReservationRow,
    | 'customer_id'
    | 'status'
    | 'party_size'
    | 'service_date'
    | 'calendar_date'
    | 'total_amount_paid'
    | 'feedback_rating'
  >
>;

/**
 * The calendar date of a start_at the write side wrote: it carries the restaurant's offset at that
 * instant (formatInstant), so its date part is the restaurant's calendar date.
 */
export const calendarDateOf = (startAt: string): string => startAt.slice(0, 10);

function fromSnapshot(s: Partial<ReservationSnapshot>): RowFields {
  const f: RowFields = {};
  if (s.customer_id !== undefined) f.customer_id = s.customer_id;
  if (s.status !== undefined) f.status = s.status;
  if (s.party_size !== undefined) f.party_size = s.party_size;
  if (s.service_date !== undefined) f.service_date = s.service_date;
  if (s.start_at !== undefined) f.calendar_date = calendarDateOf(s.start_at);
  if (s.total_amount_paid !== undefined) f.total_amount_paid = s.total_amount_paid;
  if (s.feedback !== undefined) f.feedback_rating = s.feedback?.rating ?? null;
  return f;
}

/** What an event changes in its reservation's row (absolute values only). */
export function rowChanges(event: ReservationEvent): RowFields {
  switch (event.type) {
    case 'ReservationCreated':
      return fromSnapshot(event.data.reservation);
    case 'ReservationUpdated':
      return fromSnapshot(event.data.changes);
    case 'ReservationStatusChanged':
      return { status: event.data.to };
    case 'ReservationFeedbackRecorded':
      return { feedback_rating: event.data.feedback.rating };
    case 'ReservationPaymentRecorded':
      return { total_amount_paid: event.data.total_amount_paid };
    default:
      return {};
  }
}

/** Applies one reservation event: updates its row, then the stats of the customers it leaves and joins. */
export async function applyReservationEvent(docs: DocumentStore, recorded: RecordedEvent): Promise<void> {
  const event = { type: recorded.type, data: recorded.data } as unknown as ReservationEvent;
  const { reservation_id: id, restaurant_id: restaurantId } = event.data;
  const rows = docs.collection<ReservationRow>(CUSTOMER_RESERVATIONS);
  const pos = positionToString(recorded.position);
  const before = await rows.findOne({ _id: id });
  if (before && before._pos >= pos) {
    // Redelivered: the row is written, but the process may have died before the stats were.
    if (before._pos === pos)
      await recomputeOwners(docs, restaurantId, [before.left_owner_id, before.owner_id]);
    return;
  }
  // A reservation's later events without its creation (abandoned creations) have nothing to count.
  if (!before && event.type !== 'ReservationCreated') return;
  const changes = rowChanges(event);
  if (before && Object.keys(changes).length === 0) return;
  const customerId = changes.customer_id !== undefined ? changes.customer_id : (before?.customer_id ?? null);
  const owner = await ownerOf(docs, customerId);
  const next = {
    ...(before ?? {}),
    ...changes,
    _id: id,
    restaurant_id: restaurantId,
    customer_id: customerId,
    owner_id: owner,
    left_owner_id: before && before.owner_id !== owner ? before.owner_id : null,
    _pos: pos,
  } as ReservationRow;
  await rows.replaceOne({ _id: id }, next, { upsert: true });
  // Same owner and the row counts as it did (a seating, a finish, an update of other fields): the
  // owner's rows give the stats already stored, which every change of them recomputed (a store
  // query and a write per event, skipped here).
  if (before && before.owner_id === owner && sameContribution(before, next)) return;
  await recomputeOwners(docs, restaurantId, [next.left_owner_id, owner]);
}

/** Whether two rows add the same to their owner's stats: computeStats reads nothing else of a row. */
export function sameContribution(a: StatsFields, b: StatsFields): boolean {
  return (
    RELEASED_STATUSES.includes(a.status) === RELEASED_STATUSES.includes(b.status) &&
    (a.status === 'NO_SHOW') === (b.status === 'NO_SHOW') &&
    a.party_size === b.party_size &&
    a.total_amount_paid === b.total_amount_paid &&
    a.feedback_rating === b.feedback_rating &&
    (a.calendar_date ?? a.service_date) === (b.calendar_date ?? b.service_date)
  );
}

async function recomputeOwners(
  docs: DocumentStore,
  restaurantId: string,
  owners: (string | null)[],
): Promise<void> {
  for (const o of new Set(owners)) if (o !== null) await recomputeStats(docs, restaurantId, o);
}
