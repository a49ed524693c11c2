// `audit export --out` (and `audit as-of --out`) stopped part way by Ctrl-C or SIGTERM: the file the run
// created is removed before the exit (130 / 143), as after a failure; an incomplete export never passes
// for one. Before, the signal ended the process and left the file as far as it had got.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openOutput } from '../../src/cli/audit-commands';

const dir = mkdtempSync(join(tmpdir(), 'couvert-audit-signal-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `body` with process.exit and stderr writes caught instead of done. */
async function caught(body: () => Promise<void> | void): Promise<number[]> {
  const exits: number[] = [];
  const exit = process.exit;
  const write = process.stderr.write;
  process.exit = ((code?: number) => {
    exits.push(code ?? 0);
  }) as typeof process.exit;
  process.stderr.write = (() => true) as typeof process.stderr.write;
  try {
    await body();
  } finally {
    process.exit = exit;
    process.stderr.write = write;
  }
  return exits;
}

for (const [signal, code] of [
  ['SIGTERM', 143],
  ['SIGINT', 130],
] as const) {
  test(`${signal} part way removes the --out file and exits ${code}`, async () => {
    const path = join(dir, `${signal}.ndjson`);
    const out = openOutput(path);
    await out.write('{"position":"1"}\n');
    assert.ok(existsSync(path));
    const exits = await caught(() => {
      process.emit(signal, signal);
    });
    assert.equal(exits, [code]);
    assert.not.ok(existsSync(path), 'the incomplete file is removed');
  });
}

test('a finished export is kept, and a later signal no longer touches it', async () => {
  const path = join(dir, 'done.ndjson');
  const baseline = process.listenerCount('SIGTERM');
  const out = openOutput(path);
  await out.write('{"position":"1"}\n');
  assert.is(process.listenerCount('SIGTERM'), baseline + 1, 'the export listens while it writes');
  await out.close();
  assert.is(process.listenerCount('SIGTERM'), baseline, 'and no longer once finished');
  const exits = await caught(() => {
    // Only when nobody else listens (a runner's own handler must not be set off by the test).
    if (baseline === 0) process.emit('SIGTERM', 'SIGTERM');
  });
  assert.equal(exits, []);
  assert.is(readFileSync(path, 'utf8'), '{"position":"1"}\n');
});

test.run();
