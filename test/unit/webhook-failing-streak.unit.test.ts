// The dashboard's failing warning (failingStreak) orders an endpoint's finished deliveries by their last
// attempt: a delivery resent and succeeded recently ends a streak however old it is, and one resent
// and failed again after the last success joins it. Ordered by creation, a resent success sat below
// the failures and the warning stayed up. Each case runs on both layouts: documents that keep
// `last_attempt_at` (version 3: read by the `finished` index) and documents made before it was kept.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  lastAttemptAt,
  WEBHOOK_DELIVERIES,
  type WebhookDeliveryDoc,
  webhookDeliveriesProjection,
} from '../../projections/webhook-deliveries';
import { failingStreak } from '../../queries/webhooks';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { EmbeddedCollection } from '../../src/adapters/document-store/embedded-collection';
import type { Filter } from '../../src/ports/document-store';

const t = suite('webhooks: failingStreak orders by last attempt');
const NOW = new Date('2026-06-20T12:00:00.000Z');
const day = (d: number) => `2026-06-${String(d).padStart(2, '0')}T10:00:00.000Z`;

function delivery(id: string, status: 'failed' | 'succeeded', attemptDays: number[]): WebhookDeliveryDoc {
  return {
    _id: id,
    restaurant_id: 'rest_a',
    endpoint_id: 'we_1',
    event_id: `evt_${id}`,
    event_type: 'customer.created',
    source_event_id: id,
    fanout_stream: null,
    payload: null,
    event_created: day(attemptDays[0] as number),
    created_at: day(attemptDays[0] as number),
    test: false,
    status,
    attempts: attemptDays.map((d) => ({ at: day(d) }) as WebhookDeliveryDoc['attempts'][number]),
    attempt_count: attemptDays.length,
    last_status_code: status === 'succeeded' ? 200 : 503,
    next_attempt: attemptDays.length + 1,
    next_attempt_at: null,
    series_start: 1,
    series_started_at: day(attemptDays[0] as number),
    sweep_after: null,
    revision: attemptDays.length,
  };
}

type Layout = 'ordered' | 'unordered';

/** The deliveries in a store set up as the projection does, with or without `last_attempt_at`. */
async function store(list: WebhookDeliveryDoc[], layout: Layout = 'ordered') {
  const docs = new EmbeddedDocumentStore();
  await webhookDeliveriesProjection.setup?.(docs);
  const col = docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
  for (const d of list)
    await col.insertOne(layout === 'ordered' ? { ...d, last_attempt_at: lastAttemptAt(d) } : d);
  return docs;
}

/**
 * The documents the store hands its matcher for every find of webhook_deliveries (what it reads:
 * the candidates of the index it picks).
 */
function countingCandidates(docs: EmbeddedDocumentStore): { read: () => number } {
  const col = docs.collection(WEBHOOK_DELIVERIES) as unknown as EmbeddedCollection;
  const find = col.find.bind(col);
  let read = 0;
  col.find = (filter: Filter, options) => {
    read += col.explain(filter).candidates;
    return find(filter, options);
  };
  return { read: () => read };
}

for (const layout of ['ordered', 'unordered'] as const) {
  t(`${layout}: a delivery resent and succeeded after the failures ends the streak`, async () => {
    const docs = await store(
      [
        delivery('old', 'succeeded', [1, 5]), // failed on the 1st, resent on the 5th: succeeded
        delivery('a', 'failed', [2]),
        delivery('b', 'failed', [3]),
      ],
      layout,
    );
    assert.is(await failingStreak(docs, 'we_1', NOW), null);
  });

  t(`${layout}: failures after the last success count; one resent and failed again joins them`, async () => {
    const docs = await store(
      [
        delivery('a', 'failed', [2, 7]), // resent on the 7th: failed again
        delivery('ok', 'succeeded', [6]),
        delivery('b', 'failed', [3]), // before the success: not counted
        delivery('c', 'failed', [8]),
      ],
      layout,
    );
    const streak = await failingStreak(docs, 'we_1', NOW);
    assert.equal(streak, { count: 2, more: false, since: day(2) });
  });

  t(`${layout}: no success at all: every failure counts, capped`, async () => {
    const docs = await store(
      [delivery('a', 'failed', [2]), delivery('b', 'failed', [3]), delivery('c', 'failed', [4])],
      layout,
    );
    assert.equal(await failingStreak(docs, 'we_1', NOW, 2), { count: 2, more: true, since: day(3) });
    assert.equal(await failingStreak(docs, 'we_1', NOW), { count: 3, more: false, since: day(2) });
  });
}

t('it reads the last success and the failures after it, not the older deliveries', async () => {
  const older = Array.from({ length: 40 }, (_, i) =>
    delivery(`old${i}`, i % 2 ? 'failed' : 'succeeded', [2]),
  );
  const docs = await store([
    ...older,
    delivery('ok', 'succeeded', [5]),
    delivery('a', 'failed', [6]),
    delivery('b', 'failed', [7]),
  ]);
  const reads = countingCandidates(docs);
  assert.equal(await failingStreak(docs, 'we_1', NOW), { count: 2, more: false, since: day(6) });
  // The successes of the 30 days (embedded, the index narrows to them; MongoDB reads the latest
  // one only) and the two failures; every one of the 43 deliveries, three times, before.
  assert.is(reads.read(), 21 + 2);
});

t.run();
