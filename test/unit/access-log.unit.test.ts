import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type AccessEntry, createAccessLog, createLogger } from '../../src/logger';

const entry = (i: number): AccessEntry => ({
  request_id: `req_${i}`,
  method: 'GET',
  route: '/api/partner/v1/me "quoted" \\ \n',
  status: 200,
  duration_ms: 1.25,
  restaurant_id: i % 2 ? 'rest_1' : null,
  credential_id: null,
  ip: '127.0.0.1',
});

function sink() {
  const chunks: string[] = [];
  return {
    chunks,
    dest: { write: (c: string) => chunks.push(c) },
    lines: () => chunks.join('').split('\n').filter(Boolean),
  };
}

test('lines are pino-shaped JSON with the allow-listed fields, escaped', () => {
  const s = sink();
  const log = createAccessLog('info', s.dest);
  log.write(entry(1));
  log.close();
  const [line] = s.lines().map((l) => JSON.parse(l));
  assert.equal(line, {
    level: 30,
    time: line.time,
    service: 'couvert',
    log: 'access',
    ...entry(1),
    msg: 'access',
  });
  assert.type(line.time, 'string');
});

test('time is written as the application logger writes it (one type per field on one stdout)', () => {
  const s = sink();
  const log = createAccessLog('info', s.dest);
  const app = sink();
  const logger = createLogger('info', app.dest);
  log.write(entry(1));
  logger.info({ job: 'x' }, 'ran');
  log.close();
  logger.flush();
  const [access] = s.lines().map((l) => JSON.parse(l));
  const [line] = app.lines().map((l) => JSON.parse(l));
  assert.is(typeof access.time, typeof line.time);
  assert.match(access.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.is(new Date(access.time).toISOString(), access.time);
});

test('written in batches of 256, the rest on close', () => {
  const s = sink();
  const log = createAccessLog('info', s.dest);
  for (let i = 0; i < 600; i++) log.write(entry(i));
  assert.is(s.chunks.length, 2, 'two full batches, none per line');
  log.close();
  assert.is(s.chunks.length, 3);
  assert.equal(
    s.lines().map((l) => JSON.parse(l).request_id),
    Array.from({ length: 600 }, (_, i) => `req_${i}`),
    'every line, in order',
  );
});

test('a quiet server still writes its lines within 200 ms', async () => {
  const s = sink();
  const log = createAccessLog('info', s.dest);
  log.write(entry(1));
  assert.is(s.chunks.length, 0);
  await new Promise((r) => setTimeout(r, 300));
  assert.is(s.lines().length, 1);
  log.close();
});

test('LOG_LEVEL above info (or silent) writes no access lines', () => {
  for (const level of ['warn', 'silent']) {
    const s = sink();
    const log = createAccessLog(level, s.dest);
    log.write(entry(1));
    log.close();
    assert.is(s.lines().length, 0, level);
  }
});

test('disabled, it starts no timer and hooks no exit listener', () => {
  const before = process.listenerCount('exit');
  const log = createAccessLog('warn');
  assert.is(process.listenerCount('exit'), before);
  log.write(entry(1));
  log.close();
});

test('values that repeat are quoted the same way every time, and escaped when they need it', () => {
  const s = sink();
  const log = createAccessLog('info', s.dest);
  const odd = { ...entry(2), restaurant_id: 'rest_"x"', ip: '10.0.0.1, "evil"' };
  for (let i = 0; i < 3; i++) log.write(odd);
  for (let i = 0; i < 2000; i++) log.write({ ...entry(i), ip: `10.0.${i >> 8}.${i & 255}` });
  log.write(odd);
  log.close();
  const lines = s.lines().map((l) => JSON.parse(l));
  assert.is(lines.length, 2004);
  for (const i of [0, 1, 2, 2003]) {
    assert.is(lines[i].restaurant_id, 'rest_"x"');
    assert.is(lines[i].ip, '10.0.0.1, "evil"');
    assert.is(lines[i].route, entry(0).route);
  }
  assert.is(lines[1002].ip, '10.0.3.231');
});

test('an uncaught exception still writes the pending lines (process exit hook)', () => {
  const script = `
    import { createAccessLog } from './src/logger.ts';
    const log = createAccessLog('info');
    for (let i = 0; i < 10; i++) log.write({ request_id: 'req_' + i, method: 'GET', route: '/x', status: 200,
      duration_ms: 1, restaurant_id: null, credential_id: null, ip: '127.0.0.1' });
    setTimeout(() => { throw new Error('boom'); }, 5);
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.is(r.status, 1, r.stderr);
  const ids = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).request_id);
  assert.equal(
    ids,
    Array.from({ length: 10 }, (_, i) => `req_${i}`),
  );
});

test.run();
