// The read-ahead thread of the SQLite log (sqlite-read-ahead.ts, which types its messages): its own
// read-only connection to the file (WAL lets it read beside the live writer), reading the pages of a
// readAll ahead of the thread that applies them. A page is sent as the rows SQLite gives (arrays of
// the columns, data and metadata as their stored JSON text): measured, that is the cheapest form for
// the main thread to take (cheaper than one JSON text per page built by SQLite, or parsed objects).
// It reads only while fewer than `ahead` of its pages wait to be taken: it stays a few pages ahead
// and never holds the log in memory.
//
// Plain JavaScript, not TypeScript through tsx like the other workers: a worker that registers tsx
// costs ~0.5 s of CPU and ~30 MB of memory to start, this one ~0.1 s and ~9 MB, and it starts at
// every large readAll (an embedded start's catch-up).
import { workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { port, file, batchSize, dieAfterPages, ahead } = workerData;
let { after, remaining } = workerData;
// [0]: pages the main thread took; [1]: 1 once it wants no more. Credit is read here, without a
// message per page (a postMessage per page cost the main thread more than the page's rows).
const shared = new Int32Array(workerData.shared);

const PAGE_SQL =
  'SELECT position, id, stream, revision, type, data, metadata, created, hash FROM events WHERE position > ? ORDER BY position LIMIT ?';

const db = new Database(file, { readonly: true, fileMustExist: true });
try {
  const page = db.prepare(PAGE_SQL).raw();
  let sent = 0;
  let finished = false;
  while (!finished) {
    // Wait while `ahead` pages are sent and not taken (woken by Atomics.notify, or each second).
    for (;;) {
      if (Atomics.load(shared, 1) !== 0) {
        finished = true;
        break;
      }
      const taken = Atomics.load(shared, 0);
      if (sent - taken < ahead) break;
      Atomics.wait(shared, 0, taken, 1000);
    }
    if (finished) break;
    // Test hook: the thread stops here, as a crash would.
    if (dieAfterPages !== undefined && sent >= dieAfterPages) process.exit(3);
    const limit = Math.min(batchSize, remaining);
    const rows = limit <= 0 ? [] : page.all(after, limit);
    remaining -= rows.length;
    if (rows.length > 0) after = rows[rows.length - 1][0];
    finished = rows.length < limit || remaining <= 0;
    port.postMessage({ rows, last: after, end: finished });
    sent++;
  }
} catch (err) {
  // The main thread reads on from the last page it took (and meets the error itself, if it stays).
  port.postMessage({ failed: String(err?.message ?? err) });
} finally {
  db.close();
  port.close();
}
