// The document-store contract against the embedded adapter, plus what only it promises: batches are
// all-or-nothing, lookups through indexes never scan, and every index answers as mingo's scan does.
import fc from 'fast-check';
import { Query } from 'mingo';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { type Doc, DocumentStoreError, DuplicateKeyError } from '../../src/ports/document-store';
import { documentStoreContract } from '../contracts/document-store.contract';
import { rejects, snapshot } from '../contracts/document-store.helpers';

const test = suite('document-store: embedded');
documentStoreContract(test, { open: async () => new EmbeddedDocumentStore() }, { propertyRuns: 300 });

test('insertMany and updateMany are all-or-nothing', async () => {
  const store = new EmbeddedDocumentStore();
  const c = store.collection('batch');
  await c.createIndex({ keys: { email: 1 }, unique: true });
  await c.insertMany([
    { _id: 'a', email: 'a', n: 1 },
    { _id: 'b', email: 'b', n: 1 },
    { _id: 'c', email: 'c', n: 1 },
  ]);
  const before = await snapshot(c);
  await rejects(
    c.insertMany([
      { _id: 'd', email: 'd' },
      { _id: 'e', email: 'a' },
    ]),
    DuplicateKeyError,
  );
  await rejects(
    c.insertMany([
      { _id: 'f', email: 'f' },
      { _id: 'f', email: 'g' },
    ]),
    DuplicateKeyError,
  );
  await rejects(c.updateMany({}, { $inc: { n: 1 }, $set: { email: 'same' } }), DuplicateKeyError);
  assert.equal(await snapshot(c), before);
  assert.is((await c.findOne({ email: 'a' }))?._id, 'a');
  assert.is(await c.findOne({ email: 'd' }), null);
  await c.insertMany([{ _id: 'd', email: 'd' }]);
});

test('lookups by _id, unique key and indexed equality prefix never scan the collection', async () => {
  const store = new EmbeddedDocumentStore();
  const c = store.collection('plans');
  await c.createIndex({ keys: { token: 1 }, unique: true });
  await c.createIndex({ keys: { restaurant_id: 1, status: 1, covers: 1 } });
  const docs: Doc[] = [];
  for (let i = 0; i < 2000; i++) {
    docs.push({
      _id: `r${i}`,
      token: `t${i}`,
      restaurant_id: `rest${i % 20}`,
      status: i % 3 ? 'CONFIRMED' : 'CANCELED',
      covers: i % 7,
    });
  }
  await c.insertMany(docs);
  assert.equal(c.explain({ _id: 'r5' }), { index: '_id_', candidates: 1 });
  assert.equal(c.explain({ _id: { $in: ['r1', 'r2', 'zz'] } }), { index: '_id_', candidates: 2 });
  assert.equal(c.explain({ token: 't7', status: 'CONFIRMED' }), { index: 'token_1', candidates: 1 });
  assert.equal(c.explain({ restaurant_id: 'rest3' }), {
    index: 'restaurant_id_1_status_1_covers_1',
    candidates: 100,
  });
  const confirmed = await c.count({ restaurant_id: 'rest3', status: 'CONFIRMED' });
  assert.equal(c.explain({ restaurant_id: 'rest3', status: 'CONFIRMED', covers: { $gte: 4 } }), {
    index: 'restaurant_id_1_status_1_covers_1',
    candidates: confirmed,
  });
  assert.is(
    c.explain({ restaurant_id: { $in: ['rest1', 'rest2'] }, status: 'CANCELED' }).candidates <= 200 / 2,
    true,
  );
  assert.equal(c.explain({ status: 'CONFIRMED' }), { index: null, candidates: 2000 });
  await c.updateOne({ _id: 'r5' }, { $set: { restaurant_id: 'moved' } });
  assert.equal(c.explain({ restaurant_id: 'moved' }), {
    index: 'restaurant_id_1_status_1_covers_1',
    candidates: 1,
  });
  assert.is((await c.find({ restaurant_id: 'moved' }))[0]?._id, 'r5');
});

test('a string range on the field after the pinned ones narrows the candidates, and finds what matches', async () => {
  const store = new EmbeddedDocumentStore();
  const c = store.collection('ranges');
  await c.createIndex({ keys: { kind: 1, when: 1 } });
  const values: unknown[] = ['2026-01-01', '2026-06-01', '2026-12-31', 5, null, undefined, ['2026-09-01', 1]];
  await c.insertMany(
    values.map((when, i) => ({ _id: `d${i}`, kind: 'k', ...(when === undefined ? {} : { when }) })),
  );
  const filter = { kind: 'k', when: { $gt: '2026-05-01' } };
  const found = (await c.find(filter)).map((d) => d._id).sort();
  assert.equal(found, ['d1', 'd2', 'd6']);
  assert.equal(c.explain(filter), { index: 'kind_1_when_1', candidates: 3 });
  assert.equal(
    (await c.find({ kind: 'k', when: { $gte: '2026-06-01', $lt: '2026-12-31' } })).map((d) => d._id).sort(),
    ['d1', 'd6'],
  );
  // An array meets each bound of a two-sided range with any element (no $elemMatch): indexed under
  // each element, neither of which is within both bounds, it is still found.
  await c.insertOne({ _id: 'arr', kind: 'k', when: ['2026-01-15', '2027-03-01'] });
  assert.equal(
    (await c.find({ kind: 'k', when: { $gt: '2026-02-01', $lt: '2026-12-01' } })).map((d) => d._id).sort(),
    ['arr', 'd1', 'd6'],
  );
  await c.deleteOne({ _id: 'arr' });
  // A bound that is not a string, or another operator beside it: not narrowed, still right.
  assert.equal(c.explain({ kind: 'k', when: { $gt: 1 } }).candidates, values.length);
  assert.equal(
    (await c.find({ kind: 'k', when: { $gt: 1 } })).map((d) => d._id),
    ['d3'],
  );
});

test('property: filters answer as mingo does over the same documents, through indexes or not', async () => {
  const scalar = fc.constantFrom<unknown>(0, 1, -1, 2.5, 'a', 'b', '', null, true, false);
  const value = fc.oneof(
    { weight: 6, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.record({ x: scalar }, { requiredKeys: [], noNullPrototype: true }) },
    {
      weight: 1,
      arbitrary: fc.array(fc.record({ x: scalar }, { requiredKeys: [], noNullPrototype: true }), {
        maxLength: 2,
      }),
    },
  );
  // c holds scalars only: it shares the compound indexes, which refuse arrays in two fields.
  const doc = fc.record(
    { a: value, b: value, c: scalar, n: value },
    { requiredKeys: [], noNullPrototype: true },
  );
  const path = fc.constantFrom('a', 'b', 'c', 'n', 'n.x', 'a.x');
  const cond = fc.oneof(
    scalar,
    scalar.map(($eq) => ({ $eq })),
    scalar.map(($ne) => ({ $ne })),
    fc.array(scalar, { minLength: 1, maxLength: 3 }).map(($in) => ({ $in })),
    fc.array(scalar, { minLength: 1, maxLength: 3 }).map(($nin) => ({ $nin })),
    fc
      .tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), fc.constantFrom(0, 1, 'a', 'b'))
      .map(([op, v]) => ({ [op]: v })),
    fc.boolean().map(($exists) => ({ $exists })),
  );
  const clause = fc.tuple(path, cond).map(([p, c]) => ({ [p]: c }));
  const filter = fc.oneof(
    clause,
    fc.tuple(clause, clause).map(([x, y]) => ({ ...x, ...y })),
    fc.array(clause, { minLength: 1, maxLength: 3 }).map(($or) => ({ $or })),
    fc.tuple(clause, fc.array(clause, { minLength: 1, maxLength: 2 })).map(([x, $or]) => ({ ...x, $or })),
    fc.array(clause, { minLength: 1, maxLength: 2 }).map(($nor) => ({ $nor })),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(doc, { maxLength: 15 }),
      fc.array(filter, { minLength: 1, maxLength: 6 }),
      async (raw, filters) => {
        const store = new EmbeddedDocumentStore();
        const plain = store.collection('plain');
        const indexed = store.collection('indexed');
        await indexed.createIndex({ keys: { a: 1 } });
        await indexed.createIndex({ keys: { a: 1, c: 1 } });
        await indexed.createIndex({ keys: { c: 1, b: -1 } });
        await indexed.createIndex({ keys: { 'n.x': 1 } });
        const docs = raw.map((d, i) => ({ _id: `d${String(i).padStart(2, '0')}`, ...d }) as Doc);
        if (docs.length) {
          await plain.insertMany(docs);
          await indexed.insertMany(docs);
        }
        // Only possible when b is unique among the documents: then unique lookups get exercised too.
        await indexed.createIndex({ keys: { b: 1 }, unique: true }).catch((err) => {
          if (!(err instanceof DuplicateKeyError)) throw err;
        });
        for (const f of filters) {
          const want = docs.filter((d) => new Query(f, {}).test(d)).map((d) => d._id);
          assert.equal(
            (await plain.find(f, { sort: { _id: 1 } })).map((d) => d._id),
            want,
            `scan ${JSON.stringify(f)}`,
          );
          assert.equal(
            (await indexed.find(f, { sort: { _id: 1 } })).map((d) => d._id),
            want,
            `indexed ${JSON.stringify(f)}`,
          );
        }
      },
    ),
    { numRuns: 1500 },
  );
});

test('values a document cannot hold, and a closed store, are DocumentStoreErrors', async () => {
  const store = new EmbeddedDocumentStore();
  const c = store.collection('odd');
  await rejects(c.insertOne({ _id: 'big', n: 1n }), DocumentStoreError);
  await rejects(c.insertOne({ _id: 'fn', f: () => 1 }), DocumentStoreError);
  await rejects(c.insertOne({ _id: 'map', m: new Map() }), DocumentStoreError);
  await rejects(c.updateOne({ _id: 'x' }, { $set: { n: 1n } }, { upsert: true }), DocumentStoreError);
  assert.is(await c.count(), 0);
  await c.insertOne({ _id: 'date', at: new Date('2026-01-01T00:00:00Z'), gone: undefined });
  const back = await c.findOne({ _id: 'date' });
  assert.ok(back?.at instanceof Date);
  assert.is(back?.gone, null);
  const refused = (err: unknown) => err instanceof DocumentStoreError;
  assert.throws(() => store.collection('_checkpoints'), refused);
  assert.throws(() => store.collection('a$b'), refused);
  await store.close();
  await rejects(c.findOne({ _id: 'date' }), DocumentStoreError);
  await rejects(store.getCheckpoint('x'), DocumentStoreError);
  await rejects(store.getCheckpoints(['x']), DocumentStoreError);
  await rejects(store.setCheckpoints([['x', 1n]]), DocumentStoreError);
});

test.run();
