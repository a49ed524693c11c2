// A start (server or CLI) that meets a damaged SQLite file of DATA_DIR says which file, rather than
// SQLite's bare "database disk image is malformed". The opening checks (src/adapters/event-store/
// sqlite.ts) see a file cut short or not SQLite; a page damaged in the middle of the log is met only
// when the start reads it (the read models' catch-up), so the files are checked then.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isStorageFull } from './core/errors';
import { CHECKPOINT_FILE, parseCheckpoint } from './webhooks/checkpoint-file';

const DAMAGE = /^SQLITE_(CORRUPT|NOTADB)/;

/** SQLite's own verdict on `file`: null when it reads as sound. */
function problemOf(file: string): string | null {
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const said = String(db.pragma('quick_check(1)', { simple: true }));
    return said === 'ok' ? null : said.replace(/\s+/g, ' ').trim();
  } catch (err) {
    return (err as Error).message;
  } finally {
    db?.close();
  }
}

/** A start refused on a full DATA_DIR, already explained (explained again, it named the disk twice). */
export class DataDirFullError extends Error {
  override name = 'DataDirFullError';
}

/** Below this many free bytes DATA_DIR's file system counts as full (SQLite then fails its writes). */
const FULL_BELOW_BYTES = 1024 * 1024;

/**
 * A start that failed on a full file system: SQLite says "database or disk is full", or, when even
 * its shared-memory file cannot grow, a bare "disk I/O error" (SQLITE_IOERR_SHMSIZE), naming nothing;
 * writing DATA_DIR/secrets.key, the system says ENOSPC.
 * An error naming DATA_DIR and its free space instead, and `outcome` (what the failed start left), else null.
 */
export function fullDisk(err: unknown, dataDir: string, outcome = 'nothing was appended'): Error | null {
  if (err instanceof DataDirFullError) return err;
  const code = (err as { code?: unknown })?.code;
  if (!isStorageFull(err) && !(typeof code === 'string' && code.startsWith('SQLITE_IOERR'))) return null;
  let free: number;
  try {
    const fs = statfsSync(dataDir);
    free = fs.bavail * fs.bsize;
  } catch {
    return null;
  }
  if (free >= FULL_BELOW_BYTES && !isStorageFull(err)) return null;
  const who = typeof code === 'string' && /^E[A-Z]+$/.test(code) ? 'the system says' : 'SQLite says';
  return new DataDirFullError(
    `DATA_DIR ${dataDir} is on a full file system (${free} bytes free; ${who}: ${(err as Error).message}): free some space, then start again; ${outcome}`,
    { cause: err },
  );
}

/**
 * `err` unchanged unless SQLite reported damage or a full disk; then an error naming the damaged file(s) of `dataDir`
 * and what to do. Nothing is written to them (the check opens them read-only).
 */
export function explainDamagedFiles(err: unknown, dataDir: string): unknown {
  const full = fullDisk(err, dataDir);
  if (full) return full;
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string' || !DAMAGE.test(code)) return err;
  const found = ['events.sqlite', 'keys.sqlite']
    .map((name) => join(dataDir, name))
    .filter((file) => existsSync(file))
    .map((file) => ({ file, problem: problemOf(file) }))
    .filter((f) => f.problem !== null);
  const what = found.length
    ? found.map((f) => `${f.file} is damaged (SQLite's check says: ${f.problem})`).join('; ')
    : `a file of DATA_DIR ${dataDir} is damaged`;
  return new Error(
    `${what}; SQLite says: ${(err as Error).message}. Nothing was appended: restore the file from a backup (events.sqlite and keys.sqlite together), or point DATA_DIR at a new directory`,
    { cause: err },
  );
}

/** What DATA_DIR holds of a log that was there: keys made for it, the publisher's checkpoint in it. */
function tracesOfALog(dataDir: string): string[] {
  const traces: string[] = [];
  const keys = join(dataDir, 'keys.sqlite');
  if (existsSync(keys) && statSync(keys).size > 0) {
    let db: Database.Database | null = null;
    try {
      db = new Database(keys, { readonly: true, fileMustExist: true });
      const count = (table: string) => {
        try {
          return db?.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
        } catch {
          return 0; // a table this file does not have
        }
      };
      const n = count('subject_keys') + count('key_pages');
      if (n > 0) traces.push(`${keys} holds ${n} key row(s) made for it`);
    } catch {
      // Unreadable: not evidence either way (its own check names it when opened).
    } finally {
      db?.close();
    }
  }
  const checkpoint = join(dataDir, CHECKPOINT_FILE);
  if (existsSync(checkpoint)) {
    const position = parseCheckpoint(readFileSync(checkpoint, 'utf8'));
    if (position !== undefined && position > 0n)
      traces.push(`${checkpoint} is at position ${position} of it`);
  }
  return traces;
}

/**
 * Larger than any log file without an event (its tables and indexes: a few pages), smaller than it is
 * worth copying at every start.
 */
const STUB_MAX_BYTES = 1024 * 1024;

/**
 * events.sqlite holds no event while its WAL holds nothing either: a copy taken without its -wal while
 * the server ran (SQLite keeps the latest pages there until a checkpoint, so a log's first start often
 * leaves all of them there), or a first start that died before its first append. Read from a copy in a
 * directory of its own: SQLite opening the file itself, even read-only, leaves -wal and -shm files
 * beside it. Unreadable: not evidence (the log's own opening check names it).
 */
function holdsNoEvent(file: string): boolean {
  const wal = `${file}-wal`;
  // The latest events may be in the WAL (a server killed): then the file alone says nothing.
  if (existsSync(wal) && statSync(wal).size > 0) return false;
  if (statSync(file).size > STUB_MAX_BYTES) return false;
  let dir: string | null = null;
  let db: Database.Database | null = null;
  try {
    dir = mkdtempSync(join(tmpdir(), 'couvert-log-check-'));
    const copy = join(dir, 'events.sqlite');
    copyFileSync(file, copy);
    db = new Database(copy, { readonly: true, fileMustExist: true });
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get();
    return table === undefined || db.prepare('SELECT 1 FROM events LIMIT 1').get() === undefined;
  } catch {
    return false;
  } finally {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * How DATA_DIR/events.sqlite holds no log: missing, empty, or a stub without an event (holdsNoEvent);
 * null when it holds one (or may: its WAL holds pages, or it cannot be read, which its opening names).
 */
export function logAbsence(dataDir: string): 'missing' | 'empty' | 'stub' | null {
  const file = join(dataDir, 'events.sqlite');
  if (!existsSync(file)) return 'missing';
  const stat = statSync(file);
  if (!stat.isFile()) return null; // a directory in its place: checkDataDirFiles names it
  return stat.size === 0 ? 'empty' : holdsNoEvent(file) ? 'stub' : null;
}

/**
 * Before the log is opened: DATA_DIR/events.sqlite missing, empty or holding no event while the
 * directory holds traces of a log (keys made for its customers, the webhook publisher's checkpoint in
 * it) is refused, naming them. Opened, it would have started silently on an empty log (a server seeding
 * the demo on it), and the publisher, trusting a checkpoint past the new log's head, skipped that many
 * new events. secrets.key is no trace: it is made before the first event, so a first start that died
 * before it (a full disk) leaves one, and the next start must go on. A key row is: keys are made only
 * to seal a customer's, a reservation's or a missed call's data, each of a restaurant already in the log.
 */
export function checkLogPresent(dataDir: string): void {
  const file = join(dataDir, 'events.sqlite');
  const state = logAbsence(dataDir);
  if (state === null) return;
  const size = state === 'missing' ? null : statSync(file).size;
  const traces = tracesOfALog(dataDir);
  if (!traces.length) return;
  if (state === 'stub')
    throw new Error(
      `${file} holds no event (${size} bytes: a copy taken without its events.sqlite-wal while the server ran?), but this DATA_DIR held a log: ${traces.join('; ')}. Restore a backup made with \`npm run cli -- backup\` (README, "Backup and restore"; never cp a running server's files), or point DATA_DIR at a new directory; nothing was created.`,
    );
  throw new Error(
    `${file} is ${state}, but this DATA_DIR held a log: ${traces.join('; ')}. Restore events.sqlite from a backup (with keys.sqlite, taken together: \`npm run cli -- backup\`, README "Backup and restore"), or point DATA_DIR at a new directory; nothing was created.`,
  );
}
