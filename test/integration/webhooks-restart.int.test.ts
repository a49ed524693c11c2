// A restart of the embedded webhook publisher makes at once the attempts its previous run handed out
// and never made (a fan-out's first attempt, a requested retry, queued behind a slow one when the
// process stopped or died), instead of when their 60 s lease runs out, and makes each once. The
// service clock is frozen here: a lease never runs out, so only the restart can make them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryStream } from '../../commands/webhook-deliveries/events';
import { FixedClock } from '../../src/core/clock';
import type { RecordedEvent } from '../../src/ports/event-store';
import { CHECKPOINT_FILE, type RunningWebhooks, startWebhooks } from '../../src/webhooks/runner';
import { quietNow, type Receiver } from '../helpers/webhook-receiver';
import {
  demoCustomer as customer,
  deliveries,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
} from '../helpers/webhooks-world';

type World = WebhooksWorld & { clock: FixedClock; running: RunningWebhooks };

async function boot(path: string): Promise<World> {
  const w = await startWebhooksWorld({
    name: 'webhooks-restart',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: { id: 'key_rs', token: 'couvert_pk_restart_00000000000000000000001', scopes: ['CUSTOMERS_READ'] },
    endpoint: { id: 'we_rs', path, secret: 'whsec_restart_test_secret_000001' },
    // One attempt at a time, so the later ones queue behind a held one.
    publisher: { concurrencyPerEndpoint: 1 },
  });
  // D1's first attempt fails (retried 5 s later), every later one succeeds.
  w.rx.on(path, { statuses: [503, 200] });
  return w as World;
}

const close = (w: World) => w.close();

/**
 * Leaves what a stop with work queued leaves: D1's retry (attempt 2, asked for by the sweeper) and D3's
 * first attempt are handled (the checkpoint is past both) and queued behind D2's attempt, held at a
 * gate; the stop makes D2's and drops the two queued. Returns the customers D1, D2, D3.
 */
async function stopWithWorkQueued(w: World, path: string, handBack: boolean): Promise<string[]> {
  const c1 = await customer(w.rt, 'One');
  await w.rx.waitFor(path, 1);
  await until('D1 attempt 1 recorded', 120_000, async () =>
    (await deliveries(w.rt)).some((d) => d.attempt_count === 1),
  );
  const real = w.running.publisher;
  // Its private parts, replaced below: attempts held at a gate, and (a kill) nothing handed back.
  const publisher = real as unknown as {
    attempt: (job: unknown) => Promise<void>;
    ask: (...args: unknown[]) => Promise<boolean>;
  };
  const attempt = publisher.attempt.bind(publisher);
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  publisher.attempt = async (job) => {
    await gate;
    return attempt(job);
  };
  const c2 = await customer(w.rt, 'Two');
  await until('D2 attempt held', 120_000, () => real.pending === 1);
  // D1's retry is due: the sweeper asks for it, the publisher queues it behind D2's.
  w.clock.advance(6);
  await until('D1 attempt 2 queued', 120_000, () => real.pending === 2);
  const c3 = await customer(w.rt, 'Three');
  await until('D3 attempt 1 queued', 120_000, () => real.pending === 3);
  // A kill: nothing handed back (a stop that could not append is the same).
  if (!handBack) publisher.ask = async () => false;
  const stopped = w.running.stop();
  open();
  await stopped;
  return [c1, c2, c3];
}

const attemptsOf = (rx: Receiver, path: string, customerId: string) =>
  rx
    .for(path)
    .filter((r) => r.json?.data?.object?.id === customerId)
    .map((r) => r.headers['x-service-attempt']);

async function restartAndCheck(w: World, path: string, [c1, c2, c3]: string[]): Promise<void> {
  assert.is(w.rx.for(path).length, 2, 'before the restart: D1 attempt 1 and D2');
  w.running = startWebhooks(w.rt, { concurrencyPerEndpoint: 1 });
  // The clock is frozen: no lease runs out, only the restart can make them.
  await w.rx.waitFor(path, 4);
  assert.ok(await quietNow(w.rt, w.running, w.rx, path, 4), 'nothing sent twice');
  assert.equal(attemptsOf(w.rx, path, c1 as string), ['1', '2']);
  assert.equal(attemptsOf(w.rx, path, c2 as string), ['1']);
  assert.equal(attemptsOf(w.rx, path, c3 as string), ['1']);
  await until('every delivery recorded as succeeded', 120_000, async () =>
    (await deliveries(w.rt)).every((d) => d.status === 'succeeded'),
  );
}

const t = suite('webhooks: a restart makes the attempts its previous run dropped');

t('after a kill (nothing handed back), the restart asks for them at once and makes each once', async () => {
  const path = '/killed';
  const w = await boot(path);
  try {
    const customers = await stopWithWorkQueued(w, path, false);
    await restartAndCheck(w, path, customers);
  } finally {
    await close(w);
  }
});

t(
  'a graceful stop hands the queued attempts back in the log (another process makes them at once)',
  async () => {
    const path = '/stopped';
    const w = await boot(path);
    try {
      const customers = await stopWithWorkQueued(w, path, true);
      const checkpoint = BigInt(readFileSync(join(w.dir, CHECKPOINT_FILE), 'utf8'));
      const pending = (await deliveries(w.rt)).filter((d) => d.status === 'pending');
      assert.is(pending.length, 2, 'D1 attempt 2 and D3 attempt 1 not made');
      for (const d of pending) {
        const stream = await w.rt.events.readStream(deliveryStream(d._id));
        const last = stream.at(-1) as RecordedEvent;
        assert.is(last.type, 'WebhookAttemptRequested', `${d._id}: asked for again at the stop`);
        assert.is((last.data as { attempt: number }).attempt, d.next_attempt);
        // After the checkpoint: the next start follows the log from there and sees it.
        assert.ok(last.position > checkpoint, `${last.position} after the checkpoint ${checkpoint}`);
      }
      await restartAndCheck(w, path, customers);
    } finally {
      await close(w);
    }
  },
);

t.run();
