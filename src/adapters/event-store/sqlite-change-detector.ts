import Database from 'better-sqlite3';

/**
 * Tells cheaply whether anything committed to the SQLite log since the last call, from this process
 * or another (the operator CLI). `PRAGMA data_version` on a separate read-only connection changes
 * whenever another connection commits, and reading it touches no table.
 */
export class SqliteChangeDetector {
  private readonly db: Database.Database;
  private readonly stmt: Database.Statement;
  private last: number | null = null;

  constructor(filePath: string) {
    this.db = new Database(filePath, { readonly: true, fileMustExist: true });
    this.stmt = this.db.prepare('PRAGMA data_version').pluck();
  }

  changed(): boolean {
    const v = this.stmt.get() as number;
    const changed = v !== this.last;
    this.last = v;
    return changed;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
