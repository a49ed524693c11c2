// A full disk under the key store (a small tmpfs filled up, as root; skipped visibly otherwise): the key
// writer thread's failure keeps SQLite's SQLITE_FULL, so a request needing a new key page (a new
// customer) answers 503 STORAGE_FULL with Retry-After, as a full log does. The thread answered a
// message only, and such a request answered 500 INTERNAL_ERROR, the status of a bug.
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { isStorageFull, storageFullError } from '../../src/core/errors';
import { fillFileSystem, isRoot, withSmallTmpfs } from '../helpers/full-disk';

const asRoot = isRoot ? test : test.skip;
if (!isRoot) console.log('SKIP key-store-full: mounting a small tmpfs needs root');

asRoot(
  'the key writer thread on a full disk fails with SQLITE_FULL, which the API maps to 503 STORAGE_FULL (not 500)',
  () =>
    withSmallTmpfs('couvert-key-store-full-', '2m', async (mount) => {
      const store = SqliteKeyStore.open(join(mount, 'keys.sqlite'));
      try {
        // The writer thread is started (and the file's pages made) while there is room.
        await store.createPage(8);
        await store.obtainMany(['cus_before']);
        fillFileSystem(join(mount, 'filler'));
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
        await store.close();
      }
    }),
);

test.run();
