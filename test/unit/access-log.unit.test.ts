import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type AccessEntry, createAccessLog } from '../../src/logger';

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
  assert.type(line.time, 'number');
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

test.run();
