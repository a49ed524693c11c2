// The key writer thread of the SQLite key store (sqlite.ts, which types its messages): its own
// connection to the key file, writing what SqliteKeyStore asks (new keys, key pages, links, destroys)
// so that neither an fsync nor a wait for SQLite's write lock holds the main thread's event loop.
//
// Plain JavaScript, not TypeScript through tsx: it starts at the first key a process writes (the CLI
// too), and a worker that registers tsx costs ~0.5 s of CPU and ~30 MB of memory to start.
import { randomBytes, randomFillSync } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { keyDestroyer } from './sqlite-key-destroy.mjs';

const { file, timeout, dieAfterDestroy } = workerData;
const db = new Database(file, { timeout });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('secure_delete = ON');
const create = db.prepare(
  'INSERT OR IGNORE INTO subject_keys (subject, key, created) VALUES (?, ?, ?) RETURNING key',
);
const get = db.prepare('SELECT key FROM subject_keys WHERE subject = ?');
// The keys go back packed in one buffer, moved (not copied) to the caller: one ArrayBuffer for the
// batch instead of one structured clone per key. Tombstones (and, never seen, a key of another size)
// are listed apart.
const write = db.transaction((subjects, created) => {
  const fresh = randomBytes(32 * subjects.length);
  const packed = Buffer.alloc(32 * subjects.length);
  const tombstones = [];
  const odd = [];
  subjects.forEach((s, i) => {
    const row = create.get(s, fresh.subarray(32 * i, 32 * i + 32), created) ?? get.get(s);
    if (row.key === null) tombstones.push(i);
    else if (row.key.length !== 32) odd.push([i, row.key]);
    else row.key.copy(packed, 32 * i);
  });
  return { packed, tombstones, odd };
});
const insertPage = db.prepare('INSERT INTO key_pages (page, keys, created) VALUES (?, ?, ?)');
const link = db.prepare('INSERT OR IGNORE INTO key_links (label, member, created) VALUES (?, ?, ?)');
const unlink = db.prepare('DELETE FROM key_links WHERE label = ?');
const destroy = keyDestroyer(db);

parentPort.on('message', (m) => {
  try {
    if (m.op === 'link') {
      link.run(m.label, m.member, m.created);
      parentPort.postMessage({ id: m.id, done: true });
      return;
    }
    // The old images (secure_delete zeroes the cells) live in the WAL until a checkpoint copies them
    // over: TRUNCATE, here, where waiting for a reader holds no event loop.
    if (m.op === 'unlink') {
      const changes = unlink.run(m.label).changes;
      if (changes > 0) db.pragma('wal_checkpoint(TRUNCATE)');
      parentPort.postMessage({ id: m.id, changes });
      return;
    }
    if (m.op === 'destroy') {
      const destroyed = destroy(m.subject, m.at, m.place, m.token);
      // Test hook: the thread stops with the destroy committed and unanswered, as a crash would.
      if (dieAfterDestroy === true) process.exit(3);
      parentPort.postMessage({ id: m.id, destroyed });
      return;
    }
    if (m.page !== undefined) {
      // A page of keys: one row. Buffer.alloc is never a slice of a shared pool: safe to move.
      const packed = Buffer.alloc(32 * m.count);
      randomFillSync(packed);
      insertPage.run(m.page, packed, m.created);
      parentPort.postMessage({ id: m.id, packed }, [packed.buffer]);
      return;
    }
    const r = write.immediate(m.subjects, m.created);
    parentPort.postMessage({ id: m.id, ...r }, [r.packed.buffer]);
  } catch (err) {
    // SQLite's code goes with the message: a full disk (SQLITE_FULL) is told apart from a bug.
    parentPort.postMessage({
      id: m.id,
      error: String(err?.message || err),
      code: typeof err?.code === 'string' ? err.code : undefined,
    });
  }
});
