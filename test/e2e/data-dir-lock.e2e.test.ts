// One embedded server per DATA_DIR (DESIGN.md §1, src/data-dir-lock.ts): a second `npm start` on the
// same directory is refused with a message naming it, and nothing of its own runs (before, it started
// a second webhook publisher, scheduler and checkpoint writer on the same files). The CLI still runs
// beside the server, and once the server is gone (even killed) the directory starts again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/cli-process';
import type { TestService } from '../helpers/service';
import { spawnServer } from '../helpers/spawned-server';

test('a second server on the same DATA_DIR is refused; the CLI runs beside; a killed server frees it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-lock-'));
  const first = await spawnServer({ DATA_DIR: dataDir });
  try {
    const second = await spawnServer({ DATA_DIR: dataDir }).then(
      async (s) => {
        await s.kill();
        return null;
      },
      (err: Error) => err.message,
    );
    assert.ok(second !== null, 'the second server must not start');
    assert.match(second as string, 'the server exited (1) before listening');
    assert.match(second as string, `DATA_DIR ${dataDir} is in use by another Couvert server`);
    assert.not.match(second as string, /\n\s+at /, 'a message, not a stack trace');

    const cli = await runCli({ dataDir } as TestService, ['restaurants', 'list']);
    assert.is(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, 'rest_demo');
    const me = await fetch(`${first.base}/api/partner/v1/openapi.json`);
    assert.is(me.status, 200, 'the first server still answers');
  } finally {
    await first.kill();
  }
  const again = await spawnServer({ DATA_DIR: dataDir });
  try {
    assert.is(await again.stop(), 0);
  } finally {
    await again.kill(); // gone already after a clean stop; killed if the stop failed
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
