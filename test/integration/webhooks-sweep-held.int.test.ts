// The sweeper reads the oldest due deliveries, a batch at a time, and skips those this process holds
// (queued behind a slow endpoint's attempts, their 60 s lease run out while they waited). When the
// batch held only those, another endpoint's retry, due later, was never asked for while the slow
// endpoint's backlog lasted: the soak (bench/soak.ts) saw a failing endpoint's retries stop behind a
// hung one's queue. The held ones no longer take the batch's places. The service clock is frozen: only
// the test moves it; the sweeper runs only when the test calls it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { hold } from '../helpers/webhook-receiver';
import {
  deliveries,
  demoCustomer,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
} from '../helpers/webhooks-world';

const KEY = { id: 'key_sh', token: 'couvert_pk_sweepheld_00000000000000000001', scopes: ['CUSTOMERS_READ'] };

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('webhooks: the sweeper and held deliveries');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-sweep-held',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: KEY,
    endpoint: { id: 'we_slow', path: '/slow', secret: 'whsec_sweep_held_secret_0000000001' },
    // No attempt times out while the test holds it, however slow the machine.
    publisher: { concurrencyPerEndpoint: 1, sweepIntervalMs: 3_600_000, timeoutMs: 600_000 },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('a retry due behind more held deliveries than a batch is still asked for', async ({ w }) => {
  const gate = hold();
  w.rx.on('/slow', { until: gate.held });
  w.rx.on('/flaky', { statuses: [503, 200] });
  const publisher = w.running?.publisher;
  assert.ok(publisher);
  try {
    // Four attempts to the slow endpoint: one in flight, three queued, all held here.
    for (let i = 0; i < 4; i++) await demoCustomer(w.rt, `Slow ${i}`);
    await w.rx.waitFor('/slow', 1);
    await until('four held', 120_000, async () => (publisher.pending === 4 ? true : null));
    // Their leases run out; then another endpoint's first attempt fails and its retry comes due.
    w.clock.advance(100);
    const meta = { ...operatorMeta('test'), restaurant_id: 'rest_demo' };
    const made = await createWebhookEndpoint(
      w.rt,
      { restaurantId: 'rest_demo', url: w.rx.url('/flaky'), credential: { id: KEY.id, scopes: KEY.scopes } },
      meta,
    );
    await w.rt.settle(made.position);
    await demoCustomer(w.rt, 'Flaky');
    await w.rx.waitFor('/flaky', 1);
    const flaky = await until('the failed attempt recorded', 120_000, async () =>
      (await deliveries(w.rt, { endpoint_id: made.endpointId })).find((d) => d.attempt_count === 1),
    );
    w.clock.advance(10);
    // A batch of 2: the held deliveries are older, and there are more of them.
    await publisher.sweep(2);
    const after = (await deliveries(w.rt, { _id: flaky._id }))[0];
    assert.ok(after && after.revision > flaky.revision, 'the retry was not asked for');
  } finally {
    gate.release();
  }
});

t.run();
