// A find pinning every keyed field of an index and sorted on _id reads that key's _ids in _id order:
// paging a run of equal keys by `_id: {$gt: last}` costs each page, not the run (askForUnfinished
// among the deliveries one start asked for, which share one sweep_after). What it finds, and in which
// order, is what sorting every match gives, through writes that add and remove _ids under the key.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { plainSort } from '../../src/adapters/document-store/embedded-collection';
import type { Doc } from '../../src/ports/document-store';

const test = suite('embedded store: a page of one key sorted on _id');

const RUN = '2026-11-28T10:05:00.000Z';

async function pages(col: ReturnType<EmbeddedDocumentStore['collection']>, size: number, dir: 1 | -1) {
  const out: Doc[] = [];
  let last: string | undefined;
  let most = 0;
  for (;;) {
    const before = col.examined;
    const page = await col.find(
      {
        status: 'pending',
        sweep_after: RUN,
        ...(last === undefined ? {} : { _id: dir === 1 ? { $gt: last } : { $lt: last } }),
      },
      { sort: { _id: dir }, limit: size },
    );
    most = Math.max(most, col.examined - before);
    out.push(...page);
    if (page.length < size) return { out, most };
    last = page.at(-1)!._id;
  }
}

test('a run of 3,000 equal keys paged by _id: each page reads its size, through writes', async () => {
  const col = new EmbeddedDocumentStore().collection('deliveries');
  await col.createIndex({ keys: { status: 1, sweep_after: 1 }, name: 'work' });
  const docs: Doc[] = [];
  for (let i = 0; i < 3_000; i++)
    docs.push({ _id: `d${(i * 7919) % 3_000}`, status: 'pending', sweep_after: RUN });
  for (let i = 0; i < 500; i++) docs.push({ _id: `o${i}`, status: 'pending', sweep_after: `${RUN}x` });
  await col.insertMany(docs);
  const first = await pages(col, 100, 1);
  assert.ok(first.most <= 100, `one page examined ${first.most}`);
  const expected = async () =>
    plainSort(await col.find({ status: 'pending', sweep_after: RUN }), { _id: 1 }) as Doc[];
  assert.equal(first.out, await expected());
  // Writes after the first sorted read keep the order: some leave the key, some join it.
  for (let i = 0; i < 3_000; i += 7) await col.updateOne({ _id: `d${i}` }, { $set: { status: 'delivered' } });
  for (let i = 0; i < 100; i++) await col.updateOne({ _id: `o${i}` }, { $set: { sweep_after: RUN } });
  await col.insertOne({ _id: 'a_new', status: 'pending', sweep_after: RUN });
  const again = await pages(col, 100, 1);
  assert.equal(again.out, await expected());
  const down = await pages(col, 100, -1);
  assert.equal(down.out, (await expected()).reverse());
});

test('property: a page by _id equals the full sort, for any few or many under the key', () =>
  fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 400 }),
      fc.string({ maxLength: 4 }),
      fc.integer({ min: 1, max: 50 }),
      async (ids, from, limit) => {
        const col = new EmbeddedDocumentStore().collection('c');
        await col.createIndex({ keys: { k: 1 }, name: 'by_k' });
        await col.insertMany(ids.map((id, i) => ({ _id: id, k: i % 3 === 0 ? 'a' : 'b' })));
        const page = await col.find({ k: 'b', _id: { $gt: from } }, { sort: { _id: 1 }, limit });
        const all = plainSort(
          (await col.find({ k: 'b' })).filter((d) => d._id > from),
          { _id: 1 },
        ) as Doc[];
        assert.equal(page, all.slice(0, limit));
      },
    ),
    { numRuns: 200 },
  ));

test.run();
