// The embedded key store's writes never wait for SQLite's write lock on the event loop: while another
// connection (the key writer's worker, a CSV import's thread, the CLI in another process) holds it, a
// write waits in the worker and the loop keeps turning. Here the lock is held by a connection on the
// test's own thread and released from a timer: a write that waited on the loop would hold it for the
// whole busy timeout (5 s), the timer could never fire, and the write would fail SQLITE_BUSY.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { pageKeySubject } from '../../src/ports/key-store';

const dir = mkdtempSync(join(tmpdir(), 'couvert-keys-lock-'));
let n = 0;

/** Runs `write` while another connection holds the write lock, released after the loop turned. */
async function underLock<T>(file: string, write: () => Promise<T>): Promise<{ value: T; turned: boolean }> {
  const other = new Database(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    let turned = false;
    const release = new Promise<void>((resolve) =>
      setTimeout(() => {
        turned = true;
        other.exec('COMMIT');
        resolve();
      }, 20),
    );
    // The timer fires either way (a write failing SQLITE_BUSY first), before the connection closes.
    const value = await write().finally(() => release);
    return { value, turned };
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
  }
}

async function withStore(run: (keys: SqliteKeyStore, file: string) => Promise<void>): Promise<void> {
  const file = join(dir, `keys-${n++}.sqlite`);
  const keys = SqliteKeyStore.open(file);
  try {
    await keys.obtainMany(['customer:warm']); // the worker started before the lock is taken
    await run(keys, file);
  } finally {
    await keys.close();
  }
}

test('obtain of a new subject waits for the lock off the event loop', () =>
  withStore(async (keys, file) => {
    const { value, turned } = await underLock(file, () => keys.obtain('customer:cus_new'));
    assert.ok(turned, 'the loop turned while the write waited');
    assert.is(value.length, 32);
    assert.equal(await keys.obtain('customer:cus_new'), value, 'the key written is the one kept');
  }));

test('link and unlink wait for the lock off the event loop', () =>
  withStore(async (keys, file) => {
    assert.ok((await underLock(file, () => keys.link('label:a', 'm1'))).turned);
    assert.equal(await keys.linked('label:a'), ['m1']);
    const { value, turned } = await underLock(file, () => keys.unlink('label:a'));
    assert.ok(turned);
    assert.is(value, 1);
    assert.equal(await keys.linked('label:a'), []);
  }));

test('destroy waits for the lock off the event loop (a subject key and a page key)', () =>
  withStore(async (keys, file) => {
    await keys.obtain('customer:cus_gone');
    const { value, turned } = await underLock(file, () =>
      keys.destroy('customer:cus_gone', '2026-11-28T00:00:00.000Z'),
    );
    assert.ok(turned);
    assert.is(value, true);
    assert.equal(await keys.find('customer:cus_gone'), {
      state: 'destroyed',
      destroyedAt: '2026-11-28T00:00:00.000Z',
    });
    const page = await keys.createPage(2);
    const gone = pageKeySubject(page.page, 0);
    const second = await underLock(file, () => keys.destroy(gone, '2026-11-28T00:00:01.000Z'));
    assert.ok(second.turned);
    assert.is(second.value, true);
    assert.is((await keys.find(gone)).state, 'destroyed');
    assert.equal(await keys.find(pageKeySubject(page.page, 1)), {
      state: 'active',
      key: page.keys[1] as Buffer,
    });
  }));

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
