// A full disk under the key store (a small tmpfs filled up, as root; skipped visibly otherwise): the key
// writer thread's failure keeps SQLite's SQLITE_FULL, so a request needing a new key page (a new
// customer) answers 503 STORAGE_FULL with Retry-After, as a full log does. The thread answered a
// message only, and such a request answered 500 INTERNAL_ERROR, the status of a bug.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { isStorageFull, storageFullError } from '../../src/core/errors';

/** Fills the file system holding `file` until it refuses another byte. */
function fill(file: string): void {
  for (const [name, size] of [
    [file, 64 * 1024],
    [`${file}.rest`, 512],
  ] as const) {
    const fd = openSync(name, 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(size));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      closeSync(fd);
    }
  }
}

const asRoot = process.getuid?.() === 0 ? test : test.skip;
if (process.getuid?.() !== 0) console.log('SKIP key-store-full: mounting a small tmpfs needs root');

asRoot(
  'the key writer thread on a full disk fails with SQLITE_FULL, which the API maps to 503 STORAGE_FULL (not 500)',
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'couvert-key-store-full-'));
    const mount = join(root, 'small');
    mkdirSync(mount);
    let mounted = false;
    let keys: SqliteKeyStore | undefined;
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount]);
      mounted = true;
      const store = SqliteKeyStore.open(join(mount, 'keys.sqlite'));
      keys = store;
      // The writer thread is started (and the file's pages made) while there is room.
      await store.createPage(8);
      await store.obtainMany(['cus_before']);
      fill(join(mount, 'filler'));
      for (const attempt of [
        () => store.createPage(1024),
        () => store.obtainMany(['cus_a', 'cus_b', 'cus_c']),
      ]) {
        const err = await attempt().then(
          () => null,
          (e: unknown) => e,
        );
        assert.ok(err, 'the write fails on the full disk');
        assert.match(String((err as Error).message), /database or disk is full/);
        assert.ok(isStorageFull(err), `taken for a full disk: ${String(err)}`);
        assert.is(storageFullError(err)?.status, 503);
      }
    } finally {
      await keys?.close();
      if (mounted) execFileSync('umount', [mount]);
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test.run();
