// Micro-benchmark of the embedded document store's hot paths, the operations a projection replay
// and the read side spend their time in. `npx tsx bench/document-store.bench.ts [docs]` prints a
// table; benchDocumentStore() returns the rows for other harnesses.
//   insertOne                  a new reservation-sized document (copied in, 2 indexes maintained)
//   updateOne _id $set         a status change on an unindexed field
//   updateOne _id $inc         a counter
//   updateOne _id $set indexed a change of an indexed field (the index entry moves)
//   applyOnce upsert           the guarded upsert of src/projection/idempotent.ts
//   findOne _id                a copy of one document out
//   find indexed prefix        {restaurant_id, status} through a compound index, 10 documents
// Figures are medians of several rounds: the first round also pays for the JIT warming up.
import { pathToFileURL } from 'node:url';
import { EmbeddedDocumentStore } from '../src/adapters/document-store/embedded';
import type { Collection, Doc } from '../src/ports/document-store';

export interface BenchRow {
  operation: string;
  'ops/s': number;
  'µs/op': number;
}

const ROUNDS = 5;
const RESTAURANTS = 100;
const STATUSES = ['CONFIRMED', 'SEATED', 'DONE', 'CANCELED_BY_CUSTOMER', 'NO_SHOW'];

function reservation(i: number): Doc {
  return {
    _id: `res_${i}`,
    restaurant_id: `rest_${i % RESTAURANTS}`,
    status: STATUSES[i % STATUSES.length]!,
    party_size: 2 + (i % 6),
    start_at: '2026-06-01T19:30:00.000Z',
    shift_id: 'shift_dinner',
    table_ids: ['tbl_1'],
    customer: { id: `cus_${i % 5000}`, first_name: 'Ada', last_name: 'Lovelace' },
    created_at: '2026-05-01T10:00:00.000Z',
    updated_at: '2026-05-01T10:00:00.000Z',
  };
}

const pad = (n: number) => String(n).padStart(20, '0');

async function timed(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await op(i);
  return (performance.now() - start) / n;
}

async function round(docs: number): Promise<Record<string, number>> {
  const store = new EmbeddedDocumentStore();
  const c: Collection = store.collection('reservations');
  await c.createIndex({ keys: { restaurant_id: 1, status: 1 } });
  await c.createIndex({ keys: { 'customer.id': 1 } });
  const id = (i: number) => `res_${i % docs}`;
  const ms: Record<string, number> = {};
  ms.insertOne = await timed(docs, (i) => c.insertOne(reservation(i)));
  ms['updateOne _id $set'] = await timed(docs, (i) =>
    c.updateOne({ _id: id(i) }, { $set: { updated_at: '2026-05-02T10:00:00.000Z', note: `n${i & 7}` } }),
  );
  ms['updateOne _id $inc'] = await timed(docs, (i) =>
    c.updateOne({ _id: id(i) }, { $inc: { party_size: 1 } }),
  );
  ms['updateOne _id $set indexed'] = await timed(docs, (i) =>
    c.updateOne({ _id: id(i) }, { $set: { status: STATUSES[(i + 1) % STATUSES.length]! } }),
  );
  ms['applyOnce upsert'] = await timed(docs, (i) => {
    const pos = pad(docs + i);
    return c.updateOne(
      { _id: id(i), $or: [{ _pos: { $lt: pos } }, { _pos: { $exists: false } }] },
      { $set: { _pos: pos, status: 'SEATED' }, $inc: { party_size: 1 } },
      { upsert: true },
    );
  });
  ms['findOne _id'] = await timed(docs, (i) => c.findOne({ _id: id(i) }));
  const perRestaurantAndStatus = docs / RESTAURANTS / STATUSES.length;
  const finds = Math.min(docs, 20_000);
  ms['find indexed prefix'] = await timed(finds, (i) =>
    c.find({ restaurant_id: `rest_${i % RESTAURANTS}`, status: 'SEATED' }, { limit: 10 }),
  );
  ms[`  (prefix matches ~${Math.round(perRestaurantAndStatus)} docs)`] = Number.NaN;
  await store.close();
  return ms;
}

export async function benchDocumentStore(docs = 100_000, rounds = ROUNDS): Promise<BenchRow[]> {
  const results: Record<string, number>[] = [];
  for (let r = 0; r < rounds; r++) results.push(await round(docs));
  return Object.keys(results[0]!)
    .filter((op) => !Number.isNaN(results[0]![op]))
    .map((operation) => {
      const sorted = results.map((r) => r[operation]!).sort((a, b) => a - b);
      const msPerOp = sorted[Math.floor(sorted.length / 2)]!;
      return { operation, 'ops/s': Math.round(1000 / msPerOp), 'µs/op': Number((msPerOp * 1000).toFixed(2)) };
    });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const docs = Number(process.argv[2] ?? 100_000);
  console.log(`embedded document store, ${docs.toLocaleString('en')} documents, median of ${ROUNDS} rounds`);
  console.table(await benchDocumentStore(docs));
  console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
}
