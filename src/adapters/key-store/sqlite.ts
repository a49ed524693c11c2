// The embedded KeyStore: a SQLite file of its own beside the event log (DATA_DIR/keys.sqlite), so a
// copy of the log carries no key. Keys are written with synchronous=FULL before obtain() resolves.
// Destroying one overwrites it (secure_delete) and checkpoints the WAL, so the key's bytes do not
// linger in the file or its journal.
//
// Every write (obtain's and obtainMany's new keys, createPage's row, link, unlink, destroy and their
// checkpoints) runs in a worker thread with a connection of its own to the file, started on first
// use: neither the fsync nor a wait for SQLite's write lock (busy_timeout, 5 s) holds the event loop.
// Another connection may hold that lock for a while: a CSV import's thread, the CLI in another
// process, and a TRUNCATE checkpoint waits for readers. Should the worker fail (or for ':memory:'),
// the write is done here. This thread only reads (WAL: a read never waits for the write lock).
// The worker is plain JavaScript (sqlite-key-writer-thread.mjs); destroy's transaction, which both
// threads run, is written once (sqlite-key-destroy.mjs).
//
// Two layouts, both read: `subject_keys`, one row per subject (customers' own keys, the pool keys
// made before pages, and every tombstone), and `key_pages`, one row per page of keys (the sealing
// layer's pool; subject `key:<page>.<slot>`). Destroying a page's key overwrites its 32 bytes with
// zeros in the page's row and leaves a tombstone row for its subject in `subject_keys`, in one
// transaction; a tombstone there wins over the page. A file written before pages existed gains the
// empty `key_pages` table when opened; nothing else changes.
//
// A destroyed key's row keeps the token of the destroy call that destroyed it (`destroyed_by`, null on
// rows destroyed before it existed; a file without the column gains it when opened): a call whose key
// writer died between its commit and its answer learns from it whether the commit was its own.

import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { DATA_DIR_MODE } from '../../core/data-dir-mode';
import { WorkerRequests } from '../../core/worker-requests';
import {
  KeyDestroyedError,
  type KeyLookup,
  type KeyPage,
  type KeyStore,
  KeyStoreError,
  newPageId,
  pagedKeyAnswer,
  parsePageKeySubject,
  validateLinkPart,
  validatePageSize,
  validateSubject,
} from '../../ports/key-store';
import { keyDestroyer } from './sqlite-key-destroy.mjs';

/** Key pages a store keeps read (SqliteKeyStore.pageCache). */
const PAGE_CACHE = 8;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS subject_keys (
  subject      TEXT PRIMARY KEY,
  key          BLOB,
  created      TEXT NOT NULL,
  destroyed    TEXT,
  destroyed_by TEXT,
  CHECK ((key IS NULL) = (destroyed IS NOT NULL))
) STRICT;
CREATE TABLE IF NOT EXISTS key_pages (
  page         TEXT PRIMARY KEY,
  keys         BLOB NOT NULL,
  created      TEXT NOT NULL,
  CHECK (length(keys) % 32 = 0 AND length(keys) > 0)
) STRICT;
CREATE TABLE IF NOT EXISTS key_links (
  label        TEXT NOT NULL,
  member       TEXT NOT NULL,
  created      TEXT NOT NULL,
  PRIMARY KEY (label, member)
) STRICT, WITHOUT ROWID;
`;

type Row = { key: Buffer | null; destroyed: string | null };

/**
 * A file made before `destroyed_by` gains it (null on its rows). Checked again inside an IMMEDIATE
 * transaction: two processes opening the file at once add it once.
 */
function addDestroyedBy(db: Database.Database): void {
  const has = () =>
    db.prepare("SELECT 1 FROM pragma_table_info('subject_keys') WHERE name = 'destroyed_by'").get() !==
    undefined;
  if (has()) return;
  db.transaction(() => {
    if (!has()) db.exec('ALTER TABLE subject_keys ADD COLUMN destroyed_by TEXT');
  }).immediate();
}
/** obtainMany looks up at most this many subjects before it writes (see there). */
const PRECHECK = 32;

export class SqliteKeyStore implements KeyStore {
  readonly kind = 'sqlite' as const;
  private readonly stmt: {
    get: Database.Statement<[string], Row>;
    destroyedBy: Database.Statement<[string], string | null>;
    create: Database.Statement<[string, Buffer, string], Row>;
    many: Database.Statement<[string], Row & { subject: string }>;
    insertPage: Database.Statement<[string, Buffer, string]>;
    slot: Database.Statement<
      [{ subject: string; slot: number; page: string }],
      { destroyed: string | null; key: Buffer | null }
    >;
    pages: Database.Statement<[string], { page: string; keys: Buffer }>;
    hasKey: Database.Statement<[{ subject: string; page: string | null; slot: number | null }], number>;
    link: Database.Statement<[string, string, string]>;
    linked: Database.Statement<[string], { member: string }>;
    unlink: Database.Statement<[string]>;
  };

  private writer: KeyWriter | null = null;
  private writerFailed = false;
  private closing = false;
  /** destroy's write on this thread, when the key writer cannot do it (':memory:', or it failed). */
  private readonly destroyKey: ReturnType<typeof keyDestroyer>;

  private constructor(
    private readonly db: Database.Database,
    private readonly filePath: string,
    private readonly busyTimeoutMs: number,
    private readonly dieAfterDestroy: boolean,
  ) {
    this.destroyKey = keyDestroyer(db);
    this.stmt = {
      get: db.prepare('SELECT key, destroyed FROM subject_keys WHERE subject = ?'),
      destroyedBy: db
        .prepare('SELECT destroyed_by FROM subject_keys WHERE subject = ? AND key IS NULL')
        .pluck() as Database.Statement<[string], string | null>,
      create: db.prepare(
        'INSERT OR IGNORE INTO subject_keys (subject, key, created) VALUES (?, ?, ?) RETURNING key, destroyed',
      ),
      // The subjects as one JSON array: one statement, one pass over the index, however many.
      many: db.prepare(
        'SELECT subject, key, destroyed FROM subject_keys WHERE subject IN (SELECT value FROM json_each(?))',
      ),
      insertPage: db.prepare('INSERT INTO key_pages (page, keys, created) VALUES (?, ?, ?)'),
      // A page subject in one statement: its tombstone (which wins), else its slot's 32 bytes.
      slot: db.prepare(
        `SELECT (SELECT destroyed FROM subject_keys WHERE subject = @subject) AS destroyed,
                (SELECT substr(keys, @slot * 32 + 1, 32) FROM key_pages
                  WHERE page = @page AND length(keys) > @slot * 32) AS key`,
      ),
      pages: db.prepare('SELECT page, keys FROM key_pages WHERE page IN (SELECT value FROM json_each(?))'),
      // Whether the subject has a key, its bytes left unread: a page subject's is its slot, unless
      // its tombstone is there (page subjects have no other row in subject_keys).
      hasKey: db
        .prepare(
          `SELECT CASE WHEN @page IS NULL
             THEN EXISTS (SELECT 1 FROM subject_keys WHERE subject = @subject AND key IS NOT NULL)
             ELSE NOT EXISTS (SELECT 1 FROM subject_keys WHERE subject = @subject)
               AND EXISTS (SELECT 1 FROM key_pages WHERE page = @page AND length(keys) > @slot * 32)
           END`,
        )
        .pluck() as Database.Statement<
        [{ subject: string; page: string | null; slot: number | null }],
        number
      >,
      link: db.prepare('INSERT OR IGNORE INTO key_links (label, member, created) VALUES (?, ?, ?)'),
      linked: db.prepare('SELECT member FROM key_links WHERE label = ? ORDER BY created, member'),
      unlink: db.prepare('DELETE FROM key_links WHERE label = ?'),
    };
  }

  /** `dieAfterDestroy`, a test hook: the key writer exits once it has committed a destroy, unanswered. */
  static open(
    filePath: string,
    options: { busyTimeoutMs?: number; dieAfterDestroy?: boolean } = {},
  ): SqliteKeyStore {
    // Owner only (DATA_DIR_MODE): the files hold sealed personal data and keys.
    if (filePath !== ':memory:') mkdirSync(dirname(filePath), { recursive: true, mode: DATA_DIR_MODE });
    const db = new Database(filePath, { timeout: options.busyTimeoutMs ?? 5000 });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('secure_delete = ON');
      db.exec(SCHEMA);
      addDestroyedBy(db);
      return new SqliteKeyStore(
        db,
        filePath,
        options.busyTimeoutMs ?? 5000,
        options.dieAfterDestroy === true,
      );
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private open(): void {
    if (!this.db.open) throw new KeyStoreError('the key store is closed');
  }

  /** Whether the store holds no key and no tombstone at all (a new file). */
  holdsNothing(): boolean {
    this.open();
    return (
      this.db
        .prepare('SELECT EXISTS (SELECT 1 FROM subject_keys) OR EXISTS (SELECT 1 FROM key_pages)')
        .pluck()
        .get() === 0
    );
  }

  /** A page subject's state, or undefined for a subject of the per-subject layout. */
  private paged(s: string): KeyLookup | undefined {
    const at = parsePageKeySubject(s);
    if (at === null) return undefined;
    const row = this.stmt.slot.get({ subject: s, slot: at.slot, page: at.page }) as {
      destroyed: string | null;
      key: Buffer | null;
    };
    if (row.destroyed !== null) return { state: 'destroyed', destroyedAt: row.destroyed };
    return row.key === null ? { state: 'none' } : { state: 'active', key: row.key };
  }

  async obtain(subject: string): Promise<Buffer> {
    this.open();
    const s = validateSubject(subject);
    const paged = this.paged(s);
    if (paged !== undefined) {
      const key = pagedKeyAnswer(s, paged);
      if (key === null) throw new KeyDestroyedError(s);
      return key;
    }
    const row = this.stmt.get.get(s);
    // A new key is written as obtainMany writes its batch: in the worker, off the event loop.
    const key = row === undefined ? (await this.obtainMany([s])).get(s) : row.key;
    if (key === null || key === undefined) throw new KeyDestroyedError(s);
    return key;
  }

  /**
   * `ask` answered by the writer worker (started on first use); null when there is none (':memory:',
   * or it could not start or died: this store then writes on its own thread from now on).
   */
  private async inWorker<T>(ask: (writer: KeyWriter) => Promise<T | null>): Promise<T | null> {
    // Closing: close() has let go of the writer and waits for it; one started now would never be closed.
    if (this.filePath === ':memory:' || this.writerFailed || this.closing) return null;
    this.writer ??= KeyWriter.start(resolve(this.filePath), this.busyTimeoutMs, this.dieAfterDestroy);
    const answer = this.writer === null ? null : await ask(this.writer);
    this.open();
    if (answer !== null) return answer;
    this.writer = null;
    this.writerFailed = true;
    return null;
  }

  async obtainMany(subjects: readonly string[]): Promise<Map<string, Buffer | null>> {
    this.open();
    const all = [...new Set(subjects.map(validateSubject))];
    const out = new Map<string, Buffer | null>();
    // Page subjects are answered as they are (never made here); a missing one refuses the call.
    const wanted: string[] = [];
    for (const s of all) {
      const paged = this.paged(s);
      if (paged === undefined) wanted.push(s);
      else out.set(s, pagedKeyAnswer(s, paged));
    }
    if (wanted.length === 0) return out;
    // A few subjects are looked up here first (most often they all exist: no write at all). A large
    // batch (the sealing layer's pool of fresh keys, an import's new customers) goes to the write as
    // it is: the transaction keeps what exists (INSERT OR IGNORE, then a read) either way.
    const missing: string[] = [];
    if (wanted.length > PRECHECK) missing.push(...wanted);
    else
      for (const s of wanted) {
        const row = this.stmt.get.get(s);
        if (row === undefined) missing.push(s);
        else out.set(s, row.key);
      }
    if (missing.length === 0) return out;
    const created = new Date().toISOString();
    const written = await this.inWorker((w) => w.write(missing, created));
    if (written !== null) {
      for (const [s, key] of written) out.set(s, key);
      return out;
    }
    // One IMMEDIATE transaction for every new key: one fsync (synchronous=FULL) for the lot. Read
    // again inside it: a key another process made meanwhile is kept (INSERT OR IGNORE).
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

  async createPage(count: number): Promise<KeyPage> {
    this.open();
    const n = validatePageSize(count);
    const page = newPageId();
    const created = new Date().toISOString();
    const packed = await this.inWorker((w) => w.writePage(page, n, created));
    if (packed !== null) return { page, keys: slices(packed, n) };
    // One row, one fsync (synchronous=FULL), on this thread.
    const fresh = randomBytes(32 * n);
    this.stmt.insertPage.run(page, fresh, created);
    return { page, keys: slices(fresh, n) };
  }

  async find(subject: string): Promise<KeyLookup> {
    this.open();
    const s = validateSubject(subject);
    const paged = this.paged(s);
    if (paged !== undefined) return paged;
    const row = this.stmt.get.get(s);
    if (row === undefined) return { state: 'none' };
    if (row.key === null) return { state: 'destroyed', destroyedAt: row.destroyed as string };
    return { state: 'active', key: row.key };
  }

  async findMany(subjects: readonly string[]): Promise<Map<string, KeyLookup>> {
    this.open();
    const wanted = subjects.map(validateSubject);
    const out = new Map<string, KeyLookup>();
    if (wanted.length === 1) {
      out.set(wanted[0] as string, await this.find(wanted[0] as string));
      return out;
    }
    for (const s of wanted) out.set(s, { state: 'none' });
    if (wanted.length === 0) return out;
    // Tombstones of page subjects are rows here too (and win over the page).
    for (const row of this.stmt.many.all(JSON.stringify(wanted))) {
      // Destroyed by another connection: its bytes leave a page kept here too.
      if (row.key === null) {
        const at = parsePageKeySubject(row.subject);
        if (at !== null) this.forgetKept(at.page, at.slot);
      }
      out.set(
        row.subject,
        row.key === null
          ? { state: 'destroyed', destroyedAt: row.destroyed as string }
          : { state: 'active', key: row.key },
      );
    }
    // Page subjects without a tombstone: their pages, in one statement.
    const slots = new Map<string, { page: string; slot: number; subject: string }[]>();
    for (const s of wanted) {
      const at = parsePageKeySubject(s);
      if (at === null || out.get(s)?.state !== 'none') continue;
      const list = slots.get(at.page) ?? [];
      slots.set(at.page, list);
      list.push({ ...at, subject: s });
    }
    if (slots.size > 0) {
      const missing = [...slots.keys()].filter((page) => !this.pageCache.has(page));
      if (missing.length > 0)
        for (const row of this.stmt.pages.all(JSON.stringify(missing))) this.cachePage(row.page, row.keys);
      for (const [page, list] of slots) {
        const keys = this.pageCache.get(page);
        if (keys !== undefined)
          for (const { slot, subject } of list)
            if (32 * slot < keys.length)
              out.set(subject, {
                state: 'active',
                key: Buffer.from(keys.subarray(32 * slot, 32 * slot + 32)),
              });
      }
    }
    return out;
  }

  /**
   * Pages read lately, by id. A page's bytes never change but when one of its keys is destroyed,
   * and a destroyed key's tombstone (subject_keys, read first by every look-up) wins over the page:
   * a page kept from before is never used for a destroyed key. Without it, each look-up of a large
   * import's customers read their whole page again (up to MAX_PAGE_KEYS keys: megabytes).
   */
  private readonly pageCache = new Map<string, Buffer>();

  private cachePage(page: string, keys: Buffer): void {
    this.pageCache.delete(page);
    this.pageCache.set(page, keys);
    if (this.pageCache.size > PAGE_CACHE) {
      const oldest = this.pageCache.keys().next().value as string;
      this.pageCache.get(oldest)?.fill(0);
      this.pageCache.delete(oldest);
    }
  }

  /** A destroyed page key's bytes gone from a page kept here too (not left in memory). */
  private forgetKept(page: string, slot: number): void {
    this.pageCache.get(page)?.fill(0, 32 * slot, 32 * slot + 32);
  }

  async destroy(subject: string, at: string): Promise<boolean> {
    this.open();
    const s = validateSubject(subject);
    const place = parsePageKeySubject(s);
    const hadKey =
      this.stmt.hasKey.get({ subject: s, page: place?.page ?? null, slot: place?.slot ?? null }) === 1;
    // This call's own: `at` is not (two calls in one millisecond, or another connection's, share it).
    const token = randomUUID();
    const inWorker = await this.inWorker((w) => w.destroy(s, at, place, token));
    if (inWorker !== null) {
      if (place !== null) this.forgetKept(place.page, place.slot);
      return inWorker;
    }
    let destroyed = this.destroyKey(s, at, place, token);
    if (place !== null) this.forgetKept(place.page, place.slot);
    // Nothing left to destroy here, yet the key was there: the key writer may have committed this
    // call's destroy and died before it answered. It did if the row keeps this call's token.
    if (!destroyed && hadKey) destroyed = this.stmt.destroyedBy.get(s) === token;
    return destroyed;
  }

  async link(label: string, member: string): Promise<void> {
    this.open();
    const l = validateLinkPart(label, 'label');
    const m = validateLinkPart(member, 'member');
    const created = new Date().toISOString();
    if ((await this.inWorker((w) => w.link(l, m, created))) !== null) return;
    // synchronous=FULL: durable when run() returns.
    this.stmt.link.run(l, m, created);
  }

  async linked(label: string): Promise<string[]> {
    this.open();
    return this.stmt.linked.all(validateLinkPart(label, 'label')).map((r) => r.member);
  }

  async unlink(label: string): Promise<number> {
    this.open();
    const l = validateLinkPart(label, 'label');
    const unlinked = await this.inWorker((w) => w.unlink(l));
    if (unlinked !== null) return unlinked;
    const n = this.stmt.unlink.run(l).changes;
    // secure_delete zeroes the deleted cells; the old images live in the WAL until a checkpoint.
    if (n > 0) this.db.pragma('wal_checkpoint(TRUNCATE)');
    return n;
  }

  /** The key file (`:memory:` for keys in memory): what another thread's store opens too. */
  get file(): string {
    return this.db.memory ? ':memory:' : this.db.name;
  }

  async close(): Promise<void> {
    this.closing = true;
    const writer = this.writer;
    this.writer = null;
    await writer?.close();
    for (const keys of this.pageCache.values()) keys.fill(0);
    this.pageCache.clear();
    if (this.db.open) this.db.close();
  }
}

/** The key writer: plain JavaScript, started without tsx (see its header). */
const WRITER_THREAD = new URL('./sqlite-key-writer-thread.mjs', import.meta.url);

/** The worker's answer: the keys packed 32 bytes each, tombstones and other sizes apart. */
interface WriterAnswer {
  id: number;
  packed?: Uint8Array;
  tombstones?: number[];
  odd?: [number, Uint8Array][];
  error?: string;
  /** The error's code (SQLITE_FULL…), when it had one. */
  code?: string;
  done?: boolean;
  changes?: number;
  destroyed?: boolean;
}

/**
 * The worker's failure as a KeyStoreError whose cause carries SQLite's code, so that a full disk
 * answers 503 STORAGE_FULL (isStorageFull reads the causes) rather than 500.
 */
function writerError(what: string, answer: WriterAnswer): KeyStoreError {
  const message = `the key store could not ${what}: ${answer.error}`;
  return answer.code === undefined
    ? new KeyStoreError(message)
    : new KeyStoreError(message, { cause: Object.assign(new Error(answer.error), { code: answer.code }) });
}

/** The worker thread that writes this store's keys (see the top of this file). */
class KeyWriter {
  private readonly requests: WorkerRequests<WriterAnswer>;

  private constructor(worker: Worker) {
    this.requests = new WorkerRequests(worker);
  }

  static start(file: string, timeout: number, dieAfterDestroy: boolean): KeyWriter | null {
    try {
      // execArgv: not the parent's `--import tsx`, which the thread would run (~0.4 s, ~10 MB) for
      // nothing: it is plain JavaScript.
      return new KeyWriter(
        new Worker(WRITER_THREAD, { execArgv: [], workerData: { file, timeout, dieAfterDestroy } }),
      );
    } catch {
      return null;
    }
  }

  /**
   * The keys of `subjects` (new or already there; null for a tombstone), written durably; null when
   * the worker is gone (the caller writes them itself). A SQLite error is thrown as a KeyStoreError.
   */
  async write(subjects: string[], created: string): Promise<Map<string, Buffer | null> | null> {
    const answer = await this.requests.ask({ subjects, created });
    if (answer === null) return null;
    const { packed, tombstones = [], odd = [] } = answer;
    if (answer.error !== undefined || packed === undefined) throw writerError('write new keys', answer);
    const out = new Map<string, Buffer | null>();
    // Views into the one buffer the worker moved here (in subject order; tombstones and odd sizes
    // overwrite their slot's entry below).
    for (let i = 0; i < subjects.length; i++)
      out.set(subjects[i] as string, Buffer.from(packed.buffer, packed.byteOffset + 32 * i, 32));
    for (const i of tombstones) out.set(subjects[i] as string, null);
    for (const [i, k] of odd)
      out.set(subjects[i] as string, Buffer.from(k.buffer, k.byteOffset, k.byteLength));
    return out;
  }

  /** Writes a page of `count` new keys (one row); its keys packed, or null when the worker is gone. */
  async writePage(page: string, count: number, created: string): Promise<Uint8Array | null> {
    const answer = await this.requests.ask({ page, count, created });
    if (answer === null) return null;
    if (answer.error !== undefined || answer.packed === undefined)
      throw writerError('write a key page', answer);
    return answer.packed;
  }

  /** A link written durably; null when the worker is gone. */
  async link(label: string, member: string, created: string): Promise<true | null> {
    const answer = await this.requests.ask({ op: 'link', label, member, created });
    if (answer === null) return null;
    if (answer.error !== undefined || answer.done !== true) throw writerError('write a link', answer);
    return true;
  }

  /** The links of `label` deleted (how many), the WAL checkpointed; null when the worker is gone. */
  async unlink(label: string): Promise<number | null> {
    const answer = await this.requests.ask({ op: 'unlink', label });
    if (answer === null) return null;
    if (answer.error !== undefined || answer.changes === undefined) throw writerError('delete links', answer);
    return answer.changes;
  }

  /** SqliteKeyStore.destroy's write and checkpoint; null when the worker is gone. */
  async destroy(
    subject: string,
    at: string,
    place: { page: string; slot: number } | null,
    token: string,
  ): Promise<boolean | null> {
    const answer = await this.requests.ask({ op: 'destroy', subject, at, place, token });
    if (answer === null) return null;
    if (answer.error !== undefined || answer.destroyed === undefined)
      throw writerError('destroy a key', answer);
    return answer.destroyed;
  }

  close(): Promise<void> {
    return this.requests.close();
  }
}

/** `count` 32-byte views into one buffer of packed keys. */
function slices(packed: Uint8Array, count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => Buffer.from(packed.buffer, packed.byteOffset + 32 * i, 32));
}
