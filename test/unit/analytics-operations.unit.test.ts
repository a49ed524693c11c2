// Webhook-delivery and missed-call analytics: the pure rules, and the projections (applied once each,
// or at least once with crashes part-way through an event) equal the figures folded from scratch.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ANALYTICS_MISSED_CALL_DAYS,
  foldMissedCallDays,
  missedCallAnalyticsProjection,
  missedCallDayOf,
} from '../../projections/analytics/missed-call-projection';
import { callStep, follows, reported } from '../../projections/analytics/missed-call-rules';
import {
  ANALYTICS_WEBHOOK_DAYS,
  foldWebhookDays,
  webhookAnalyticsProjection,
  webhookDayOf,
} from '../../projections/analytics/webhook-projection';
import {
  attempted,
  canceled,
  DELIVERY_TIME_BUCKETS,
  quantileOf,
  resent,
  scheduled,
  sumWebhookDays,
  webhookRates,
} from '../../projections/analytics/webhook-rules';
import { localDay } from '../../projections/analytics/zones';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { DocumentStore } from '../../src/ports/document-store';
import type { RecordedEvent } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { deliverWithCrashes } from '../helpers/crash-redelivery';
import { missedCallLog, recorded, webhookLog } from '../helpers/operations-events';

test('a delivery: first-attempt success, time to delivery bucketed, delivered for good', () => {
  const s = scheduled('rest_a', 'we_1', '2026-06-01', '2026-06-01T10:00:00.000Z');
  assert.equal(s.inc, { deliveries: 1, pending: 1 });
  const ok = attempted(s.facts, {
    attempt: 1,
    outcome: 'succeeded',
    at: '2026-06-01T10:00:00.100Z',
    duration_ms: 200,
  });
  assert.equal(ok.inc, {
    attempts: 1,
    pending: -1,
    delivered: 1,
    first_attempt_delivered: 1,
    'time_to_delivery.250': 1,
  });
  const again = attempted(ok.facts, {
    attempt: 2,
    outcome: 'failed',
    at: '2026-06-02T10:00:00Z',
    duration_ms: 5,
  });
  assert.equal(
    again.inc,
    { attempts: 1, failed_attempts: 1 },
    'a resend after delivery only adds an attempt',
  );
  assert.equal(canceled(ok.facts).inc, {}, 'a delivered delivery is never canceled');
});

test('a delivery: retried, failed for good, then delivered by a resend', () => {
  const s = scheduled('rest_a', 'we_1', '2026-06-01', '2026-06-01T10:00:00Z').facts;
  const r = attempted(s, { attempt: 1, outcome: 'retry', at: '2026-06-01T10:00:00Z', duration_ms: 10_000 });
  assert.equal(r.inc, { attempts: 1, failed_attempts: 1 });
  const f = attempted(r.facts, { attempt: 2, outcome: 'failed', at: '2026-06-01T10:01:00Z', duration_ms: 0 });
  assert.equal(f.inc, { attempts: 1, failed_attempts: 1, pending: -1, failed: 1 });
  const d = attempted(f.facts, {
    attempt: 3,
    outcome: 'succeeded',
    at: '2026-06-01T12:00:00Z',
    duration_ms: 0,
  });
  assert.equal(d.inc, { attempts: 1, failed: -1, delivered: 1, 'time_to_delivery.3600000': 1 });
});

test('a resend: a failed or canceled delivery is pending until its attempt is answered; a delivered one stays delivered', () => {
  const s = scheduled('rest_a', 'we_1', '2026-06-01', '2026-06-01T10:00:00Z').facts;
  const f = attempted(s, { attempt: 1, outcome: 'failed', at: '2026-06-01T10:00:00Z', duration_ms: 0 });
  const again = resent(f.facts);
  assert.equal(again.inc, { failed: -1, pending: 1 });
  assert.is(again.facts.state, 'pending');
  assert.equal(resent(canceled(s).facts).inc, { canceled: -1, pending: 1 });
  const ok = attempted(s, { attempt: 1, outcome: 'succeeded', at: '2026-06-01T10:00:00Z', duration_ms: 0 });
  assert.equal(resent(ok.facts).inc, {}, 'delivered for good');
  assert.equal(resent(s).inc, {}, 'already pending');
});

test('quantiles of a histogram: nearest rank, upper bound of the bucket, open last bucket', () => {
  assert.is(quantileOf(DELIVERY_TIME_BUCKETS, {}, 0.5), null);
  assert.is(quantileOf(DELIVERY_TIME_BUCKETS, { 0: 9, 60000: 1 }, 0.5), 250);
  assert.is(quantileOf(DELIVERY_TIME_BUCKETS, { 0: 9, 60000: 1 }, 0.9), 250);
  assert.is(quantileOf(DELIVERY_TIME_BUCKETS, { 0: 8, 60000: 2 }, 0.9), 300_000);
  assert.is(quantileOf(DELIVERY_TIME_BUCKETS, { 259200000: 1 }, 0.5), 259_200_000);
  const rates = webhookRates({
    delivered: 3,
    failed: 1,
    first_attempt_delivered: 2,
    time_to_delivery: { 0: 3 },
  });
  assert.equal(rates, { success_rate: 0.75, first_attempt_success_rate: 0.5, median_ms: 250, p90_ms: 250 });
  assert.is(
    webhookRates({ delivered: 0, failed: 0, first_attempt_delivered: 0, time_to_delivery: {} }).success_rate,
    null,
  );
});

test('summing days adds counters and histograms', () => {
  const day = (n: number) => ({
    ...sumWebhookDays([], { restaurant_id: 'r', endpoint_id: 'e', date: 'd' }),
    deliveries: n,
    delivered: n,
    time_to_delivery: { 0: n },
  });
  const total = sumWebhookDays([day(1), day(2)], { restaurant_id: 'r', endpoint_id: 'e', date: 'all' });
  assert.is(total.deliveries, 3);
  assert.equal(total.time_to_delivery, { 0: 3 });
});

test('the local day is the restaurant’s calendar day', () => {
  assert.is(localDay('Europe/Paris', '2026-06-01T22:30:00Z'), '2026-06-02');
  assert.is(localDay('America/New_York', '2026-06-02T02:00:00Z'), '2026-06-01');
  assert.is(localDay(undefined, '2026-06-02T02:00:00Z'), '2026-06-02');
  assert.is(localDay('Not/AZone', '2026-06-02T02:00:00Z'), '2026-06-02');
});

test('a missed call: outcomes move, a match counts once, a retryable failure waits as FAILED', () => {
  const r = reported('rest_a', '2026-06-01', '2026-06-01T10:00:00Z');
  assert.equal(r.inc, { reported: 1, 'by_outcome.PENDING': 1 });
  const m = callStep(r.facts, 'MissedCallMatched', {
    customer_id: 'cus_1',
    customer_created: true,
    reservation_id: 'res_1',
  });
  assert.equal(m.inc, { matched: 1, new_customers: 1, with_upcoming_reservation: 1 });
  assert.equal(callStep(m.facts, 'MissedCallMatched', { customer_id: 'cus_1' }).inc, {});
  const q = callStep(m.facts, 'MessageRequested', {});
  assert.equal(q.inc, { messages_requested: 1 });
  const f = callStep(q.facts, 'MessageFailed', { retryable: true, outcome: null });
  assert.equal(f.inc, { 'by_outcome.PENDING': -1, 'by_outcome.FAILED': 1 });
  const s = callStep(callStep(f.facts, 'MessageRequested', {}).facts, 'MessageSent', {});
  assert.equal(s.inc, { 'by_outcome.PENDING': -1, 'by_outcome.SENT': 1 });
  assert.equal(callStep(r.facts, 'MissedCallSkipped', { outcome: 'SKIPPED_COOLDOWN' }).inc, {
    'by_outcome.PENDING': -1,
    'by_outcome.SKIPPED_COOLDOWN': 1,
  });
});

test('a reservation follows a call when made for its customer within 7 days after it, once', () => {
  const caller = {
    restaurant_id: 'rest_a',
    customer_id: 'cus_1',
    call_id: 'c1',
    date: '2026-06-01',
    occurred_at: '2026-06-01T10:00:00Z',
    followed: false,
  };
  assert.ok(follows(caller, '2026-06-01T10:05:00Z'));
  assert.ok(follows(caller, '2026-06-08T10:00:00Z'));
  assert.not.ok(follows(caller, '2026-06-08T10:00:01Z'), 'too late');
  assert.not.ok(follows(caller, '2026-06-01T09:59:00Z'), 'before the call');
  assert.not.ok(follows({ ...caller, followed: true }, '2026-06-01T10:05:00Z'), 'counted once');
  assert.not.ok(follows(null, '2026-06-01T10:05:00Z'));
});

const strip = (docs: { _id: string }[]) =>
  new Map(
    docs.map((d) => {
      const { _id, _pos, ...rest } = d as { _id: string; _pos?: string };
      return [_id, rest];
    }),
  );

/** Counters never incremented are absent from a document (absent = 0): read as the queries do. */
async function compare(
  docs: DocumentStore,
  collection: string,
  want: Map<string, unknown>,
  read: (doc: never) => unknown,
) {
  const got = new Map(
    [...strip(await docs.collection(collection).find({}))].map(([id, d]) => [
      id,
      read({ ...d, _id: id, _pos: '' } as never),
    ]),
  );
  assert.equal(new Set(got.keys()), new Set(want.keys()), 'the same days');
  for (const [id, figures] of want) assert.equal(got.get(id), figures, `${collection} ${id}`);
}

function properties(
  name: string,
  projection: Projection,
  log: fc.Arbitrary<{ type: string; data: Record<string, unknown> }[]>,
  collection: string,
  fold: (events: RecordedEvent[]) => Map<string, unknown>,
  read: (doc: never) => unknown,
) {
  const apply = (e: RecordedEvent, docs: DocumentStore) =>
    projection.eventTypes.includes(e.type) ? projection.apply(e, docs) : Promise.resolve();

  test(`${name}: applied once each, in order, equals the from-scratch fold`, async () => {
    await fc.assert(
      fc.asyncProperty(log, async (l) => {
        const events = recorded(l);
        const docs = new EmbeddedDocumentStore();
        await projection.setup?.(docs);
        for (const e of events) await apply(e, docs);
        await compare(docs, collection, fold(events), read);
      }),
      { numRuns: 250 },
    );
  });

  test(`${name}: at least once, with crashes part-way through an event and redelivery: still equal`, async () => {
    await fc.assert(
      fc.asyncProperty(
        log,
        fc.array(fc.tuple(fc.nat(40), fc.nat(6), fc.nat(10)), { maxLength: 4 }),
        async (l, crashes) => {
          const events = recorded(l);
          const inner = await deliverWithCrashes(apply, events, crashes);
          await compare(inner, collection, fold(events), read);
        },
      ),
      { numRuns: 250 },
    );
  });
}

properties(
  'webhook deliveries',
  webhookAnalyticsProjection,
  webhookLog,
  ANALYTICS_WEBHOOK_DAYS,
  foldWebhookDays,
  webhookDayOf,
);
properties(
  'missed calls',
  missedCallAnalyticsProjection,
  missedCallLog,
  ANALYTICS_MISSED_CALL_DAYS,
  foldMissedCallDays,
  missedCallDayOf,
);

test('webhook days: a fan-out in Paris just after local midnight belongs to the new day', async () => {
  const events = recorded([
    { type: 'RestaurantCreated', data: { restaurant_id: 'rest_a', timezone: 'Europe/Paris' } },
    {
      type: 'WebhookDeliveriesScheduled',
      data: {
        restaurant_id: 'rest_a',
        at: '2026-06-01T22:30:00Z',
        deliveries: [
          { delivery_id: 'd1', endpoint_id: 'we_1' },
          { delivery_id: 'd2', endpoint_id: 'we_2' },
        ],
      },
    },
    {
      type: 'WebhookAttemptRecorded',
      data: {
        delivery_id: 'd1',
        attempt: 1,
        outcome: 'succeeded',
        at: '2026-06-01T22:30:00Z',
        duration_ms: 40,
      },
    },
    {
      type: 'WebhookAttemptRecorded',
      data: { delivery_id: 'd2', attempt: 1, outcome: 'failed', at: '2026-06-01T22:30:00Z', duration_ms: 40 },
    },
  ]);
  const docs = new EmbeddedDocumentStore();
  for (const e of events) await webhookAnalyticsProjection.apply(e, docs);
  const d1 = await docs.collection(ANALYTICS_WEBHOOK_DAYS).findOne({ _id: 'rest_a|2026-06-02|we_1' });
  assert.is(d1?.delivered, 1);
  assert.is(d1?.first_attempt_delivered, 1);
  assert.is(d1?.pending, 0);
  assert.is(d1?.failed, undefined, 'absent = 0');
  const d2 = await docs.collection(ANALYTICS_WEBHOOK_DAYS).findOne({ _id: 'rest_a|2026-06-02|we_2' });
  assert.is(d2?.failed, 1);
  assert.is(d2?.delivered ?? 0, 0);
});

test('webhook days: a failed delivery resent is pending until the resend is answered (docs/analytics.md)', async () => {
  const attempt = (n: number, outcome: string) => ({
    type: 'WebhookAttemptRecorded',
    data: { delivery_id: 'd1', attempt: n, outcome, at: '2026-06-01T10:00:00Z', duration_ms: 40 },
  });
  const events = recorded([
    {
      type: 'WebhookDeliveriesScheduled',
      data: {
        restaurant_id: 'rest_a',
        at: '2026-06-01T10:00:00Z',
        deliveries: [{ delivery_id: 'd1', endpoint_id: 'we_1' }],
      },
    },
    attempt(1, 'failed'),
    {
      type: 'WebhookAttemptRequested',
      data: { delivery_id: 'd1', endpoint_id: 'we_1', restaurant_id: 'rest_a', attempt: 2, reason: 'resend' },
    },
  ]);
  const docs = new EmbeddedDocumentStore();
  const apply = async (e: RecordedEvent) => {
    if (webhookAnalyticsProjection.eventTypes.includes(e.type))
      await webhookAnalyticsProjection.apply(e, docs);
  };
  for (const e of events) await apply(e);
  const day = async () =>
    webhookDayOf(
      (await docs.collection(ANALYTICS_WEBHOOK_DAYS).findOne({ _id: 'rest_a|2026-06-01|we_1' })) as never,
    );
  assert.equal([(await day()).pending, (await day()).failed], [1, 0], 'resent: pending, not failed');
  assert.is(webhookRates(await day()).success_rate, null, 'nothing finished');
  for (const e of recorded([attempt(2, 'succeeded')]).map((e) => ({ ...e, position: 10n }))) await apply(e);
  assert.equal([(await day()).pending, (await day()).delivered, (await day()).failed], [0, 1, 0]);
});

test.run();
