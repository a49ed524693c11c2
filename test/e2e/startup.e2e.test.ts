// The server listens before it writes bootstrap or demo data; requests that arrive meanwhile wait for
// the data, and a start that fails answers them 500 INTERNAL_ERROR in the envelope and ends instead of hanging.
import { createServer } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { registerDemoSeeder } from '../../src/demo';
import { createLogger } from '../../src/logger';

// Seeders registered here run only in this file's process (each test file has its own).
let seeding: 'slow' | 'fail' = 'slow';
let seededAt = 0;
registerDemoSeeder(async () => {
  await new Promise((r) => setTimeout(r, 400));
  if (seeding === 'fail') throw new Error('seeding failed');
  seededAt = Date.now();
  return null;
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** Polls until the port accepts a request, then returns that request's answer. */
async function firstAnswer(port: number): Promise<{ status: number; at: number; body: string }> {
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/partner/v1`);
      return { status: res.status, at: Date.now(), body: await res.text() };
    } catch {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

const start = (port: number) =>
  startService(loadConfig({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), {
    events: new MemoryEventStore(),
    logger: createLogger('silent'),
  });

test('a request that arrives while the demo data is written waits for it', async () => {
  seeding = 'slow';
  const port = await freePort();
  const starting = start(port);
  const answer = await firstAnswer(port);
  const svc = await starting;
  try {
    assert.is(answer.status, 200);
    assert.ok(seededAt > 0 && answer.at >= seededAt, 'answered only once the data was in');
  } finally {
    await svc.stop();
  }
});

test('a start that fails answers waiting requests 500 in the envelope and rejects, without hanging', async () => {
  seeding = 'fail';
  const port = await freePort();
  const began = Date.now();
  const starting = start(port).then(
    () => null,
    (err: Error) => err,
  );
  const answer = await firstAnswer(port);
  const err = await starting;
  assert.is(err?.message, 'seeding failed');
  assert.is(answer.status, 500);
  const body = JSON.parse(answer.body);
  assert.is(body.error.code, 'INTERNAL_ERROR');
  assert.match(body.error.request_id, /^req_/);
  assert.ok(Date.now() - began < 5_000, 'the failed start ended promptly');
  const after = await fetch(`http://127.0.0.1:${port}/api/partner/v1`).then(
    () => 'answered',
    () => 'refused',
  );
  assert.is(after, 'refused', 'nothing listens after a failed start');
});

test.run();
