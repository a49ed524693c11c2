// The server listens before it writes bootstrap or demo data; requests that arrive meanwhile wait for
// the data, and a start that fails answers them 500 INTERNAL_ERROR in the envelope and ends instead of hanging.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { registerDemoSeeder } from '../../src/demo';
import { createLogger } from '../../src/logger';
import { REQUEST_HANG_MS, withinHang } from '../helpers/service';

// Seeders registered here run only in this file's process (each test file has its own).
// The seeder holds until the test releases it, which start() does from the server's first request:
// that request has arrived while the data is still being written, whatever the machine's load (no clock).
// Once released, the seeder lets the event loop turn a few times (no clock either) so that a server
// that did not wait would have answered meanwhile, and notes whether the held request was answered.
let seeding: 'slow' | 'fail' = 'slow';
let seeded = false;
let answeredBeforeData = false;
let heldResponse: ServerResponse | undefined;
let releaseSeeder: () => void = () => {};
let seederGate: Promise<void> = Promise.resolve();
registerDemoSeeder(async () => {
  await seederGate;
  for (let turn = 0; turn < 20; turn++) await new Promise((r) => setImmediate(r));
  answeredBeforeData = heldResponse?.headersSent ?? false;
  if (seeding === 'fail') throw new Error('seeding failed');
  seeded = true;
  return null;
});

/**
 * The next server this process starts, once it listens (Node's net.server.listen channel): the service
 * listens on port 0 and the test learns the port the kernel gave it, where a port found free and closed
 * before the start could be taken meanwhile by another test file's server (and answer for it).
 */
function nextListening(): Promise<Server> {
  return new Promise((resolve) => {
    const listened = (message: unknown) => {
      unsubscribe('tracing:net.server.listen:asyncEnd', listened);
      resolve((message as { server: Server }).server);
    };
    subscribe('tracing:net.server.listen:asyncEnd', listened);
  });
}

/** Polls until the port accepts a request, then returns that request's answer. */
async function firstAnswer(port: number): Promise<{ status: number; seeded: boolean; body: string }> {
  const end = Date.now() + REQUEST_HANG_MS;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/partner/v1`);
      // Whether the demo data was in when the answer came.
      const seededThen = seeded;
      return { status: res.status, seeded: seededThen, body: await res.text() };
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Starts the service on a port of the kernel's choosing; resolves with the port once it listens. */
async function start() {
  seeded = false;
  answeredBeforeData = false;
  heldResponse = undefined;
  seederGate = new Promise((resolve) => {
    releaseSeeder = resolve;
  });
  const listening = nextListening();
  const starting = startService(loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), {
    events: new MemoryEventStore(),
    logger: createLogger('silent'),
  });
  // A start that fails before it listens fails here, not after the hang bound.
  const server = await withinHang(Promise.race([listening, starting.then(() => listening)]), 'listening');
  // The seeder goes on once a request has reached the server (and so waits, or is answered, meanwhile).
  server.once('request', (_req: IncomingMessage, res: ServerResponse) => {
    heldResponse = res;
    releaseSeeder();
  });
  return { server, port: (server.address() as AddressInfo).port, starting };
}

test('a request that arrives while the demo data is written waits for it', async () => {
  seeding = 'slow';
  const { port, starting } = await start();
  try {
    const answer = await firstAnswer(port);
    await withinHang(starting, 'the start');
    assert.is(answer.status, 200);
    assert.is(
      answeredBeforeData,
      false,
      'the request that arrived during seeding was not answered before the data',
    );
    assert.ok(answer.seeded, 'answered only once the data was in (the request arrived before)');
  } finally {
    // Whatever failed above, the started service stops (the seeder let go first, or the start never ends).
    releaseSeeder();
    const svc = await withinHang(starting, 'the start').catch(() => null);
    await svc?.stop();
  }
});

test('a start that fails answers waiting requests 500 in the envelope and rejects, without hanging', async () => {
  seeding = 'fail';
  const started = await start();
  const starting = started.starting.then(
    () => null,
    (err: Error) => err,
  );
  const answer = await firstAnswer(started.port);
  // Without hanging: the start's failure comes within the hang bound (not a wall-clock deadline).
  const err = await withinHang(starting, 'the failed start');
  assert.is(err?.message, 'seeding failed');
  assert.is(answeredBeforeData, false, 'the waiting request was answered only once the start failed');
  assert.is(answer.status, 500);
  const body = JSON.parse(answer.body);
  assert.is(body.error.code, 'INTERNAL_ERROR');
  assert.match(body.error.request_id, /^req_/);
  // Nothing listens after a failed start: its server is closed (asked of the server itself, not of a
  // port another test file's server may have been given since).
  assert.is(started.server.listening, false, 'nothing listens after a failed start');
});

test.run();
