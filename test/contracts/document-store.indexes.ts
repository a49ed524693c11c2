// Contract: indexes — unique indexes refuse duplicates on every write path and a refused write
// changes nothing; non-unique indexes answer exactly as a scan would (a fast-check property).
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import {
  type Collection,
  type Doc,
  DocumentStoreError,
  DuplicateKeyError,
  type Filter,
  type Update,
} from '../../src/ports/document-store';
import { type Register, rejects, seeded, snapshot } from './document-store.helpers';

export function indexContract(it: Register, propertyRuns: number): void {
  it('a unique index refuses a duplicate insert, update, upsert and replace, changing nothing', async (store) => {
    const c = await seeded(store);
    for (const [id, email] of [
      ['p1', 'ada'],
      ['p2', 'bob'],
      ['p3', 'cleo'],
      ['p4', 'dan'],
    ]) {
      await c.updateOne({ _id: id }, { $set: { email: `${email}@x.test` } });
    }
    await c.createIndex({ keys: { email: 1 }, unique: true, name: 'email_unique' });
    const before = await snapshot(c);

    const onInsert = await rejects(c.insertOne({ _id: 'p9', email: 'ada@x.test' }), DuplicateKeyError);
    assert.is(onInsert.index, 'email_unique');
    assert.is(onInsert.collection, 'people');
    const onUpdate = await rejects(
      c.updateOne({ _id: 'p2' }, { $set: { email: 'ada@x.test', name: 'Changed' }, $inc: { age: 1 } }),
      DuplicateKeyError,
    );
    assert.is(onUpdate.index, 'email_unique');
    await rejects(
      c.updateOne({ _id: 'p7' }, { $set: { email: 'eve@x.test' } }, { upsert: true }),
      DuplicateKeyError,
    );
    await rejects(
      c.updateOne({ email: 'dan@x.test', _id: 'p8' }, { $set: { n: 1 } }, { upsert: true }),
      DuplicateKeyError,
    );
    await rejects(c.replaceOne({ _id: 'p3' }, { _id: 'p3', email: 'bob@x.test' }), DuplicateKeyError);
    await rejects(
      c.replaceOne({ _id: 'p6' }, { _id: 'p6', email: 'bob@x.test' }, { upsert: true }),
      DuplicateKeyError,
    );
    assert.equal(await snapshot(c), before);

    await c.updateOne({ _id: 'p2' }, { $set: { email: 'robert@x.test' } });
    await c.insertOne({ _id: 'p9', email: 'bob@x.test' });
    assert.is((await c.findOne({ email: 'bob@x.test' }))?._id, 'p9');
    await c.updateOne({ _id: 'p9' }, { $set: { email: 'bob@x.test', seen: true } });
    assert.is((await c.findOne({ email: 'bob@x.test' }))?.seen, true);
  });

  it('a compound unique index is unique on the combination, and missing values count as null', async (store) => {
    const c = store.collection('reservations');
    await c.createIndex({ keys: { restaurant_id: 1, external_id: 1 }, unique: true });
    await c.createIndex({ keys: { restaurant_id: 1, external_id: 1 }, unique: true });
    await c.insertOne({ _id: 'a', restaurant_id: 'r1', external_id: 'E1' });
    await c.insertOne({ _id: 'b', restaurant_id: 'r2', external_id: 'E1' });
    const err = await rejects(
      c.insertOne({ _id: 'c', restaurant_id: 'r1', external_id: 'E1' }),
      DuplicateKeyError,
    );
    assert.is(err.index, 'restaurant_id_1_external_id_1');
    await c.insertOne({ _id: 'd', restaurant_id: 'r1' });
    await rejects(c.insertOne({ _id: 'e', restaurant_id: 'r1', external_id: null }), DuplicateKeyError);
    assert.is(await c.count(), 3);
    assert.is((await c.findOne({ restaurant_id: 'r2', external_id: 'E1' }))?._id, 'b');
  });

  it('creating a unique index over duplicates fails and leaves no index; a name reused for other keys fails', async (store) => {
    const c = await seeded(store);
    await rejects(c.createIndex({ keys: { city: 1 }, unique: true }), DuplicateKeyError);
    await c.insertOne({ _id: 'p6', city: 'Paris' });
    await c.createIndex({ keys: { age: 1 }, name: 'by_age' });
    await c.createIndex({ keys: { age: 1 }, name: 'by_age' });
    await rejects(c.createIndex({ keys: { city: 1 }, name: 'by_age' }), DocumentStoreError);
  });

  it('a compound index refuses documents with arrays in two of its fields, changing nothing', async (store) => {
    const c = store.collection('parallel');
    await c.createIndex({ keys: { a: 1, 'n.b': 1 } });
    await c.insertOne({ _id: 'one', a: [1, 2], n: { b: 3 } });
    await refusesParallelArrays(c);
    const other = store.collection('parallel_later');
    await other.insertOne({ _id: 'p', a: [1], n: { b: [2] } });
    await rejects(other.createIndex({ keys: { a: 1, 'n.b': 1 } }), DocumentStoreError);
  });

  it('parallel arrays are refused by an index the embedded store keys on a prefix an earlier index covers', async (store) => {
    // embeddedPrefix 1 on {a, n.b} behind an index keyed on a first: embedded, it keeps no entries
    // (dormant); MongoDB ignores the hint. Either way a write with arrays in a and n.b is refused.
    const c = store.collection('parallel_dormant');
    await c.createIndex({ keys: { a: 1, z: 1 } });
    await c.insertOne({ _id: 'one', a: [1, 2], n: { b: 3 } });
    await c.createIndex({ keys: { a: 1, 'n.b': 1 }, embeddedPrefix: 1 });
    await refusesParallelArrays(c);
    await c.updateOne({ _id: 'one' }, { $set: { x: 2 } });
    assert.equal(await c.findOne({ _id: 'one' }), { _id: 'one', a: [1, 2], n: { b: 3 }, x: 2 });
    const other = store.collection('parallel_dormant_later');
    await other.createIndex({ keys: { a: 1 } });
    await other.insertOne({ _id: 'p', a: [1], n: { b: [2] } });
    await rejects(other.createIndex({ keys: { a: 1, 'n.b': 1 }, embeddedPrefix: 1 }), DocumentStoreError);
  });

  it('a partial index changes no answer: those it leaves out are found, through writes moving them in and out', async (store) => {
    const c = store.collection('partial_docs');
    await c.createIndex({
      keys: { status: 1, e: 1, at: 1 },
      name: 'pending_by_e',
      partial: { status: 'pending' },
    });
    // The same name with another partial filter is another index: refused, as for other keys.
    await rejects(
      c.createIndex({ keys: { status: 1, e: 1, at: 1 }, name: 'pending_by_e', partial: { status: 'done' } }),
      DocumentStoreError,
    );
    await rejects(c.createIndex({ keys: { x: 1 }, partial: { 'a.b': 1 } }), DocumentStoreError);
    await rejects(c.createIndex({ keys: { x: 1 }, unique: true, partial: { s: 'p' } }), DocumentStoreError);
    const docs: Doc[] = [];
    for (let i = 0; i < 60; i++)
      docs.push({
        _id: `d${i}`,
        status: i % 3 === 0 ? 'done' : i % 7 === 0 ? ['pending', 'x'] : 'pending',
        e: `e${i % 4}`,
        at: `t${String((i * 37) % 60).padStart(2, '0')}`,
      });
    await c.insertMany(docs);
    const check = async () => {
      const all = (await c.find({})) as Doc[];
      const by = (f: (d: Doc) => boolean) =>
        all.filter(f).sort((a, b) => String(a.at).localeCompare(String(b.at)));
      const isPending = (d: Doc) =>
        d.status === 'pending' || (Array.isArray(d.status) && d.status.includes('pending'));
      const ids = (l: Doc[]) => l.map((d) => d._id);
      for (const [filter, want] of [
        [{ status: 'pending', e: 'e1' }, (d: Doc) => isPending(d) && d.e === 'e1'],
        [{ status: 'done', e: 'e1' }, (d: Doc) => d.status === 'done' && d.e === 'e1'],
        [{ e: 'e2' }, (d: Doc) => d.e === 'e2'],
        [
          { status: 'pending', e: { $nin: ['e0'] }, at: { $lte: 't40' } },
          (d: Doc) => isPending(d) && d.e !== 'e0' && String(d.at) <= 't40',
        ],
      ] as [Filter, (d: Doc) => boolean][]) {
        const found = await c.find(filter, { sort: { at: 1 }, limit: 100 });
        assert.equal(ids(found), ids(by(want)), JSON.stringify(filter));
        assert.is(await c.count(filter), by(want).length, JSON.stringify(filter));
      }
    };
    await check();
    await c.updateMany({ e: 'e1' }, { $set: { status: 'done' } });
    await c.updateOne({ _id: 'd3' }, { $set: { status: 'pending' } });
    await c.replaceOne({ _id: 'd6' }, { _id: 'd6', status: 'pending', e: 'e1', at: 't99' });
    await c.deleteOne({ _id: 'd2' });
    await check();
  });

  it('non-unique indexes: lookups by equality, $in and prefix with a range match the unindexed answer', async (store) => {
    const indexed = await seeded(store, 'indexed');
    const plain = await seeded(store, 'plain');
    await indexed.createIndex({ keys: { city: 1, age: -1 } });
    await indexed.createIndex({ keys: { 'address.zip': 1 } });
    await indexed.createIndex({ keys: { tags: 1 } });
    const filters: Filter[] = [
      { city: 'Paris' },
      { city: { $in: ['Lyon', 'Nice'] } },
      { city: 'Paris', age: 36 },
      { city: 'Lyon', age: { $gt: 20 } },
      { 'address.zip': '75001' },
      { tags: 'vip' },
      { tags: { $in: ['fr', 'none'] } },
      { city: 'Paris', $or: [{ name: 'Ada' }, { tags: { $size: 0 } }] },
      { city: null },
    ];
    for (const f of filters) {
      assert.equal(
        await indexed.find(f, { sort: { _id: 1 } }),
        await plain.find(f, { sort: { _id: 1 } }),
        JSON.stringify(f),
      );
    }
    await indexed.updateOne({ _id: 'p1' }, { $set: { city: 'Lyon' }, $push: { tags: 'moved' } });
    await plain.updateOne({ _id: 'p1' }, { $set: { city: 'Lyon' }, $push: { tags: 'moved' } });
    await indexed.deleteOne({ _id: 'p5' });
    await plain.deleteOne({ _id: 'p5' });
    for (const f of [...filters, { tags: 'moved' }]) {
      assert.equal(
        await indexed.find(f, { sort: { _id: 1 } }),
        await plain.find(f, { sort: { _id: 1 } }),
        JSON.stringify(f),
      );
    }
  });

  it('property: after random writes, indexed queries return what a scan returns', async (store) => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(docArb, { maxLength: 12 }),
        fc.array(opArb, { maxLength: 15 }),
        async (docs, ops) => {
          run++;
          const indexed = store.collection(`prop_${run}_indexed`);
          const plain = store.collection(`prop_${run}_plain`);
          await indexed.createIndex({ keys: { a: 1 } });
          await indexed.createIndex({ keys: { a: 1, b: 1 } });
          await indexed.createIndex({ keys: { b: 1, c: -1 } });
          await indexed.createIndex({ keys: { 'n.x': 1 } });
          const unique = uniqueById(docs);
          if (unique.length > 0) {
            await indexed.insertMany(structuredClone(unique));
            await plain.insertMany(structuredClone(unique));
          }
          for (const op of ops) {
            const a = await outcome(() => applyOp(indexed, op));
            const b = await outcome(() => applyOp(plain, op));
            assert.is(a, b, `outcome of ${JSON.stringify(op)}`);
          }
          for (const f of probeFilters) {
            const want = await plain.find(f, { sort: { _id: 1 } });
            assert.equal(await indexed.find(f, { sort: { _id: 1 } }), want, JSON.stringify(f));
            assert.is(await indexed.count(f), want.length, `count ${JSON.stringify(f)}`);
          }
        },
      ),
      { numRuns: propertyRuns },
    );
  });
}

const scalar = fc.constantFrom<unknown>(0, 1, 2, 'x', 'y', null, true);
const value = fc.oneof(
  { weight: 5, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.record({ x: scalar }, { noNullPrototype: true }) },
);
// b shares a compound index with a, so it never holds an array: MongoDB refuses to index arrays
// in two fields of one index, which a separate test covers.
const bValue = fc.oneof(
  { weight: 5, arbitrary: scalar },
  { weight: 1, arbitrary: fc.record({ x: scalar }, { noNullPrototype: true }) },
);
const docArb = fc.record(
  {
    _id: fc.constantFrom('d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7'),
    a: value,
    b: bValue,
    c: fc.oneof(fc.integer({ min: -2, max: 3 }), fc.constant('3')),
    n: fc.oneof(
      fc.record({ x: value }, { requiredKeys: [], noNullPrototype: true }),
      fc.constant(null),
      fc.array(fc.record({ x: scalar }, { noNullPrototype: true }), { maxLength: 2 }),
    ),
  },
  { requiredKeys: ['_id'], noNullPrototype: true },
);
const write = fc.oneof(
  fc.record({ field: fc.constantFrom('a', 'c', 'n.x', 'n'), value }),
  fc.record({ field: fc.constant('b'), value: bValue }),
);
type Op =
  | { kind: 'set' | 'push'; id: string; field: string; value: unknown }
  | { kind: 'unset' | 'inc' | 'delete'; id: string; field: string }
  | { kind: 'upsert'; id: string; field: string; value: unknown; where: unknown }
  | { kind: 'many'; field: string; value: unknown; where: unknown };
const id = fc.constantFrom('d0', 'd1', 'd2', 'd3', 'd8');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.tuple(fc.constantFrom('set' as const, 'push' as const), id, write).map(([kind, id, w]) =>
    // $push would turn b into an array.
    ({ kind: w.field === 'b' ? 'set' : kind, id, ...w }),
  ),
  fc.record({
    kind: fc.constantFrom('unset' as const, 'inc' as const, 'delete' as const),
    id,
    field: fc.constantFrom('a', 'b', 'c', 'n.x', 'n'),
  }),
  fc.tuple(id, write, scalar).map(([id, w, where]) => ({ kind: 'upsert' as const, id, ...w, where })),
  // Top-level $set cannot fail: MongoDB's updateMany is not atomic, so a failure halfway would leave
  // the two collections differing by the order each visited its documents.
  fc
    .tuple(write, scalar)
    .filter(([w]) => !w.field.startsWith('n'))
    .map(([w, where]) => ({ kind: 'many' as const, ...w, where })),
);

function applyOp(c: Collection, op: Op): Promise<unknown> {
  const write = (update: Update) => c.updateOne({ _id: (op as { id: string }).id }, update);
  switch (op.kind) {
    case 'set':
      return write({ $set: { [op.field]: op.value } });
    case 'push':
      return write({ $push: { [op.field]: op.value } });
    case 'unset':
      return write({ $unset: { [op.field]: '' } });
    case 'inc':
      return write({ $inc: { [op.field]: 1 } });
    case 'delete':
      return c.deleteOne({ _id: op.id });
    case 'upsert':
      return c.updateOne({ _id: op.id, a: op.where }, { $set: { [op.field]: op.value } }, { upsert: true });
    case 'many':
      return c.updateMany({ b: op.where }, { $set: { [op.field]: op.value } });
  }
}

async function outcome(run: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify(await run());
  } catch (err) {
    return (err as Error).name;
  }
}

function uniqueById(docs: Doc[]): Doc[] {
  const seen = new Map<string, Doc>();
  for (const d of docs) if (!seen.has(d._id)) seen.set(d._id, d);
  return [...seen.values()];
}

const probeFilters: Filter[] = [
  { a: 0 },
  { a: 'x' },
  { a: null },
  { a: true },
  { a: { $in: [1, 'y'] } },
  { a: { $in: [null, 2] } },
  { a: { $eq: 1 } },
  { a: 1, b: 'x' },
  { a: { $in: [0, 1] }, b: { $in: [null, true] } },
  { b: 2, c: { $gt: 0 } },
  { b: 'y', c: { $lte: 1 } },
  { b: null, c: { $gte: '3' } },
  { 'n.x': 1 },
  { 'n.x': null },
  { 'n.x': { $in: ['x', 0] } },
  { $and: [{ a: 2 }, { b: { $ne: 1 } }] },
  { a: 0, $or: [{ b: 1 }, { c: { $exists: false } }] },
  { a: { $in: [0, 1] }, c: { $nin: [1, 2] } },
];

/**
 * `c` has an index on {a, n.b} and holds { _id: 'one', a: [1, 2], n: { b: 3 } }: a document with an
 * array in one of the two fields goes in; every write that would put arrays in both is refused
 * (insert, insertMany, update, replace, upsert) and changes nothing.
 */
async function refusesParallelArrays(c: Collection): Promise<void> {
  await c.insertOne({ _id: 'two', a: 1, n: [{ b: 1 }, { b: 2 }] });
  const refused = await rejects(c.insertOne({ _id: 'three', a: [1], n: [{ b: 1 }] }), DocumentStoreError);
  assert.not.instance(refused, DuplicateKeyError);
  const before = await snapshot(c);
  await rejects(c.insertMany([{ _id: 'five', a: [5], n: { b: [5] } }]), DocumentStoreError);
  await rejects(c.updateOne({ _id: 'one' }, { $set: { n: [{ b: 3 }], x: 1 } }), DocumentStoreError);
  await rejects(c.replaceOne({ _id: 'two' }, { _id: 'two', a: [1], n: [] }), DocumentStoreError);
  await rejects(
    c.updateOne({ _id: 'nine' }, { $set: { a: [5], n: { b: [6] } } }, { upsert: true }),
    DocumentStoreError,
  );
  assert.equal(await snapshot(c), before);
  assert.equal(await c.find({ a: 2 }), [{ _id: 'one', a: [1, 2], n: { b: 3 } }]);
}
