// The embedded EventStore: one SQLite file through better-sqlite3, one table of events.
//
// Why it is correct:
// - Every append is one BEGIN IMMEDIATE transaction: it takes SQLite's single write lock before
//   reading the stream's revision, so the expected-revision check and the insert see the same
//   state, even with several processes on the file.
// - The global position is the AUTOINCREMENT rowid. Writers are serialised by that lock and a
//   rolled-back append rolls its sequence back too, so positions are gap-free and in commit order;
//   a reader never sees position n + 1 without n.
// - synchronous=FULL (the default) fsyncs the WAL at every commit: once append() resolves, the
//   events survive a crash or power loss. NORMAL survives a process crash, not a power loss.
// - Group commit (on by default; `groupCommit: false` turns it off): appends called while a flush
//   is pending (until the next setImmediate, so across the requests of one event-loop turn) are
//   written in one BEGIN IMMEDIATE transaction, so one fsync, each inside its own SAVEPOINT and in
//   arrival order. An append that fails (wrong expected revision, an id stored elsewhere) or turns
//   out to be a retry rolls back to its savepoint only; the next one in the batch sees the log as a
//   one-by-one run would, so results, errors and positions are exactly those of appending one by
//   one. Promises settle after COMMIT returned: a resolved append is as durable as before. An
//   unexpected SQLite error inside the batch rolls the whole transaction back and replays the batch
//   one transaction per append, so the error lands on the append that caused it. Reads are not
//   queued: a read issued after append() resolved sees its events; one issued while it is queued
//   may not, which the port allows (the append has not resolved yet). The cost: an append waits
//   for the next setImmediate even when it is alone, and a request's appends interleave with other
//   requests' (they always could across processes).

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { type Clock, systemClock } from '../../core/clock';
import { DATA_DIR_MODE } from '../../core/data-dir-mode';
import {
  type AppendOptions,
  type AppendResult,
  type EventStore,
  EventStoreError,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store';
import { AppendSignal, CatchUpSubscription, type LogSource } from './catch-up-subscription';
import { chainHash, GENESIS } from './chain';
import type { SettledRing } from './settled-ring';
import { isJsonObject, type StoredRow, storedRowToEvent, unreadableRow } from './sqlite-log-reader';
import { ReadAheadEvents } from './sqlite-read-ahead';
import { WriterThread } from './sqlite-writer';
import { type Outcome, sqliteWrites } from './sqlite-writes';
import {
  type PreparedAppend,
  prepareAppend,
  validateReadAll,
  validateReadStream,
  validateStream,
  validateSubscribe,
} from './validate';

// Schema versions: 1 the events table; 2 adds `hash` (the tamper-evidence chain, chain.ts), NULL on
// the rows of a version 1 log; 3 once upgradeLegacy() has hashed those rows; 4 once upgradeSealing()
// has rewritten chained rows whose personal data was written in clear (reservation events and webhook
// fan-outs, sealed from version 4 on) and re-chained their streams; 5 once upgradeStreams() has sealed
// missed-call events written in clear and renamed the caller streams named after a phone number
// (src/privacy/missed-call-migration.ts); 6 once sealUnownedInPlace() has sealed, with keys of their
// own, missed-call events whose number no customer owned (left in clear by version 5). A version 2 log
// works as it is: an append to a stream whose last row has no hash recomputes the tip from the stream.
const SCHEMA_VERSION = 6;
const MISSED_CALLS_VERSION = 5;
const SEALED_VERSION = 4;
const HASHED_VERSION = 3;
const CHAINED_COLUMN_VERSION = 2;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  id       TEXT    NOT NULL UNIQUE,
  stream   TEXT    NOT NULL,
  revision INTEGER NOT NULL CHECK (revision >= 0),
  type     TEXT    NOT NULL,
  data     TEXT    NOT NULL,
  metadata TEXT    NOT NULL,
  created  TEXT    NOT NULL,
  hash     TEXT,
  UNIQUE (stream, revision)
) STRICT;
`;

const COLUMNS = 'position, id, stream, revision, type, data, metadata, created, hash';

/** The columns every version of the log has had (hash came with CHAINED_COLUMN_VERSION). */
const LOG_COLUMNS = ['position', 'id', 'stream', 'revision', 'type', 'data', 'metadata', 'created'];

/**
 * The file's event schema version, once it is known to be a Couvert log (or an empty database, which
 * becomes one): a file that is not SQLite, or another program's database (a file put in DATA_DIR by
 * mistake), is refused with a message naming it, instead of SQLite's "file is not a database" or
 * "no such column: position" — and before this code writes its schema version into it.
 */
function logSchemaVersion(db: Database.Database, filePath: string): number {
  const notLog = (why: string) =>
    new EventStoreError(
      `${filePath} is not a Couvert event log (${why}); DATA_DIR must be a directory of Couvert's own, or a new one`,
    );
  let version: number;
  let tables: string[];
  try {
    version = db.pragma('user_version', { simple: true }) as number;
    tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]
    ).filter((t) => !t.startsWith('sqlite_'));
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT')
      throw new EventStoreError(
        `${filePath} cannot be read as an SQLite database (SQLite says: ${(err as Error).message}); restore it from a backup, or point DATA_DIR at a new directory`,
      );
    throw err;
  }
  if (version === 0) {
    if (tables.length) throw notLog(`it holds the tables ${tables.join(', ')} and no schema version`);
    return version;
  }
  if (version > SCHEMA_VERSION) return version;
  const columns = new Set(
    (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('events') as string[]).map(String),
  );
  const missing = LOG_COLUMNS.filter((c) => !columns.has(c));
  if (missing.length)
    throw notLog(
      columns.size
        ? `its events table has no ${missing.join(', ')}`
        : `schema version ${version} but no events table`,
    );
  return version;
}

interface Row {
  position: number;
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  created: string;
  hash: string | null;
}

/**
 * A row as an array, in COLUMNS order. Reads go through `.raw()` statements: better-sqlite3 then
 * skips building a keyed object per row, about a third of the cost of reading a row (measured on a
 * 1M-event replay: 3.8 → 2.4 s of CPU for the SELECTs alone).
 */
type RawRow = StoredRow;

const toEvent = storedRowToEvent;

/** Subscriptions page with keyed rows: they filter on stream and type before building events. */
function rowToEvent(row: Row): RecordedEvent {
  let data: Record<string, unknown>;
  let metadata: RecordedEvent['metadata'];
  try {
    data = JSON.parse(row.data);
    metadata = JSON.parse(row.metadata);
  } catch {
    throw unreadableRow(row.position, row.stream, row.revision);
  }
  if (!isJsonObject(data) || !isJsonObject(metadata))
    throw unreadableRow(row.position, row.stream, row.revision);
  const event: RecordedEvent = {
    id: row.id,
    type: row.type,
    data,
    metadata,
    created: row.created,
    stream: row.stream,
    revision: row.revision,
    position: BigInt(row.position),
  };
  if (row.hash !== null) event.hash = row.hash;
  return event;
}

/** A migration's plan was read before the log's last append: read it again (see planHead). */
export class StalePlanError extends EventStoreError {
  override name = 'StalePlanError';
  constructor(
    readonly plannedAt: number | null,
    readonly head: number | null,
  ) {
    super(`the log grew from position \${plannedAt} to \${head} while the migration planned`);
  }
}

/** A row written before the chain, as upgradeLegacy() hands it to its transform. */
export interface LegacyRow {
  stream: string;
  revision: number;
  id: string;
  type: string;
  data: string;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * readAll's iterator: pages through the log as an async generator would, without a generator's
 * per-event cost (its yield and internal queue cost ~0.4 µs per event; this costs one resolved
 * promise). Pages, not one cursor: an open better-sqlite3 iterator would lock the connection while
 * the consumer awaits between events. A short page is the end, as is an error (like a generator).
 */
class PagedEvents implements AsyncIterableIterator<RecordedEvent> {
  private rows: RawRow[] = [];
  private index = 0;
  private finished = false;

  constructor(
    private readonly readAfter: (after: number | bigint, limit: number) => RawRow[],
    private cursor: number | bigint,
    private remaining: number,
    private readonly batchSize: number,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<RecordedEvent>> {
    try {
      if (this.index === this.rows.length && !this.nextPage()) return Promise.resolve(DONE);
      return Promise.resolve({ done: false, value: toEvent(this.rows[this.index++]!) });
    } catch (err) {
      this.finish();
      return Promise.reject(err);
    }
  }

  return(): Promise<IteratorResult<RecordedEvent>> {
    this.finish();
    return Promise.resolve(DONE);
  }

  private nextPage(): boolean {
    if (this.finished || this.remaining <= 0) return this.finish();
    const limit = Math.min(this.batchSize, this.remaining);
    const rows = this.readAfter(this.cursor, limit);
    if (rows.length === 0) return this.finish();
    if (rows.length < limit) this.finished = true;
    this.remaining -= rows.length;
    this.cursor = rows[rows.length - 1]![0];
    this.rows = rows;
    this.index = 0;
    return true;
  }

  private finish(): false {
    this.finished = true;
    this.rows = [];
    this.index = 0;
    return false;
  }
}

export interface SqliteEventStoreOptions {
  /** FULL (default): a resolved append survives power loss. NORMAL: survives a process crash only. */
  synchronous?: 'FULL' | 'NORMAL';
  clock?: Clock;
  /**
   * How often an idle subscription re-reads the log, to see appends made by other processes on
   * the same file (appends through this instance wake subscriptions at once). Default 250 ms.
   */
  pollIntervalMs?: number;
  /** How long an append waits for another process's write lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * true (default): appends arriving in the same event-loop turn share one transaction and one
   * fsync (see the header). false: one transaction per append, written before append() returns.
   * With it on, concurrent requests interleave between their appends (a request's appends no
   * longer run back to back); nothing may rely on that. POST /reservations, for one, claims the
   * external_id before holding a table, so concurrent creates with one external_id lose with 409
   * rather than 422 NO_TABLE on a table briefly held by another loser.
   */
  groupCommit?: boolean;
  /**
   * Where group commits are written (sqlite-writer.ts): 'off' (default) on the main thread, whose
   * event loop then waits for each COMMIT's fsync; 'large' in a writer thread with its own
   * connection, started by the first group of WRITER_MIN_EVENTS events or more (a CSV import's),
   * every group after it going there too; 'always' every group in the writer thread, which the first
   * group starts (or startWriterThread() before it): a store that only reads never starts it (~0.5 s
   * of CPU and ~30 MB for tsx in the thread). Same results, errors, order and durability either way.
   * Not for a log in memory.
   */
  writerThread?: 'off' | 'large' | 'always';
  /**
   * readAll of at least this many events (head minus `after`, limit included) reads and decodes
   * the log in a worker thread, pages ahead of the caller (sqlite-read-ahead.ts): an embedded start's
   * catch-up then applies events on the main thread while the other core reads. Default
   * READ_AHEAD_MIN_EVENTS; false: always on the calling thread. Not for a log in memory.
   */
  readAhead?: number | false;
  /**
   * Another thread's store on the same file (a CSV import's thread): where it publishes the positions
   * of its appends settled by their caller, for the main thread's unsettled() (settled-ring.ts).
   */
  settledRing?: SettledRing;
}

/** readAll of this many events or more reads ahead in a worker thread (readAhead). */
export const READ_AHEAD_MIN_EVENTS = 20_000;

/**
 * A store publishing to a SettledRing checkpoints the WAL itself after this many appends (about
 * what SQLite's automatic checkpoint, every 1,000 pages, would do for a CSV import's customers).
 */
const CHECKPOINT_APPENDS = 2000;

/** With writerThread 'large': a group of this many events starts the writer thread. */
export const WRITER_MIN_EVENTS = 64;

/** An append waiting for the next group commit. */
interface Queued {
  batch: PreparedAppend;
  created: string;
  /** AppendOptions.settledByCaller. */
  settledByCaller: boolean;
  resolve: (result: AppendResult) => void;
  reject: (err: unknown) => void;
}

const noop = (): void => undefined;

export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite' as const;
  private readonly clock: Clock;
  private readonly pollIntervalMs: number;
  private readonly signal = new AppendSignal();
  private readonly subscriptions = new Set<Subscription>();

  private readonly stmt: {
    after: Database.Statement<[bigint | number, number], RawRow>;
    afterRows: Database.Statement<[bigint | number, number], Row>;
    forwards: Database.Statement<[string, number, number], RawRow>;
    backwards: Database.Statement<[string, number, number], RawRow>;
    head: Database.Statement<[], number | null>;
  };
  private readonly appendTx: (batch: PreparedAppend, created: string) => AppendResult | null;
  private readonly inspectTx: (batch: PreparedAppend) => AppendResult;
  private readonly groupTx: (queue: Queued[]) => Outcome[];
  private readonly groupCommit: boolean;
  private queue: Queued[] = [];
  /** Appends in `queue` that no caller settles itself (see othersPending). */
  private queuedForOthers = 0;
  private flushScheduled = false;
  private writeTransactions = 0;

  private readonly source: LogSource<Row> = {
    readAfter: (after, limit) => this.stmt.afterRows.all(after ?? 0, limit),
    toEvent: rowToEvent,
  };

  private constructor(
    private readonly db: Database.Database,
    options: SqliteEventStoreOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.stmt = {
      after: db
        .prepare<[bigint | number, number], RawRow>(
          `SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`,
        )
        .raw(),
      afterRows: db.prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`),
      forwards: db
        .prepare<[string, number, number], RawRow>(
          `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`,
        )
        .raw(),
      backwards: db
        .prepare<[string, number, number], RawRow>(
          `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`,
        )
        .raw(),
      head: db.prepare<[], number | null>('SELECT max(position) FROM events').pluck(),
    };

    // The write side (appends, inspection, group commit) is sqlite-writes.ts: the same code runs in
    // the writer thread when there is one.
    const writes = sqliteWrites(db);
    this.appendTx = (batch, created) => {
      this.writeTransactions++;
      return writes.appendTx(batch, created);
    };
    this.inspectTx = writes.inspectTx;
    this.groupTx = (queue) => {
      this.writeTransactions++;
      return writes.groupTx(queue);
    };
    this.groupCommit = options.groupCommit ?? true;
    this.writerMode = this.groupCommit && !db.memory ? (options.writerThread ?? 'off') : 'off';
    this.synchronous = options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL';
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.publishTo = options.settledRing ?? null;
    // SQLite checkpoints the WAL inside the COMMIT that fills it, after the commit is visible: the
    // positions would reach the ring only after that copy and its fsync (ms), and meanwhile a look
    // on the main thread would find them unaccounted for. Here the checkpoint follows the publishing.
    if (this.publishTo !== null) db.pragma('wal_autocheckpoint = 0');
    this.readAheadMin =
      db.memory || options.readAhead === false ? null : (options.readAhead ?? READ_AHEAD_MIN_EVENTS);
  }

  private readonly writerMode: 'off' | 'large' | 'always';
  /** Writer side of a SettledRing (options.settledRing). */
  private readonly publishTo: SettledRing | null;
  /** Reader side: rings of other threads of this process whose positions unsettled() leaves out. */
  private readonly settledRings = new Set<SettledRing>();
  private readonly synchronous: string;
  private readonly busyTimeoutMs: number;
  private readonly readAheadMin: number | null;
  private writer: WriterThread | null = null;
  /** The group being written by the writer thread; the next one waits for it. */
  private writing: Promise<void> | null = null;
  private closing = false;

  /** Group commits the writer thread wrote (tests, benchmarks). */
  get threadTransactions(): number {
    return this.writer?.written ?? 0;
  }

  /**
   * Whether the writer thread has published what the group in flight committed (tests). It does so
   * right after COMMIT returns: between the two, another connection already sees the rows while
   * unsettled() cannot yet know them (a request then waits for a catch-up it did not need; safe).
   */
  get threadPublished(): boolean {
    return this.inThread !== null && this.inThread.writer.committedRange(this.inThread.id) !== null;
  }

  /**
   * Asks for the writer thread now: with 'large', a CSV import, whose many small groups would each
   * hold the event loop for their fsync (every group after this goes there); with 'always', the
   * service, so that no request waits for the thread's start. Does nothing with writerThread 'off'.
   */
  startWriterThread(): void {
    if (this.writerMode !== 'off' && !this.closing) this.startWriter();
  }

  private startWriter(): WriterThread | null {
    this.writer ??= WriterThread.start(this.db.name, this.synchronous, this.busyTimeoutMs);
    return this.writer;
  }

  /** The writer thread a group goes to, started when the mode says so; null: the main thread writes. */
  private writerFor(queue: Queued[]): WriterThread | null {
    if (this.closing || this.writerMode === 'off') return null;
    if (this.writerMode === 'always') this.startWriter();
    else if (this.writer === null) {
      let events = 0;
      for (const q of queue) events += q.batch.events.length;
      if (events >= WRITER_MIN_EVENTS) this.startWriter();
    }
    return this.writer?.usable ? this.writer : null;
  }

  /** Opens (creating if needed) the event log at `filePath`. */
  static open(filePath: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    // Owner only (DATA_DIR_MODE): the files hold sealed personal data and keys.
    if (filePath !== ':memory:') mkdirSync(dirname(filePath), { recursive: true, mode: DATA_DIR_MODE });
    const db = new Database(filePath, { timeout: options.busyTimeoutMs ?? 5000 });
    try {
      // What the file is, before anything is written to it (WAL mode and the schema version are
      // written into the file): another program's database must be refused as it was found.
      const version = logSchemaVersion(db, filePath);
      if (version > SCHEMA_VERSION)
        throw new EventStoreError(
          `${filePath} has event schema ${version}, newer than this code (${SCHEMA_VERSION})`,
        );
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
      if (version < CHAINED_COLUMN_VERSION) {
        db.transaction(() => {
          const now = db.pragma('user_version', { simple: true }) as number;
          if (now >= CHAINED_COLUMN_VERSION) return;
          if (now === 0) {
            db.exec(SCHEMA);
            db.pragma(`user_version = ${SCHEMA_VERSION}`);
          } else {
            // A version 1 log: the column now, the hashes by upgradeLegacy().
            db.exec('ALTER TABLE events ADD COLUMN hash TEXT');
            db.pragma(`user_version = ${CHAINED_COLUMN_VERSION}`);
          }
        }).immediate();
      }
      return new SqliteEventStore(db, options);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private assertOpen(): void {
    if (!this.db.open) throw new EventStoreError('the event store is closed');
  }

  /** The log's file (`:memory:` for a log in memory): what a SqliteLogReader opens beside it. */
  get file(): string {
    return this.db.memory ? ':memory:' : this.db.name;
  }

  /**
   * `audit verify`'s chain check (src/cli/audit-commands.ts): up to `limit` rows after `after` in
   * log order, data and metadata as the stored JSON text the chain hashed (no parse).
   */
  chainPage(after: number, limit: number): RawRow[] {
    this.assertOpen();
    this.chainStmt ??= this.db
      .prepare<unknown[], RawRow>(
        'SELECT position, id, stream, revision, type, data, metadata, created, hash FROM events WHERE position > ? ORDER BY position LIMIT ?',
      )
      .raw();
    return this.chainStmt.all(after, limit);
  }

  private chainStmt: Database.Statement<unknown[], RawRow> | undefined;

  /**
   * The highest position the log ever gave an event (AUTOINCREMENT's sqlite_sequence, which a row's
   * deletion leaves as it was): above the last row's position, events were removed from the end of
   * the log (`audit verify`). Null before the first append.
   */
  lastPositionIssued(): number | null {
    this.assertOpen();
    const seq = this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck().get();
    return typeof seq === 'number' ? seq : null;
  }

  /**
   * Whether the log holds personal data sealed with keys of the key store (a `sealed` box in some
   * event's data). Reads until the first one: run only when the key store looks missing (runtime.ts).
   */
  holdsSealedData(): boolean {
    this.assertOpen();
    return (
      this.db
        .prepare("SELECT 1 FROM events WHERE json_extract(data, '$.sealed') IS NOT NULL LIMIT 1")
        .pluck()
        .get() !== undefined
    );
  }

  /** Whether the log holds an event of `type` (reads until the first; for start checks). */
  holdsEventOfType(type: string): boolean {
    this.assertOpen();
    return this.db.prepare('SELECT 1 FROM events WHERE type = ? LIMIT 1').pluck().get(type) !== undefined;
  }

  /** Whether rows written before the chain still wait for upgradeLegacy(). */
  get needsLegacyUpgrade(): boolean {
    this.assertOpen();
    return (this.db.pragma('user_version', { simple: true }) as number) < SCHEMA_VERSION;
  }

  /**
   * Ids of the customers (data.customer_id) named by rows written before the chain, among rows of
   * the given types: what a transform of upgradeLegacy() needs keys for, fetched before it runs.
   */
  legacyValues(types: readonly string[], field: string): string[] {
    this.assertOpen();
    if (!this.needsLegacyUpgrade || types.length === 0) return [];
    return this.db
      .prepare<unknown[], string>(
        `SELECT DISTINCT json_extract(data, ?) FROM events WHERE hash IS NULL AND type IN (${types.map(() => '?').join(',')}) AND json_extract(data, ?) IS NOT NULL`,
      )
      .pluck()
      .all(`$.${field}`, ...types, `$.${field}`);
  }

  /**
   * Upgrades a log written before the chain (schema 2 → 3), in one write transaction: rows without a
   * hash are hashed in stream order, and a stream whose rows all predate the chain may first have
   * each row's data rewritten by `transform` (answer the new JSON text, or null to keep it): the
   * encryption of personal data written before it existed. A stream that already has chained rows
   * (appended by a process that did not upgrade) keeps its old rows as they are, since its chain
   * already covers them. Answers what it did. Does nothing on an upgraded log.
   */
  upgradeLegacy(
    transform?: (row: LegacyRow) => string | null,
    plannedAt?: number | null,
  ): { hashed: number; rewritten: number } {
    this.assertOpen();
    const done = { hashed: 0, rewritten: 0 };
    if (this.schemaVersion >= HASHED_VERSION) return done;
    const db = this.db;
    db.transaction(() => {
      if ((db.pragma('user_version', { simple: true }) as number) >= HASHED_VERSION) return;
      this.assertPlanCurrent(plannedAt);
      const streams = db
        .prepare<[], string>('SELECT DISTINCT stream FROM events WHERE hash IS NULL')
        .pluck()
        .all();
      const chained = db
        .prepare<[string], number>('SELECT count(*) FROM events WHERE stream = ? AND hash IS NOT NULL')
        .pluck();
      const update = db.prepare<[string, string, number]>(
        'UPDATE events SET data = ?, hash = ? WHERE position = ?',
      );
      for (const stream of streams) {
        const rewrite = transform !== undefined && chained.get(stream) === 0;
        let prev = GENESIS;
        for (const row of this.stmt.forwards.all(stream, 0, -1)) {
          if (row[8] !== null) {
            prev = row[8];
            continue;
          }
          let data = row[5];
          if (rewrite) {
            const next = transform({ stream, revision: row[3], id: row[1], type: row[4], data });
            if (next !== null && next !== data) {
              data = next;
              done.rewritten++;
            }
          }
          prev = chainHash(prev, {
            stream,
            revision: row[3],
            id: row[1],
            type: row[4],
            dataJson: data,
            metadataJson: row[6],
          });
          update.run(data, prev, row[0]);
          done.hashed++;
        }
      }
      db.pragma(`user_version = ${HASHED_VERSION}`);
    }).immediate();
    return done;
  }

  /**
   * The last position now (null: an empty log), read synchronously: a migration notes it when it reads
   * its plan and hands it to its upgrade step, which refuses to run on a plan the log has outgrown.
   */
  planHead(): number | null {
    this.assertOpen();
    return this.stmt.head.get() ?? null;
  }

  /**
   * Inside a migration's write transaction: the log must not have grown since its plan was read (another
   * process appended while keys were fetched), else a row the plan does not know would be rewritten with
   * a key it did not fetch — as if erased. Undefined: the caller took no plan.
   */
  private assertPlanCurrent(plannedAt: number | null | undefined): void {
    if (plannedAt === undefined) return;
    const head = this.stmt.head.get() ?? null;
    if (head !== plannedAt) throw new StalePlanError(plannedAt, head);
  }

  /** The log's schema version (see SCHEMA_VERSION). */
  get schemaVersion(): number {
    this.assertOpen();
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  /**
   * Every row has a hash (schema 3 on: upgradeLegacy() hashed the old ones, and this code hashes
   * every append), so a row without one was not written before the chain (`audit verify`).
   */
  get everyRowHashed(): boolean {
    return this.schemaVersion >= HASHED_VERSION;
  }

  /**
   * Schema 3 → 4, after upgradeLegacy(), in one write transaction: every row of the given types is
   * handed to `transform` in stream order (answer the new data's JSON text, or null to keep it), and
   * each stream is re-chained from its first rewritten row (the chain then covers the new data; the
   * migration cannot vouch for edits made before it ran). Answers what it did. Does nothing on a
   * version 4 log.
   */
  upgradeSealing(
    types: readonly string[],
    transform: (row: LegacyRow) => string | null,
    plannedAt?: number | null,
  ): { rewritten: number; rehashed: number } {
    this.assertOpen();
    const done = { rewritten: 0, rehashed: 0 };
    if (this.schemaVersion !== HASHED_VERSION) return done;
    const db = this.db;
    const wanted = new Set(types);
    db.transaction(() => {
      if ((db.pragma('user_version', { simple: true }) as number) !== HASHED_VERSION) return;
      this.assertPlanCurrent(plannedAt);
      const streams =
        types.length === 0
          ? []
          : db
              .prepare<string[], string>(
                `SELECT DISTINCT stream FROM events WHERE type IN (${types.map(() => '?').join(',')})`,
              )
              .pluck()
              .all(...types);
      const update = db.prepare<[string, string, number]>(
        'UPDATE events SET data = ?, hash = ? WHERE position = ?',
      );
      for (const stream of streams) {
        let prev = GENESIS;
        let changed = false;
        for (const row of this.stmt.forwards.all(stream, 0, -1)) {
          let data = row[5];
          if (wanted.has(row[4])) {
            const next = transform({ stream, revision: row[3], id: row[1], type: row[4], data });
            if (next !== null && next !== data) {
              data = next;
              changed = true;
              done.rewritten++;
            }
          }
          const event = {
            stream,
            revision: row[3],
            id: row[1],
            type: row[4],
            dataJson: data,
            metadataJson: row[6],
          };
          if (!changed && row[8] !== null) {
            prev = row[8];
            continue;
          }
          prev = chainHash(prev, event);
          update.run(data, prev, row[0]);
          done.rehashed++;
        }
      }
      db.pragma(`user_version = ${SEALED_VERSION}`);
    }).immediate();
    return done;
  }

  /**
   * Schema 4 → 5, after upgradeSealing(), in one write transaction: each row of `streams` is handed to
   * `transform` in stream order (answer the new data's JSON text, or null to keep it); a stream that
   * `renames` names gets its new id (no stream of that id may exist); each stream is re-chained from its
   * first changed row (a renamed one from its first: the id is hashed). Answers what it did. Does
   * nothing on a log past version 4.
   */
  upgradeStreams(
    streams: readonly string[],
    renames: ReadonlyMap<string, string>,
    transform: (row: LegacyRow) => string | null,
    plannedAt?: number | null,
  ): { rewritten: number; renamed: number; rehashed: number } {
    return this.rewriteStreams(SEALED_VERSION, MISSED_CALLS_VERSION, streams, renames, transform, plannedAt);
  }

  /**
   * Schema 5 → 6, after upgradeStreams(), in one write transaction: as upgradeStreams() without
   * renames (each row of `streams` handed to `transform`, changed streams re-chained from their first
   * changed row). Does nothing on a log past version 5.
   */
  sealUnownedInPlace(
    streams: readonly string[],
    transform: (row: LegacyRow) => string | null,
    plannedAt?: number | null,
  ): { rewritten: number; rehashed: number } {
    const done = this.rewriteStreams(
      MISSED_CALLS_VERSION,
      SCHEMA_VERSION,
      streams,
      new Map(),
      transform,
      plannedAt,
    );
    return { rewritten: done.rewritten, rehashed: done.rehashed };
  }

  private rewriteStreams(
    from: number,
    to: number,
    streams: readonly string[],
    renames: ReadonlyMap<string, string>,
    transform: (row: LegacyRow) => string | null,
    plannedAt?: number | null,
  ): { rewritten: number; renamed: number; rehashed: number } {
    this.assertOpen();
    const done = { rewritten: 0, renamed: 0, rehashed: 0 };
    if (this.schemaVersion !== from) return done;
    const db = this.db;
    db.transaction(() => {
      if ((db.pragma('user_version', { simple: true }) as number) !== from) return;
      this.assertPlanCurrent(plannedAt);
      const update = db.prepare<[string, string, string, number]>(
        'UPDATE events SET stream = ?, data = ?, hash = ? WHERE position = ?',
      );
      const taken = db.prepare<[string], number>('SELECT count(*) FROM events WHERE stream = ?').pluck();
      for (const stream of new Set([...streams, ...renames.keys()])) {
        const id = renames.get(stream) ?? stream;
        if (id !== stream) {
          if (taken.get(id) !== 0) throw new EventStoreError(`cannot rename ${stream}: ${id} exists`);
          done.renamed++;
        }
        let prev = GENESIS;
        let changed = id !== stream;
        for (const row of this.stmt.forwards.all(stream, 0, -1)) {
          let data = row[5];
          const next = transform({ stream, revision: row[3], id: row[1], type: row[4], data });
          if (next !== null && next !== data) {
            data = next;
            changed = true;
            done.rewritten++;
          }
          if (!changed && row[8] !== null) {
            prev = row[8];
            continue;
          }
          prev = chainHash(prev, {
            stream: id,
            revision: row[3],
            id: row[1],
            type: row[4],
            dataJson: data,
            metadataJson: row[6],
          });
          update.run(id, data, prev, row[0]);
          done.rehashed++;
        }
      }
      db.pragma(`user_version = ${to}`);
    }).immediate();
    return done;
  }

  /** Streams whose id starts with `prefix` (a migration's plan). */
  streamsStartingWith(prefix: string): string[] {
    this.assertOpen();
    return this.db
      .prepare<[string, string], string>(
        'SELECT DISTINCT stream FROM events WHERE substr(stream, 1, length(?)) = ?',
      )
      .pluck()
      .all(prefix, prefix);
  }

  /**
   * Write transactions this instance has begun (one per group commit, or per append without group
   * commit), for tests and benchmarks.
   */
  get transactions(): number {
    return this.writeTransactions;
  }

  async append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    options?: AppendOptions,
  ): Promise<AppendResult> {
    this.assertOpen();
    const batch = prepareAppend(stream, events, expected);
    const created = this.clock.now().toISOString();
    const settledByCaller = options?.settledByCaller === true;
    if (!this.groupCommit) return this.appendOne(batch, created, settledByCaller);
    const appended = new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ batch, created, settledByCaller, resolve, reject });
      if (!settledByCaller) this.queuedForOthers++;
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
    if (!settledByCaller) {
      const done = appended.then(noop, noop);
      this.othersInFlight.add(done);
      done.then(() => this.othersInFlight.delete(done));
    }
    return appended;
  }

  /** The appends not settled by their callers, queued or being written (see othersWritten()). */
  private readonly othersInFlight = new Set<Promise<void>>();

  /**
   * Resolves once every append asked for so far that nobody in this process settles (othersPending)
   * is written or has failed, wherever it is written (this thread or the writer thread): what a
   * request that looks at the log next must see. Appends asked for later are not waited for.
   */
  othersWritten(): Promise<void> {
    if (this.othersInFlight.size === 0) return Promise.resolve();
    return Promise.all([...this.othersInFlight]).then(noop);
  }

  /** Writes every queued append in one transaction, then settles their promises (after COMMIT). */
  private flush(): void {
    this.flushScheduled = false;
    // The writer thread's group settles first; the appends queued meanwhile follow it.
    if (this.writing !== null) return;
    const queue = this.queue;
    if (queue.length === 0) return;
    this.queue = [];
    this.queuedForOthers = 0;
    const writer = this.writerFor(queue);
    if (writer !== null) {
      this.writing = this.flushThrough(writer, queue).finally(() => {
        this.writing = null;
        if (this.queue.length > 0) this.flush();
      });
      return;
    }
    let outcomes: Outcome[];
    try {
      if (!this.db.open) throw new EventStoreError('the event store is closed');
      outcomes = this.groupTx(queue);
    } catch (err) {
      // Nothing of the batch was committed. Another process holding the write lock past the busy
      // timeout (or a closed store) fails every append alike, as it would one by one; any other
      // error is replayed one transaction per append, so it lands where a one-by-one run puts it.
      const code = (err as { code?: string }).code;
      if (!this.db.open || code === 'SQLITE_BUSY' || queue.length === 1) {
        for (const q of queue) q.reject(err);
        return;
      }
      this.replayOneByOne(queue);
      return;
    }
    this.settle(queue, outcomes);
  }

  /** A group written by the writer thread; what it could not write is written here, one by one. */
  private async flushThrough(writer: WriterThread, queue: Queued[]): Promise<void> {
    this.writeTransactions++;
    let outcomes: Outcome[] | null;
    const sent = writer.write(queue);
    // Until the answer arrives, what the thread committed is known from its shared memory: a group
    // made only of appends settled by their callers needs no catch-up from a request (unsettled()).
    this.inThread = queue.every((q) => q.settledByCaller) ? { writer, id: writer.lastSent } : null;
    try {
      outcomes = await sent;
    } catch (err) {
      // Another process held the write lock past the busy timeout: every append fails alike.
      for (const q of queue) q.reject(err);
      return;
    } finally {
      this.inThread = null;
    }
    if (outcomes === null) this.replayOneByOne(queue);
    else this.settle(queue, outcomes);
  }

  private replayOneByOne(queue: Queued[]): void {
    for (const q of queue) {
      try {
        if (!this.db.open) throw new EventStoreError('the event store is closed');
        q.resolve(this.appendOne(q.batch, q.created, q.settledByCaller));
      } catch (e) {
        q.reject(e);
      }
    }
  }

  private settle(queue: Queued[], outcomes: Outcome[]): void {
    if (this.publishTo !== null) this.publishSettled(queue, outcomes);
    if (outcomes.some((o) => o.ok)) this.signal.notify();
    // Before any promise settles: from here on a look (unsettled()) knows these positions.
    outcomes.forEach((o, i) => {
      if (!o.ok || !o.fresh) return;
      this.written.add(o.result);
      const q = queue[i] as Queued;
      if (q.settledByCaller) {
        const last = Number(o.result.position);
        this.noteSettledByCaller([last - q.batch.events.length + 1, last]);
      }
    });
    outcomes.forEach((o, i) => {
      if (o.ok) queue[i]!.resolve(o.result);
      else queue[i]!.reject(o.error);
    });
  }

  /**
   * The group's positions settled by their callers, for the main thread (options.settledRing), first
   * thing after COMMIT and merged into runs (a group is a few hundred appends, the ring a few hundred
   * slots).
   */
  private publishSettled(queue: Queued[], outcomes: Outcome[]): void {
    const ring = this.publishTo as SettledRing;
    let run: [number, number] | null = null;
    outcomes.forEach((o, i) => {
      const q = queue[i] as Queued;
      if (!o.ok || !o.fresh || !q.settledByCaller) return;
      const last = Number(o.result.position);
      const first = last - q.batch.events.length + 1;
      if (run !== null && first === run[1] + 1) run[1] = last;
      else {
        if (run !== null) ring.publish(run[0], run[1]);
        run = [first, last];
      }
    });
    if (run !== null) ring.publish((run as [number, number])[0], (run as [number, number])[1]);
    this.sinceCheckpoint += queue.length;
    if (this.sinceCheckpoint >= CHECKPOINT_APPENDS) {
      this.sinceCheckpoint = 0;
      // PASSIVE: never waits for readers or writers (the main thread's); what it cannot copy now is
      // copied next time.
      setImmediate(() => {
        if (this.db.open) this.db.pragma('wal_checkpoint(PASSIVE)');
      });
    }
  }

  /** Appends written since this store last checkpointed the WAL (options.settledRing). */
  private sinceCheckpoint = 0;

  /** One append in its own transaction (the path without group commit). Throws its error. */
  private appendOne(batch: PreparedAppend, created: string, settledByCaller = false): AppendResult {
    let result: AppendResult | null;
    try {
      result = this.appendTx(batch, created);
    } catch (err) {
      // An id already stored: the UNIQUE index is the cheap detector; the inspection decides
      // between "retry of a committed append" and an error.
      if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
      result = null;
    }
    if (result === null) return this.inspectTx(batch);
    this.written.add(result);
    if (settledByCaller) {
      const last = Number(result.position);
      this.noteSettledByCaller([last - batch.events.length + 1, last]);
      this.publishTo?.publish(last - batch.events.length + 1, last);
    }
    this.signal.notify();
    return result;
  }

  /** Results of appends that wrote their events (not answered as a retry). */
  private readonly written = new WeakSet<AppendResult>();

  wroteAnew(result: AppendResult): boolean {
    return this.written.has(result);
  }

  // -------------------------------------------------------------------------------------------------
  // What a request must wait for (src/runtime.ts refresh)

  /** Positions this instance wrote for appends settled by their callers, above `looked`, in order. */
  private settledRanges: [number, number][] = [];
  /** Every position up to here was judged by unsettled() (null: never looked). */
  private looked: number | null = null;
  /** The writer thread's group in flight, when every append of it is settled by its caller. */
  private inThread: { writer: WriterThread; id: number } | null = null;

  private noteSettledByCaller(range: [number, number] | null): void {
    if (range === null || (this.looked !== null && range[1] <= this.looked)) return;
    const list = this.settledRanges;
    const tail = list.at(-1);
    // Appends come in log order: the common case extends the last range.
    if (tail !== undefined && range[0] >= tail[0] && range[0] <= tail[1] + 1) {
      if (range[1] > tail[1]) tail[1] = range[1];
      return;
    }
    let i = list.length;
    while (i > 0 && (list[i - 1] as [number, number])[0] > range[0]) i--;
    list.splice(i, 0, [range[0], range[1]]);
  }

  /**
   * Whether appends that nobody in this process settles itself are on their way to the log: queued
   * for the next group commit, or in a group the writer thread is writing. A reader that looks at
   * the log now would not see them, though they were asked for before it: runtime refresh then
   * looks in the check phase, after the queued group commit (not after a group the thread is still
   * writing).
   */
  get othersPending(): boolean {
    return this.queuedForOthers > 0 || (this.writing !== null && this.inThread === null);
  }

  /** The log's head as the last unsettled() call read it (null: never looked). */
  get lookedHead(): bigint | null {
    return this.looked === null ? null : BigInt(this.looked);
  }

  /**
   * Whether the log holds events committed since the last call (the first call: since ever) that
   * nobody in this process is bringing into the read models: appended by another process (the CLI),
   * or by this one without `settledByCaller`. A request waits for a catch-up only then; appends
   * whose callers settle them (a CSV import's) are left to those callers. Answers true when unsure
   * (positions of the writer thread's group before it published them).
   */
  unsettled(): boolean {
    this.assertOpen();
    const head = this.stmt.head.get() ?? 0;
    const from = this.looked;
    if (from === null) {
      this.looked = head;
      this.settledRanges = [];
      return head > 0;
    }
    const pending = this.inThread?.writer.committedRange(this.inThread.id) ?? null;
    if (pending !== null) this.noteSettledByCaller(pending);
    // Another thread's ranges, read after the head. One committed but not yet published (the thread
    // publishes right after COMMIT) is not covered: the look is then unsettled (a wait, never a miss).
    let missed = false;
    for (const ring of this.settledRings) {
      const ranges = ring.take();
      if (ranges === null) missed = true;
      else for (const r of ranges) this.noteSettledByCaller(r);
    }
    this.looked = Math.max(head, from);
    let covered = from;
    const list = this.settledRanges;
    let drop = 0;
    for (const [first, last] of list) {
      if (last <= covered) {
        drop++;
        continue;
      }
      if (first > covered + 1 || covered >= head) break;
      covered = last;
      drop++;
    }
    list.splice(0, drop);
    return missed || covered < head;
  }

  /**
   * Positions another thread of this process publishes in `ring` (its store's `settledRing`) are
   * settled by that thread's caller: unsettled() leaves them out until unwatchSettledRing().
   */
  watchSettledRing(ring: SettledRing): void {
    this.settledRings.add(ring);
  }

  unwatchSettledRing(ring: SettledRing): void {
    // What it published last still counts for the look in progress: read once more.
    const ranges = ring.take();
    if (ranges !== null) for (const r of ranges) this.noteSettledByCaller(r);
    this.settledRings.delete(ring);
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    const name = validateStream(stream);
    const { direction, fromRevision, limit } = validateReadStream(options);
    const rows =
      direction === 'forwards'
        ? this.stmt.forwards.all(name, fromRevision ?? 0, limit ?? -1)
        : this.stmt.backwards.all(name, fromRevision ?? Number.MAX_SAFE_INTEGER, limit ?? -1);
    return rows.map(toEvent);
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    this.assertOpen();
    const { after, limit, batchSize } = validateReadAll(options);
    const page = this.stmt.after;
    const paged = (from: number | bigint, remaining: number) =>
      new PagedEvents((cursor, n) => page.all(cursor, n), from, remaining, batchSize);
    const from = Number(after ?? 0);
    const remaining = limit ?? Number.POSITIVE_INFINITY;
    // A read limited below the threshold (a catch-up's page) needs no look at the head.
    if (this.readAheadMin !== null && remaining >= this.readAheadMin) {
      const backlog = Math.min((this.stmt.head.get() ?? 0) - from, remaining);
      if (backlog >= this.readAheadMin)
        return new ReadAheadEvents({
          file: this.db.name,
          after: from,
          remaining,
          batchSize,
          fallback: paged,
        });
    }
    return paged(after ?? 0, remaining);
  }

  /** Test hook: a readAll that reads ahead in a worker thread whatever its size (see ReadAheadEvents). */
  readAllAhead(options: ReadAllOptions & { dieAfterPages?: number } = {}): ReadAheadEvents {
    this.assertOpen();
    if (this.db.memory) throw new EventStoreError('a log in memory has no file to read ahead from');
    const { after, limit, batchSize } = validateReadAll(options);
    const page = this.stmt.after;
    return new ReadAheadEvents({
      file: this.db.name,
      after: Number(after ?? 0),
      remaining: limit ?? Number.POSITIVE_INFINITY,
      batchSize,
      fallback: (from, remaining) =>
        new PagedEvents((cursor, n) => page.all(cursor, n), from, remaining, batchSize),
      dieAfterPages: options.dieAfterPages,
    });
  }

  subscribe(options?: SubscribeOptions): Subscription {
    this.assertOpen();
    const { after, filter } = validateSubscribe(options);
    const subscription = new CatchUpSubscription(this.source, {
      after,
      filter,
      signal: this.signal,
      batchSize: 500,
      pollIntervalMs: this.pollIntervalMs,
      onClose: (s) => this.subscriptions.delete(s),
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<bigint | null> {
    this.assertOpen();
    const head = this.stmt.head.get() ?? null;
    return head === null ? null : BigInt(head);
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    // Appends already accepted are written, not dropped: the writer thread's group, then the rest here.
    this.closing = true;
    await this.writing;
    this.flush();
    await this.writer?.close();
    this.db.close();
  }
}
