// publisherQuiet (test/helpers/webhook-receiver.ts) is what every negative webhook check waits for
// ("nothing more arrives"). It returned while a delivery was still in its lease with no attempt of this
// process holding it (an overflow left to the log, an attempt cut before its record): that delivery is
// sent once the lease runs out, so a check made then could pass with a delivery still to come. It now
// waits for such a lease to run out; on a frozen clock, where only the test moves time, it fails at once
// naming the delivery instead of returning.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AdjustableClock, FixedClock } from '../../src/core/clock';
import type { Runtime } from '../../src/runtime';
import { CLAIM_LEASE_SECONDS } from '../../src/webhooks/schedule';
import { hold, publisherQuiet } from '../helpers/webhook-receiver';
import {
  deliveries,
  demoCustomer,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
} from '../helpers/webhooks-world';

const KEY = { id: 'key_ql', token: 'couvert_pk_quietlease_0000000000000001', scopes: ['CUSTOMERS_READ'] };

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('publisherQuiet and deliveries in lease');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-quiet-lease',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: KEY,
    endpoint: { id: 'we_lease', path: '/lease', secret: 'whsec_quiet_lease_secret_0000001' },
    // One in flight, one queued: a third delivery is left to the log, in its lease.
    publisher: { concurrencyPerEndpoint: 1, maxWaitingPerEndpoint: 1, sweepIntervalMs: 3_600_000 },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t(
  'a delivery in its lease that no attempt holds is not quiet: sent once the lease runs out',
  async ({ w }) => {
    const running = w.running;
    assert.ok(running);
    const gate = hold();
    w.rx.on('/lease', { until: gate.held });
    try {
      for (let i = 0; i < 3; i++) await demoCustomer(w.rt, `Lease ${i}`);
      await until('three fanned out, two held', 120_000, async () =>
        (await deliveries(w.rt, { endpoint_id: 'we_lease' })).length === 3 && running.publisher.pending === 2
          ? true
          : null,
      );
    } finally {
      gate.release();
    }
    await until('the queue empty', 120_000, async () => (running.publisher.pending === 0 ? true : null));
    await until('two recorded', 120_000, async () =>
      (await deliveries(w.rt, { endpoint_id: 'we_lease', status: 'succeeded' })).length === 2 ? true : null,
    );
    const [leased] = await deliveries(w.rt, { endpoint_id: 'we_lease', status: 'pending' });
    assert.ok(leased, 'one delivery left to the log');
    // The clock is frozen: its lease never runs out unless the test moves it. Quiet is not true yet.
    const early = await publisherQuiet(w.rt, running).then(
      () => 'quiet',
      (err: Error) => err.message,
    );
    assert.match(early, leased._id);
    assert.match(early, /lease/);
    assert.match(early, 'the clock is frozen');
    // As a runtime under TEST_CLOCK has it: the frozen clock behind an AdjustableClock, frozen still
    // (it waited out its 120 s hang bound instead).
    const wrapped = Object.create(w.rt, { clock: { value: new AdjustableClock(w.clock) } }) as Runtime;
    const behindTestClock = await publisherQuiet(wrapped, running).then(
      () => 'quiet',
      (err: Error) => err.message,
    );
    assert.match(behindTestClock, 'the clock is frozen');
    assert.match(behindTestClock, leased._id);
    assert.is(w.rx.for('/lease').length, 2);
    // Past its lease the sweeper asks for it: quiet once it is sent.
    w.clock.advance(CLAIM_LEASE_SECONDS + 1);
    await publisherQuiet(w.rt, running);
    assert.is(w.rx.for('/lease').length, 3);
  },
);

t.run();
