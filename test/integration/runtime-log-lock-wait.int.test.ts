// The service's embedded event log never waits for SQLite's write lock on the event loop: while another
// connection holds it (a CSV import's thread, the CLI in another process, a backup), an append waits
// in the log's writer thread and the loop keeps turning. The lock is held here by a connection on the
// test's own thread and released from a timer: an append that waited on the loop would hold it for
// the whole busy timeout (5 s), the timer could never fire, and the append would fail SQLITE_BUSY.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config';
import { createRuntime } from '../../src/runtime';

const dir = mkdtempSync(join(tmpdir(), 'couvert-log-lock-'));

test("an append waits for another connection's write lock off the event loop", async () => {
  const rt = await createRuntime(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }));
  const other = new Database(join(dir, 'events.sqlite'));
  try {
    await rt.events.append('probe-1', [{ type: 'Probed', data: { n: 1 } }], 'no_stream');
    other.exec('BEGIN IMMEDIATE');
    let turned = false;
    const release = new Promise<void>((resolve) =>
      setTimeout(() => {
        turned = true;
        other.exec('COMMIT');
        resolve();
      }, 20),
    );
    // The timer fires either way (an append failing SQLITE_BUSY first), before the connection closes.
    const result = await rt.events
      .append('probe-2', [{ type: 'Probed', data: { n: 2 } }], 'no_stream')
      .finally(() => release);
    assert.ok(turned, 'the loop turned while the append waited');
    assert.is(result.nextRevision, 0);
    assert.is((await rt.events.readStream('probe-2')).length, 1);
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await rt.close();
  }
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
