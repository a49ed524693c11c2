// The writer thread of the SQLite log (sqlite-writer.ts): its own connection to the file, the same
// group commit as the main thread's (sqlite-writes.ts). COMMIT and its fsync happen here, so they do
// not hold the service's event loop.

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { EventStoreError } from '../../ports/event-store';
import { decodeGroup, type EncodedGroup, freshRange, sendError, sqliteWrites } from './sqlite-writes';

const { file, synchronous, timeout, committed } = workerData as {
  file: string;
  synchronous: string;
  timeout: number;
  committed: SharedArrayBuffer;
};
// What the last group committed, published the moment COMMIT returns, before the answer's message
// (which waits for the main thread's event loop): [group id + 1, first position, last position].
const published = new BigInt64Array(committed);
const db = new Database(file, { timeout });
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
const writes = sqliteWrites(db);

parentPort?.on('message', (m: { id: number; group: EncodedGroup }) => {
  try {
    const queue = decodeGroup(m.group);
    const written = writes.groupTx(queue);
    const range = freshRange(queue, written);
    if (range !== null) {
      Atomics.store(published, 0, 0n);
      Atomics.store(published, 1, BigInt(range[0]));
      Atomics.store(published, 2, BigInt(range[1]));
      Atomics.store(published, 0, BigInt(m.id + 1));
    }
    const outcomes = written.map((o) =>
      o.ok ? o : { ok: false as const, error: sendError(o.error as EventStoreError) },
    );
    parentPort?.postMessage({ id: m.id, outcomes });
  } catch (err) {
    // Nothing of the group was committed: the main thread replays it one append at a time.
    const e = err as { message?: string; code?: string };
    parentPort?.postMessage({ id: m.id, failed: String(e?.message ?? err), code: e?.code });
  }
});
parentPort?.postMessage({ ready: true });
