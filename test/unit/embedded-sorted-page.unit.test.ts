// A find sorted on the last field of the index that answers it, with a limit, reads its page in the
// index's order: the documents it hands to the filter follow the page, not the documents under the
// pinned keys (the webhook sweeper each second: pending deliveries sorted by sweep_after, 500 at a
// time, over a pending set that grows with failing endpoints). What it finds, and in which order
// (ties too), is what sorting every match gives.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { plainSort } from '../../src/adapters/document-store/embedded-collection';
import type { Doc, Filter } from '../../src/ports/document-store';

const test = suite('embedded store: a sorted page read in index order');

const at = (s: number): string => new Date(Date.UTC(2026, 10, 28, 0, 0, s)).toISOString();

test('a page of the oldest due among many pending reads about the page, not every pending one', async () => {
  const col = new EmbeddedDocumentStore().collection('deliveries');
  await col.createIndex({ keys: { status: 1, sweep_after: 1 }, name: 'work' });
  const docs: Doc[] = [];
  // 5,000 pending: 3,000 due (sweep_after up to 2,999 s), 2,000 retries later; and delivered ones.
  for (let i = 0; i < 5_000; i++)
    docs.push({
      _id: `d${i}`,
      status: 'pending',
      sweep_after: at((i * 7919) % 5_000),
      endpoint_id: `e${i % 3}`,
    });
  for (let i = 0; i < 1_000; i++)
    docs.push({ _id: `x${i}`, status: 'delivered', sweep_after: null, endpoint_id: 'e0' });
  await col.insertMany(docs);
  const filter: Filter = {
    status: 'pending',
    sweep_after: { $lte: at(2_999) },
    endpoint_id: { $nin: ['e2'] },
  };
  const before = col.examined;
  const page = await col.find(filter, { sort: { sweep_after: 1 }, limit: 50 });
  const examined = col.examined - before;
  assert.is(page.length, 50);
  const all = plainSort(
    docs.filter(
      (d) => d.status === 'pending' && (d.sweep_after as string) <= at(2_999) && d.endpoint_id !== 'e2',
    ),
    { sweep_after: 1 },
  ) as Doc[];
  assert.equal(page, all.slice(0, 50));
  // 50 of two endpoints in three: about 75 read (those of e2 are read and left out), not 5,000.
  assert.ok(examined <= 100, `examined ${examined} documents for a page of 50`);
  // Each write keeps the order: the oldest one delivered, a later one made due again.
  await col.updateOne({ _id: all[0]!._id }, { $set: { status: 'delivered', sweep_after: null } });
  await col.updateOne({ _id: 'd4999' }, { $set: { sweep_after: '2026-11-27T00:00:00.000Z' } });
  const next = await col.find(filter, { sort: { sweep_after: 1 }, limit: 2 });
  const expected = plainSort(
    (await col.find({ status: 'pending' })).filter(
      (d) => (d.sweep_after as string) <= at(2_999) && d.endpoint_id !== 'e2',
    ),
    { sweep_after: 1 },
  ) as Doc[];
  assert.equal(next, expected.slice(0, 2));
});

test('a filter that pins the sort field reads the documents under those keys, not the level', async () => {
  const col = new EmbeddedDocumentStore().collection('deliveries');
  await col.createIndex({ keys: { status: 1, sweep_after: 1 }, name: 'work' });
  const docs: Doc[] = [];
  for (let i = 0; i < 3_000; i++) docs.push({ _id: `d${i}`, status: 'pending', sweep_after: at(i) });
  await col.insertMany(docs);
  for (const filter of [
    { status: 'pending', sweep_after: at(2_990) },
    { status: 'pending', sweep_after: { $in: [at(2_990), at(5)] } },
    { $and: [{ status: 'pending' }, { sweep_after: { $in: [at(2_990), at(5)] } }] },
  ] as Filter[]) {
    const before = col.examined;
    const page = await col.find(filter, { sort: { sweep_after: 1 }, limit: 10 });
    const examined = col.examined - before;
    assert.equal(page, plainSort(await col.find(filter), { sweep_after: 1 }));
    assert.ok(examined <= 4, `examined ${examined} documents for ${JSON.stringify(filter)}`);
  }
});

test('an array at the sort field sorts by its smallest or largest element, as sorting every match does', async () => {
  const cases: [Doc[], Filter, 1 | -1][] = [
    [
      [
        { _id: 'm', s: 'p', at: 'm' },
        { _id: 'arr', s: 'p', at: ['a', 'z'] },
      ],
      { s: 'p', at: { $gte: 'c' } },
      1,
    ],
    [
      [
        { _id: 'c', s: 'p', at: 'c' },
        { _id: 'm', s: 'p', at: 'm' },
        { _id: 'arr', s: 'p', at: ['a', 'z'] },
      ],
      { s: 'p', at: { $gte: 'b' } },
      1,
    ],
    [
      [
        { _id: 'c', s: 'p', at: 'c' },
        { _id: 'm', s: 'p', at: 'm' },
        { _id: 'arr', s: 'p', at: ['a', 'z'] },
      ],
      { s: 'p', at: { $lte: 'm' } },
      -1,
    ],
    [
      [
        { _id: 'm', s: 'p', at: 'm' },
        { _id: 'arr', s: 'p', at: ['z'] },
      ],
      { s: 'p' },
      1,
    ],
  ];
  for (const [docs, filter, dir] of cases) {
    const col = new EmbeddedDocumentStore().collection('s');
    await col.createIndex({ keys: { s: 1, at: 1 }, name: 'work' });
    await col.insertMany(docs);
    const page = await col.find(filter, { sort: { at: dir }, limit: 1 });
    const all = await col.find(filter, { sort: { at: dir } });
    assert.equal(page, all.slice(0, 1), JSON.stringify({ filter, dir }));
    // An array that becomes a string again gives the index its order back; the page stays right.
    await col.updateOne({ _id: 'arr' }, { $set: { at: 'a' } });
    const again = await col.find(filter, { sort: { at: dir }, limit: 1 });
    assert.equal(again, (await col.find(filter, { sort: { at: dir } })).slice(0, 1));
  }
});

const keys = ['a', 'b', 'c', 'bb', 'é', '\u{1F600}', 'z', ''];
const op = fc.oneof(
  fc.record({
    kind: fc.constant('put' as const),
    id: fc.integer({ min: 0, max: 30 }),
    status: fc.constantFrom('p', 'q'),
    key: fc.oneof(fc.constantFrom(...keys), fc.constant(null), fc.integer({ min: 0, max: 3 })),
  }),
  fc.record({ kind: fc.constant('del' as const), id: fc.integer({ min: 0, max: 30 }) }),
);

test('any writes and any sorted page: the same documents in the same order as sorting every match', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(op, { maxLength: 80 }),
      fc.constantFrom(1, -1),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 0, max: 3 }),
      fc.option(
        fc.record({ op: fc.constantFrom('$lt', '$lte', '$gt', '$gte'), key: fc.constantFrom(...keys) }),
      ),
      async (ops, dir, limit, skip, range) => {
        const sorted = new EmbeddedDocumentStore().collection('s');
        const plain = new EmbeddedDocumentStore().collection('p');
        await sorted.createIndex({ keys: { status: 1, at: 1 }, name: 'work' });
        const filter: Filter = { status: 'p', ...(range ? { at: { [range.op]: range.key } } : {}) };
        for (const o of ops) {
          for (const col of [sorted, plain]) {
            if (o.kind === 'del') await col.deleteOne({ _id: `d${o.id}` });
            else
              await col.replaceOne(
                { _id: `d${o.id}` },
                { _id: `d${o.id}`, status: o.status, at: o.key },
                { upsert: true },
              );
          }
          // A sorted read between writes, so the index's kept order is what later reads use.
          await sorted.find(filter, { sort: { at: dir }, limit: 1 });
        }
        const got = await sorted.find(filter, { sort: { at: dir }, limit, skip });
        const all = await plain.find(filter, { sort: { at: dir } });
        // Ties in the order the unsorted index lists them: the plain store's insertion order may differ
        // from the index's (a re-keyed document goes last), so compare against the index's own.
        const listed = await sorted.find(filter);
        const byIndex = all.length === listed.length ? sortLike(listed, dir) : all;
        assert.equal(got, byIndex.slice(skip, skip + limit));
      },
    ),
    { numRuns: 300 },
  );
});

const MISSING = Symbol('missing');
const DATE = Symbol('date');
const value = (v: unknown): unknown => (v === DATE ? new Date(Date.UTC(2026, 0, 1)) : v);

// Every kind of write the store takes, values of every type at the sort field (arrays, dates,
// booleans, missing), and the level pinned every way a filter can pin it.
const strs = ['a', 'b', 'bb', '', 'é', '\u{1F600}', '\uE000', '\uFFFD', 'z', '2026-01-01T00:00:00.000Z'];
const val = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom<unknown>(...strs) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, MISSING, DATE, true) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...strs), { maxLength: 3 }) },
);
const id = fc.integer({ min: 0, max: 25 });
const s = fc.constantFrom('p', 'q');
const x = fc.integer({ min: 0, max: 2 });
const write = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), id, s, at: val, x }),
  fc.record({ kind: fc.constant('ins' as const), id, s, at: val, x }),
  fc.record({ kind: fc.constant('set' as const), id, at: val }),
  fc.record({ kind: fc.constant('setS' as const), id, s }),
  fc.record({ kind: fc.constant('del' as const), id }),
  fc.record({ kind: fc.constant('wb' as const), id, s, at: val, x, del: fc.boolean() }),
  fc.record({ kind: fc.constant('delMany' as const), s }),
  fc.record({ kind: fc.constant('read' as const), dir: fc.constantFrom<1 | -1>(1, -1) }),
);

test("any write (updates, write-back, deletes) and any pin of the level: a page is the full sort's", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(write, { maxLength: 60 }),
      fc.constantFrom<1 | -1>(1, -1),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 0, max: 3 }),
      fc.option(
        fc.array(
          fc.record({ op: fc.constantFrom('$lt', '$lte', '$gt', '$gte'), key: fc.constantFrom(...strs) }),
          {
            minLength: 1,
            maxLength: 2,
          },
        ),
      ),
      fc.constantFrom('eq', 'in1', '$eq', 'and'),
      fc.boolean(),
      async (ops, dir, limit, skip, range, pin, extra) => {
        const col = new EmbeddedDocumentStore().collection('s');
        await col.createIndex({ keys: { s: 1, at: 1 }, name: 'work' });
        const r: Record<string, string> = {};
        for (const o of range ?? []) r[o.op] = o.key;
        const pinned: Filter =
          pin === 'eq'
            ? { s: 'p' }
            : pin === 'in1'
              ? { s: { $in: ['p'] } }
              : pin === '$eq'
                ? { s: { $eq: 'p' } }
                : {};
        let filter: Filter = { ...pinned, ...(range ? { at: r } : {}), ...(extra ? { x: { $ne: 1 } } : {}) };
        if (pin === 'and') filter = { $and: [{ s: 'p' }, filter] };
        const doc = (o: { id: number; s: string; at: unknown; x: number }): Doc => {
          const d: Doc = { _id: `d${o.id}`, s: o.s, x: o.x };
          if (o.at !== MISSING) d.at = value(o.at);
          return d;
        };
        for (const o of ops) {
          try {
            if (o.kind === 'put') await col.replaceOne({ _id: `d${o.id}` }, doc(o), { upsert: true });
            else if (o.kind === 'ins') {
              if (!(await col.findOne({ _id: `d${o.id}` }))) await col.insertOne(doc(o));
            } else if (o.kind === 'set')
              await col.updateOne(
                { _id: `d${o.id}` },
                o.at === MISSING ? { $unset: { at: '' } } : { $set: { at: value(o.at) } },
              );
            else if (o.kind === 'setS') await col.updateOne({ _id: `d${o.id}` }, { $set: { s: o.s } });
            else if (o.kind === 'del') await col.deleteOne({ _id: `d${o.id}` });
            else if (o.kind === 'delMany') await col.deleteMany({ s: o.s });
            else if (o.kind === 'wb') col.writeBack([[`d${o.id}`, o.del ? null : doc(o)]]);
            else await col.find(filter, { sort: { at: o.dir }, limit: 1 });
          } catch {
            // A write the store refuses (a duplicate insert) changes nothing.
          }
        }
        const got = await col.find(filter, { sort: { at: dir }, limit, skip });
        const all = await col.find(filter, { sort: { at: dir } });
        assert.equal(got, all.slice(skip, skip + limit));
      },
    ),
    { numRuns: 300 },
  );
});

test('more keys than a chunk holds, added, re-keyed and deleted between reads: pages in order', async () => {
  const col = new EmbeddedDocumentStore().collection('s');
  await col.createIndex({ keys: { s: 1, at: 1 }, name: 'work' });
  const key = (i: number): string => at((i * 7919) % 4_000);
  await col.insertMany(Array.from({ length: 600 }, (_, i) => ({ _id: `d${i}`, s: 'p', at: key(i) })));
  const filter: Filter = { s: 'p', at: { $gte: at(100) } };
  const check = async (): Promise<void> => {
    for (const dir of [1, -1] as const) {
      const all = await col.find(filter, { sort: { at: dir } });
      for (const skip of [0, 250, 700])
        assert.equal(
          await col.find(filter, { sort: { at: dir }, limit: 40, skip }),
          all.slice(skip, skip + 40),
        );
    }
  };
  await check();
  // Past twice a chunk's keys, one splits; deletes empty some.
  for (let i = 600; i < 2_200; i++) await col.insertOne({ _id: `d${i}`, s: 'p', at: key(i) });
  await check();
  for (let i = 0; i < 2_200; i += 3) await col.updateOne({ _id: `d${i}` }, { $set: { at: at(4_000 + i) } });
  for (let i = 1; i < 2_200; i += 4) await col.deleteOne({ _id: `d${i}` });
  await check();
});

// An index whose next-to-last field a filter leaves out with $nin (the webhook sweeper's endpoints
// whose queue is full): the levels of the other keys merged in order. The page holds what the full
// sort's page holds, in its order but among ties (merged by the free field's key, as between two
// MongoDB plans), and the documents left out are never handed to the filter.
const ends = fc.constantFrom<unknown>('e0', 'e1', 'e2', 'e3', null, MISSING, ['e0', 'e2'], ['e1']);
const mergeWrite = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), id, s, e: ends, at: val }),
  fc.record({ kind: fc.constant('setE' as const), id, e: ends }),
  fc.record({ kind: fc.constant('set' as const), id, at: val }),
  fc.record({ kind: fc.constant('del' as const), id }),
  fc.record({ kind: fc.constant('read' as const), dir: fc.constantFrom<1 | -1>(1, -1) }),
);

test('$nin on the field before the sort field: the full sort’s page, the left-out never read', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(mergeWrite, { maxLength: 60 }),
      fc.constantFrom<1 | -1>(1, -1),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 0, max: 3 }),
      fc.subarray(['e0', 'e1', 'e2', 'e3'], { minLength: 1 }),
      fc.option(
        fc.record({ op: fc.constantFrom('$lt', '$lte', '$gt', '$gte'), key: fc.constantFrom(...strs) }),
      ),
      async (ops, dir, limit, skip, nin, range) => {
        const col = new EmbeddedDocumentStore().collection('s');
        await col.createIndex({ keys: { s: 1, at: 1 }, name: 'work' });
        await col.createIndex({ keys: { s: 1, e: 1, at: 1 }, name: 'by_e' });
        const filter: Filter = {
          s: 'p',
          e: { $nin: nin },
          ...(range ? { at: { [range.op]: range.key } } : {}),
        };
        const put = (o: { id: number; s: string; e: unknown; at: unknown }): Doc => {
          const d: Doc = { _id: `d${o.id}`, s: o.s };
          if (o.e !== MISSING) d.e = o.e;
          if (o.at !== MISSING) d.at = value(o.at);
          return d;
        };
        for (const o of ops) {
          try {
            if (o.kind === 'put') await col.replaceOne({ _id: `d${o.id}` }, put(o), { upsert: true });
            else if (o.kind === 'setE')
              await col.updateOne(
                { _id: `d${o.id}` },
                o.e === MISSING ? { $unset: { e: '' } } : { $set: { e: o.e } },
              );
            else if (o.kind === 'set')
              await col.updateOne(
                { _id: `d${o.id}` },
                o.at === MISSING ? { $unset: { at: '' } } : { $set: { at: value(o.at) } },
              );
            else if (o.kind === 'del') await col.deleteOne({ _id: `d${o.id}` });
            else await col.find(filter, { sort: { at: o.dir }, limit: 1 });
          } catch {
            // A write the store refuses (arrays in two indexed fields) changes nothing.
          }
        }
        const before = col.examined;
        const got = await col.find(filter, { sort: { at: dir }, limit, skip });
        const examined = col.examined - before;
        const all = await col.find(filter, { sort: { at: dir } });
        const page = all.slice(skip, skip + limit);
        // The same sort keys in the same order; each document once, and one the filter matches.
        assert.equal(
          got.map((d) => d.at),
          page.map((d) => d.at),
        );
        assert.is(new Set(got.map((d) => d._id)).size, got.length);
        const ids = new Set(all.map((d) => d._id));
        for (const d of got) assert.ok(ids.has(d._id), `${d._id} matches`);
        // Nothing under a left-out key read, when the merge served it (every sort key a string).
        const stored = await col.find({});
        const merged = stored.every((d) => typeof d.at === 'string' && !Array.isArray(d.e));
        if (merged) {
          const left = stored.filter((d) => d.s === 'p' && nin.includes(d.e as string)).length;
          assert.ok(examined <= stored.length - left, `examined ${examined}, ${left} left out`);
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('a document with an array at the merged field is listed once', async () => {
  const col = new EmbeddedDocumentStore().collection('s');
  await col.createIndex({ keys: { s: 1, e: 1, at: 1 }, name: 'by_e' });
  await col.insertMany([
    { _id: 'a', s: 'p', e: ['e0', 'e2'], at: at(1) },
    { _id: 'b', s: 'p', e: 'e1', at: at(2) },
    { _id: 'c', s: 'p', e: ['e1', 'e3'], at: at(3) },
  ]);
  const page = await col.find({ s: 'p', e: { $nin: ['e3'] } }, { sort: { at: 1 }, limit: 5 });
  assert.equal(
    page.map((d) => d._id),
    ['a', 'b'],
  );
});

test('a full endpoint’s 20,000 due are not read for a page of the others', async () => {
  const col = new EmbeddedDocumentStore().collection('deliveries');
  await col.createIndex({ keys: { status: 1, sweep_after: 1 }, name: 'work' });
  await col.createIndex({ keys: { status: 1, endpoint_id: 1, sweep_after: 1 }, name: 'due_by_endpoint' });
  const docs: Doc[] = [];
  for (let i = 0; i < 20_000; i++)
    docs.push({ _id: `h${i}`, status: 'pending', sweep_after: at(i % 1_000), endpoint_id: 'hung' });
  for (let i = 0; i < 300; i++)
    docs.push({ _id: `o${i}`, status: 'pending', sweep_after: at(1_000 + i), endpoint_id: `e${i % 3}` });
  await col.insertMany(docs);
  const filter: Filter = {
    status: 'pending',
    sweep_after: { $lte: at(2_000) },
    endpoint_id: { $nin: ['hung'] },
  };
  const before = col.examined;
  const page = await col.find(filter, { sort: { sweep_after: 1 }, limit: 50 });
  assert.ok(col.examined - before <= 50, `examined ${col.examined - before} for a page of 50`);
  assert.equal(
    page.map((d) => d._id),
    Array.from({ length: 50 }, (_, i) => `o${i}`),
  );
});

/** Sorted as find sorts a match: MongoDB's order across types, stable. */
function sortLike(docs: Doc[], dir: 1 | -1): Doc[] {
  return plainSort(docs, { at: dir }) ?? mingoSort(docs, dir);
}

function mingoSort(docs: Doc[], dir: 1 | -1): Doc[] {
  const rank = (v: unknown): number => (v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : 2);
  return [...docs].sort((a, b) => {
    const ra = rank(a.at);
    const rb = rank(b.at);
    if (ra !== rb) return (ra - rb) * dir;
    if (ra === 0) return 0;
    const x = a.at as string | number;
    const y = b.at as string | number;
    return (x < y ? -1 : x > y ? 1 : 0) * dir;
  });
}

test.run();
