// A bad value of a scheduled job's setting (NO_SHOW_GRACE_MINUTES, SEATING_REPAIR_AFTER_MINUTES) stops
// `npm start` as every other variable does, whatever ROLES says: "configuration error", exit 2, before the log is opened or
// anything written. Before, the server opened DATA_DIR, wrote the demo restaurant and a month of
// demo activity, listened, and only then failed ("failed to start", exit 1) when the scheduler started.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnServer } from '../helpers/spawned-server';

test('a bad scheduled-job setting is a configuration error: exit 2, nothing written', async () => {
  // ROLES=api: a process without the scheduler started on the bad value, which the next process given
  // the scheduler then refused.
  for (const [name, value, roles] of [
    ['NO_SHOW_GRACE_MINUTES', 'abc', undefined],
    ['SEATING_REPAIR_AFTER_MINUTES', '0', undefined],
    ['NO_SHOW_GRACE_MINUTES', 'abc', 'api'],
    ['SEATING_REPAIR_AFTER_MINUTES', '0', 'api'],
  ] as const) {
    const dataDir = mkdtempSync(join(tmpdir(), 'couvert-config-'));
    const env: Record<string, string> = { DATA_DIR: dataDir, [name]: value };
    if (roles) env.ROLES = roles;
    const failure = await spawnServer(env).then(
      async (s) => {
        await s.kill();
        return null;
      },
      (err: Error) => err.message,
    );
    assert.ok(failure !== null, `${name}=${value} ROLES=${roles} must stop the start`);
    assert.match(failure as string, 'the server exited (2) before listening');
    assert.match(
      failure as string,
      `couvert: configuration error: ${name} must be a whole number of minutes`,
    );
    assert.not.match(failure as string, /\n\s+at /, 'no stack trace');
    assert.not.ok(existsSync(join(dataDir, 'events.sqlite')), 'no log opened');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
