// The embedded deployment is one server process per DATA_DIR (DESIGN.md §1): a second one would run a
// second webhook publisher (each sending the same attempts before either records it, and both saving
// DATA_DIR/webhooks.checkpoint), a second scheduler and demo seeder on the same files. The server holds
// an exclusive SQLite lock on DATA_DIR/server.lock while it runs; the operator's CLI takes none and
// runs beside it. The lock is the operating system's (POSIX advisory), so it goes with the process,
// however the process ends (a SIGKILL leaves nothing to clean up).
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { DATA_DIR_MODE } from './core/data-dir-mode';
import { fullDisk } from './damaged-files';

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
    if ((err as { code?: string }).code === 'SQLITE_BUSY')
      throw new DataDirInUseError(
        `DATA_DIR ${dir} is in use by another Couvert server (it holds ${join(dir, LOCK_FILE)}): stop it first or use another DATA_DIR (the CLI, npm run cli, runs beside a server)`,
      );
    throw err;
  }
  return () => db.close();
}
