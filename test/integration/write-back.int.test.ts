// The projection runner's write-back cache (src/projection/write-back.ts): every projection the service
// runs, replayed through it in batches of odd sizes, lands on exactly the read models the per-event
// path writes; a batch that fails is redone; a redelivered log changes nothing; and the cache's own
// promises (copy on write, reads that see the batch, the store's semantics for upserts) hold.
// The test runner sets COUVERT_STRICT_PROJECTIONS=1: every document shared is frozen here.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeTemplate } from '../../bench/replay-all.bench';
import { allProjections } from '../../projections/index';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { type Doc, type DocumentStore, DuplicateKeyError } from '../../src/ports/document-store';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';
import { isOwning, WriteBackStore } from '../../src/projection/write-back';

const test = suite('projection write-back cache');

const dir = mkdtempSync(join(tmpdir(), 'couvert-write-back-'));
const file = join(dir, 'events.sqlite');
let events: SqliteEventStore;

test.before(async () => {
  // Two service days of 40 bookings: creates with inline customers (some returning), cancellations,
  // moves, seatings, finished and no-shows, all made by the command handlers.
  await writeTemplate(file, 2, 40);
  events = SqliteEventStore.open(file);
});

test.after(async () => {
  await events.close();
  rmSync(dir, { recursive: true, force: true });
});

async function contents(docs: EmbeddedDocumentStore): Promise<Record<string, Doc[]>> {
  const out: Record<string, Doc[]> = {};
  for (const name of docs.collectionNames()) {
    const all = await docs.collection(name).find({});
    if (all.length > 0) out[name] = all.sort((a, b) => (a._id < b._id ? -1 : 1));
  }
  return out;
}

async function replay(
  writeBack: boolean,
  batchSize: number,
  docs = new EmbeddedDocumentStore(),
  projections: Projection[] = allProjections(),
): Promise<EmbeddedDocumentStore> {
  const runner = new ProjectionRunner(events, docs, projections, { batchSize, writeBack });
  await runner.catchUp();
  return docs;
}

test('batches of any size write exactly what per-event writes write', async () => {
  assert.ok(process.env.COUVERT_STRICT_PROJECTIONS === '1', 'run through test/run.ts (strict)');
  const direct = await contents(await replay(false, 1000));
  assert.ok((direct.reservations?.length ?? 0) >= 60, 'the log holds reservations');
  assert.ok((direct.analytics_days?.length ?? 0) >= 2, 'and analytics');
  for (const size of [1, 7, 64, 1000]) assert.equal(await contents(await replay(true, size)), direct);
});

test('a batch that fails is redone by the next catch-up; a redelivered log changes nothing', async () => {
  const direct = await contents(await replay(false, 1000));
  let left = 150;
  const failing = allProjections().map(
    (p): Projection => ({
      ...p,
      apply: async (event, docs) => {
        if (--left === 0) throw new Error('crash');
        await p.apply(event, docs);
      },
    }),
  );
  const docs = new EmbeddedDocumentStore();
  const runner = new ProjectionRunner(events, docs, failing, { batchSize: 64, writeBack: true });
  await runner.catchUp().then(
    () => assert.unreachable('the catch-up fails'),
    (err: Error) => assert.is(err.message, 'crash'),
  );
  await runner.catchUp();
  assert.equal(await contents(docs), direct);
  // Every event again, over the read models already written (checkpoints read as absent).
  const forgetful: DocumentStore = Object.assign(Object.create(docs), {
    getCheckpoint: async () => null,
    getCheckpoints: async (names: readonly string[]) => new Map(names.map((n) => [n, null])),
  });
  await new ProjectionRunner(events, forgetful, allProjections(), {
    batchSize: 50,
    writeBack: true,
  }).catchUp();
  assert.equal(await contents(docs), direct);
});

test('ownOne: one copy a batch, changed in place by the caller, written at the commit; nobody else sees it change', async () => {
  for (const strict of [true, false]) {
    const store = new EmbeddedDocumentStore();
    await store.collection('c').insertOne({ _id: 'a', n: 1, m: { k: 1 } });
    const stored = await store.collection('c').findOne({ _id: 'a' });
    const cache = new WriteBackStore(store, { strict });
    const c = cache.collection('c');
    if (!isOwning(c)) throw new Error('a collection of the cache owns documents');
    assert.not.ok(isOwning(store.collection('c')), 'the store itself hands out no owned documents');
    let copies = 0;
    const copy = (d: Doc) => {
      copies++;
      return structuredClone(d);
    };
    const handed = (await c.findOne({ _id: 'a' })) as Doc; // shared: the next owner must copy
    const first = (await c.ownOne('a', copy)) as Doc;
    assert.is(copies, 1);
    assert.not.ok(Object.isFrozen(first), `strict ${strict}: owned documents are not frozen`);
    (first.m as { k: number }).k = 2;
    first.n = 2;
    const second = (await c.ownOne('a', copy)) as Doc;
    assert.is(second, first, 'the same copy for the rest of the batch');
    assert.is(copies, 1);
    second.n = 3;
    assert.equal(handed, { _id: 'a', n: 1, m: { k: 1 } }, 'a document handed out before never changes');
    assert.equal(stored, { _id: 'a', n: 1, m: { k: 1 } });
    assert.equal(await store.collection('c').findOne({ _id: 'a' }), { _id: 'a', n: 1, m: { k: 1 } });
    assert.equal(await c.findOne({ _id: 'a' }), { _id: 'a', n: 3, m: { k: 2 } }, 'the batch reads it');
    assert.is(await c.ownOne('missing', copy), null);
    await cache.flush();
    cache.clear();
    assert.equal(await store.collection('c').findOne({ _id: 'a' }), { _id: 'a', n: 3, m: { k: 2 } });
    // The next batch copies again: the store holds the last one.
    const next = (await c.ownOne('a', copy)) as Doc;
    assert.is.not(next, first);
    next.n = 4;
    assert.equal(await store.collection('c').findOne({ _id: 'a' }), { _id: 'a', n: 3, m: { k: 2 } });
    // Without a copy function: a deep copy (cloneValue).
    const plainOwned = (await c.ownOne('a')) as Doc;
    assert.is(plainOwned, next, 'still owned in this batch');
    // The store validates it at the commit, like any write.
    plainOwned.bad = undefined;
    await cache.flush();
    assert.equal(await store.collection('c').findOne({ _id: 'a' }), {
      _id: 'a',
      n: 4,
      m: { k: 2 },
      bad: null,
    });
  }
});

test('copy on write: documents handed out never change; reads see the batch; upserts as the store', async () => {
  const store = new EmbeddedDocumentStore();
  await store.collection('c').insertOne({ _id: 'a', n: 1, tags: ['x'] });
  const cache = new WriteBackStore(store, { strict: true });
  const c = cache.collection('c');
  const a = (await c.findOne({ _id: 'a' })) as Doc;
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.tags), 'strict: shared documents are frozen');
  await c.updateOne({ _id: 'a' }, { $inc: { n: 1 }, $push: { tags: 'y' } });
  assert.equal(a, { _id: 'a', n: 1, tags: ['x'] });
  assert.equal(await c.findOne({ _id: 'a' }), { _id: 'a', n: 2, tags: ['x', 'y'] });
  assert.equal(await store.collection('c').findOne({ _id: 'a' }), { _id: 'a', n: 1, tags: ['x'] });
  // Nested paths: the objects on the path are copied, the rest stays shared and unchanged.
  await store.collection('n').insertOne({ _id: 'day', seatings: { r1: { t: [1] }, r2: { t: [2] } } });
  const n = cache.collection('n');
  const day = (await n.findOne({ _id: 'day' })) as Doc;
  await n.updateOne({ _id: 'day' }, { $set: { 'seatings.r3': { t: [3] } }, $unset: { 'seatings.r1': '' } });
  await n.updateOne({ _id: 'day' }, { $push: { 'seatings.r2.t': 4 } });
  assert.equal(day, { _id: 'day', seatings: { r1: { t: [1] }, r2: { t: [2] } } });
  assert.equal(await n.findOne({ _id: 'day' }), {
    _id: 'day',
    seatings: { r2: { t: [2, 4] }, r3: { t: [3] } },
  });
  // A query the cache cannot answer sees the batch's writes.
  assert.equal(await c.find({ n: 2 }), [{ _id: 'a', n: 2, tags: ['x', 'y'] }]);
  // The applyOnce guard: an upsert excluded by its filter on an existing _id is a duplicate key.
  const guard = { _id: 'a', $or: [{ _pos: { $lt: '5' } }, { _pos: { $exists: false } }] };
  await c.updateOne(guard, { $set: { _pos: '7' } }, { upsert: true });
  await c.updateOne(guard, { $set: { n: 9 } }, { upsert: true }).then(
    () => assert.unreachable('duplicate'),
    (err) => assert.instance(err, DuplicateKeyError),
  );
  await c.updateOne({ _id: 'b' }, { $setOnInsert: { n: 0 }, $inc: { m: 1 } }, { upsert: true });
  await c.replaceOne({ _id: 'd' }, { _id: 'd', v: undefined } as Doc, { upsert: true });
  await c.deleteOne({ _id: 'a' });
  assert.is(await c.findOne({ _id: 'a' }), null);
  await cache.flush();
  assert.equal(await store.collection('c').find({}), [
    { _id: 'b', n: 0, m: 1 },
    { _id: 'd', v: null },
  ]);
});

test.run();
