// The overflow variant of webhooks-sweep-held: deliveries past an endpoint's in-memory queue
// (maxWaitingPerEndpoint) wait in the log, not held by this process. The sweeper counted each toward
// its batch before it checked whether that endpoint's queue had room, so an endpoint with a large
// overflow filled every batch and another endpoint's retry, due later, waited until it drained. The
// batch now counts only the deliveries it asks for. The service clock is frozen: only the test moves
// it; the sweeper runs only when the test calls it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryStream } from '../../commands/webhook-deliveries/events';
import { createWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { PUBLISHER_EVENT_PREFIXES } from '../../src/webhooks/publisher';
import { CLAIM_LEASE_SECONDS } from '../../src/webhooks/schedule';
import { hold, publisherQuiet } from '../helpers/webhook-receiver';
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
  // The four, and the flaky event's delivery to the slow endpoint, behind them (the next test).
  assert.equal(overflowed.length, 5);
  // A batch of 2: the slow endpoint's queue has room for one of its four, older than the retry.
  assert.equal(await publisher.sweep(2), 2);
  const after = (await deliveries(w.rt, { _id: flaky._id }))[0];
  assert.ok(after && after.revision > flaky.revision, 'the retry was not asked for');
});

t(
  'an overflowed endpoint takes its new events behind its backlog, fed to the queue oldest first',
  async ({ w }) => {
    const publisher = w.running?.publisher;
    const running = w.running;
    assert.ok(publisher && running);
    // The first test's backlog sent (the last of it in its lease until the clock moves).
    w.clock.advance(100);
    await publisherQuiet(w.rt, running);
    // The last event the publisher follows is handled (its fan-out decided: queued or left to the log).
    const handled = async (what: string) => {
      let target: bigint | null = null;
      for await (const e of w.rt.events.readAll({ after: null }))
        if (PUBLISHER_EVENT_PREFIXES.some((p) => e.type.startsWith(p))) target = e.position;
      await until(what, 120_000, async () => {
        const at = running.handledUpTo();
        return target !== null && at !== null && at >= target ? true : null;
      });
    };
    const gate = hold();
    w.rx.on('/slow', { until: gate.held });
    const before = w.rx.received.filter((r) => r.path === '/slow').length;
    const slowDeliveries = async () =>
      (await deliveries(w.rt, { endpoint_id: 'we_slow' })).sort((a, b) =>
        (a.sweep_after ?? '') < (b.sweep_after ?? '') ? -1 : 1,
      );
    const known = new Set((await slowDeliveries()).map((d) => d._id));
    try {
      // One in flight, one queued, two left to the log, a second apart (their leases end in that order).
      for (let i = 0; i < 4; i++) {
        await demoCustomer(w.rt, `Backlog ${i}`);
        await handled(`backlog ${i} fanned out`);
        w.clock.advance(1);
      }
      await until('four fanned out, two held', 120_000, async () =>
        (await slowDeliveries()).filter((d) => !known.has(d._id)).length === 4 &&
        publisher.pendingFor('we_slow') === 2
          ? true
          : null,
      );
    } finally {
      gate.release();
    }
    await until('the slow queue empty', 120_000, async () =>
      publisher.pendingFor('we_slow') === 0 ? true : null,
    );
    const backlog = (await slowDeliveries()).filter((d) => !known.has(d._id) && d.status === 'pending');
    assert.equal(backlog.length, 2);
    // A new event while that backlog waits: the queue has room, but the event waits behind the backlog.
    await demoCustomer(w.rt, 'Newer');
    await handled('the new event handled');
    await w.rt.projections.catchUp();
    assert.equal(publisher.pendingFor('we_slow'), 0, 'the new event was queued before the backlog');
    assert.equal(w.rx.received.filter((r) => r.path === '/slow').length, before + 2);
    const waiting = (await slowDeliveries()).filter((d) => !known.has(d._id) && d.status === 'pending');
    assert.equal(waiting.length, 3);
    // Leases run out: the queue (room for one) takes the oldest, and its request names the overflow.
    w.clock.advance(100);
    await publisher.sweep();
    const [oldest, ...rest] = waiting;
    assert.ok(oldest);
    const stream = await w.rt.events.readStream(deliveryStream(oldest._id));
    assert.equal(
      stream.filter((e) => e.type === 'WebhookAttemptRequested').map((e) => e.data.reason),
      ['queue_full'],
    );
    for (const d of rest) assert.equal((await deliveries(w.rt, { _id: d._id }))[0]?.revision, d.revision);
    // Fed oldest first, the rest come once the sweeper finds room; then new events are queued at once.
    await publisherQuiet(w.rt, running);
    assert.equal(w.rx.received.filter((r) => r.path === '/slow').length, before + 5);
    await demoCustomer(w.rt, 'After');
    await w.rx.waitFor('/slow', before + 6);
  },
);

t('attempts left unfinished are asked for up to each endpoint queue room', async ({ w }) => {
  const publisher = w.running?.publisher;
  const running = w.running;
  assert.ok(publisher && running);
  w.clock.advance(100);
  await publisherQuiet(w.rt, running);
  const slowPending = async () =>
    (await deliveries(w.rt, { endpoint_id: 'we_slow' })).filter((d) => d.status === 'pending');
  let left: Awaited<ReturnType<typeof slowPending>> = [];
  // How many of `left` a start asked for (their revision moved).
  const askedFor = async () => {
    const now = await deliveries(w.rt, { endpoint_id: 'we_slow' });
    return left.filter((d) => now.find((n) => n._id === d._id)?.revision !== d.revision).length;
  };
  const gate = hold();
  w.rx.on('/slow', { until: gate.held });
  try {
    // One in flight, one queued, two left to the log in their lease (what a start finds unfinished).
    for (let i = 0; i < 4; i++) await demoCustomer(w.rt, `Unfinished ${i}`);
    await until('two held, two left', 120_000, async () => {
      const pending = (await deliveries(w.rt, { endpoint_id: 'we_slow' })).filter(
        (d) => d.status === 'pending',
      );
      return pending.length === 4 && publisher.pendingFor('we_slow') === 2 ? true : null;
    });
    left = await slowPending();
    // The queue is full: none asked for (each request would be dropped, a start's tens of thousands).
    await publisher.askForUnfinished();
    assert.equal(await askedFor(), 0);
  } finally {
    gate.release();
  }
  await until('the slow queue empty', 120_000, async () =>
    publisher.pendingFor('we_slow') === 0 ? true : null,
  );
  // Room for one (maxWaitingPerEndpoint 1): one of the two asked for; the sweeper takes the other.
  left = await slowPending();
  assert.equal(left.length, 2);
  await publisher.askForUnfinished();
  assert.equal(await askedFor(), 1);
  // The other is the sweeper's once its lease runs out (publisherQuiet used to return before it did).
  w.clock.advance(CLAIM_LEASE_SECONDS + 1);
  await publisherQuiet(w.rt, running);
  assert.equal(await slowPending(), [], 'both sent and recorded');
});

t.run();
