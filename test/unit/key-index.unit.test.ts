// The embedded store's secondary index (src/adapters/document-store/key-index.ts): a key one
// document holds is kept as its _id, a second document makes an array and many a Set, and lookups,
// removal and the order of ids are those of a Set per key; sameScalarKeys only ever says "same" when the entries are.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyIndex, sameEntries } from '../../src/adapters/document-store/key-index';
import type { Doc } from '../../src/ports/document-store';

const test = suite('embedded key index');

test('a trailing _id of a non-unique index is not keyed (the collection answers _id itself); lookups on the fields before it are unchanged', async () => {
  const index = new KeyIndex({ keys: { restaurant_id: 1, updated_at: 1, _id: 1 }, name: 'r_updated' });
  assert.equal(index.fields, ['restaurant_id', 'updated_at', '_id']);
  assert.equal(index.keyed, ['restaurant_id', 'updated_at']);
  const a = { _id: 'a', restaurant_id: 'r', updated_at: 't1' };
  const b = { _id: 'b', restaurant_id: 'r', updated_at: 't1' };
  const c = { _id: 'c', restaurant_id: 'r', updated_at: 't2' };
  for (const d of [a, b, c]) index.add(d._id, index.entries(d));
  assert.equal(index.entries(a).tuples, [['r', 't1']]);
  assert.equal([...index.ids([['r'], ['t1']])], ['a', 'b']);
  assert.equal([...index.ids([['r']])], ['a', 'b', 'c']);
  assert.is(
    index.prefixLength(
      new Map([
        ['restaurant_id', ['r']],
        ['updated_at', ['t1']],
        ['_id', ['a']],
      ]),
    ),
    2,
  );
  // A unique index keeps every field: its conflicts need the whole tuple.
  assert.equal(new KeyIndex({ keys: { r: 1, _id: 1 }, unique: true }).keyed, ['r', '_id']);
  const { EmbeddedDocumentStore } = await import('../../src/adapters/document-store/embedded');
  const col = new EmbeddedDocumentStore().collection('c');
  await col.createIndex({ keys: { restaurant_id: 1, updated_at: 1, _id: 1 }, name: 'r_updated' });
  await col.insertMany([a, b, c]);
  assert.equal(await col.find({ restaurant_id: 'r', updated_at: 't1', _id: 'b' }), [b]);
  assert.equal(await col.find({ restaurant_id: 'r', updated_at: 't1' }), [a, b]);
  assert.equal(await col.find({ restaurant_id: 'r' }, { sort: { updated_at: -1, _id: -1 } }), [c, b, a]);
});

test('one, two, then one document under a key: lookups in insertion order', () => {
  const index = new KeyIndex({ keys: { restaurant_id: 1, day: 1 }, name: 'r_day' });
  const a = { _id: 'a', restaurant_id: 'r', day: '2031-01-01' };
  const b = { _id: 'b', restaurant_id: 'r', day: '2031-01-01' };
  const c = { _id: 'c', restaurant_id: 'r', day: '2031-01-02' };
  for (const d of [a, b, c]) index.add(d._id, index.entries(d));
  index.add('a', index.entries(a)); // again: no duplicate
  assert.equal([...index.ids([['r'], ['2031-01-01']])], ['a', 'b']);
  assert.equal([...index.ids([['r']])], ['a', 'b', 'c']);
  index.remove('a', index.entries(a));
  assert.equal([...index.ids([['r'], ['2031-01-01']])], ['b']);
  index.remove('b', index.entries(b));
  assert.equal([...index.ids([['r'], ['2031-01-01']])], []);
  index.remove('c', index.entries(c));
  assert.equal([...index.ids([['r']])], []);
  // A single id removed by another id changes nothing.
  index.add('c', index.entries(c));
  index.remove('x', index.entries(c));
  assert.equal([...index.ids([['r'], ['2031-01-02']])], ['c']);
});

test('the same ids as a Set per key would hold, whatever the adds and removes', () => {
  const key = fc.constantFrom('k1', 'k2', 'k3');
  const op = fc.record({ add: fc.boolean(), id: fc.constantFrom('a', 'b', 'c', 'd'), key });
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const index = new KeyIndex({ keys: { k: 1 }, name: 'k' });
      const model = new Map<string, Set<string>>();
      const where = new Map<string, string>();
      for (const o of ops) {
        const doc = { _id: o.id, k: o.key } as Doc;
        if (o.add && !where.has(o.id)) {
          index.add(o.id, index.entries(doc));
          where.set(o.id, o.key);
          const ids = model.get(o.key) ?? new Set();
          ids.add(o.id);
          model.set(o.key, ids);
        } else if (!o.add && where.has(o.id)) {
          const at = where.get(o.id) as string;
          index.remove(o.id, index.entries({ _id: o.id, k: at } as Doc));
          where.delete(o.id);
          model.get(at)?.delete(o.id);
        }
      }
      for (const k of ['k1', 'k2', 'k3']) assert.equal([...index.ids([[k]])], [...(model.get(k) ?? [])]);
    }),
  );
});

test('many ids under a key (array, then Set past 256): the same ids, in the order a Set keeps', () => {
  const op = fc.record({
    add: fc.integer({ min: 0, max: 7 }).map((n) => n > 0),
    id: fc.integer({ min: 0, max: 399 }).map((n) => `d${n}`),
    key: fc.integer({ min: 0, max: 7 }).map((n) => (n > 0 ? 'k1' : 'k2')),
  });
  let sets = 0;
  fc.assert(
    fc.property(fc.array(op, { minLength: 1200, maxLength: 1500 }), (ops) => {
      const index = new KeyIndex({ keys: { k: 1 }, name: 'k' });
      const model = new Map<string, Set<string>>();
      const where = new Map<string, string>();
      for (const o of ops) {
        const at = where.get(o.id);
        if (at !== undefined) {
          index.remove(o.id, index.entries({ _id: o.id, k: at } as Doc));
          where.delete(o.id);
          model.get(at)?.delete(o.id);
        }
        if (o.add) {
          index.add(o.id, index.entries({ _id: o.id, k: o.key } as Doc));
          where.set(o.id, o.key);
          const ids = model.get(o.key) ?? new Set();
          ids.add(o.id);
          model.set(o.key, ids);
        }
      }
      for (const k of ['k1', 'k2']) assert.equal([...index.ids([[k]])], [...(model.get(k) ?? [])]);
      assert.equal([...index.ids([])].sort(), [...where.keys()].sort());
      if ((model.get('k1')?.size ?? 0) > 256) sets++;
    }),
    { numRuns: 60 },
  );
  assert.ok(sets > 10, `${sets} runs went past the array`);
});

test('sameScalarKeys says "same" only when the entries are the same', () => {
  const index = new KeyIndex({ keys: { 'a.b': 1, c: 1 }, name: 'ab_c' });
  const value = fc.oneof(
    fc.constantFrom('x', 'y', 1, null, true),
    fc.constant(undefined),
    fc.array(fc.constantFrom('x', 1), { maxLength: 2 }),
    fc.record({ b: fc.constantFrom('x', 'y') }),
  );
  const doc = fc.record({ a: fc.oneof(value, fc.record({ b: value })), c: value });
  fc.assert(
    fc.property(doc, doc, (x, y) => {
      const a = { _id: 'a', ...x } as Doc;
      const b = { _id: 'a', ...y } as Doc;
      let entriesA: ReturnType<KeyIndex['entries']> | undefined;
      let entriesB: ReturnType<KeyIndex['entries']> | undefined;
      try {
        entriesA = index.entries(a);
        entriesB = index.entries(b);
      } catch {
        return; // parallel arrays: refused either way
      }
      if (index.sameScalarKeys(a, b)) assert.ok(sameEntries(entriesA, entriesB));
    }),
  );
  const d1 = { _id: 'a', a: { b: 'x' }, c: 1, other: 1 };
  const d2 = { _id: 'a', a: { b: 'x' }, c: 1, other: 2 };
  assert.ok(index.sameScalarKeys(d1, d2));
  assert.not.ok(index.sameScalarKeys(d1, { ...d2, c: 2 }));
});

test('a level with a key that is no string gives no order, and its writes never make a read rescan it', () => {
  const index = new KeyIndex({ keys: { s: 1, at: 1 }, name: 'work' });
  const put = (id: string, at: unknown): void => index.add(id, index.entries({ _id: id, s: 'p', at }));
  const drop = (id: string, at: unknown): void => index.remove(id, index.entries({ _id: id, s: 'p', at }));
  for (let i = 0; i < 20; i++) put(`d${i}`, `k${String(i).padStart(2, '0')}`);
  put('n', null);
  // A read lists a level's keys only to build its order: count those listings.
  const keys = Map.prototype.keys;
  let scans = 0;
  Map.prototype.keys = function (this: Map<unknown, unknown>) {
    scans++;
    return keys.call(this);
  } as typeof keys;
  try {
    assert.is(index.orderedIds(['p'], undefined, 1), undefined);
    assert.is(scans, 1);
    drop('d3', 'k03');
    put('d20', 'k20');
    assert.is(index.orderedIds(['p'], undefined, 1), undefined);
    drop('d4', 'k04');
    assert.is(index.orderedIds(['p'], undefined, -1), undefined);
    // Its last key that is no string gone: the kept order, with every write since.
    drop('n', null);
    const ids = index.orderedIds(['p'], undefined, 1);
    assert.ok(ids !== undefined);
    const want = Array.from({ length: 21 }, (_, i) => `d${i}`).filter((id) => id !== 'd3' && id !== 'd4');
    assert.equal([...ids], want);
    assert.is(scans, 1, 'a read after a write listed the level again');
  } finally {
    Map.prototype.keys = keys;
  }
});

test.run();
