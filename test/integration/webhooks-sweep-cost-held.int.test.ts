// A sweep's page leaves room for the deliveries this process holds (queued or in flight, their lease
// run out), which it skips, but not for those of an endpoint whose queue is full: the query leaves that
// endpoint out, so they cannot take a place, and the room made for them only copied more documents than
// the sweep asks for (the soak's hung endpoint: ~1,000 more each second). Here a hung endpoint holds 4
// (1 in flight, 3 queued: its queue full) and 100 other deliveries are due; a sweep of 5 copies 5.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { EmbeddedCollection } from '../../src/adapters/document-store/embedded';
import type { FixedClock } from '../../src/core/clock';
import {
  countFinds,
  SWEEP_NOW as NOW,
  pendingDelivery,
  startHungEndpointWorld,
  withFullQueue,
} from '../helpers/sweep-cost';
import type { WebhooksWorld } from '../helpers/webhooks-world';

const KEY = { id: 'key_sch', token: 'couvert_pk_sweepcostheld_000000000000001', scopes: ['CUSTOMERS_READ'] };

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('webhooks: a sweep beside a full queue');

t.before(async (ctx) => {
  ctx.w = await startHungEndpointWorld('webhooks-sweep-cost-held', KEY, 'whsec_sweep_cost_held_secret_00001');
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('the held deliveries of a full endpoint take no room in the page', async ({ w }) => {
  await withFullQueue(w, async (publisher) => {
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
  });
});

t.run();
