// The read models a replay of a log builds, as digests: one SHA-256 per collection over its documents
// as JSON (field order included), in the store's order. Run it on two trees over one log to show a
// change to the replay path leaves every read model byte-identical:
// `REPLAY_KEEP=1 … npx tsx bench/replay-all.bench.ts` keeps a log, then
// `npx tsx bench/replay-digest.ts <log.sqlite> [batchSize]` on each tree and diff the outputs.
import { createHash } from 'node:crypto';
import { allProjections } from '../projections/index';
import { EmbeddedDocumentStore } from '../src/adapters/document-store/embedded';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite';
import { createLogger } from '../src/logger';
import { ProjectionRunner } from '../src/projection/runner';
import { AliasedDocumentStore, ProjectionVersions } from '../src/projection/versions';

// REPLAY_READ_AHEAD=0: the log read on the main thread (the default reads a large log ahead in a worker).
const events = SqliteEventStore.open(
  process.argv[2]!,
  process.env.REPLAY_READ_AHEAD === '0' ? { readAhead: false } : {},
);
const docs = new EmbeddedDocumentStore();
const versions = new ProjectionVersions(events, docs, new AliasedDocumentStore(docs), {
  logger: createLogger('silent'),
});
const runner = new ProjectionRunner(events, docs, await versions.prepare(allProjections()), {
  batchSize: Number(process.argv[3] ?? 1000),
});
await runner.catchUp();
const h = createHash('sha256');
for (const name of docs.collectionNames()) {
  const all = await docs.collection(name).find({});
  const ch = createHash('sha256');
  for (const d of all) ch.update(JSON.stringify(d)).update('\n');
  const dig = ch.digest('hex').slice(0, 16);
  h.update(name + dig);
  console.log(name.padEnd(30), String(all.length).padStart(7), dig);
}
console.log('ALL', h.digest('hex').slice(0, 16));
process.exit(0);
