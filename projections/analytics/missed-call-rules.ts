// Missed-call analytics, pure: what one call counts as (its facts), how each event of the call moves
// its day's counters (a `$inc`), and when a reservation counts as following a call. Schema:
// docs/analytics.md, "missed calls".
//
// A call belongs to the restaurant's local calendar day of `occurred_at` (when the phone rang).
import type { RecordOutcome } from '../../commands/missed-calls/events';
import type { Inc } from './webhook-rules';

export interface CallFacts {
  restaurant_id: string;
  date: string;
  occurred_at: string;
  /** Where the call stands: a final outcome, PENDING (being processed) or FAILED (waiting for a retry). */
  outcome: RecordOutcome;
  customer_id: string | null;
}

/** A reservation created this long after a call, for the caller's customer, counts as following it. */
export const FOLLOW_UP_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

export const missedCallDayId = (f: Pick<CallFacts, 'restaurant_id' | 'date'>) =>
  `${f.restaurant_id}|${f.date}`;

export function reported(
  restaurantId: string,
  date: string,
  occurredAt: string,
): { facts: CallFacts; inc: Inc } {
  return {
    facts: {
      restaurant_id: restaurantId,
      date,
      occurred_at: occurredAt,
      outcome: 'PENDING',
      customer_id: null,
    },
    inc: { reported: 1, 'by_outcome.PENDING': 1 },
  };
}

function moveOutcome(f: CallFacts, to: RecordOutcome, inc: Inc): { facts: CallFacts; inc: Inc } {
  if (to !== f.outcome) {
    inc[`by_outcome.${f.outcome}`] = (inc[`by_outcome.${f.outcome}`] ?? 0) - 1;
    inc[`by_outcome.${to}`] = (inc[`by_outcome.${to}`] ?? 0) + 1;
  }
  return { facts: { ...f, outcome: to }, inc };
}

/**
 * One event of the call after its report (the same outcomes as the call record, commands/missed-calls/
 * decide.ts `evolveCall`): a match counts the caller as a known customer or a new one (and whether
 * they already had an upcoming reservation), a message request counts an attempt, the rest move the
 * call between outcomes.
 */
export function callStep(
  f: CallFacts,
  type: string,
  d: Record<string, unknown>,
): { facts: CallFacts; inc: Inc } {
  switch (type) {
    case 'MissedCallMatched': {
      if (f.customer_id !== null) return { facts: f, inc: {} };
      const inc: Inc = { matched: 1, [d.customer_created ? 'new_customers' : 'known_customers']: 1 };
      if (d.reservation_id) inc.with_upcoming_reservation = 1;
      return { facts: { ...f, customer_id: d.customer_id as string }, inc };
    }
    case 'MissedCallSkipped':
      return moveOutcome(f, d.outcome as RecordOutcome, {});
    case 'MessageRequested':
      return moveOutcome(f, 'PENDING', { messages_requested: 1 });
    case 'MessageSent':
      return moveOutcome(f, 'SENT', {});
    case 'MessageFailed':
      return moveOutcome(f, d.retryable ? 'FAILED' : ((d.outcome as RecordOutcome | null) ?? 'FAILED'), {});
    case 'MessageUnconfirmed':
      return moveOutcome(f, 'SEND_UNCONFIRMED', {});
    default:
      return { facts: f, inc: {} };
  }
}

/** The latest call of one customer at one restaurant, and whether a reservation already followed it. */
export interface CallerFacts {
  restaurant_id: string;
  customer_id: string;
  call_id: string;
  date: string;
  occurred_at: string;
  followed: boolean;
}

/** A match names the caller: this call becomes their latest unless a later call already is. */
export function latestCall(
  current: CallerFacts | null,
  callId: string,
  f: CallFacts,
  customerId: string,
): CallerFacts | null {
  if (current && (current.occurred_at > f.occurred_at || current.call_id === callId)) return null;
  return {
    restaurant_id: f.restaurant_id,
    customer_id: customerId,
    call_id: callId,
    date: f.date,
    occurred_at: f.occurred_at,
    followed: false,
  };
}

/**
 * A reservation created for the caller's customer at the restaurant, at or after the latest call and
 * within FOLLOW_UP_WINDOW_MS of it, counts once as `followed_by_reservation` on that call's day. This
 * is "followed by", not "caused by": the events do not say why the guest booked.
 */
export function follows(caller: CallerFacts | null, reservationCreatedAt: string): boolean {
  if (!caller || caller.followed) return false;
  const t = Date.parse(reservationCreatedAt);
  const call = Date.parse(caller.occurred_at);
  return t >= call && t - call <= FOLLOW_UP_WINDOW_MS;
}

export const MISSED_CALL_SCHEMA_VERSION = 1;

/** One document of `analytics_missed_call_days`. */
export interface MissedCallDay {
  restaurant_id: string;
  date: string;
  schema_version: number;
  reported: number;
  /** Calls per outcome, as they stand (RecordOutcome); absent = 0. */
  by_outcome: Partial<Record<RecordOutcome, number>>;
  matched: number;
  known_customers: number;
  new_customers: number;
  with_upcoming_reservation: number;
  messages_requested: number;
  followed_by_reservation: number;
}

export function emptyMissedCallDay(k: Pick<CallFacts, 'restaurant_id' | 'date'>): MissedCallDay {
  return {
    restaurant_id: k.restaurant_id,
    date: k.date,
    schema_version: MISSED_CALL_SCHEMA_VERSION,
    reported: 0,
    by_outcome: {},
    matched: 0,
    known_customers: 0,
    new_customers: 0,
    with_upcoming_reservation: 0,
    messages_requested: 0,
    followed_by_reservation: 0,
  };
}
