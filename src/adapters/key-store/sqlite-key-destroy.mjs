// Destroying a key in the SQLite key store (sqlite.ts), written once for both threads that may do it:
// the key writer thread (sqlite-key-writer-thread.mjs) and, without it, SqliteKeyStore on its own
// thread. Plain JavaScript so that the writer thread needs no tsx (see its header); its types are in
// sqlite-key-destroy.d.mts.

/**
 * The destroy of `db` (a connection to a key file, schema made): `destroy(subject, at, place, token)`
 * runs one IMMEDIATE transaction, then checkpoints the WAL; true when a key was destroyed by it. The
 * row it writes keeps `token` (destroyed_by), the calling destroy's own: a caller whose key writer died
 * before answering reads there whether its destroy was the one committed.
 */
export function keyDestroyer(db) {
  const destroyKey = db.prepare(
    'UPDATE subject_keys SET key = NULL, destroyed = ?, destroyed_by = ? WHERE subject = ? AND key IS NOT NULL',
  );
  const tombstone = db.prepare(
    'INSERT OR IGNORE INTO subject_keys (subject, key, created, destroyed, destroyed_by) VALUES (?, NULL, ?, ?, ?)',
  );
  const pageKeys = db.prepare('SELECT keys FROM key_pages WHERE page = ?');
  const rewritePage = db.prepare('UPDATE key_pages SET keys = ? WHERE page = ?');
  const transaction = db.transaction((subject, at, place, token) => {
    if (place !== null) {
      // A page's key: its 32 bytes overwritten with zeros in the page's row (secure_delete and the
      // checkpoint clear the old images), and its tombstone, in this one transaction.
      if (tombstone.run(subject, at, at, token).changes === 0) return false;
      const row = pageKeys.get(place.page);
      if (row === undefined || 32 * place.slot >= row.keys.length) return false;
      const keys = row.keys;
      keys.fill(0, 32 * place.slot, 32 * place.slot + 32);
      rewritePage.run(keys, place.page);
      keys.fill(0);
      return true;
    }
    const changed = destroyKey.run(at, token, subject).changes > 0;
    // A subject that never had a key gets a tombstone: no key is ever made for it after.
    if (!changed) tombstone.run(subject, at, at, token);
    return changed;
  });
  return (subject, at, place, token) => {
    const destroyed = transaction.immediate(subject, at, place, token);
    // The old page images (with the key) live in the WAL until a checkpoint copies them over.
    db.pragma('wal_checkpoint(TRUNCATE)');
    return destroyed;
  };
}
