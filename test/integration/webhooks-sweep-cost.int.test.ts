// One sweep costs about the page it takes, not the pending set. Deliveries to failing and hung
// endpoints stay pending for their retries, so that set grows with a server's life; the sweeper, each
// second, read every due one (status pending, sweep_after ≤ now), sorted them all and copied a page:
// in the soak its share of the main thread went 0.6 % → 8.9 % in four minutes (docs/BENCHMARKS.md).
// Here 6,000 pending deliveries (4,000 due) sit in the read model and one sweep of 50 is counted: the
// documents the store hands to the filter and those it copies out. The deliveries have no stream in
// the log at the revision they claim, so each request the sweep appends is refused (WrongExpectedRevision)
// and nothing else moves.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { EmbeddedCollection } from '../../src/adapters/document-store/embedded';
import { FixedClock } from '../../src/core/clock';
import { countFinds, pendingDelivery } from '../helpers/sweep-cost';
import { startWebhooksWorld, type WebhooksWorld } from '../helpers/webhooks-world';

const KEY = { id: 'key_sc', token: 'couvert_pk_sweepcost_00000000000000000001', scopes: ['CUSTOMERS_READ'] };
const NOW = '2026-06-02T10:00:00.000Z';

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('webhooks: the cost of one sweep');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-sweep-cost',
    clock: new FixedClock(NOW),
    key: KEY,
    endpoint: null,
    publisher: { sweepIntervalMs: 3_600_000 },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('one sweep of 50 over 4,000 due deliveries reads and copies about 50', async ({ w }) => {
  const publisher = w.running?.publisher;
  assert.ok(publisher);
  const col = w.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
  assert.ok(col instanceof EmbeddedCollection, 'the embedded store answers the sweeper');
  const at = (s: number) => new Date(Date.parse(NOW) + s * 1000).toISOString();
  const docs: WebhookDeliveryDoc[] = [];
  // Due ones from an hour ago to now, in no order; retries due in the next hours.
  for (let i = 0; i < 4_000; i++)
    docs.push(pendingDelivery(`cost_${i}`, `we_cost_${i % 4}`, NOW, at(-((i * 7919) % 3_600))));
  for (let i = 4_000; i < 6_000; i++)
    docs.push(pendingDelivery(`cost_${i}`, `we_cost_${i % 4}`, NOW, at(60 + i)));
  await col.insertMany(docs);
  // Only the sweep's own finds: the runner's start (askForUnfinished) may read every pending one meanwhile.
  const { result, copied, examined: read } = await countFinds(col, () => publisher.sweep(50));
  assert.is(result, 0, 'every request refused: no stream at revision 7');
  assert.ok(copied <= 50, `copied ${copied} documents for a sweep of 50`);
  assert.ok(read <= 100, `examined ${read} documents for a sweep of 50 (of 4,000 due)`);
});

t.run();
