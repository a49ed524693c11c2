// The key store contract against every adapter; MongoDB through testcontainers (skipped visibly
// without a container runtime, unless REQUIRE_DOCKER=1).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoDBContainer, type StartedMongoDBContainer } from '@testcontainers/mongodb';
import Database from 'better-sqlite3';
import { MongoClient } from 'mongodb';
import { getContainerRuntimeClient } from 'testcontainers';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { keysDatabaseName, MongoKeyStore } from '../../src/adapters/key-store/mongodb';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { pageKeySubject } from '../../src/ports/key-store';
import { withTimeout } from '../contracts/event-store.helpers';
import { keyStoreContract } from '../contracts/key-store.contract';

const dir = mkdtempSync(join(tmpdir(), 'couvert-keys-'));

const memory = suite('key-store: memory');
keyStoreContract(memory, { open: () => new MemoryKeyStore() });

const sqlite = suite('key-store: sqlite');
const file = join(dir, 'keys.sqlite');
keyStoreContract(sqlite, { open: () => SqliteKeyStore.open(file), reopen: () => SqliteKeyStore.open(file) });
sqlite('a destroyed key no longer appears in the file or its WAL', async () => {
  const f = join(dir, 'shred.sqlite');
  const keys = SqliteKeyStore.open(f);
  const k = await keys.obtain('customer:cus_shred');
  const hex = k.toString('hex');
  const bytesIn = () => {
    let text = readFileSync(f).toString('hex');
    try {
      text += readFileSync(`${f}-wal`).toString('hex');
    } catch {}
    return text.includes(hex);
  };
  assert.ok(bytesIn(), 'the key is in the file while active');
  await keys.destroy('customer:cus_shred', '2026-05-01T00:00:00.000Z');
  assert.not.ok(bytesIn(), 'no trace after destroy');
  await keys.close();
});
sqlite('an unlinked label and its members no longer appear in the file or its WAL', async () => {
  const f = join(dir, 'unlink.sqlite');
  const keys = SqliteKeyStore.open(f);
  const label = 'missed-call-number:rest_x:LABELHASHunlinkmeXYZ1';
  const member = 'MEMBERkidunlinkme.7 mc_unlinkmeCALL';
  await keys.link(label, member);
  await keys.link('missed-call-number:rest_x:OTHERlabelKEPTxyz', 'kept member');
  const inFile = (needle: string) => {
    let text = readFileSync(f).toString('latin1');
    try {
      text += readFileSync(`${f}-wal`).toString('latin1');
    } catch {}
    return text.includes(needle);
  };
  assert.ok(inFile('LABELHASHunlinkmeXYZ1') || inFile('MEMBERkidunlinkme'), 'written while linked');
  assert.is(await keys.unlink(label), 1);
  assert.not.ok(inFile('LABELHASHunlinkmeXYZ1'), 'no trace of the label');
  assert.not.ok(inFile('MEMBERkidunlinkme'), 'no trace of the member');
  assert.equal(await keys.linked('missed-call-number:rest_x:OTHERlabelKEPTxyz'), ['kept member']);
  await keys.close();
});
sqlite(
  'obtainMany writes in its worker thread; keys it made are shredded like any; without it, inline',
  async () => {
    const f = join(dir, 'many.sqlite');
    const keys = SqliteKeyStore.open(f);
    const subjects = Array.from({ length: 40 }, (_, i) => `customer:cus_many_${i}`);
    const got = await keys.obtainMany(subjects);
    const writer = (keys as unknown as { writer: { failed: boolean } | null }).writer;
    assert.ok(writer && !writer.failed, 'the write went through the worker');
    const k = got.get(subjects[3]!) as Buffer;
    assert.ok(Buffer.isBuffer(k) && k.length === 32);
    const other = SqliteKeyStore.open(f);
    assert.ok(
      (await other.obtain(subjects[3]!)).equals(k),
      'durable in the file, seen by another connection',
    );
    await other.close();
    const hex = k.toString('hex');
    const bytesIn = () => {
      let text = readFileSync(f).toString('hex');
      try {
        text += readFileSync(`${f}-wal`).toString('hex');
      } catch {}
      return text.includes(hex);
    };
    assert.ok(bytesIn());
    await keys.destroy(subjects[3]!, '2026-05-01T00:00:00.000Z');
    assert.not.ok(bytesIn(), 'no trace after destroy');
    assert.is((await keys.obtainMany([subjects[3]!])).get(subjects[3]!), null);
    // A batch large enough for the worker (over the 32 looked up first), with a tombstone, keys that
    // exist and new ones: the answers come back packed in one buffer and are unpacked per subject.
    const fresh = Array.from({ length: 40 }, (_, i) => `key:many_fresh_${i}`);
    const mixed = await keys.obtainMany([...subjects, ...fresh]);
    assert.is(mixed.get(subjects[3]!), null, 'a tombstone answers null from the worker too');
    for (const s of subjects)
      if (s !== subjects[3]) assert.ok(mixed.get(s)?.equals(got.get(s) as Buffer), `${s} kept its key`);
    const made = fresh.map((s) => mixed.get(s) as Buffer);
    assert.ok(made.every((k) => Buffer.isBuffer(k) && k.length === 32));
    assert.is(new Set(made.map((k) => k.toString('hex'))).size, fresh.length, 'every new key is its own');
    const again = SqliteKeyStore.open(f);
    for (const s of fresh) assert.ok((await again.find(s)).state === 'active');
    assert.ok(((await again.find(fresh[7]!)) as { key: Buffer }).key.equals(made[7]!), 'as stored');
    await again.close();
    // The worker goes away: the next batch is written here, with the same answers.
    await (keys as unknown as { writer: { close(): Promise<void> } }).writer.close();
    const more = await keys.obtainMany([subjects[0]!, 'customer:cus_many_new']);
    assert.ok(more.get(subjects[0]!)?.equals(got.get(subjects[0]!) as Buffer));
    assert.is(more.get('customer:cus_many_new')?.length, 32);
    await keys.close();
  },
);
sqlite(
  'destroy answers true for a key its key writer destroyed before dying unanswered (the port: destroyed by this call)',
  async () => {
    const at = '2026-05-01T00:00:00.000Z';
    const cases: [string, (keys: SqliteKeyStore) => Promise<string>][] = [
      [
        'own',
        async (keys) => {
          await keys.obtain('customer:cus_died');
          return 'customer:cus_died';
        },
      ],
      ['page', async (keys) => pageKeySubject((await keys.createPage(4)).page, 2)],
    ];
    for (const [name, made] of cases) {
      const f = join(dir, `died-${name}.sqlite`);
      const keys = SqliteKeyStore.open(f, { dieAfterDestroy: true });
      const subject = await made(keys);
      assert.is(await keys.destroy(subject, at), true, `${name}: this call destroyed the key`);
      const writer = (keys as unknown as { writerFailed: boolean }).writerFailed;
      assert.ok(writer, `${name}: the writer died (the answer came from this thread)`);
      assert.equal(await keys.find(subject), { state: 'destroyed', destroyedAt: at });
      assert.is(await keys.destroy(subject, at), false, `${name}: a second destroy destroyed nothing`);
      await keys.close();
    }
    // A subject without a key: the dead writer's tombstone is no key destroyed.
    const keys = SqliteKeyStore.open(join(dir, 'died-none.sqlite'), { dieAfterDestroy: true });
    assert.is(await keys.destroy('customer:cus_died_none', at), false);
    assert.ok((keys as unknown as { writerFailed: boolean }).writerFailed);
    assert.equal(await keys.find('customer:cus_died_none'), { state: 'destroyed', destroyedAt: at });
    await keys.close();
  },
);
// Two destroys of one key in the same millisecond (same `at`), the key writer dying after the first
// committed: both fell back to this thread, found the key destroyed at their `at`, and both answered
// true. Each call's own token, written with the destroy, tells which one it was.
sqlite(
  'two destroys of one key at the same instant, the key writer dead: only the one that destroyed it answers true',
  async () => {
    const at = '2026-05-01T00:00:00.000Z';
    for (const name of ['own', 'page'] as const) {
      const keys = SqliteKeyStore.open(join(dir, `died-twice-${name}.sqlite`), { dieAfterDestroy: true });
      let subject = 'customer:cus_died_twice';
      if (name === 'own') await keys.obtain(subject);
      else subject = pageKeySubject((await keys.createPage(4)).page, 1);
      const answers = await Promise.all([keys.destroy(subject, at), keys.destroy(subject, at)]);
      assert.ok((keys as unknown as { writerFailed: boolean }).writerFailed, `${name}: the writer died`);
      assert.equal(answers, [true, false], `${name}: the first destroyed it (the writer's), not the second`);
      assert.equal(await keys.find(subject), { state: 'destroyed', destroyedAt: at });
      await keys.close();
    }
  },
);
// close() lets go of its key writer, then waits for it to stop: a call made in that wait started a
// new key writer, which nothing closed (a thread, and a connection to the key file, left behind).
sqlite('a call made while the store closes starts no key writer', async () => {
  const keys = SqliteKeyStore.open(join(dir, 'closing.sqlite'));
  await keys.link('label_closing', 'first');
  assert.ok((keys as unknown as { writer: unknown }).writer, 'the key writer runs');
  const closing = keys.close();
  const during = keys.link('label_closing', 'second').then(
    () => 'linked',
    (err: Error) => err.message,
  );
  await closing;
  const started = (keys as unknown as { writer: { close(): Promise<void> } | null }).writer;
  await started?.close();
  assert.is(started, null, 'no key writer left once closed');
  assert.is(await during, 'linked', 'the call is done on the closing store’s own thread');
});
sqlite('a destroyed page key no longer appears in the file or its WAL; its page-mates do', async () => {
  const f = join(dir, 'page-shred.sqlite');
  const keys = SqliteKeyStore.open(f);
  const { page, keys: made } = await keys.createPage(256);
  const writer = (keys as unknown as { writer: unknown }).writer;
  assert.ok(writer, 'the page was written by the worker thread');
  const inFile = (k: Buffer) => {
    let text = readFileSync(f).toString('hex');
    try {
      text += readFileSync(`${f}-wal`).toString('hex');
    } catch {}
    return text.includes(k.toString('hex'));
  };
  assert.ok(inFile(made[17]!) && inFile(made[18]!), 'in the file while active');
  await keys.destroy(pageKeySubject(page, 17), '2026-05-01T00:00:00.000Z');
  assert.not.ok(inFile(made[17]!), 'no trace of the destroyed key');
  assert.ok(inFile(made[18]!), 'the rest of the page is kept');
  await keys.close();
  // Another process: still destroyed, the others as made.
  const again = SqliteKeyStore.open(f);
  assert.is((await again.find(pageKeySubject(page, 17))).state, 'destroyed');
  const kept = await again.find(pageKeySubject(page, 18));
  assert.ok(kept.state === 'active' && kept.key.equals(made[18]!));
  await again.close();
});

sqlite(
  'findMany keeps pages it read, and a key destroyed since (here or by another process) reads destroyed',
  async () => {
    const f = join(dir, 'page-cache.sqlite');
    const keys = SqliteKeyStore.open(f);
    const other = SqliteKeyStore.open(f);
    const { page, keys: made } = await keys.createPage(64);
    const subjects = [3, 4, 5].map((i) => pageKeySubject(page, i));
    const first = await keys.findMany(subjects);
    assert.ok(subjects.every((s, i) => (first.get(s) as { key: Buffer }).key.equals(made[3 + i]!)));
    await keys.destroy(subjects[0]!, '2026-05-01T00:00:00.000Z');
    await other.destroy(subjects[1]!, '2026-05-01T00:00:00.000Z');
    const again = await keys.findMany(subjects);
    assert.is(again.get(subjects[0]!)?.state, 'destroyed', 'destroyed here');
    assert.is(again.get(subjects[1]!)?.state, 'destroyed', 'destroyed by another process');
    assert.ok((again.get(subjects[2]!) as { key: Buffer }).key.equals(made[5]!), 'its page-mate as made');
    // Neither destroyed key stays in the page kept in memory.
    const kept = (keys as unknown as { pageCache: Map<string, Buffer> }).pageCache.get(page) as Buffer;
    assert.ok(
      kept.subarray(3 * 32, 5 * 32).every((b) => b === 0),
      'both destroyed slots zeroed',
    );
    assert.ok(kept.subarray(5 * 32, 6 * 32).equals(made[5]!));
    await other.close();
    await keys.close();
  },
);

sqlite('createPage without its worker (gone, or :memory:) writes the page on this thread', async () => {
  const f = join(dir, 'page-inline.sqlite');
  const keys = SqliteKeyStore.open(f);
  await keys.createPage(2);
  await (keys as unknown as { writer: { close(): Promise<void> } }).writer.close();
  const { page, keys: made } = await keys.createPage(3);
  const found = await SqliteKeyStore.open(f).find(pageKeySubject(page, 2));
  assert.ok(found.state === 'active' && found.key.equals(made[2]!), 'durable, seen by another connection');
  await keys.close();
  const mem = SqliteKeyStore.open(':memory:');
  const p = await mem.createPage(4);
  assert.ok(((await mem.find(pageKeySubject(p.page, 3))) as { key: Buffer }).key.equals(p.keys[3]!));
  await mem.close();
});

sqlite('a key file written before key pages opens as it was and gains pages', async () => {
  // The layout before pages: one row per subject, pool keys at `key:<kid>` (25 characters).
  const f = join(dir, 'before-pages.sqlite');
  const old = new Database(f);
  old.pragma('journal_mode = WAL');
  old.exec(`CREATE TABLE subject_keys (
    subject TEXT PRIMARY KEY, key BLOB, created TEXT NOT NULL, destroyed TEXT,
    CHECK ((key IS NULL) = (destroyed IS NOT NULL))) STRICT`);
  const poolKey = randomBytes(32);
  const ownKey = randomBytes(32);
  const insert = old.prepare('INSERT INTO subject_keys VALUES (?, ?, ?, ?)');
  insert.run('key:00mhx2k9zAbCdEfGhIjKlMnOp', poolKey, 't', null);
  insert.run('customer:cus_old', ownKey, 't', null);
  insert.run('customer:cus_erased', null, 't', '2026-01-01T00:00:00.000Z');
  old.close();
  const keys = SqliteKeyStore.open(f);
  assert.ok(((await keys.find('key:00mhx2k9zAbCdEfGhIjKlMnOp')) as { key: Buffer }).key.equals(poolKey));
  const both = await keys.findMany([
    'customer:cus_old',
    'customer:cus_erased',
    'key:00mhx2k9zAbCdEfGhIjKlMnOp',
  ]);
  assert.ok((both.get('customer:cus_old') as { key: Buffer }).key.equals(ownKey));
  assert.equal(both.get('customer:cus_erased'), {
    state: 'destroyed',
    destroyedAt: '2026-01-01T00:00:00.000Z',
  });
  assert.is(await keys.destroy('key:00mhx2k9zAbCdEfGhIjKlMnOp', '2026-05-01T00:00:00.000Z'), true);
  assert.is((await keys.find('key:00mhx2k9zAbCdEfGhIjKlMnOp')).state, 'destroyed');
  const { page } = await keys.createPage(4);
  assert.is((await keys.find(pageKeySubject(page, 0))).state, 'active');
  await keys.close();
});

sqlite.after(() => rmSync(dir, { recursive: true, force: true }));

const mongo = suite('key-store: mongodb');
const LINKS_INDEX = "a label's links are read through an index, not a scan of every link";
let problem: string | null = null;
try {
  await withTimeout(getContainerRuntimeClient(), 15_000, 'the container runtime');
} catch (err) {
  problem = (err as Error).message;
}
let container: StartedMongoDBContainer | undefined;
if (problem && process.env.REQUIRE_DOCKER === '1') {
  mongo('a container runtime is available (REQUIRE_DOCKER=1)', () =>
    assert.unreachable(`no container runtime: ${problem}`),
  );
} else if (problem) {
  console.log(
    `SKIP mongodb key store contract: no container runtime (${problem}); REQUIRE_DOCKER=1 makes this fail`,
  );
  keyStoreContract(mongo, { open: () => new MemoryKeyStore() }, { skip: problem });
  mongo.skip(LINKS_INDEX, () => undefined);
} else {
  mongo.before(async () => {
    const image = process.env.MONGO_IMAGE ?? 'mongo:7';
    container = await withTimeout(new MongoDBContainer(image).start(), 180_000, `starting ${image}`);
  });
  mongo.after(async () => {
    await container?.stop();
  });
  const url = () => `${container!.getConnectionString()}/?directConnection=true`;
  const open = () => MongoKeyStore.connect(url(), keysDatabaseName('couvert_test'));
  keyStoreContract(mongo, { open, reopen: open });
  mongo(LINKS_INDEX, async () => {
    const keys = await open();
    await keys.link('number:index-check', 'key:a b');
    await keys.close();
    const client = new MongoClient(url());
    try {
      await client.connect();
      const plan = await client
        .db(keysDatabaseName('couvert_test'))
        .collection('key_links')
        .find({ '_id.label': 'number:index-check' })
        .sort({ created_at: 1, '_id.member': 1 })
        .explain();
      const winning = JSON.stringify(
        (plan as { queryPlanner: { winningPlan: unknown } }).queryPlanner.winningPlan,
      );
      assert.ok(winning.includes('IXSCAN') && !winning.includes('COLLSCAN'), winning);
    } finally {
      await client.close();
    }
  });
}
mongo('the keys database is never the read models database', () => {
  assert.is(keysDatabaseName('couvert'), 'couvert_keys');
  assert.ok(Buffer.byteLength(keysDatabaseName('x'.repeat(63))) <= 63);
  // A two-byte character across the 58-byte cut is left out whole, not decoded as U+FFFD (3 bytes).
  const accented = keysDatabaseName(`x${'é'.repeat(31)}`);
  assert.is(accented, `x${'é'.repeat(28)}_keys`);
  assert.ok(Buffer.byteLength(accented) <= 63);
  assert.is(keysDatabaseName('é'.repeat(31)), `${'é'.repeat(29)}_keys`);
});

memory.run();
sqlite.run();
mongo.run();
