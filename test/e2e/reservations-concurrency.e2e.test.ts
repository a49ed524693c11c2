// No overbooking, ever (DESIGN.md §1.2), and the timeout story of spec §7, over real HTTP.
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: ReservationService; second: { url: string; child: ChildProcess } }>(
  'reservations: concurrency',
);
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.second = await secondProcess(ctx.svc.dataDir);
});
t.after(async ({ svc, second }) => {
  if (second && second.child.exitCode === null && second.child.signalCode === null)
    await new Promise((resolve) => {
      second.child.once('exit', resolve);
      second.child.kill('SIGTERM');
    });
  await svc?.close();
});

/**
 * A second server process on the same SQLite log. Within one process, requests for the same
 * capacity stream queue behind each other; across processes only the expected revision of each
 * append keeps two bookings off one table, so this is where that guarantee is really exercised.
 */
async function secondProcess(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ROLES: 'api',
      RATE_LIMIT_PER_MINUTE: '1000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not listening, but running: it must not outlive the suite
      reject(new Error(`second process did not start:\n${out}`));
    }, 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        resolve(m[1] as string);
      }
    });
  });
  return { url, child };
}

const ROUNDS = 10;
const PARALLEL = 50;

t(
  `${PARALLEL} parallel creates for the last free table, over two processes: exactly one 201, ${ROUNDS} times`,
  async ({ svc, second }) => {
    for (let round = 0; round < ROUNDS; round++) {
      // Far enough ahead for the second process, which runs on the real clock.
      const day = `2030-07-${String(round + 1).padStart(2, '0')}`;
      const startAt = `${day}T20:00:00+02:00`;
      // A party of 7 fits only tbl_8, so each round competes for one table.
      const answers = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) => {
          const body = { start_at: startAt, party_size: 7, external_id: `race-${round}-${i}` };
          return i % 2 === 0 ? create(svc, body) : create(svc, body, TOKENS.full, second.url);
        }),
      );
      const created = answers.filter((a) => a.status === 201);
      assert.is(created.length, 1, `round ${round}: ${answers.map((a) => a.status).join(',')}`);
      for (const a of answers.filter((x) => x.status !== 201)) {
        assert.is(a.status, 422, a.text);
        assert.is(a.body.error.details.reason, 'NO_TABLE');
      }
      const capacity = await svc.rt.events.readStream(`capacity-rest_demo-${day}`);
      assert.equal(
        capacity.map((e) => e.type),
        ['SeatingHeld'],
      );
      const listed = await svc.api(
        'GET',
        `/reservations?start_at_from=${encodeURIComponent(startAt)}&start_at_to=${encodeURIComponent(startAt)}`,
        { token: TOKENS.full },
      );
      assert.is(listed.body.pagination.total, 1);
      assert.is(listed.body.data[0].id, created[0]?.body.data.id);
    }
  },
);

t(
  'parallel creates with one external_id on free slots: one 201, the rest 409, no seat left held',
  async ({ svc }) => {
    const day = '2026-07-20';
    const hours = ['19:00', '19:15', '19:30', '19:45', '20:00', '20:15', '20:30', '20:45', '21:00', '21:15'];
    const answers = await Promise.all(
      hours.map((h) => create(svc, { start_at: `${day}T${h}:00+02:00`, external_id: 'one-and-only' })),
    );
    assert.equal(answers.filter((a) => a.status === 201).length, 1);
    assert.ok(answers.filter((a) => a.status !== 201).every((a) => a.status === 409));
    // The external_id is claimed before any table is held: losers never held one, even for a moment.
    const capacity = await svc.rt.events.readStream(`capacity-rest_demo-${day}`);
    assert.equal(
      capacity.map((e) => e.type),
      ['SeatingHeld'],
    );
  },
);

/** Sends a create and hangs up as soon as the request is written: the answer is lost. */
function createAndHangUp(svc: TestService, body: unknown): Promise<void> {
  const url = new URL(`${svc.url}/api/partner/v1/reservations`);
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKENS.full}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      () => assert.unreachable('the client hung up before any answer'),
    );
    req.on('error', () => resolve());
    req.end(payload, () => {
      req.destroy();
      resolve();
    });
  });
}

t(
  'spec §7: a create whose response was lost is found by GET /reservations?external_id=, and not made twice',
  async ({ svc }) => {
    const body = { party_size: 2, start_at: '2026-07-21T20:00:00+02:00', external_id: 'lost-response-1' };
    await createAndHangUp(svc, body);
    // The partner searches before creating again (bounded: the server finishes the request on its own;
    // until a hang bound, not 100 looks 20 ms apart, a deadline a loaded machine could miss).
    let found: { id: string; external_id: string } | undefined;
    for (const end = Date.now() + 120_000; !found && Date.now() < end; ) {
      const res = await svc.api('GET', '/reservations?external_id=lost-response-1', { token: TOKENS.full });
      found = res.body.data[0];
      if (!found) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(found, 'the reservation was created although its answer was lost');
    assert.is(found?.external_id, 'lost-response-1');
    // Creating it again anyway is refused: the external_id is taken.
    const retry = await create(svc, body);
    assert.is(retry.status, 409);
    const all = await svc.api('GET', '/reservations?external_id=lost-response-1', { token: TOKENS.full });
    assert.is(all.body.pagination.total, 1);
  },
);

t.run();
