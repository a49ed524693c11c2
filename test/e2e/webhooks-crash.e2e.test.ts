// SIGKILL in the middle of retries: a spawned server (its own process) is killed while a delivery is
// being retried and while a burst of events is being fanned out; after a restart on the same DATA_DIR
// the retries go on where they were (numbered on), every event is delivered, and nothing already
// recorded as delivered is ever sent again, even when the publisher replays the log from a checkpoint
// far behind it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { demoBootstrap, REQUEST_HANG_MS } from '../helpers/service';
import { type SpawnedServer, spawnServer } from '../helpers/spawned-server';
import { quietFor, type Receiver, startReceiver } from '../helpers/webhook-receiver';

const TOKEN = 'couvert_pk_crash_hooks_00000000000000000001';

const t = suite<{ dir: string; rx: Receiver; env: Record<string, string> }>('webhooks: crash');
t.before(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-webhooks-crash-'));
  const bootstrap = join(ctx.dir, 'bootstrap.json');
  writeFileSync(
    bootstrap,
    JSON.stringify(
      demoBootstrap({}, [
        { id: 'key_c', token: TOKEN, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'] },
      ]),
    ),
  );
  ctx.rx = await startReceiver();
  ctx.env = {
    DATA_DIR: join(ctx.dir, 'data'),
    BOOTSTRAP_FILE: bootstrap,
    TEST_CLOCK: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ROLES: 'api,projector,webhooks',
    RATE_LIMIT_PER_MINUTE: '100000',
  };
});
t.after(async ({ dir, rx }) => {
  await rx.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(server: SpawnedServer, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.base}${path.startsWith('/__') ? '' : '/api/partner/v1'}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_HANG_MS),
  });
  // biome-ignore lint/suspicious/noExplicitAny: test JSON
  return { status: res.status, body: (await res.json()) as any };
}
const advance = (server: SpawnedServer, seconds: number) =>
  call(server, 'POST', '/__test/clock', { advance_seconds: seconds });

t(
  'retries survive SIGKILL, numbered on; a burst cut mid-fan-out is delivered; nothing delivered is sent again',
  async ({ rx, env }) => {
    rx.on('/hook', { statuses: [503, 503, 200] });
    let server = await spawnServer(env);
    try {
      const ep = await call(server, 'POST', '/webhook-endpoints', {
        url: rx.url('/hook'),
        enabled_events: ['customer.created'],
      });
      assert.is(ep.status, 201);
      // The first attempt is made after this instant, so the third is due no earlier than 35 s after it.
      const beforeFirst = Date.now();
      assert.is((await call(server, 'POST', '/customers', { name: 'Retry Me' })).status, 201);
      await rx.waitFor('/hook', 1);
      await advance(server, 6);
      await rx.waitFor('/hook', 2);
      // The second failure is recorded (history says so) before the kill.
      const deadline = Date.now() + 120_000;
      for (;;) {
        const hist = await call(server, 'GET', `/webhook-endpoints/${ep.body.data.id}/deliveries`);
        if (hist.body.data[0]?.attempts.length === 2) break;
        if (Date.now() > deadline) assert.unreachable('attempt 2 never recorded');
        await new Promise((r) => setTimeout(r, 50));
      }
      await server.kill();
      server = await spawnServer(env);
      // The restarted clock is real time again: the third attempt is due 35 s after the first. On a
      // machine slow enough that its time has (nearly) come, there is nothing early left to check.
      // A fixed wait on purpose: the publisher runs in the spawned process, which shows no queue to
      // wait on (publisherQuiet reads the in-process publisher), and an early attempt has no record.
      if (Date.now() + 800 < beforeFirst + 34_000)
        assert.ok(await quietFor(rx, '/hook', 2, 800), 'nothing sent before its time');
      await advance(server, 40);
      const got = await rx.waitFor('/hook', 3);
      assert.equal(
        got.map((r) => r.headers['x-service-attempt']),
        ['1', '2', '3'],
      );
      assert.is(new Set(got.map((r) => r.headers['x-service-delivery'])).size, 1);

      // The publisher's checkpoint before the burst (see the last restart).
      const checkpointFile = join(env.DATA_DIR as string, 'webhooks.checkpoint');
      const beforeBurst = readFileSync(checkpointFile, 'utf8');

      // A burst, killed while it is being fanned out and sent.
      rx.on('/burst', { statuses: [200] });
      const burst = await call(server, 'POST', '/webhook-endpoints', {
        url: rx.url('/burst'),
        enabled_events: ['customer.created'],
      });
      const ids: string[] = [];
      await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const res = await call(server, 'POST', '/customers', { name: `Burst ${i}` });
          if (res.status === 201) ids.push(res.body.data.id);
        }),
      );
      await server.kill();
      server = await spawnServer(env);
      // Fanned out but never attempted before the kill: asked for at the restart (before, once the
      // claim lease, 60 s, ran out: the advance is kept, it changes nothing now).
      await advance(server, 61);
      const until = Date.now() + 120_000;
      const seen = () => new Set(rx.for('/burst').map((r) => r.json.data.object.id as string));
      while ([...ids].some((id) => !seen().has(id)) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 200));
        await advance(server, 2);
      }
      assert.equal(
        [...ids].filter((id) => !seen().has(id)),
        [],
        'every event acknowledged 2xx was delivered',
      );
      // Once everything is recorded delivered (no delivery pending on either endpoint), a restart sends
      // none of it again, whatever the clock says.
      const settle = Date.now() + 120_000;
      for (;;) {
        const pending = await Promise.all(
          [ep.body.data.id, burst.body.data.id].map(
            async (id) =>
              (await call(server, 'GET', `/webhook-endpoints/${id}/deliveries?status=pending`)).body.data
                .length,
          ),
        );
        // The /hook endpoint takes customer.created too: its first deliveries of the burst are in
        // (none pending may also mean not fanned out to it yet, on a loaded machine).
        const atHook = new Set(rx.for('/hook').map((r) => r.json?.data?.object?.id as string));
        if (pending.every((n) => n === 0) && ids.every((id) => atHook.has(id))) break;
        if (Date.now() > settle) assert.unreachable(`still pending: ${pending}`);
        await advance(server, 61);
        await new Promise((r) => setTimeout(r, 300));
      }
      const before = { hook: rx.for('/hook').length, burst: rx.for('/burst').length };
      await server.kill();
      // The checkpoint catches up within 150 ms once the log is quiet, but a kill during a burst
      // leaves the publisher to handle again what came after it. Replaying past it must be harmless,
      // so the restart makes the worst case certain: it starts from where the checkpoint stood before
      // the burst.
      writeFileSync(checkpointFile, beforeBurst);
      server = await spawnServer(env);
      await advance(server, 6 * 3600);
      // A fixed wait on purpose: the replaying publisher runs in the spawned process, whose queue this
      // process cannot see (its checkpoint file says what it handled, not that a send it handed out
      // has been made), so no signal says it is done.
      const quiet = await quietFor(rx, '/hook', before.hook, 2_500);
      assert.ok(
        quiet,
        `sent again: ${JSON.stringify(
          rx
            .for('/hook')
            .slice(before.hook)
            .map((r) => [
              r.headers['x-service-delivery'],
              r.headers['x-service-attempt'],
              r.json?.type,
              r.json?.data?.object?.id,
            ]),
        )} after ${before.hook} (ids ${JSON.stringify(ids.length)})`,
      );
      assert.is(rx.for('/burst').length, before.burst);
      assert.is(burst.status, 201, JSON.stringify(burst.body));
      // Across the three kills, each event reached each endpoint as one delivery: a crash between a
      // send and its record repeats that attempt (same X-Service-Delivery), never a new delivery.
      for (const path of ['/hook', '/burst']) {
        const deliveries = new Map<string, Set<string>>();
        for (const r of rx.for(path)) {
          const id = r.json?.data?.object?.id as string;
          deliveries.set(
            id,
            (deliveries.get(id) ?? new Set()).add(r.headers['x-service-delivery'] as string),
          );
        }
        const doubled = [...deliveries].filter(([, d]) => d.size > 1).map(([id, d]) => [id, [...d]]);
        assert.equal(doubled, [], `${path}: one delivery per event`);
      }
    } finally {
      await server.kill();
    }
  },
);

t.run();
