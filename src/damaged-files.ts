// A start (server or CLI) that meets a damaged SQLite file of DATA_DIR says which file, rather than
// SQLite's bare "database disk image is malformed". The opening checks (src/adapters/event-store/
// sqlite.ts) see a file cut short or not SQLite; a page damaged in the middle of the log is met only
// when the start reads it (the read models' catch-up), so the files are checked then.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

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

/**
 * `err` unchanged unless SQLite reported damage; then an error naming the damaged file(s) of `dataDir`
 * and what to do. Nothing is written to them (the check opens them read-only).
 */
export function explainDamagedFiles(err: unknown, dataDir: string): unknown {
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
