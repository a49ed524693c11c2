// A sweep's cost does not follow a full endpoint's backlog. The sweeper's find leaves out the
// endpoints whose queue is full (`endpoint_id: {$nin}`), but read on the `work` index (status,
// sweep_after) it handed each of their due deliveries to the filter to refuse it, every second: a hung
// endpoint's backlog of 50,000 was 50,000 documents examined per sweep. Here a hung endpoint holds 4
// (1 in flight, 3 queued: its queue full) and 50,000 more are due for it, older than the 100 due for
// other endpoints; a sweep of 5 examines about its page.
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

const KEY = { id: 'key_scb', token: 'couvert_pk_sweepcostbacklog_00000000001', scopes: ['CUSTOMERS_READ'] };

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('webhooks: a sweep beside a full backlog');

t.before(async (ctx) => {
  ctx.w = await startHungEndpointWorld(
    'webhooks-sweep-cost-backlog',
    KEY,
    'whsec_sweep_cost_backlog_secret_01',
  );
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t("a full endpoint's due backlog is not read by a sweep", async ({ w }) => {
  await withFullQueue(w, async (publisher) => {
    const col = w.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
    assert.ok(col instanceof EmbeddedCollection, 'the embedded store answers the sweeper');
    const at = (s: number) => new Date(Date.parse(NOW) + s * 1000).toISOString();
    const docs: WebhookDeliveryDoc[] = [];
    // The hung endpoint's backlog, due for hours, then the others' retries due in the last minute.
    for (let i = 0; i < 50_000; i++)
      docs.push(pendingDelivery(`backlog_${i}`, 'we_hung', NOW, at(-7_200 + (i % 7_000))));
    for (let i = 0; i < 100; i++)
      docs.push(pendingDelivery(`other_${i}`, `we_other_${i % 4}`, NOW, at(-60 + (i % 50))));
    await col.insertMany(docs);
    const { result, copied, examined } = await countFinds(col, () => publisher.sweep(5));
    assert.is(result, 0, 'every request refused: no stream at revision 7');
    assert.is(copied, 5, `copied ${copied} documents for a sweep of 5`);
    assert.ok(
      examined <= 50,
      `examined ${examined} documents for a sweep of 5 (50,000 of a full endpoint due)`,
    );
  });
});

t.run();
