// One database copied by the backup (src/cli/backup-commands.ts): a copy that fails leaves nothing
// behind, so the next run into the same directory is not refused as "not empty".
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { copyDatabase, erasedCustomers } from '../../src/cli/backup-commands';
import { customerSubject } from '../../src/privacy/seal';

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

t(
  'a customer erased between the log copy and the keys copy is named, one erased before is not',
  async ({ dir }) => {
    const live = join(dir, 'keys.sqlite');
    const keys = SqliteKeyStore.open(live);
    try {
      await keys.destroy(customerSubject('cus_before'), '2026-11-28T05:00:00.000Z');
      const before = erasedCustomers(live);
      assert.equal([...before], ['cus_before']);
      // Erased while the log was being copied: the log's copy still holds the customer, not deleted.
      await keys.destroy(customerSubject('cus_during'), '2026-11-28T05:00:01.000Z');
      await keys.destroy('key:some-pool-key', '2026-11-28T05:00:01.000Z');
      const out = join(dir, 'keys-out');
      mkdirSync(out);
      copyDatabase(live, join(out, 'keys.sqlite'));
      const after = erasedCustomers(join(out, 'keys.sqlite'));
      assert.equal(
        [...after].filter((id) => !before.has(id)),
        ['cus_during'],
      );
    } finally {
      await keys.close();
    }
  },
);

t.run();
