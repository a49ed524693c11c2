// A page damaged in the middle of DATA_DIR/events.sqlite or keys.sqlite (a disk fault, a bad copy): the
// opening checks cannot see it (the header is sound), the start meets it while the read models catch up.
// The server and the CLI stop naming the damaged file and what to do; before, both printed SQLite's bare
// "database disk image is malformed", naming no file. Nothing is appended to either file.
import { closeSync, copyFileSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/cli-process';
import { startTestService, type TestService } from '../helpers/service';
import { spawnServer } from '../helpers/spawned-server';

/** Overwrites the leaf pages of `tables` in `file` (found through SQLite's dbstat) with garbage. */
function damage(file: string, tables: string[], which: 'middle' | 'all'): void {
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db
    .prepare(
      `SELECT pageno FROM dbstat WHERE name IN (SELECT value FROM json_each(?)) AND pagetype = 'leaf' ORDER BY pageno`,
    )
    .pluck()
    .all(JSON.stringify(tables)) as number[];
  db.close();
  assert.ok(pages.length > 0, `leaf pages of ${tables} in ${file}`);
  const chosen = which === 'all' ? pages : [pages[Math.floor(pages.length / 2)] as number];
  const fd = openSync(file, 'r+');
  try {
    for (const page of chosen)
      writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (page - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}

const t = suite<{ original: string }>('damaged DATA_DIR files');

t.before(async (ctx) => {
  // The demo's month of activity: a log of some thousand events and customers sealed with their keys.
  const svc = await startTestService({ demo: true });
  await svc.close({ keepData: true });
  ctx.original = svc.dataDir;
});
t.after(({ original }) => rmSync(original, { recursive: true, force: true }));

function copyOf(original: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-damaged-'));
  for (const f of ['events.sqlite', 'keys.sqlite', 'secrets.key'])
    copyFileSync(join(original, f), join(dir, f));
  return dir;
}

t(
  'a damaged page of events.sqlite: the CLI and the server name the file; the log is left as it was',
  async ({ original }) => {
    const dir = copyOf(original);
    try {
      const file = join(dir, 'events.sqlite');
      damage(file, ['events'], 'middle');
      const size = statSync(file).size;
      const cli = await runCli({ dataDir: dir } as TestService, ['restaurants', 'list']);
      assert.is(cli.code, 1, cli.stderr);
      assert.match(cli.stderr, `${file} is damaged`);
      assert.match(cli.stderr, 'restore the file from a backup');
      const started = await spawnServer({ DATA_DIR: dir }).then(
        async (server) => {
          await server.kill();
          return 'listening';
        },
        (err: Error) => err.message,
      );
      assert.match(started, `failed to start: ${file} is damaged`);
      assert.is(statSync(file).size, size, 'nothing appended');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

t('a damaged keys.sqlite: the start names it', async ({ original }) => {
  const dir = copyOf(original);
  try {
    const file = join(dir, 'keys.sqlite');
    damage(file, ['key_pages', 'subject_keys'], 'all');
    const cli = await runCli({ dataDir: dir } as TestService, ['audit', 'verify']);
    assert.is(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, `${file} is damaged`);
    assert.not.match(cli.stderr, `${join(dir, 'events.sqlite')} is damaged`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t.run();
