// One database copied by the backup (src/cli/backup-commands.ts): a copy that fails leaves nothing
// behind, so the next run into the same directory is not refused as "not empty".
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { copyDatabase } from '../../src/cli/backup-commands';

const t = suite<{ dir: string }>('backup: one database copied');
t.before((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-backup-copy-'));
});
t.after(({ dir }) => rmSync(dir, { recursive: true, force: true }));

t('a copy that fails midway (a damaged page) leaves no .partial file', ({ dir }) => {
  const from = join(dir, 'damaged.sqlite');
  const db = new Database(from);
  db.exec('CREATE TABLE t (x TEXT)');
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  for (let i = 0; i < 2000; i++) insert.run(`${'x'.repeat(500)}${i}`);
  db.close();
  const bytes = readFileSync(from);
  bytes.fill(0xff, 4096 * 50, 4096 * 60);
  writeFileSync(from, bytes);
  const out = join(dir, 'out');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  assert.throws(() => copyDatabase(from, join(out, 'events.sqlite')), /malformed/);
  assert.equal(readdirSync(out), []);
});

t.run();
