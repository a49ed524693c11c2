// One webhook sweep's read of the due deliveries (publisher.sweep's find), timed over a pending set
// of N: the embedded read model with the projection's own indexes, as the soak grew it. Pending
// deliveries on 9 failing endpoints, 2,000 of their retries due (shape `retries`); shape `hung` adds a
// tenth endpoint whose queue is full (left out by the query, as the sweeper leaves out a full
// endpoint) with N/10 of them, its backlog all due. Per N and shape: the first sweep (the store's
// first sorted read), then the median of 21 (each after a write that moves one delivery, as attempts
// recorded between sweeps do), in ms of the process's CPU time.
//   npx tsx bench/sweep-cost.ts [N…]            (default 10000 50000)
//   SWEEP_COST_ROOT=/path/to/other/tree npx tsx bench/sweep-cost.ts   (another tree's store, to compare)

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.env.SWEEP_COST_ROOT ?? resolve(import.meta.dirname, '..');
const { EmbeddedDocumentStore } = await import(
  pathToFileURL(resolve(root, 'src/adapters/document-store/embedded.ts')).href
);
const { webhookDeliveriesProjectionV1 } = await import(
  pathToFileURL(resolve(root, 'projections/webhook-deliveries.ts')).href
);

const NOW = Date.parse('2026-11-28T07:00:00.000Z');
const at = (s: number) => new Date(NOW + s * 1000).toISOString();

async function run(n: number, hung: boolean): Promise<{ first: number; median: number; found: number }> {
  const docs = new EmbeddedDocumentStore();
  await webhookDeliveriesProjectionV1.setup(docs);
  const col = docs.collection('webhook_deliveries');
  const batch = [];
  for (let i = 0; i < n; i++) {
    const endpoint = hung ? i % 10 : 1 + (i % 9);
    // The hung endpoint's backlog is due; of the failing ones' retries, 2,000 whatever N (a sweep's
    // page is the same at every N).
    const due = endpoint === 0 || (i % 5 === 1 && i < 10_000);
    const sweepAfter = due ? at(-((i * 7919) % 3_600)) : at(60 + ((i * 104729) % 86_400));
    batch.push({
      _id: `wd_${i}`,
      endpoint_id: `we_${endpoint}`,
      restaurant_id: 'rest_demo',
      created_at: at(-3_600 + (i % 3_600)),
      test: false,
      status: 'pending',
      last_attempt_at: at(-60),
      next_attempt: 2,
      next_attempt_at: sweepAfter,
      sweep_after: sweepAfter,
      revision: 3,
      attempts: [],
    });
  }
  await col.insertMany(batch);
  const sweep = () =>
    col.find(
      { status: 'pending', sweep_after: { $lte: at(0) }, endpoint_id: { $nin: ['we_0'] } },
      // The hung endpoint's held ones are left out with it: the page is the sweep's 500.
      { sort: { sweep_after: 1 }, limit: 500 },
    );
  // CPU time of the process, not wall time: on the shared machine a thread waits seconds on a run queue.
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let t = cpu();
  const found = (await sweep()).length;
  const first = cpu() - t;
  const times: number[] = [];
  for (let r = 0; r < 21; r++) {
    const i = 1 + 10 * r;
    await col.updateOne({ _id: `wd_${i}` }, { $set: { sweep_after: at(90 + r) } });
    t = cpu();
    await sweep();
    times.push(cpu() - t);
  }
  times.sort((a, b) => a - b);
  return { first, median: times[10] as number, found };
}

const sizes = process.argv.slice(2).map(Number);
for (const shape of ['retries', 'hung'] as const) {
  for (const n of sizes.length ? sizes : [10_000, 50_000]) {
    const r = await run(n, shape === 'hung');
    console.log(
      JSON.stringify({
        root,
        shape,
        pending: n,
        found: r.found,
        firstMs: +r.first.toFixed(2),
        medianMs: +r.median.toFixed(2),
      }),
    );
  }
}
