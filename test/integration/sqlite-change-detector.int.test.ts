// The cross-process change signal behind "a key revoked by the CLI fails on the very next request":
// every commit, from this process or another, must show as a change at the next look.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { SqliteChangeDetector } from '../../src/adapters/event-store/sqlite-change-detector';
import { ANY } from '../../src/ports/event-store';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const writer = join(root, 'test/fixtures/event-store-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'couvert-detector-'));
let files = 0;
const freshFile = () => join(dir, `events-${files++}.sqlite`);
const one = (n: number) => [{ type: 'Appended', data: { n } }];

const test = suite('sqlite change detector');
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('reads the WAL-index header when the log is in WAL mode; the first look always reports a change', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file);
  const detector = new SqliteChangeDetector(file);
  try {
    assert.is(detector.signal, 'wal-index');
    assert.ok(detector.changed());
    assert.not.ok(detector.changed());
    assert.not.ok(detector.changed());
  } finally {
    detector.close();
    await store.close();
  }
});

test('a commit of this process shows once; reads show nothing', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file);
  const detector = new SqliteChangeDetector(file);
  try {
    detector.changed();
    await store.append('s', one(1), ANY);
    assert.ok(detector.changed());
    assert.not.ok(detector.changed());
    await store.readStream('s');
    await store.readAll({ limit: 10 });
    assert.not.ok(detector.changed());
  } finally {
    detector.close();
    await store.close();
  }
});

test('a commit of another process (a CLI-like writer that exits) shows at the next look', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file);
  const detector = new SqliteChangeDetector(file);
  try {
    for (let round = 0; round < 3; round++) {
      detector.changed();
      assert.not.ok(detector.changed());
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ['--import', 'tsx', writer, 'append-one', file, `cli-${round}`],
          {
            cwd: root,
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        let text = '';
        child.stdout.on('data', (d) => {
          text += d;
        });
        child.once('error', reject);
        child.once('exit', (code) =>
          code === 0 ? resolve(text) : reject(new Error(`writer exited ${code}`)),
        );
      });
      assert.is(out.trim(), 'done');
      assert.ok(detector.changed(), `round ${round}: the other process's commit was not seen`);
      assert.is((await store.readStream(`cli-${round}`)).length, 1);
    }
  } finally {
    detector.close();
    await store.close();
  }
});

test('commits after a checkpoint that restarts the WAL still show', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file);
  const other = new Database(file);
  const detector = new SqliteChangeDetector(file);
  try {
    for (let i = 0; i < 5; i++) await store.append('s', one(i), ANY);
    detector.changed();
    other.pragma('wal_checkpoint(TRUNCATE)');
    detector.changed(); // a checkpoint may or may not show; either is harmless
    await store.append('s', one(99), ANY);
    assert.ok(detector.changed());
  } finally {
    detector.close();
    other.close();
    await store.close();
  }
});

test('property: a look after any commit from either connection reports a change; a look after none, none', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom('appendA', 'appendB', 'checkpoint', 'look'), { minLength: 1, maxLength: 40 }),
      async (ops) => {
        const file = freshFile();
        const a = SqliteEventStore.open(file);
        const b = SqliteEventStore.open(file, { groupCommit: false });
        const raw = new Database(file);
        const detector = new SqliteChangeDetector(file);
        try {
          detector.changed();
          let committed = false;
          let touched = false;
          let n = 0;
          for (const op of [...ops, 'look']) {
            if (op === 'appendA' || op === 'appendB') {
              await (op === 'appendA' ? a : b).append('p', one(n++), ANY);
              committed = true;
            } else if (op === 'checkpoint') {
              raw.pragma('wal_checkpoint(TRUNCATE)');
              touched = true;
            } else {
              const changed = detector.changed();
              if (committed) assert.ok(changed, `missed a commit in ${ops.join(',')}`);
              else if (!touched)
                assert.not.ok(changed, `a change with nothing committed in ${ops.join(',')}`);
              committed = false;
              touched = false;
            }
          }
        } finally {
          detector.close();
          raw.close();
          await b.close();
          await a.close();
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('falls back to PRAGMA data_version when the log has no WAL index', async () => {
  const file = freshFile();
  const db = new Database(file);
  db.exec('CREATE TABLE t (x)');
  db.close(); // rollback-journal mode: no -shm file
  const detector = new SqliteChangeDetector(file);
  const writerDb = new Database(file);
  try {
    assert.is(detector.signal, 'data_version');
    detector.changed();
    assert.not.ok(detector.changed());
    writerDb.prepare('INSERT INTO t VALUES (1)').run();
    assert.ok(detector.changed());
    assert.not.ok(detector.changed());
  } finally {
    writerDb.close();
    detector.close();
  }
});

test('close twice is harmless', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file);
  const detector = new SqliteChangeDetector(file);
  detector.close();
  detector.close();
  await store.close();
});

test.run();
