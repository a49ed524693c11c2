import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import Database from 'better-sqlite3';

/**
 * Bytes of the WAL-index header at the start of `<db>-shm`: two copies of the 48-byte WalIndexHdr.
 * The format is fixed across SQLite versions because processes running different versions share it
 * (https://www.sqlite.org/walformat.html, "The WAL-Index Header"). Every commit rewrites both copies
 * (the change counter `iChange`, `mxFrame`, checksums), from any process, before its write lock is
 * released.
 */
const WAL_INDEX_HEADER_BYTES = 96;

/**
 * Tells cheaply whether anything committed to the SQLite log since the last call, from this process
 * or another (the operator CLI).
 *
 * Primary signal: one `pread` of the WAL-index header in the `-shm` file. It needs no lock: a commit
 * completed before the call has already rewritten the header, so the bytes differ from the last look;
 * a header caught mid-rewrite differs too, and only costs a needless catch-up. This is ~4× cheaper
 * than `PRAGMA data_version`, which takes and drops the WAL read lock (two `fcntl` calls) and runs a
 * statement. Fallback, when there is no `-shm` (not WAL, or an exclusive-locking writer):
 * `PRAGMA data_version` on a separate read-only connection, which changes whenever another
 * connection commits.
 */
export class SqliteChangeDetector {
  private readonly db: Database.Database;
  private readonly stmt: Database.Statement;
  private shmFd: number | null;
  private readonly current = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  private readonly last = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  private lastVersion: number | null = null;
  private looked = false;

  constructor(filePath: string) {
    // Kept open either way: a connection of ours keeps the WAL and its index in place.
    this.db = new Database(filePath, { readonly: true, fileMustExist: true });
    this.stmt = this.db.prepare('PRAGMA data_version').pluck();
    const shm = `${filePath}-shm`;
    this.shmFd = existsSync(shm) ? openSync(shm, 'r') : null;
  }

  /** Which signal is in use (tests, diagnostics). */
  get signal(): 'wal-index' | 'data_version' {
    return this.shmFd === null ? 'data_version' : 'wal-index';
  }

  changed(): boolean {
    if (this.shmFd === null) {
      const v = this.stmt.get() as number;
      const changed = v !== this.lastVersion;
      this.lastVersion = v;
      return changed;
    }
    const read = readSync(this.shmFd, this.current, 0, WAL_INDEX_HEADER_BYTES, 0);
    if (read < WAL_INDEX_HEADER_BYTES) this.current.fill(0, read);
    const changed = !this.looked || !this.current.equals(this.last);
    if (changed) this.current.copy(this.last);
    this.looked = true;
    return changed;
  }

  close(): void {
    if (this.shmFd !== null) closeSync(this.shmFd);
    this.shmFd = null;
    if (this.db.open) this.db.close();
  }
}
