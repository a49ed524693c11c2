// Where the heap goes: the log at argv[2] replayed into each projection alone (or every one), then a
// full GC and the heap used, per projection and per collection (documents, then with indexes).
// `node --expose-gc --import tsx bench/replay-heap.ts <log> [projection]`.
import { allProjections } from '../projections/index';
import { EmbeddedDocumentStore } from '../src/adapters/document-store/embedded';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite';
import { createLogger } from '../src/logger';
import { registerModules } from '../src/modules';
import { ProjectionRunner } from '../src/projection/runner';
import { AliasedDocumentStore, ProjectionVersions } from '../src/projection/versions';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
registerModules();
const file = process.argv[2] as string;
const only = process.argv[3];
const events = SqliteEventStore.open(file, { readAhead: false });
const docs = new EmbeddedDocumentStore();
const versions = new ProjectionVersions(events, docs, new AliasedDocumentStore(docs), {
  logger: createLogger('silent'),
});
const projections = allProjections().filter((p) => only === undefined || only === 'all' || p.name === only);
const runner = new ProjectionRunner(events, docs, await versions.prepare(projections), { batchSize: 1000 });
await runner.start();
const before = heap();
const applied = await runner.catchUp();
const mem = process.memoryUsage();
const spaces = Object.fromEntries(
  (await import('node:v8'))
    .getHeapSpaceStatistics()
    .map((s) => [s.space_name, Math.round(s.space_size / 2 ** 20)]),
);
const after = heap();
const out: Record<string, unknown> = {
  projection: only ?? 'all',
  applied,
  heapMB: Math.round(((after - before) / 2 ** 20) * 10) / 10,
  peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  atEnd: Object.fromEntries(Object.entries(mem).map(([k, v]) => [k, Math.round(v / 2 ** 20)])),
  spacesMB: spaces,
};
for (const name of docs.collectionNames()) {
  const n = await docs.collection(name).count();
  if (n === 0) continue;
  out[name] = n;
}
// Drop collections one by one, largest first, to see what each holds (documents + indexes).
const sizes: Record<string, number> = {};
let last = heap();
for (const name of docs.collectionNames()) {
  docs.collection(name).reset();
  const now = heap();
  sizes[name] = Math.round(((last - now) / 2 ** 20) * 10) / 10;
  last = now;
}
out.collectionsMB = Object.fromEntries(Object.entries(sizes).filter(([, v]) => v > 0));
await events.close();
console.log(JSON.stringify(out));
