// The server listens before it writes bootstrap or demo data; requests that arrive meanwhile wait for
// the data, and a start that fails answers them 500 INTERNAL_ERROR in the envelope and ends instead of hanging.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { AddressInfo, Server } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { registerDemoSeeder } from '../../src/demo';
import { createLogger } from '../../src/logger';
import { REQUEST_HANG_MS } from '../helpers/service';

// Seeders registered here run only in this file's process (each test file has its own).
let seeding: 'slow' | 'fail' = 'slow';
let seededAt = 0;
registerDemoSeeder(async () => {
  await new Promise((r) => setTimeout(r, 400));
  if (seeding === 'fail') throw new Error('seeding failed');
  seededAt = Date.now();
  return null;
});

/** `promise`, or a failure naming `what` once REQUEST_HANG_MS have passed (a hang bound). */
async function withinHang<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: nothing after ${REQUEST_HANG_MS} ms`)),
      REQUEST_HANG_MS,
    );
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

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
async function firstAnswer(port: number): Promise<{ status: number; at: number; body: string }> {
  const end = Date.now() + REQUEST_HANG_MS;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/partner/v1`);
      return { status: res.status, at: Date.now(), body: await res.text() };
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Starts the service on a port of the kernel's choosing; resolves with the port once it listens. */
async function start() {
  const listening = nextListening();
  const starting = startService(loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), {
    events: new MemoryEventStore(),
    logger: createLogger('silent'),
  });
  // A start that fails before it listens fails here, not after the hang bound.
  const server = await withinHang(Promise.race([listening, starting.then(() => listening)]), 'listening');
  return { server, port: (server.address() as AddressInfo).port, starting };
}

test('a request that arrives while the demo data is written waits for it', async () => {
  seeding = 'slow';
  const { port, starting } = await start();
  const answer = await firstAnswer(port);
  const svc = await withinHang(starting, 'the start');
  try {
    assert.is(answer.status, 200);
    assert.ok(seededAt > 0 && answer.at >= seededAt, 'answered only once the data was in');
  } finally {
    await svc.stop();
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
  assert.is(answer.status, 500);
  const body = JSON.parse(answer.body);
  assert.is(body.error.code, 'INTERNAL_ERROR');
  assert.match(body.error.request_id, /^req_/);
  // Nothing listens after a failed start: its server is closed (asked of the server itself, not of a
  // port another test file's server may have been given since).
  assert.is(started.server.listening, false, 'nothing listens after a failed start');
});

test.run();
