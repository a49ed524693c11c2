// SIGTERM while the server starts, replaying its log into the read models: the replay stops, what the
// start opened is closed, and the process exits 0 with the "stopped" JSON line, instead of finishing a
// replay that takes minutes on a large log (an orchestrator then kills it: 10 s of grace in Docker).
// The log is the demo's, made in-process; the spawned server reads it slowly (test/helpers/slow-replay.ts:
// 50 ms an event past the 100th, minutes for the whole), so the signal lands mid-replay whatever the
// machine's speed, and the test asserts what was replayed, not how long anything took.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { withinHang } from '../helpers/service';

test('the real process: SIGTERM during the start replay stops it and exits with a "stopped" line', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-stop-replay-'));
  let child: ReturnType<typeof spawn> | null = null;
  try {
    const made = await startService(
      loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ROLES: 'api' }),
      { logger: createLogger('silent') },
    );
    await made.stop();
    const log = await SqliteEventStore.open(join(dataDir, 'events.sqlite'));
    let total = 0;
    for await (const _ of log.readAll()) total++;
    await log.close();
    assert.ok(total > 500, `the demo's log holds ${total} events`);

    child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './test/helpers/slow-replay.ts', 'src/main.ts'],
      {
        env: {
          ...process.env,
          PORT: '0',
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          LOG_LEVEL: 'info',
          ROLES: 'api',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    const slowed = new Promise<void>((resolve) => {
      const look = (d: Buffer) => {
        out += d.toString();
        if (out.includes('slowing down')) resolve();
      };
      child?.stdout?.on('data', look);
      child?.stderr?.on('data', look);
    });
    const exited = new Promise<number | null>((r) => child?.once('exit', (code) => r(code)));
    await withinHang(slowed, 'the replay under way');
    child.kill('SIGTERM');
    assert.is(await withinHang(exited, 'the exit after SIGTERM'), 0, out);
    assert.not.match(out, /listening on/, 'the start did not finish');
    const stopped = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'stopped');
    assert.is(stopped.length, 1, out);
    assert.is(stopped[0].during, 'start');
    assert.type(stopped[0].duration_ms, 'number');
    assert.ok(stopped[0].replayed_events < total, out);
    const read = Number(/slow-replay: (\d+) events read in all/.exec(out)?.[1]);
    assert.ok(read < total, `read ${read} of the log's ${total} events:\n${out}`);
  } finally {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
