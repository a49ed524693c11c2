// The chain on the SQLite store: tampering with the file is reported, and a log written before the
// chain existed (schema 1) opens, verifies and is upgraded.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { ChainVerifier, verifyChain } from '../../src/audit/chain-verifier';
import { NO_STREAM } from '../../src/ports/event-store';
import { assertChained } from '../contracts/event-store.chain';
import { collect, ev } from '../contracts/event-store.helpers';

const dir = mkdtempSync(join(tmpdir(), 'couvert-chain-'));
let n = 0;
const freshFile = () => join(dir, `events-${n++}.sqlite`);
const test = suite('audit: chain on sqlite');
test.after(() => rmSync(dir, { recursive: true, force: true }));

async function seeded(file: string) {
  const store = SqliteEventStore.open(file);
  await store.append('a', [ev('A0', { v: 0 }), ev('A1', { v: 1 }), ev('A2', { v: 2 })], NO_STREAM);
  await store.append('b', [ev('B0')], NO_STREAM);
  await store.append('a', [ev('A3', { v: 3 })], 2);
  await store.close();
}

const findings = async (file: string) => {
  const store = SqliteEventStore.open(file);
  try {
    const parsed = verifyChain(await collect(store.readAll()), true);
    // audit verify's SQLite path (the stored text hashed as is) finds the same.
    const stored = new ChainVerifier(true);
    for (const [position, id, stream, revision, type, dataJson, metadataJson, , hash] of store.chainPage(
      0,
      1000,
    ))
      stored.addStored({
        position: BigInt(position),
        id,
        stream,
        revision,
        type,
        dataJson,
        metadataJson,
        hash: hash ?? undefined,
      });
    assert.equal(stored.finish(), parsed);
    return parsed.findings.map((f) => [f.kind, f.stream, f.revision]);
  } finally {
    await store.close();
  }
};

test("an edit in the file, a deletion (a stream's last event too) and a reorder are each reported with stream and revision", async () => {
  const file = freshFile();
  await seeded(file);
  assert.equal(await findings(file), []);

  const db = new Database(file);
  db.prepare(`UPDATE events SET data = '{"v":99}' WHERE stream = 'a' AND revision = 1`).run();
  db.close();
  assert.equal(await findings(file), [['hash_mismatch', 'a', 1]]);

  const deleted = freshFile();
  await seeded(deleted);
  const d = new Database(deleted);
  d.prepare(`DELETE FROM events WHERE stream = 'a' AND revision = 1`).run();
  d.close();
  assert.equal(await findings(deleted), [
    ['missing_positions', 'a', 2],
    ['missing_revisions', 'a', 2],
  ]);

  // The last event of a stream (not the last of the log): its stream cannot tell, the log's
  // positions can, at the next event of the log.
  const tail = freshFile();
  await seeded(tail);
  const tl = new Database(tail);
  tl.prepare(`DELETE FROM events WHERE stream = 'b' AND revision = 0`).run();
  tl.close();
  assert.equal(await findings(tail), [['missing_positions', 'a', 3]]);

  const swapped = freshFile();
  await seeded(swapped);
  const s = new Database(swapped);
  // Swap the contents of revisions 1 and 2, hashes and all (positions and revisions stay in place).
  const row = s.prepare(`SELECT data, hash FROM events WHERE stream = 'a' AND revision = ?`);
  const [r1, r2] = [row.get(1), row.get(2)] as { data: string; hash: string }[];
  const put = s.prepare(`UPDATE events SET data = ?, hash = ? WHERE stream = 'a' AND revision = ?`);
  put.run(r2!.data, r2!.hash, 1);
  put.run(r1!.data, r1!.hash, 2);
  s.close();
  // Reported from the first swapped revision on: each link after it no longer holds.
  assert.equal(await findings(swapped), [
    ['hash_mismatch', 'a', 1],
    ['hash_mismatch', 'a', 2],
    ['hash_mismatch', 'a', 3],
  ]);
});

/** A log as the code before the chain wrote it: schema 1, no hash column. */
function legacyLog(file: string): void {
  const db = new Database(file);
  db.exec(`
    CREATE TABLE events (
      position INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL, revision INTEGER NOT NULL CHECK (revision >= 0),
      type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created TEXT NOT NULL,
      UNIQUE (stream, revision)
    ) STRICT;`);
  const insert = db.prepare(
    'INSERT INTO events (id, stream, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const rows: [string, number, string, object][] = [
    ['old', 0, 'Old0', { name: 'Ada' }],
    ['mixed', 0, 'Mixed0', { name: 'Grace' }],
    ['old', 1, 'Old1', { name: 'Ada L.' }],
  ];
  rows.forEach(([stream, revision, type, data], i) => {
    insert.run(
      `0190a3c4-0000-7000-8000-00000000000${i}`,
      stream,
      revision,
      type,
      JSON.stringify(data),
      JSON.stringify({ actor: 'operator:cli' }),
      '2026-01-01T00:00:00.000Z',
    );
  });
  db.pragma('user_version = 1');
  db.close();
}

test('a schema 1 log opens, reads without hashes, verifies, and chains new appends through its old events', async () => {
  const file = freshFile();
  legacyLog(file);
  const store = SqliteEventStore.open(file);
  try {
    assert.ok(store.needsLegacyUpgrade);
    const before = await collect(store.readAll());
    assert.ok(before.every((e) => e.hash === undefined));
    await store.append('mixed', [ev('Mixed1', { name: 'G. Hopper' })], 0);
    const all = await collect(store.readAll());
    const r = verifyChain(all, true);
    assert.equal(r.findings, []);
    assert.equal([r.unchained, r.chained], [3, 1]);

    assert.equal(store.legacyValues(['Old0', 'Old1', 'Mixed0'], 'name').sort(), ['Ada', 'Ada L.', 'Grace']);
    // The upgrade rewrites old-only streams (here: uppercasing names) and hashes every old row.
    const done = store.upgradeLegacy((row) => {
      const data = JSON.parse(row.data) as { name: string };
      return JSON.stringify({ name: data.name.toUpperCase() });
    });
    assert.equal(done, { hashed: 3, rewritten: 2 });
    assert.is(store.schemaVersion, 3, 'chained; the sealing step (schema 4) is upgradeSealing');
    assert.equal(
      store.upgradeSealing([], () => null),
      { rewritten: 0, rehashed: 0 },
    );
    assert.is(store.schemaVersion, 4, 'sealed; the missed-call step (schema 5) is upgradeStreams');
    assert.ok(store.needsLegacyUpgrade);
    assert.equal(
      store.upgradeStreams([], new Map(), () => null),
      { rewritten: 0, renamed: 0, rehashed: 0 },
    );
    assert.is(store.schemaVersion, 5, 'missed calls sealed; unowned calls (schema 6) are sealUnownedInPlace');
    assert.ok(store.needsLegacyUpgrade);
    assert.equal(
      store.sealUnownedInPlace([], () => null),
      { rewritten: 0, rehashed: 0 },
    );
    assert.is(store.schemaVersion, 6);
    assert.not.ok(store.needsLegacyUpgrade);
    assertChained(await store.readStream('old'), 'old');
    assertChained(await store.readStream('mixed'), 'mixed');
    assert.equal(
      (await store.readStream('old')).map((e) => e.data.name),
      ['ADA', 'ADA L.'],
    );
    assert.equal(
      (await store.readStream('mixed')).map((e) => e.data.name),
      ['Grace', 'G. Hopper'],
      'a stream already chained over its old rows keeps them as they are',
    );
    assert.equal(
      store.upgradeLegacy(() => '{}'),
      { hashed: 0, rewritten: 0 },
      'a second upgrade does nothing',
    );
  } finally {
    await store.close();
  }
  const again = SqliteEventStore.open(file);
  try {
    assert.not.ok(again.needsLegacyUpgrade);
    const r = verifyChain(await collect(again.readAll()), true);
    assert.equal([r.findings, r.chained, r.unchained], [[], 4, 0]);
  } finally {
    await again.close();
  }
  const db = new Database(file, { readonly: true });
  assert.is(db.pragma('user_version', { simple: true }), 6);
  db.close();
});

test('a new log starts at the current schema', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file);
  assert.not.ok(store.needsLegacyUpgrade);
  await store.close();
});

test.run();
