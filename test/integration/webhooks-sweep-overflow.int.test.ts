// The overflow variant of webhooks-sweep-held: deliveries past an endpoint's in-memory queue
// (maxWaitingPerEndpoint) wait in the log, not held by this process. The sweeper counted each toward
// its batch before it checked whether that endpoint's queue had room, so an endpoint with a large
// overflow filled every batch and another endpoint's retry, due later, waited until it drained. The
// batch now counts only the deliveries it asks for. The service clock is frozen: only the test moves
// it; the sweeper runs only when the test calls it.
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

const KEY = { id: 'key_so', token: 'couvert_pk_sweepoverflow_000000000000001', scopes: ['CUSTOMERS_READ'] };

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>(
  'webhooks: the sweeper and overflowed deliveries',
);

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-sweep-overflow',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: KEY,
    endpoint: { id: 'we_slow', path: '/slow', secret: 'whsec_sweep_overflow_secret_00001' },
    // One in flight, one queued: the rest of the slow endpoint's deliveries overflow to the log.
    publisher: {
      concurrencyPerEndpoint: 1,
      maxWaitingPerEndpoint: 1,
      sweepIntervalMs: 3_600_000,
      timeoutMs: 600_000,
    },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('a retry due behind more overflowed deliveries than a batch is still asked for', async ({ w }) => {
  const gate = hold();
  w.rx.on('/slow', { until: gate.held });
  w.rx.on('/flaky', { statuses: [503, 200] });
  const publisher = w.running?.publisher;
  assert.ok(publisher);
  try {
    // Six deliveries to the slow endpoint: one in flight, one queued, four left to the log.
    for (let i = 0; i < 6; i++) await demoCustomer(w.rt, `Slow ${i}`);
    await w.rx.waitFor('/slow', 1);
    // Every fan-out made before the gate opens (one made after would find the queue with room).
    await until('six fanned out, two held', 120_000, async () =>
      (await deliveries(w.rt, { endpoint_id: 'we_slow' })).length === 6 && publisher.pending === 2
        ? true
        : null,
    );
  } finally {
    gate.release();
  }
  await until('the slow queue empty', 120_000, async () => (publisher.pending === 0 ? true : null));
  // The overflowed deliveries' leases run out; then another endpoint's first attempt fails.
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
  const overflowed = (await deliveries(w.rt, { endpoint_id: 'we_slow' })).filter(
    (d) => d.status === 'pending',
  );
  assert.equal(overflowed.length, 4);
  // A batch of 2: the slow endpoint's queue has room for one of its four, older than the retry.
  assert.equal(await publisher.sweep(2), 2);
  const after = (await deliveries(w.rt, { _id: flaky._id }))[0];
  assert.ok(after && after.revision > flaky.revision, 'the retry was not asked for');
});

t.run();
