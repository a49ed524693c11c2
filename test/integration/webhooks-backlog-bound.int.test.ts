// An endpoint slower than the events it is sent (one that hangs until the 12 s timeout takes 8 attempts
// each 12 s) used to have every delivery's attempt queued in this process's memory, its body with it,
// for as long as events kept coming: the soak (bench/soak.ts) saw ~5,000 attempts queued behind a hung
// endpoint after 10 minutes at ~10 events/s, growing without bound. Past `maxWaitingPerEndpoint`
// an attempt is left to the log: its delivery stays pending, and the sweeper asks for it once its lease
// ran out and the endpoint's queue has room again, never more than the room. Nothing is lost, nothing
// sent twice. The service clock is frozen: only the test moves it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock } from '../../src/core/clock';
import { hold } from '../helpers/webhook-receiver';
import {
  deliveries,
  demoCustomer,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
} from '../helpers/webhooks-world';

const EVENTS = 10;
const MAX_WAITING = 3;

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>(
  'webhooks: a slow endpoint’s backlog is bounded',
);

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-backlog-bound',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: { id: 'key_bb', token: 'couvert_pk_backlogbound_000000000000000001', scopes: ['CUSTOMERS_READ'] },
    endpoint: { id: 'we_bb', path: '/slow', secret: 'whsec_backlog_bound_secret_000001' },
    // No attempt times out while the test holds it, however slow the machine.
    publisher: {
      concurrencyPerEndpoint: 1,
      maxWaitingPerEndpoint: MAX_WAITING,
      sweepIntervalMs: 20,
      timeoutMs: 600_000,
    },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('attempts past the bound are left to the log, then all made once each', async ({ w }) => {
  const gate = hold();
  w.rx.on('/slow', { until: gate.held });
  const publisher = w.running?.publisher;
  assert.ok(publisher);
  try {
    for (let i = 0; i < EVENTS; i++) await demoCustomer(w.rt, `Backlog ${i}`);
    await w.rx.waitFor('/slow', 1);
    await until('every event fanned out', 120_000, async () =>
      (await deliveries(w.rt)).length === EVENTS ? true : null,
    );
    // One in flight, at most MAX_WAITING behind it: the rest wait in the log, not in memory.
    assert.ok(publisher.pending <= 1 + MAX_WAITING, `${publisher.pending} attempts held in memory`);
  } finally {
    gate.release();
  }
  // Each lease that runs out lets the sweeper ask for as many as there is room for.
  await until('every delivery made', 120_000, async () => {
    w.clock.advance(61);
    const docs = await deliveries(w.rt);
    return docs.every((d) => d.status === 'succeeded') ? docs : null;
  });
  const ids = w.rx.for('/slow').map((r) => r.headers['x-service-delivery']);
  assert.is(new Set(ids).size, EVENTS, 'every delivery arrived');
  assert.is(ids.length, EVENTS, 'none twice');
});

t.run();
