// A DATA_DIR the server or the CLI makes is its owner's only (0700): it holds the key store (every
// customer's key, in clear), the sealed log and the secrets key, and SQLite creates its files with the
// umask's modes (0644 under the usual 022). Before, the directory was made 0755, so any local account
// could copy keys.sqlite and events.sqlite and open every customer's personal data. A directory that
// already exists keeps its modes.
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRestaurantByCli } from '../helpers/cli-process';
import { startTestService, type TestService } from '../helpers/service';

const mode = (path: string) => statSync(path).mode & 0o777;
// The usual umask, whatever this machine's (the CLI's process inherits it): under 022 a directory made
// without a mode of its own is 0755.
process.umask(0o022);

test('the server makes a missing DATA_DIR 0700 (the usual umask would give 0755)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'couvert-mode-'));
  const dataDir = join(root, 'data');
  let svc: TestService | null = null;
  try {
    svc = await startTestService({ dataDir });
    assert.is((await svc.api('GET', '/')).status, 200);
    assert.is(mode(dataDir).toString(8), '700');
  } finally {
    await svc?.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('the CLI (a command that starts a log) makes a missing DATA_DIR 0700; an existing one keeps its modes', async () => {
  const root = mkdtempSync(join(tmpdir(), 'couvert-mode-'));
  const made = join(root, 'made');
  const existing = join(root, 'existing');
  mkdirSync(existing, { mode: 0o750 });
  try {
    for (const dataDir of [made, existing]) {
      // restaurants create: the other commands refuse a DATA_DIR holding no log (cli-data-dir-without-log).
      const run = await createRestaurantByCli({ dataDir } as TestService);
      assert.is(run.code, 0, run.stderr);
    }
    assert.is(mode(made).toString(8), '700');
    assert.is(mode(existing).toString(8), '750');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
