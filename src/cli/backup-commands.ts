// `backup --out DIR`: a copy of an embedded DATA_DIR that a server can start on, taken while the
// server runs. Copying the files is not one: the log's latest pages live in events.sqlite-wal until a
// checkpoint, so a `cp events.sqlite` holds a stub (a server started on it begins an empty log,
// silently), and a copy of both files made while a write lands can hold pages of two moments.
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { keysDatabaseName } from '../adapters/key-store/keys-database-name';
import { SECRETS_KEY_FILE } from '../secrets';
import { CliUsageError, registerCliCommand, requireFlag } from './registry';

// Order matters: the log first, then the keys. A key made after the log's copy is only extra; a log
// copied after the keys could hold a customer sealed with a key the copy of keys.sqlite lacks, who
// would read as erased once restored.
const DATABASES = ['events.sqlite', 'keys.sqlite'] as const;

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function emptyDirectory(out: string): void {
  if (!existsSync(out)) {
    mkdirSync(out, { recursive: true, mode: 0o700 });
    return;
  }
  if (!statSync(out).isDirectory())
    throw new CliUsageError(`--out ${out} is a file: give a new or empty directory`);
  if (readdirSync(out).length > 0)
    throw new CliUsageError(
      `--out ${out} is not empty: give a new or empty directory (a backup never overwrites another)`,
    );
}

/**
 * One database copied by `VACUUM INTO`: a single read transaction, so a consistent snapshot whatever
 * the server appends meanwhile (it never waits for the copy: WAL readers do not block writers), and a
 * file that holds every page itself, with no WAL to carry. SQLite does not fsync what VACUUM INTO
 * writes: the copy is fsynced under a temporary name, then renamed, so a crash never leaves a file
 * that looks finished but is not.
 */
export function copyDatabase(from: string, to: string): void {
  const partial = `${to}.partial`;
  const db = new Database(from, { readonly: true, fileMustExist: true });
  try {
    try {
      db.prepare('VACUUM INTO ?').run(partial);
    } finally {
      db.close();
    }
    fsyncPath(partial);
    renameSync(partial, to);
  } catch (e) {
    // Left behind, it would have the next run into this directory refused as "not empty".
    rmSync(partial, { force: true });
    throw e;
  }
}

const CUSTOMER_SUBJECT = 'customer:';

/**
 * The customers whose key is destroyed (a tombstone for `customer:<id>`) in a keys.sqlite. Read before
 * the log's copy and from the keys' copy: a customer in the second only was erased while the log was
 * being copied, and restores as not deleted (the log's copy lacks CustomerDeleted) with every sealed
 * field erased (the keys' copy lacks the key).
 */
export function erasedCustomers(keysFile: string): Set<string> {
  if (!existsSync(keysFile)) return new Set();
  const db = new Database(keysFile, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare('SELECT subject FROM subject_keys WHERE substr(subject, 1, ?) = ? AND destroyed IS NOT NULL')
      .pluck()
      .all(CUSTOMER_SUBJECT.length, CUSTOMER_SUBJECT) as string[];
    return new Set(rows.map((subject) => subject.slice(CUSTOMER_SUBJECT.length)));
  } finally {
    db.close();
  }
}

/** Owner-only, with a sentence for a directory this user may not change (not a raw EPERM). */
function makeOwnerOnly(out: string): void {
  try {
    chmodSync(out, 0o700);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'EACCES' && code !== 'EROFS') throw e;
    throw new CliUsageError(
      `--out ${out} cannot be made owner-only (${code}: it belongs to another user or is read-only): give a new directory, or an empty one you own (a backup holds every customer's key)`,
    );
  }
}

/**
 * What `backup` answers scaled out: which databases to back up with MongoDB's own tools, the keys'
 * named as the service opens it (cut for a long MONGODB_DB), not as `<db>_keys`.
 */
export function scaledOutBackupAdvice(store: string, mongodbDb: string): string {
  return `backup copies the embedded store; with STORE=${store} back up EventStoreDB and MongoDB (the databases ${mongodbDb} and ${keysDatabaseName(mongodbDb)}) with their own tools, and keep SECRETS_KEY`;
}

export function registerBackupCommands(): void {
  registerCliCommand({
    name: 'backup',
    summary:
      'Embedded: copy DATA_DIR (events.sqlite, then keys.sqlite, and secrets.key) into a new directory while the server runs; a server starts on the copy as it is',
    usage: '--out DIR   (a new or empty directory; made owner-only: it holds every customer’s key)',
    flags: ['out'],
    readModels: false,
    async run(ctx) {
      const { config } = ctx.rt;
      if (config.store !== 'embedded')
        throw new CliUsageError(scaledOutBackupAdvice(config.store, config.mongodbDb));
      const out = resolve(requireFlag(ctx, 'out'));
      emptyDirectory(out);
      makeOwnerOnly(out);
      const erasedBefore = erasedCustomers(join(config.dataDir, 'keys.sqlite'));
      for (const name of DATABASES) {
        copyDatabase(join(config.dataDir, name), join(out, name));
        ctx.out(`copied ${name}`);
      }
      const erasedDuring = [...erasedCustomers(join(out, 'keys.sqlite'))].filter(
        (id) => !erasedBefore.has(id),
      );
      for (const id of erasedDuring) ctx.out(`erase again after restore: ${id}`);
      if (erasedDuring.length > 0)
        ctx.out(
          `${erasedDuring.length} customer(s) erased while the backup was taken restore as not deleted, their personal fields unreadable: run \`audit erase --customer <id>\` for each on the restored server`,
        );
      const keyFile = join(config.dataDir, SECRETS_KEY_FILE);
      if (config.secretsKey === null && existsSync(keyFile)) {
        copyFileSync(keyFile, join(out, SECRETS_KEY_FILE));
        chmodSync(join(out, SECRETS_KEY_FILE), 0o600);
        fsyncPath(join(out, SECRETS_KEY_FILE));
        ctx.out(`copied ${SECRETS_KEY_FILE}`);
      } else if (config.secretsKey !== null)
        ctx.out('SECRETS_KEY is set: keep it with this backup (webhook signing secrets are sealed with it)');
      fsyncPath(out);
      ctx.out(
        `backup written to ${out}: start a server with DATA_DIR=${out}, or copy its files into an empty DATA_DIR`,
      );
    },
  });
}
