// IndexSpec.embeddedPrefix (src/ports/document-store.ts): the embedded store keys an index on its
// first fields only, and keeps nothing for an index the planner could never pick. A property: over
// random writes (insert, replace, updates, deletes, the write-back path), a collection with the hint
// answers every find, sorted find and count as the same collection with whole indexes does, picks
// the same index, and lists documents sorted by the cut fields in the same order (ties included,
// where no filter pins a cut field by equality: the hint's rule).
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { EmbeddedCollection } from '../../src/adapters/document-store/embedded-collection';
import { KeyIndex } from '../../src/adapters/document-store/key-index';
import { SHARED_EMPTY_ARRAY, SHARED_EMPTY_OBJECT } from '../../src/adapters/document-store/values';
import {
  type Doc,
  type Filter,
  type FindOptions,
  type IndexSpec,
  InvalidQueryError,
} from '../../src/ports/document-store';

const test = suite('embedded store: indexes keyed on their first fields (embeddedPrefix)');

const SPECS: IndexSpec[] = [
  { keys: { a: 1, b: 1 }, name: 'a_b' },
  // Keyed on s alone: live (no earlier index starts with s), the order of t kept by re-adding.
  { keys: { s: 1, t: 1 }, name: 's_t', embeddedPrefix: 1 },
  // Keyed on a alone, which a_b keys first: keeps nothing.
  { keys: { a: 1, t: 1 }, name: 'a_t', embeddedPrefix: 1 },
  { keys: { c: 1, s: 1, t: -1 }, name: 'c_s_t', embeddedPrefix: 2 },
];
const whole = (spec: IndexSpec): IndexSpec => {
  const { embeddedPrefix: _, ...rest } = spec;
  return rest;
};

async function open(specs: IndexSpec[]): Promise<EmbeddedCollection> {
  const c = new EmbeddedDocumentStore().collection('things') as unknown as EmbeddedCollection;
  for (const spec of specs) await c.createIndex(spec);
  return c;
}

test('validation: an integer within the keys, and never a cut unique index', async () => {
  const c = await open([]);
  for (const embeddedPrefix of [-1, 3, 1.5, Number.NaN])
    await c.createIndex({ keys: { a: 1, b: 1 }, embeddedPrefix }).then(
      () => assert.unreachable(`accepted ${embeddedPrefix}`),
      (err) => assert.instance(err, InvalidQueryError),
    );
  await c.createIndex({ keys: { a: 1, b: 1 }, unique: true, embeddedPrefix: 1 }).then(
    () => assert.unreachable('a cut unique index'),
    (err) => assert.instance(err, InvalidQueryError),
  );
  await c.createIndex({ keys: { a: 1, b: 1 }, unique: true, embeddedPrefix: 2 });
  // Not part of the index's identity: the same keys with another hint are the same index.
  await c.createIndex({ keys: { a: 1, b: 1 }, unique: true });
  assert.equal(new KeyIndex({ keys: { a: 1, b: 1, c: 1 }, embeddedPrefix: 2 }).keyed, ['a', 'b']);
  assert.equal(new KeyIndex({ keys: { a: 1, _id: 1 }, embeddedPrefix: 2 }).keyed, ['a']);
});

test('a dominated or empty index keeps nothing; a cut one keys its first fields', async () => {
  const c = await open([
    { keys: { r: 1, x: 1 }, name: 'r_x' },
    { keys: { r: 1, sort: 1 }, name: 'r_sort', embeddedPrefix: 1 },
    { keys: { r: 1, x: 1, y: 1 }, name: 'r_x_y', embeddedPrefix: 2 },
    { keys: { status: 1, start: 1 }, name: 'status_start', embeddedPrefix: 1 },
    { keys: { g: 1 }, name: 'none', embeddedPrefix: 0 },
    { keys: { r: 1 }, name: 'r_unique', unique: true },
  ]);
  assert.equal(c.activeIndexes(), ['r_x', 'status_start', 'r_unique']);
  await c.insertMany([
    { _id: 'a', r: 'r1', x: 1, sort: 'k2', status: 'BOOKED', start: 't2', g: 1 },
    { _id: 'b', r: 'r2', x: 1, sort: 'k1', status: 'BOOKED', start: 't1', g: 1 },
  ]);
  assert.equal(c.explain({ r: 'r1', sort: 'k2' }), { index: 'r_unique', candidates: 1 });
  assert.equal(c.explain({ r: 'r1', x: 1 }), { index: 'r_unique', candidates: 1 });
  assert.equal(c.explain({ status: 'BOOKED', start: 't1' }), { index: 'status_start', candidates: 2 });
  assert.equal(c.explain({ g: 1 }), { index: null, candidates: 2 });
  assert.equal(
    (await c.find({ status: 'BOOKED', start: { $lte: 't9' } }, { sort: { start: 1 } })).map((d) => d._id),
    ['b', 'a'],
  );
});

// The scheduler's scans (src/jobs/reservation-jobs.ts) on reservations' status_start: statuses by
// $in, the start a range, sorted by start, a limit. Ties on the start keep their order.
test('the scheduler query shape: same page, same order, through moves and status changes', async () => {
  const full = await open([{ keys: { status: 1, start_at_utc: 1 }, name: 'status_start' }]);
  const cut = await open([{ keys: { status: 1, start_at_utc: 1 }, name: 'status_start', embeddedPrefix: 1 }]);
  const starts = ['t1', 't2', 't3'];
  const statuses = ['BOOKED', 'CONFIRMED', 'SEATED', 'DONE'];
  for (const c of [full, cut]) {
    for (let i = 0; i < 60; i++)
      await c.insertOne({
        _id: `r${i}`,
        status: statuses[i % 3],
        start_at_utc: starts[Math.floor(i / 3) % 3],
      });
    // Moves to another start, behind reservations inserted after them.
    for (let i = 0; i < 60; i += 4)
      await c.updateOne({ _id: `r${i}` }, { $set: { start_at_utc: starts[(Math.floor(i / 3) + 1) % 3] } });
    for (let i = 0; i < 60; i += 5)
      await c.updateOne({ _id: `r${i}` }, { $set: { status: statuses[(i + 1) % 4] } });
    for (let i = 1; i < 60; i += 6)
      c.writeBack([[`r${i}`, { _id: `r${i}`, status: statuses[i % 4], start_at_utc: starts[(i + 1) % 3] }]]);
  }
  const query: [Filter, FindOptions] = [
    { status: { $in: ['CONFIRMED', 'BOOKED'] }, start_at_utc: { $lte: 't2' } },
    { sort: { start_at_utc: 1 }, limit: 9 },
  ];
  const page = (await full.find(...query)).map((d) => d._id);
  assert.equal(
    (await cut.find(...query)).map((d) => d._id),
    page,
  );
  assert.equal(
    (await cut.find(query[0], { sort: { start_at_utc: 1 } })).map((d) => d._id),
    (await full.find(query[0], { sort: { start_at_utc: 1 } })).map((d) => d._id),
  );
});

// Outside the hint's rule (IndexSpec.embeddedPrefix: no query pins a cut field by equality), ties
// of a sort may come in another plan's order; the documents, the count and the sort itself do not
// change. The two cases the property found: s_t keyed on s alone loses to a_b (their $in lists in
// other orders), and a_t, which keeps nothing cut, leaves {a, t} to a_b.
test('a filter pinning a cut field: the same documents and sort, ties in its plan order', async () => {
  const cases: [Doc[], Filter][] = [
    [
      [
        { _id: 'd0', a: 'x', s: 'x', t: 0 },
        { _id: 'd3', a: 1, s: 1, t: 0 },
      ],
      { a: { $in: ['x', 1] }, s: { $in: [1, 'x'] }, t: { $in: [0] } },
    ],
    [
      [
        { _id: 'd1', a: 0, b: 1, s: 0, t: 0 },
        { _id: 'd2', a: 0, b: 0, s: 0, t: 0 },
        { _id: 'd3', a: 0, b: 1, s: 0, t: 0 },
      ],
      { a: 0, t: 0 },
    ],
  ];
  const ids = (docs: Doc[]) => docs.map((d) => d._id);
  for (const [docs, f] of cases) {
    const full = await open(SPECS.map(whole));
    const cut = await open(SPECS);
    for (const c of [full, cut]) await c.insertMany(docs);
    const what = JSON.stringify(f);
    assert.is(await cut.count(f), await full.count(f), what);
    assert.equal(ids(await cut.find(f)).sort(), ids(await full.find(f)).sort(), what);
    for (const sort of [
      { t: 1, _id: 1 },
      { t: -1, _id: -1 },
    ] as const)
      assert.equal(ids(await cut.find(f, { sort })), ids(await full.find(f, { sort })), what);
    // With t a range (the hint's rule), ties on t keep the whole index's order.
    const ranged = { ...f, t: { $gte: 0 } };
    assert.equal(
      ids(await cut.find(ranged, { sort: { t: 1 } })),
      ids(await full.find(ranged, { sort: { t: 1 } })),
    );
  }
});

const scalar = fc.constantFrom<unknown>(0, 1, 'x', 'y', null, true);
// Few values, so that documents share keys and tie under sorts.
const small = fc.constantFrom<unknown>(0, 1, 'x');
const value = fc.oneof(
  { weight: 8, arbitrary: small },
  { weight: 2, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 2 }) },
  { weight: 1, arbitrary: fc.record({ x: scalar }, { noNullPrototype: true }) },
  { weight: 1, arbitrary: fc.constant(new Date('2031-01-01T00:00:00Z')) },
);
const ids = fc.constantFrom('d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6');
// a and s hold no arrays (a_b, s_t and c_s_t share fields with t and b, which may: MongoDB refuses
// two arrays in one index, and so do both variants).
const doc = fc.record(
  { a: small, b: value, s: small, t: value, c: small },
  { requiredKeys: ['s', 't'], noNullPrototype: true },
);
type Op =
  | { kind: 'insert' | 'replace' | 'writeBack'; id: string; doc: Record<string, unknown> }
  | { kind: 'set'; id: string; field: 'a' | 'b' | 's' | 't' | 'c'; value: unknown }
  | { kind: 'unset' | 'delete'; id: string; field: 'a' | 'b' | 's' | 't' | 'c' };
const field = fc.constantFrom<'a' | 'b' | 's' | 't' | 'c'>('a', 'b', 's', 't', 'c');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('insert' as const, 'replace' as const, 'writeBack' as const),
    id: ids,
    doc,
  }),
  fc.record({ kind: fc.constant('set' as const), id: ids, field, value }),
  fc.record({ kind: fc.constant('set' as const), id: ids, field: fc.constant('t' as const), value }),
  fc.record({ kind: fc.constantFrom('unset' as const, 'delete' as const), id: ids, field }),
);

async function apply(c: EmbeddedCollection, o: Op): Promise<string> {
  try {
    switch (o.kind) {
      case 'insert':
        await c.insertOne({ ...o.doc, _id: o.id });
        break;
      case 'replace':
        await c.replaceOne({ _id: o.id }, { ...o.doc, _id: o.id }, { upsert: true });
        break;
      case 'writeBack':
        c.writeBack([[o.id, structuredClone({ ...o.doc, _id: o.id }) as Doc]]);
        break;
      case 'set':
        // a, s and c hold no arrays (see doc).
        await c.updateOne(
          { _id: o.id },
          {
            $set: {
              [o.field]: o.field === 'b' || o.field === 't' ? o.value : Array.isArray(o.value) ? 1 : o.value,
            },
          },
        );
        break;
      case 'unset':
        await c.updateOne({ _id: o.id }, { $unset: { [o.field]: '' } });
        break;
      case 'delete':
        await c.deleteOne({ _id: o.id });
        break;
    }
    return 'ok';
  } catch (err) {
    return (err as Error).name;
  }
}

const eq = fc.oneof(
  small,
  scalar,
  fc.array(scalar, { minLength: 1, maxLength: 3 }).map(($in) => ({ $in })),
);
const range = fc
  .tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), fc.constantFrom(0, 1, 'x', 'y'))
  .map(([o, v]) => ({ [o]: v }));
const probe = fc.record(
  { a: eq, s: eq, c: eq, t: fc.oneof(eq, range), b: fc.oneof(eq, range) },
  { requiredKeys: [] },
);
const sortBy = fc.constantFrom<FindOptions['sort'] | undefined>(
  undefined,
  { t: 1 },
  { t: -1 },
  { t: 1, _id: -1 },
  { b: 1, _id: 1 },
);

test('property: with or without the hint, the same plan, documents, counts and sorted order', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(op, { maxLength: 30 }),
      fc.array(probe, { minLength: 1, maxLength: 8 }),
      sortBy,
      async (ops, probes, sort) => {
        const full = await open(SPECS.map(whole));
        const cut = await open(SPECS);
        for (const o of ops) assert.is(await apply(cut, o), await apply(full, o), JSON.stringify(o));
        const byId = (docs: Doc[]) => docs.map((d) => d._id).sort();
        for (const f of probes) {
          const what = `${JSON.stringify(f)} ${JSON.stringify(sort)}`;
          const planned = full.explain(f).index;
          // A filter pinning a cut field by equality may be planned on another index (or the cut one
          // pinned less far): the same documents, possibly in another order.
          const pinsCut = f.t !== undefined && (typeof f.t !== 'object' || f.t === null || '$in' in f.t);
          if (!pinsCut) assert.is(cut.explain(f).index, planned, `plan ${what}`);
          assert.is(await cut.count(f), await full.count(f), `count ${what}`);
          const want = await full.find(f, sort ? { sort } : {});
          const got = await cut.find(f, sort ? { sort } : {});
          assert.equal(byId(got), byId(want), `documents ${what}`);
          // Sorted by the cut field t: ties keep the whole index's order where the hint's rule holds
          // (no filter pins a cut field by equality). A filter pinning t is planned on whichever index
          // each collection keeps (a_t keeps nothing cut: a_b instead of a_t; s_t keyed on s alone
          // loses to a_b), whose walk (its $in lists in the order given, then its keys' insertion
          // order) puts ties in another order, as between two MongoDB plans: the same order then
          // once _id breaks the ties (see 'a filter pinning a cut field' above).
          if (sort && 't' in sort) {
            if (!pinsCut) assert.equal(got, want, `order ${what}`);
            else {
              const total = '_id' in sort ? sort : { ...sort, _id: 1 as const };
              assert.equal(
                await cut.find(f, { sort: total }),
                await full.find(f, { sort: total }),
                `order ${what}`,
              );
            }
          }
        }
      },
    ),
    { numRuns: 1500 },
  );
});

test("property: a cut index keeps ties of its cut field in the whole index's order", async () => {
  const key = fc.constantFrom(0, 1, 2);
  const step = fc.oneof(
    fc.record({ id: ids, s: key, t: key, how: fc.constantFrom('upsert', 'writeBack') }),
    fc.record({ id: ids, t: key }),
    fc.record({ id: ids }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
      const full = await open([{ keys: { s: 1, t: 1 }, name: 's_t' }]);
      const cut = await open([{ keys: { s: 1, t: 1 }, name: 's_t', embeddedPrefix: 1 }]);
      for (const c of [full, cut])
        for (const x of steps) {
          if ('s' in x) {
            if (x.how === 'upsert')
              await c.updateOne({ _id: x.id }, { $set: { s: x.s, t: x.t } }, { upsert: true });
            else c.writeBack([[x.id, { _id: x.id, s: x.s, t: x.t }]]);
          } else if ('t' in x) await c.updateOne({ _id: x.id }, { $set: { t: x.t } });
          else await c.deleteOne({ _id: x.id });
        }
      for (const s of [0, 1, 2]) {
        const f = { s: { $in: [s, (s + 1) % 3] }, t: { $gte: 0 } };
        assert.equal(await cut.find(f, { sort: { t: 1 } }), await full.find(f, { sort: { t: 1 } }));
        assert.equal(await cut.find(f, { sort: { t: -1 } }), await full.find(f, { sort: { t: -1 } }));
      }
    }),
    { numRuns: 1000 },
  );
});

test('shared empties: writeBack stores the frozen ones; reads are copies; updates into them copy first', async () => {
  const c = await open([]);
  c.writeBack([
    ['a', { _id: 'a', tags: [], meta: {}, rows: [], deep: { list: [] } }],
    ['b', { _id: 'b', tags: [], meta: {} }],
  ]);
  const stored = c.peek('a') as Record<string, unknown>;
  assert.is(stored.tags, SHARED_EMPTY_ARRAY);
  assert.is(stored.meta, SHARED_EMPTY_OBJECT);
  assert.is.not((stored.deep as { list: unknown }).list, SHARED_EMPTY_ARRAY); // top level only
  const read = (await c.findOne({ _id: 'a' })) as unknown as {
    tags: string[];
    meta: Record<string, unknown>;
  };
  assert.is.not(read.tags, SHARED_EMPTY_ARRAY);
  read.tags.push('x');
  read.meta.k = 1;
  await c.updateOne({ _id: 'a' }, { $set: { 'meta.x': 1, 'tags.1': 'y' } });
  await c.updateOne({ _id: 'a' }, { $push: { rows: 1 } });
  await c.updateOne({ _id: 'b' }, { $unset: { 'meta.x': '' }, $pull: { tags: 'z' } });
  await c.updateOne({ _id: 'b' }, { $push: { tags: 'z' } });
  await c.updateOne({ _id: 'b' }, { $inc: { 'meta.n': 2 } });
  assert.equal(await c.findOne({ _id: 'a' }), {
    _id: 'a',
    tags: [null, 'y'],
    meta: { x: 1 },
    rows: [1],
    deep: { list: [] },
  });
  assert.equal(await c.findOne({ _id: 'b' }), { _id: 'b', tags: ['z'], meta: { n: 2 } });
  // A refused update (a unique index) rolls the document back onto the shared ones.
  const u = await open([{ keys: { u: 1 }, unique: true }]);
  u.writeBack([
    ['c', { _id: 'c', u: 1, meta: {} }],
    ['d', { _id: 'd', u: 2, meta: {} }],
  ]);
  await u.updateOne({ _id: 'd' }, { $set: { 'meta.x': 1, u: 1 } }).then(
    () => assert.unreachable('duplicate'),
    (err) => assert.is((err as Error).name, 'DuplicateKeyError'),
  );
  assert.is((u.peek('d') as Record<string, unknown>).meta, SHARED_EMPTY_OBJECT);
  assert.is(SHARED_EMPTY_ARRAY.length, 0);
  assert.equal(Object.keys(SHARED_EMPTY_OBJECT), []);
  assert.ok(Object.isFrozen(SHARED_EMPTY_ARRAY) && Object.isFrozen(SHARED_EMPTY_OBJECT));
});

test.run();
