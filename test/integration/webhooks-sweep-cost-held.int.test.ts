// A sweep's page leaves room for the deliveries this process holds (queued or in flight, their lease
// run out), which it skips, but not for those of an endpoint whose queue is full: the query leaves that
// endpoint out, so they cannot take a place, and the room made for them only copied more documents than
// the sweep asks for (the soak's hung endpoint: ~1,000 more each second). Here a hung endpoint holds 4
// (1 in flight, 3 queued: its queue full) and 100 other deliveries are due; a sweep of 5 copies 5.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { EmbeddedCollection } from '../../src/adapters/document-store/embedded';
import { FixedClock } from '../../src/core/clock';
import { countFinds, pendingDelivery } from '../helpers/sweep-cost';
import { hold } from '../helpers/webhook-receiver';
import { demoCustomer, startWebhooksWorld, until, type WebhooksWorld } from '../helpers/webhooks-world';

const KEY = { id: 'key_sch', token: 'couvert_pk_sweepcostheld_000000000000001', scopes: ['CUSTOMERS_READ'] };
const NOW = '2026-06-02T10:00:00.000Z';

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('webhooks: a sweep beside a full queue');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-sweep-cost-held',
    clock: new FixedClock(NOW),
    key: KEY,
    endpoint: { id: 'we_hung', path: '/hung', secret: 'whsec_sweep_cost_held_secret_00001' },
    publisher: {
      concurrencyPerEndpoint: 1,
      maxWaitingPerEndpoint: 3,
      sweepIntervalMs: 3_600_000,
      timeoutMs: 600_000,
    },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('the held deliveries of a full endpoint take no room in the page', async ({ w }) => {
  const gate = hold();
  w.rx.on('/hung', { until: gate.held });
  const publisher = w.running?.publisher;
  assert.ok(publisher);
  try {
    for (let i = 0; i < 4; i++) await demoCustomer(w.rt, `Hung ${i}`);
    await w.rx.waitFor('/hung', 1);
    await until('four held', 120_000, async () => (publisher.pending === 4 ? true : null));
    const col = w.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
    const docs: WebhookDeliveryDoc[] = [];
    for (let i = 0; i < 100; i++) {
      const due = new Date(Date.parse(NOW) - (i + 1) * 1000).toISOString();
      docs.push(pendingDelivery(`other_${i}`, `we_other_${i % 4}`, NOW, due));
    }
    await col.insertMany(docs);
    assert.ok(col instanceof EmbeddedCollection, 'the embedded store answers the sweeper');
    const { copied } = await countFinds(col, () => publisher.sweep(5));
    assert.is(copied, 5, `copied ${copied} documents for a sweep of 5`);
  } finally {
    gate.release();
  }
});

t.run();
