// A DATA_DIR the process cannot write (a read-only mount; a directory of another user) stops the CLI
// and the server with a message naming it. Before: SQLite's "unable to open database file", naming
// neither file nor directory. As root (permissions do not apply) the directory is a read-only bind
// mount; otherwise a directory without write permission.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writableDataDir } from '../../src/data-dir-lock';
import { createRestaurantByCli } from '../helpers/cli-process';
import type { TestService } from '../helpers/service';

test('a DATA_DIR that cannot be written is named by the CLI, exit 1', async () => {
  const root = mkdtempSync(join(tmpdir(), 'couvert-ro-'));
  const source = join(root, 'source');
  const dataDir = join(root, 'data');
  mkdirSync(source);
  mkdirSync(dataDir);
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    execFileSync('mount', ['--bind', source, dataDir]);
    execFileSync('mount', ['-o', 'remount,bind,ro', dataDir]);
  } else chmodSync(dataDir, 0o555);
  try {
    // A command that starts a log: the others refuse a DATA_DIR holding none before trying to write it.
    const run = await createRestaurantByCli({ dataDir } as TestService);
    assert.is(run.code, 1, run.stderr);
    assert.match(run.stderr, `error: DATA_DIR ${dataDir} is not writable (`);
    assert.match(run.stderr, asRoot ? 'a read-only file system' : 'permission denied');
  } finally {
    if (asRoot) execFileSync('umount', [dataDir]);
    else chmodSync(dataDir, 0o755);
    rmSync(root, { recursive: true, force: true });
  }
});

test('a DATA_DIR to make under a read-only parent names why, not ENOENT', () => {
  const root = mkdtempSync(join(tmpdir(), 'couvert-ro-'));
  const source = join(root, 'source');
  const parent = join(root, 'parent');
  mkdirSync(source);
  mkdirSync(parent);
  const asRoot = process.getuid?.() === 0;
  let bound = false;
  try {
    if (asRoot) {
      execFileSync('mount', ['--bind', source, parent]);
      bound = true;
      execFileSync('mount', ['-o', 'remount,bind,ro', parent]);
    } else chmodSync(parent, 0o555);
    // Two levels to make: a recursive mkdir says ENOENT for the second.
    const dataDir = join(parent, 'couvert', 'data');
    assert.throws(
      () => writableDataDir(dataDir),
      (err: Error) =>
        err.message.startsWith(`DATA_DIR ${dataDir} is not writable (`) &&
        err.message.includes(asRoot ? '(a read-only file system)' : '(permission denied)'),
    );
  } finally {
    if (bound) execFileSync('umount', [parent]);
    else chmodSync(parent, 0o755);
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
