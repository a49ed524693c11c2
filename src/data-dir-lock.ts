// The embedded deployment is one server process per DATA_DIR (DESIGN.md §1): a second one would run a
// second webhook publisher (each sending the same attempts before either records it, and both saving
// DATA_DIR/webhooks.checkpoint), a second scheduler and demo seeder on the same files. The server holds
// an exclusive SQLite lock on DATA_DIR/server.lock while it runs; the operator's CLI takes none and
// runs beside it. The lock is the operating system's (POSIX advisory), so it goes with the process,
// however the process ends (a SIGKILL leaves nothing to clean up).
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { DATA_DIR_MODE } from './core/data-dir-mode';
import { fullDisk } from './damaged-files';
import { VERSIONS_STATUS_FILE } from './projection/versions';
import { SECRETS_KEY_FILE } from './secrets';
import { CHECKPOINT_FILE } from './webhooks/checkpoint-file';

export const LOCK_FILE = 'server.lock';

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
}

/**
 * DATA_DIR made if missing (DATA_DIR_MODE), then checked writable: a read-only mount or a directory of
 * another user otherwise surfaces as SQLite's "unable to open database file", naming neither file nor
 * directory.
 */
export function writableDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    const code = whyNotMade(dir, (err as NodeJS.ErrnoException).code);
    const why =
      code === 'EROFS'
        ? 'a read-only file system'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code;
    throw new DataDirError(
      `DATA_DIR ${dir} is not writable (${why}): the server and the CLI write the event log and keys there`,
    );
  }
  checkDataDirFiles(dir);
}

/** The files the server and the CLI keep in DATA_DIR. */
const DATA_DIR_FILES = [
  'events.sqlite',
  'keys.sqlite',
  SECRETS_KEY_FILE,
  LOCK_FILE,
  CHECKPOINT_FILE,
  VERSIONS_STATUS_FILE,
];

/**
 * Each of DATA_DIR's files, where one exists, is a file: a directory in its place (what `docker run -v
 * ./events.sqlite:/data/events.sqlite` makes of a host file that is missing) failed the start with
 * SQLite's "unable to open database file" or "EISDIR", naming neither, or, for the publisher's checkpoint,
 * kept the publisher restarting forever while the server answered as healthy.
 */
export function checkDataDirFiles(dir: string): void {
  for (const name of DATA_DIR_FILES) {
    const file = join(dir, name);
    let isFile: boolean;
    try {
      isFile = statSync(file).isFile();
    } catch {
      continue; // missing (made when needed), or a dangling link: what opens it says so
    }
    if (!isFile)
      throw new DataDirError(
        `${file} is not a file (a directory or a device): Couvert keeps its ${name} there. Move it away (if it is a directory a volume mount made, mount DATA_DIR itself instead) and start again; nothing was written`,
      );
  }
}

/**
 * A recursive mkdir under a read-only or foreign parent fails with ENOENT (the directory it could not
 * make is then missing for the next level): the real reason is the nearest existing parent's.
 */
function whyNotMade(dir: string, code: string | undefined): string | undefined {
  if (code !== 'ENOENT') return code;
  for (let parent = dirname(resolve(dir)); ; parent = dirname(parent)) {
    if (existsSync(parent)) {
      try {
        accessSync(parent, constants.W_OK);
        return code;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code ?? code;
      }
    }
    if (dirname(parent) === parent) return code;
  }
}

export class DataDirError extends Error {
  override name = 'DataDirError';
}

/**
 * Whether a server holds DATA_DIR's lock now (for the CLI, which takes none): the file is read, never
 * made or written; a held lock refuses even the read (SQLITE_BUSY at once).
 */
export function serverHoldsDataDir(dir: string): boolean {
  let db: Database.Database;
  try {
    db = new Database(join(dir, LOCK_FILE), { readonly: true, fileMustExist: true, timeout: 0 });
  } catch {
    return false; // no lock file: no server ever ran here
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return false;
  } catch (err) {
    return (err as { code?: string }).code === 'SQLITE_BUSY';
  } finally {
    db.close();
  }
}

/** Takes DATA_DIR's server lock, or throws DataDirInUseError; call the result to let it go. */
export function lockDataDir(dir: string): () => void {
  writableDataDir(dir);
  const db = new Database(join(dir, LOCK_FILE), { timeout: 0 });
  try {
    // In exclusive locking mode the first write takes the file's exclusive lock and keeps it until the
    // connection closes; another process then cannot even read the file (SQLITE_BUSY at once).
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL)');
    db.transaction(() => {
      db.exec('DELETE FROM holder');
      db.prepare('INSERT INTO holder VALUES (?)').run(process.pid);
    })();
  } catch (err) {
    db.close();
    const full = fullDisk(err, dir);
    if (full) throw new DataDirError(full.message);
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_BUSY')
      throw new DataDirInUseError(
        `DATA_DIR ${dir} is in use by another Couvert server (it holds ${join(dir, LOCK_FILE)}): stop it first or use another DATA_DIR (the CLI, npm run cli, runs beside a server)`,
      );
    // The lock file holds nothing but the holder's pid: damaged, it is named (SQLite said only "file is
    // not a database"), and the operator, who knows whether a server runs, removes it.
    if (code?.startsWith('SQLITE_NOTADB') || code?.startsWith('SQLITE_CORRUPT'))
      throw new DataDirError(
        `${join(dir, LOCK_FILE)} is damaged (SQLite says: ${(err as Error).message}): it is the server's lock and holds no data. Once no Couvert server runs on DATA_DIR ${dir}, delete it and start again`,
      );
    throw err;
  }
  return () => db.close();
}
