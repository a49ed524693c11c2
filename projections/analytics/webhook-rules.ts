// Webhook delivery analytics, pure: what one delivery counts as (its facts), how each delivery event
// changes them and which counters of its day move (a `$inc`), and the figures read from a day's
// counters (success rate, time to delivery). Schema: docs/analytics.md, "webhook deliveries".
//
// A delivery belongs to the restaurant's local calendar day on which it was scheduled (the fan-out's
// `at`), whatever day its attempts ran. Test deliveries (POST /webhook-endpoints/{id}/test) are left out.

/** Where a delivery stands for the figures. `delivered` is for good: a resend after it only adds attempts. */
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'canceled';
export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'delivered', 'failed', 'canceled'];

export interface DeliveryFacts {
  restaurant_id: string;
  endpoint_id: string;
  /** Local calendar day of the scheduling (YYYY-MM-DD). */
  date: string;
  scheduled_at: string;
  state: DeliveryState;
}

/** Counter increments of one day document (dotted field → amount). */
export type Inc = Record<string, number>;

/** Time to delivery buckets (lower bounds in milliseconds, inclusive; the last is open). */
const S = 1000;
const M = 60 * S;
const H = 60 * M;
export const DELIVERY_TIME_BUCKETS: readonly number[] = [
  0,
  250,
  500,
  S,
  2 * S,
  5 * S,
  10 * S,
  30 * S,
  M,
  5 * M,
  15 * M,
  H,
  4 * H,
  12 * H,
  24 * H,
  3 * 24 * H,
];

/** Index of the bucket holding `ms` (clamped at 0). */
export function bucketOf(buckets: readonly number[], value: number): number {
  let i = 0;
  while (i + 1 < buckets.length && (buckets[i + 1] as number) <= value) i++;
  return i;
}

/**
 * Nearest-rank q-quantile of a histogram keyed by bucket lower bounds: the bucket holding the
 * ⌈q·n⌉-th smallest value, reported as its upper bound (the open last bucket: its lower bound).
 * Null for an empty histogram. Same method as the lead time's `histogramQuantile`.
 */
export function quantileOf(
  buckets: readonly number[],
  histogram: Readonly<Record<string, number>>,
  q: number,
): number | null {
  let n = 0;
  for (const b of buckets) n += histogram[String(b)] ?? 0;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(q * n));
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += histogram[String(buckets[i])] ?? 0;
    if (seen >= rank) return (buckets[i + 1] ?? buckets[i]) as number;
  }
  return buckets[buckets.length - 1] as number;
}

/** `_id` of a webhook day document. */
export const webhookDayId = (f: Pick<DeliveryFacts, 'restaurant_id' | 'date' | 'endpoint_id'>) =>
  `${f.restaurant_id}|${f.date}|${f.endpoint_id}`;

/** A delivery just scheduled: pending, counted once. */
export function scheduled(
  restaurantId: string,
  endpointId: string,
  date: string,
  at: string,
): { facts: DeliveryFacts; inc: Inc } {
  return {
    facts: { restaurant_id: restaurantId, endpoint_id: endpointId, date, scheduled_at: at, state: 'pending' },
    inc: { deliveries: 1, pending: 1 },
  };
}

function move(inc: Inc, from: DeliveryState, to: DeliveryState): void {
  if (from === to) return;
  inc[from] = (inc[from] ?? 0) - 1;
  inc[to] = (inc[to] ?? 0) + 1;
}

export interface Attempt {
  attempt: number;
  outcome: 'succeeded' | 'retry' | 'failed';
  /** When the attempt started, and how long it took. */
  at: string;
  duration_ms: number;
}

/**
 * One recorded attempt. Every attempt counts (`attempts`, `failed_attempts` when it did not succeed);
 * the first success makes the delivery `delivered` for good, counts it in `first_attempt_delivered`
 * when it was attempt 1, and puts its time to delivery (scheduling → end of the successful attempt)
 * in the histogram. A failure leaves a delivered delivery delivered; otherwise `retry` makes it
 * pending again and `failed` failed (a resend can still deliver it later).
 */
export function attempted(f: DeliveryFacts, a: Attempt): { facts: DeliveryFacts; inc: Inc } {
  const inc: Inc = { attempts: 1 };
  if (a.outcome !== 'succeeded') inc.failed_attempts = 1;
  if (f.state === 'delivered') return { facts: f, inc };
  const to: DeliveryState =
    a.outcome === 'succeeded' ? 'delivered' : a.outcome === 'retry' ? 'pending' : 'failed';
  move(inc, f.state, to);
  if (to === 'delivered') {
    if (a.attempt === 1) inc.first_attempt_delivered = 1;
    const ms = Math.max(0, Date.parse(a.at) + Math.max(0, a.duration_ms) - Date.parse(f.scheduled_at));
    inc[`time_to_delivery.${DELIVERY_TIME_BUCKETS[bucketOf(DELIVERY_TIME_BUCKETS, ms)]}`] = 1;
  }
  return { facts: { ...f, state: to }, inc };
}

/**
 * A resend was requested (WebhookAttemptRequested, reason `resend`; schema version 1 of projection
 * version 2): a failed or canceled delivery is pending again until its attempt is answered, as the API
 * shows it. A delivered one stays delivered (for good): the resend only adds attempts.
 */
export function resent(f: DeliveryFacts): { facts: DeliveryFacts; inc: Inc } {
  if (f.state === 'delivered' || f.state === 'pending') return { facts: f, inc: {} };
  const inc: Inc = {};
  move(inc, f.state, 'pending');
  return { facts: { ...f, state: 'pending' }, inc };
}

/** The endpoint was deleted or its credential revoked: canceled, unless already delivered. */
export function canceled(f: DeliveryFacts): { facts: DeliveryFacts; inc: Inc } {
  if (f.state === 'delivered') return { facts: f, inc: {} };
  const inc: Inc = {};
  move(inc, f.state, 'canceled');
  return { facts: { ...f, state: 'canceled' }, inc };
}

/** One document of `analytics_webhook_days` (counters only: rates are read from them). */
export interface WebhookDay {
  restaurant_id: string;
  endpoint_id: string;
  date: string;
  schema_version: number;
  deliveries: number;
  pending: number;
  delivered: number;
  failed: number;
  canceled: number;
  attempts: number;
  failed_attempts: number;
  first_attempt_delivered: number;
  /** Bucket lower bound in ms → delivered deliveries. */
  time_to_delivery: Record<string, number>;
}

export const WEBHOOK_SCHEMA_VERSION = 1;

export function emptyWebhookDay(
  k: Pick<DeliveryFacts, 'restaurant_id' | 'endpoint_id' | 'date'>,
): WebhookDay {
  return {
    restaurant_id: k.restaurant_id,
    endpoint_id: k.endpoint_id,
    date: k.date,
    schema_version: WEBHOOK_SCHEMA_VERSION,
    deliveries: 0,
    pending: 0,
    delivered: 0,
    failed: 0,
    canceled: 0,
    attempts: 0,
    failed_attempts: 0,
    first_attempt_delivered: 0,
    time_to_delivery: {},
  };
}

/** Adds dotted increments to a day (what MongoDB's $inc does), dropping nothing. */
export function addInc<T extends object>(day: T, inc: Inc): T {
  for (const [path, n] of Object.entries(inc)) {
    const parts = path.split('.');
    let o = day as Record<string, unknown>;
    for (const p of parts.slice(0, -1)) {
      if (typeof o[p] !== 'object' || o[p] === null) o[p] = {};
      o = o[p] as Record<string, unknown>;
    }
    const last = parts[parts.length - 1] as string;
    o[last] = ((o[last] as number | undefined) ?? 0) + n;
  }
  return day;
}

const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);

/** What a reader computes from a day's (or several days' summed) counters. */
export function webhookRates(
  d: Pick<WebhookDay, 'delivered' | 'failed' | 'first_attempt_delivered' | 'time_to_delivery'>,
) {
  return {
    /** delivered / (delivered + failed): deliveries still pending or canceled are not judged. */
    success_rate: ratio(d.delivered, d.delivered + d.failed),
    /** Delivered on attempt 1, among the finished (delivered + failed). */
    first_attempt_success_rate: ratio(d.first_attempt_delivered, d.delivered + d.failed),
    median_ms: quantileOf(DELIVERY_TIME_BUCKETS, d.time_to_delivery, 0.5),
    p90_ms: quantileOf(DELIVERY_TIME_BUCKETS, d.time_to_delivery, 0.9),
  };
}

/** Sums several days' counters (an endpoint over a period). */
export function sumWebhookDays(
  days: readonly WebhookDay[],
  key: Pick<WebhookDay, 'restaurant_id' | 'endpoint_id' | 'date'>,
): WebhookDay {
  const total = emptyWebhookDay(key);
  for (const d of days) {
    const inc: Inc = {};
    for (const k of [
      'deliveries',
      'pending',
      'delivered',
      'failed',
      'canceled',
      'attempts',
      'failed_attempts',
      'first_attempt_delivered',
    ] as const)
      inc[k] = d[k];
    for (const [b, n] of Object.entries(d.time_to_delivery ?? {})) inc[`time_to_delivery.${b}`] = n;
    addInc(total, inc);
  }
  return total;
}
