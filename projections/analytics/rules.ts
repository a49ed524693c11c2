// The rules of the analytics read models, as pure functions (docs/analytics.md says the same in
// prose): what a status counts as, what a booking's lead time is and which bucket holds it, how a
// median or p90 is read from a bucket histogram, how party sizes are grouped.
import type { ReservationSource, ReservationStatus } from '../../commands/reservations/events';

/** What a reservation's status means for the figures. */
export type Outcome = 'pending' | 'confirmed' | 'honoured' | 'no_show' | 'canceled' | 'rejected';

export function outcomeOf(status: ReservationStatus): Outcome {
  switch (status) {
    case 'PENDING':
    case 'PENDING_PAYMENT':
      return 'pending';
    case 'CONFIRMED':
    case 'CONFIRMED_PENDING_PAYMENT':
    case 'MANUALLY_CONFIRMED':
    case 'DOUBLE_CONFIRMED':
      return 'confirmed';
    case 'SHOWED_UP':
    case 'SEATED':
    case 'PARTIALLY_SEATED':
    case 'SEATED_FOR_DRINKS':
    case 'DONE':
      return 'honoured';
    case 'NO_SHOW':
      return 'no_show';
    case 'CANCELED_BY_CUSTOMER':
    case 'CANCELED_BY_RESTAURANT':
      return 'canceled';
    case 'REJECTED':
      return 'rejected';
  }
}

/**
 * No-shows among the reservations whose outcome is known (honoured or no-show); null when there is
 * none. Pending, confirmed, canceled and rejected reservations are not in the denominator: a
 * reservation still to come has not had the chance to be a no-show.
 */
export function noShowRate(noShows: number, honoured: number): number | null {
  const known = noShows + honoured;
  return known === 0 ? null : round4(noShows / known);
}

/** Canceled (by the customer or the restaurant) among every reservation of the day; null when none. */
export function cancellationRate(canceled: number, reservations: number): number | null {
  return reservations === 0 ? null : round4(canceled / reservations);
}

export const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * Lead time in whole minutes: from when the booking was made (the reservation's created_at) to its
 * start (start_at, which a move changes). Never negative: a booking entered after its start (a
 * walk-in typed in late) has lead time 0.
 */
export function leadTimeMinutes(createdAt: string, startAt: string): number {
  const ms = Date.parse(startAt) - Date.parse(createdAt);
  if (!Number.isFinite(ms) || ms <= 0) return 0;
  return Math.floor(ms / 60_000);
}

/** Walk-ins are booked as they arrive: their lead time says nothing about booking habits. */
export const countsForLeadTime = (source: ReservationSource) => source !== 'WALK_IN';

const H = 60;
const D = 24 * H;
/**
 * Lower bounds (minutes, inclusive) of the lead-time buckets; each bucket runs to the next bound
 * (exclusive), the last one has no upper bound. The resolution is finer where most bookings are:
 * 15 min under an hour, hours under a day, days under a week, then weeks and months.
 */
export const LEAD_TIME_BUCKETS: readonly number[] = [
  0,
  15,
  30,
  1 * H,
  2 * H,
  4 * H,
  8 * H,
  12 * H,
  1 * D,
  2 * D,
  3 * D,
  4 * D,
  5 * D,
  6 * D,
  7 * D,
  10 * D,
  14 * D,
  21 * D,
  30 * D,
  45 * D,
  60 * D,
  90 * D,
  180 * D,
  365 * D,
];

/** Index of the bucket holding `minutes` (minutes ≥ 0). */
export function leadTimeBucket(minutes: number): number {
  let lo = 0;
  let hi = LEAD_TIME_BUCKETS.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((LEAD_TIME_BUCKETS[mid] as number) <= minutes) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The histogram key of a bucket: its lower bound in minutes, as a string (a MongoDB field name). */
const BUCKET_KEYS: readonly string[] = LEAD_TIME_BUCKETS.map(String);
export const bucketKey = (index: number) => BUCKET_KEYS[index] as string;

/** The value a percentile read from the histogram reports for a bucket: its upper bound (exclusive), or the lower bound of the open last bucket. */
export function bucketValue(index: number): number {
  return (LEAD_TIME_BUCKETS[index + 1] ?? LEAD_TIME_BUCKETS[index]) as number;
}

/**
 * The q-quantile (0 < q ≤ 1) of a lead-time histogram by the nearest-rank method: the bucket holding
 * the ⌈q·n⌉-th smallest lead time, reported as that bucket's upper bound (so "median ≤ 2 h" reads
 * "half the bookings were made at most 2 hours ahead"; the last, open bucket reports its lower bound).
 * Null for an empty histogram. The exact quantile of the raw lead times always lies in the bucket
 * this reports.
 */
export function histogramQuantile(histogram: Readonly<Record<string, number>>, q: number): number | null {
  const i = histogramQuantileBucket(histogram, q);
  return i === null ? null : bucketValue(i);
}

/**
 * The index of the bucket `histogramQuantile` reads its value from, or null for an empty histogram.
 * The last bucket is open: its value (365 days) means "365 days or more", where the bucket before's
 * same value means "at most 365 days" (`isOpenBucket`).
 */
export function histogramQuantileBucket(
  histogram: Readonly<Record<string, number>>,
  q: number,
): number | null {
  // Keys are canonical integers: read by number (no string made per bucket and lookup).
  const h = histogram as unknown as Readonly<Record<number, number>>;
  let n = 0;
  for (let i = 0; i < LEAD_TIME_BUCKETS.length; i++) n += h[LEAD_TIME_BUCKETS[i] as number] ?? 0;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(q * n));
  let seen = 0;
  for (let i = 0; i < LEAD_TIME_BUCKETS.length; i++) {
    seen += h[LEAD_TIME_BUCKETS[i] as number] ?? 0;
    if (seen >= rank) return i;
  }
  return LEAD_TIME_BUCKETS.length - 1;
}

/** The last bucket has no upper bound: a quantile there is "at least" its value, not "at most". */
export const isOpenBucket = (index: number | null) => index === LEAD_TIME_BUCKETS.length - 1;

/** Party sizes 1–10 each have their own group; then 11-20 and 21+. */
export function partySizeGroup(partySize: number): string {
  if (partySize <= 10) return String(Math.max(1, partySize));
  if (partySize <= 20) return '11-20';
  return '21+';
}
export const PARTY_SIZE_GROUPS: readonly string[] = [
  ...Array.from({ length: 10 }, (_, i) => String(i + 1)),
  '11-20',
  '21+',
];

/**
 * New or returning guest, decided once, when a reservation first names a customer: `returning` when
 * that customer (or a customer since merged into it) already had a reservation at this restaurant
 * earlier in the log, whatever became of it; `new` otherwise. A reservation without a customer is
 * `unknown`.
 */
export type GuestKind = 'new' | 'returning' | 'unknown';
export const guestKind = (earlierReservations: number): GuestKind =>
  earlierReservations > 0 ? 'returning' : 'new';
