// The embedded KeyStore: a SQLite file of its own beside the event log (DATA_DIR/keys.sqlite), so a
// copy of the log carries no key. Keys are written with synchronous=FULL before obtain() resolves.
// Destroying one overwrites it (secure_delete) and checkpoints the WAL, so the key's bytes do not
// linger in the file or its journal.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  KeyDestroyedError,
  type KeyLookup,
  type KeyStore,
  KeyStoreError,
  validateSubject,
} from '../../ports/key-store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS subject_keys (
  subject      TEXT PRIMARY KEY,
  key          BLOB,
  created      TEXT NOT NULL,
  destroyed    TEXT,
  CHECK ((key IS NULL) = (destroyed IS NOT NULL))
) STRICT;
`;

type Row = { key: Buffer | null; destroyed: string | null };

export class SqliteKeyStore implements KeyStore {
  readonly kind = 'sqlite' as const;
  private readonly stmt: {
    insert: Database.Statement<[string, Buffer, string]>;
    get: Database.Statement<[string], Row>;
    destroy: Database.Statement<[string, string]>;
    tombstone: Database.Statement<[string, string, string]>;
    create: Database.Statement<[string, Buffer, string], Row>;
  };

  private constructor(private readonly db: Database.Database) {
    this.stmt = {
      insert: db.prepare('INSERT OR IGNORE INTO subject_keys (subject, key, created) VALUES (?, ?, ?)'),
      get: db.prepare('SELECT key, destroyed FROM subject_keys WHERE subject = ?'),
      destroy: db.prepare(
        'UPDATE subject_keys SET key = NULL, destroyed = ? WHERE subject = ? AND key IS NOT NULL',
      ),
      tombstone: db.prepare(
        'INSERT OR IGNORE INTO subject_keys (subject, key, created, destroyed) VALUES (?, NULL, ?, ?)',
      ),
      create: db.prepare(
        'INSERT OR IGNORE INTO subject_keys (subject, key, created) VALUES (?, ?, ?) RETURNING key, destroyed',
      ),
    };
  }

  static open(filePath: string, options: { busyTimeoutMs?: number } = {}): SqliteKeyStore {
    if (filePath !== ':memory:') mkdirSync(dirname(filePath), { recursive: true });
    const db = new Database(filePath, { timeout: options.busyTimeoutMs ?? 5000 });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('secure_delete = ON');
      db.exec(SCHEMA);
      return new SqliteKeyStore(db);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private open(): void {
    if (!this.db.open) throw new KeyStoreError('the key store is closed');
  }

  async obtain(subject: string): Promise<Buffer> {
    this.open();
    const s = validateSubject(subject);
    let row = this.stmt.get.get(s);
    if (row === undefined) {
      this.stmt.insert.run(s, randomBytes(32), new Date().toISOString());
      row = this.stmt.get.get(s) as Row;
    }
    if (row.key === null) throw new KeyDestroyedError(s);
    return row.key;
  }

  async obtainMany(subjects: readonly string[]): Promise<Map<string, Buffer | null>> {
    this.open();
    const wanted = [...new Set(subjects.map(validateSubject))];
    const out = new Map<string, Buffer | null>();
    const missing: string[] = [];
    for (const s of wanted) {
      const row = this.stmt.get.get(s);
      if (row === undefined) missing.push(s);
      else out.set(s, row.key);
    }
    if (missing.length === 0) return out;
    // One IMMEDIATE transaction for every new key: one fsync (synchronous=FULL) for the lot. Read
    // again inside it: a key another process made meanwhile is kept (INSERT OR IGNORE).
    const created = new Date().toISOString();
    // One draw of randomness for every key (randomBytes is a system call each time).
    const fresh = randomBytes(32 * missing.length);
    this.db
      .transaction(() => {
        for (const [i, s] of missing.entries()) {
          const row =
            this.stmt.create.get(s, fresh.subarray(32 * i, 32 * i + 32), created) ?? this.stmt.get.get(s);
          out.set(s, (row as Row).key);
        }
      })
      .immediate();
    return out;
  }

  async find(subject: string): Promise<KeyLookup> {
    this.open();
    const row = this.stmt.get.get(validateSubject(subject));
    if (row === undefined) return { state: 'none' };
    if (row.key === null) return { state: 'destroyed', destroyedAt: row.destroyed as string };
    return { state: 'active', key: row.key };
  }

  async destroy(subject: string, at: string): Promise<boolean> {
    this.open();
    const s = validateSubject(subject);
    const destroyed = this.db
      .transaction(() => {
        const changed = this.stmt.destroy.run(at, s).changes > 0;
        if (!changed) this.stmt.tombstone.run(s, at, at);
        return changed;
      })
      .immediate();
    // The old page images (with the key) live in the WAL until a checkpoint copies them over.
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    return destroyed;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
