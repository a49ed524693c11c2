// A bad value of a scheduled job's setting (NO_SHOW_GRACE_MINUTES, SEATING_REPAIR_AFTER_MINUTES) stops
// `npm start` as every other variable does: "configuration error", exit 2, before the log is opened or
// anything written. Before, the server opened DATA_DIR, wrote the demo restaurant and a month of
// demo activity, listened, and only then failed ("failed to start", exit 1) when the scheduler started.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnServer } from '../helpers/spawned-server';

test('a bad scheduled-job setting is a configuration error: exit 2, nothing written', async () => {
  for (const [name, value] of [
    ['NO_SHOW_GRACE_MINUTES', 'abc'],
    ['SEATING_REPAIR_AFTER_MINUTES', '0'],
  ]) {
    const dataDir = mkdtempSync(join(tmpdir(), 'couvert-config-'));
    const failure = await spawnServer({ DATA_DIR: dataDir, [name as string]: value as string }).then(
      async (s) => {
        await s.kill();
        return null;
      },
      (err: Error) => err.message,
    );
    assert.ok(failure !== null, `${name}=${value} must stop the start`);
    assert.match(failure as string, 'the server exited (2) before listening');
    assert.match(
      failure as string,
      `couvert: configuration error: ${name} must be a whole number of minutes`,
    );
    assert.not.ok(existsSync(join(dataDir, 'events.sqlite')), 'no log opened');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
