// The dashboard's failing warning (failingStreak) orders an endpoint's finished deliveries by their last
// attempt: a delivery resent and succeeded recently ends a streak however old it is, and one resent
// and failed again after the last success joins it. Ordered by creation, a resent success sat below
// the failures and the warning stayed up.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { failingStreak } from '../../queries/webhooks';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';

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

async function store(list: WebhookDeliveryDoc[]) {
  const docs = new EmbeddedDocumentStore();
  for (const d of list) await docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).insertOne(d);
  return docs;
}

t('a delivery resent and succeeded after the failures ends the streak', async () => {
  const docs = await store([
    delivery('old', 'succeeded', [1, 5]), // failed on the 1st, resent on the 5th: succeeded
    delivery('a', 'failed', [2]),
    delivery('b', 'failed', [3]),
  ]);
  assert.is(await failingStreak(docs, 'we_1', NOW), null);
});

t('failures after the last success count; one resent and failed again after it joins them', async () => {
  const docs = await store([
    delivery('a', 'failed', [2, 7]), // resent on the 7th: failed again
    delivery('ok', 'succeeded', [6]),
    delivery('b', 'failed', [3]), // before the success: not counted
    delivery('c', 'failed', [8]),
  ]);
  const streak = await failingStreak(docs, 'we_1', NOW);
  assert.equal(streak, { count: 2, more: false, since: day(2) });
});

t('no success at all: every failure counts, capped', async () => {
  const docs = await store([
    delivery('a', 'failed', [2]),
    delivery('b', 'failed', [3]),
    delivery('c', 'failed', [4]),
  ]);
  assert.equal(await failingStreak(docs, 'we_1', NOW, 2), { count: 2, more: true, since: day(3) });
  assert.equal(await failingStreak(docs, 'we_1', NOW), { count: 3, more: false, since: day(2) });
});

t.run();
