// `npm run bench:inproc`: the per-request JavaScript cost of GET /me against bare Koa, in one process and
// without sockets. Each request is an http.IncomingMessage / ServerResponse pair on a socket that
// discards what it is sent, so the kernel's share (loopback TCP, the same for both) is left out and what
// remains is what our code adds. Rounds alternate bare Koa and GET /me; the table gives each one's
// median µs per request, garbage-collection pauses per request, and (with --alloc) the bytes allocated
// per request by the sampling heap profiler, counting objects the GC has already collected, with the
// allocation sites of GET /me that allocate most.
//
// Options: --n 100000 (requests a case and round), --rounds 5, --chunk 2000, --only ours|bare, --base DIR
// (also time GET /me of another checkout, e.g. the commit before a change), --alloc (profile allocations
// instead of timing; run node with --enable-source-maps for our files' lines). The access log goes to stdout as the server's would: the report is
// printed on stderr, so `npm run bench:inproc > /dev/null` shows it alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector';
import { findSourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Koa from 'koa';
import type { applyBootstrap as ApplyBootstrap } from '../src/bootstrap';
import type { loadConfig as LoadConfig } from '../src/config';
import type { allRoutes as AllRoutes } from '../src/http/routes/index';
import type { createApp as CreateApp } from '../src/http/server';
import type { registerModules as RegisterModules } from '../src/modules';
import type { createRuntime as CreateRuntime } from '../src/runtime';
import { type Handler as InProcessHandler, inProcessRequest } from './in-process-request';

const { values: opts } = parseArgs({
  options: {
    n: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '5' },
    chunk: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '20000' },
    only: { type: 'string' },
    alloc: { type: 'boolean', default: false },
    base: { type: 'string' },
  },
});
const N = Number(opts.n);
const ROUNDS = Number(opts.rounds);
const CHUNK = Number(opts.chunk);
const report = (line: string) => process.stderr.write(`${line}\n`);

const TOKEN = 'couvert_pk_bench_000000000000000000000000000001';

type Handler = InProcessHandler;

const fire = async (handler: Handler, url: string, headers: Record<string, string>): Promise<void> => {
  await inProcessRequest(handler, 'GET', url, headers);
};

/** Garbage-collection pauses, as the performance timeline reports them (asynchronously). */
const gcs: { start: number; ms: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push({ start: e.startTime, ms: e.duration });
}).observe({ entryTypes: ['gc'] });

/** Runs n requests, ten in flight (as under load). */
async function run(n: number, one: () => Promise<void>) {
  let i = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (i++ < n) await one();
    }),
  );
}

interface Case {
  label: string;
  one: () => Promise<void>;
}
interface Tally {
  cpuUs: number;
  wallUs: number;
  gcMs: number;
  gcs: number;
  windows: [number, number][];
}

/**
 * One round: n requests of every case, interleaved in chunks (the cases' order rotating from chunk to
 * chunk), so that each case meets the same machine: another tenant's burst lands on all of them alike.
 * Returns, per case, CPU and wall µs a request and the GC pauses that fell inside its chunks.
 */
async function round(n: number, cases: Case[]) {
  const tallies = cases.map((): Tally => ({ cpuUs: 0, wallUs: 0, gcMs: 0, gcs: 0, windows: [] }));
  const seen = gcs.length;
  for (let done = 0, k = 0; done < n; done += CHUNK, k++) {
    const size = Math.min(CHUNK, n - done);
    for (let j = 0; j < cases.length; j++) {
      const c = (j + k) % cases.length;
      const t = tallies[c] as Tally;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await run(size, (cases[c] as Case).one);
      const cpu = process.cpuUsage(cpu0);
      const t1 = performance.now();
      t.cpuUs += cpu.user + cpu.system;
      t.wallUs += (t1 - t0) * 1e3;
      t.windows.push([t0, t1]);
    }
  }
  // Entries arrive asynchronously: let the observer catch up before reading them.
  await new Promise((r) => setTimeout(r, 20));
  for (const g of gcs.slice(seen))
    for (const t of tallies)
      if (t.windows.some(([a, b]) => g.start >= a && g.start < b)) {
        t.gcMs += g.ms;
        t.gcs++;
      }
  return tallies.map((t) => ({ cpuUs: t.cpuUs / n, us: t.wallUs / n, gcUs: (t.gcMs * 1e3) / n, gcs: t.gcs }));
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** The line in the TypeScript source (tsx compiles each file to one line; run with --enable-source-maps). */
function sourceLine(f: ProfileNode['callFrame']): number {
  if (!f.url.startsWith('file:') || f.url.includes('node_modules')) return f.lineNumber + 1;
  const entry = findSourceMap(f.url)?.findEntry(f.lineNumber, f.columnNumber) as
    | { originalLine?: number }
    | undefined;
  return entry?.originalLine !== undefined ? entry.originalLine + 1 : f.lineNumber + 1;
}

/** Bytes allocated per request over n requests, and the sites that allocated most (sampled, scaled). */
async function allocations(n: number, one: () => Promise<void>) {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((res, rej) =>
      session.post(method, params ?? {}, (err, result) => (err ? rej(err) : res(result))),
    );
  await post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMinorGC: true,
    includeObjectsCollectedByMajorGC: true,
  });
  await run(n, one);
  const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
  session.disconnect();
  const sites = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode, stack: string[]) => {
    const f = node.callFrame;
    const file = f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/');
    const here = `${f.functionName || '(anonymous)'} ${file}:${sourceLine(f)}`;
    if (node.selfSize) {
      total += node.selfSize;
      const key = [here, ...stack.slice(0, 2)].join(' < ');
      sites.set(key, (sites.get(key) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, [here, ...stack]);
  };
  walk(profile.head, []);
  return {
    bytes: total / n,
    sites: [...sites].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.SITES ?? 25)),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] as number;
};

/**
 * The service's app, built from the checkout at `root` (this one, or --base: another checkout's files,
 * e.g. `git archive <commit> src commands projections queries | tar -x -C DIR` with node_modules linked),
 * on a store of its own holding one restaurant and the bench key.
 */
async function serviceApp(root: string, dataDir: string) {
  const load = (file: string) => import(join(root, file)) as Promise<unknown>;
  const { registerModules } = (await load('src/modules.ts')) as { registerModules: typeof RegisterModules };
  const { loadConfig } = (await load('src/config.ts')) as { loadConfig: typeof LoadConfig };
  const { createRuntime } = (await load('src/runtime.ts')) as { createRuntime: typeof CreateRuntime };
  const { applyBootstrap } = (await load('src/bootstrap.ts')) as { applyBootstrap: typeof ApplyBootstrap };
  const { createApp } = (await load('src/http/server.ts')) as { createApp: typeof CreateApp };
  const { allRoutes } = (await load('src/http/routes/index.ts')) as { allRoutes: typeof AllRoutes };
  registerModules();
  const config = loadConfig({
    ...process.env,
    DATA_DIR: dataDir,
    RATE_LIMIT_PER_MINUTE: '10000000',
    LOG_LEVEL: 'info',
  });
  const rt = await createRuntime(config);
  await applyBootstrap(
    rt,
    {
      restaurants: [
        {
          id: 'rest_bench',
          name: 'Bench',
          slug: 'bench',
          country_code: 'FR',
          timezone: 'Europe/Paris',
          currency: 'EUR',
          api_keys: [
            { id: 'key_bench', name: 'bench', token: TOKEN, scopes: ['CATALOG_READ', 'AVAILABILITY_READ'] },
          ],
        },
      ],
    } as never,
    { actor: 'operator:bench' },
  );
  return { handler: createApp(rt, allRoutes(rt)).callback() as Handler, close: () => rt.close() };
}

const dir = mkdtempSync(join(tmpdir(), 'couvert-inproc-'));
try {
  const repo = fileURLToPath(new URL('..', import.meta.url));
  const ours = await serviceApp(repo, join(dir, 'ours'));
  const base = opts.base ? await serviceApp(resolve(opts.base), join(dir, 'base')) : null;
  // The same JSON as GET /me answers, from a one-middleware Koa app (as bench/bare-koa.ts).
  const bareApp = new Koa();
  const body = {
    data: {
      restaurant: {
        id: 'rest_bench',
        name: 'Bench',
        slug: 'bench',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
      },
      scopes: ['CATALOG_READ', 'AVAILABILITY_READ'],
      credential: {
        id: 'key_bench',
        type: 'API_KEY',
        application: null,
        created_at: '2026-01-01T00:00:00.000Z',
      },
    },
  };
  bareApp.use((ctx) => {
    ctx.body = body;
  });
  const bare = bareApp.callback();
  const headers = { host: '127.0.0.1', authorization: `Bearer ${TOKEN}` };
  const cases = [
    { label: 'bare Koa', one: () => fire(bare, '/me', headers) },
    { label: 'GET /me', one: () => fire(ours.handler, '/api/partner/v1/me', headers) },
    ...(base
      ? [{ label: 'GET /me, base', one: () => fire(base.handler, '/api/partner/v1/me', headers) }]
      : []),
  ].filter((c) => !opts.only || (opts.only === 'bare') === (c.label === 'bare Koa'));

  // Warm-up: the JIT, the credential cache and the access log's memo.
  for (const c of cases) await run(Number(opts.warmup), c.one);

  if (opts.alloc) {
    for (const c of cases) {
      const a = await allocations(N, c.one);
      report(`\n${c.label}: ${Math.round(a.bytes)} bytes allocated a request (sampled); top sites:`);
      for (const [site, bytes] of a.sites) report(`${String(Math.round(bytes / N)).padStart(6)}  ${site}`);
    }
  } else {
    const rows = new Map(cases.map((c) => [c.label, [] as Awaited<ReturnType<typeof round>>]));
    for (let r = 0; r < ROUNDS; r++) {
      const results = await round(N, cases);
      for (const [i, c] of cases.entries()) rows.get(c.label)?.push(results[i] as (typeof results)[number]);
    }
    report(
      `${ROUNDS} rounds of ${N} requests a case, interleaved in chunks of ${CHUNK}, 10 in flight; medians (all rounds)`,
    );
    report('| case | CPU µs a request | wall µs a request | GC µs a request | GCs a round |');
    report('|---|---|---|---|---|');
    const meds = new Map<string, number>();
    for (const [label, rs] of rows) {
      const cpu = rs.map((x) => x.cpuUs);
      meds.set(label, median(cpu));
      report(
        `| ${label} | ${median(cpu).toFixed(2)} (${cpu.map((u) => u.toFixed(1)).join(', ')}) | ${median(rs.map((x) => x.us)).toFixed(2)} | ${median(rs.map((x) => x.gcUs)).toFixed(2)} | ${median(rs.map((x) => x.gcs))} |`,
      );
    }
    const b = meds.get('bare Koa');
    const o = meds.get('GET /me');
    if (b !== undefined && o !== undefined) {
      const mine = rows.get('GET /me') ?? [];
      const ratios = (rows.get('bare Koa') ?? []).map((r, i) => r.cpuUs / (mine[i]?.cpuUs ?? Number.NaN));
      report(
        `GET /me adds ${(o - b).toFixed(2)} µs of CPU a request; bare Koa / GET /me CPU per round: median ${median(ratios).toFixed(2)} (${ratios.map((x) => x.toFixed(2)).join(', ')})`,
      );
    }
    const ob = meds.get('GET /me, base');
    if (ob !== undefined && o !== undefined) {
      // Per round, so the machine's drift between rounds cancels out.
      const mine = rows.get('GET /me') ?? [];
      const diffs = (rows.get('GET /me, base') ?? []).map((r, i) => (mine[i]?.cpuUs ?? 0) - r.cpuUs);
      const ratios = (rows.get('GET /me, base') ?? []).map(
        (r, i) => (mine[i]?.cpuUs ?? Number.NaN) / r.cpuUs,
      );
      report(
        `GET /me minus base, per round: median ${median(diffs).toFixed(2)} µs (${diffs.map((d) => d.toFixed(2)).join(', ')}); GET /me / base: median ${median(ratios).toFixed(3)}`,
      );
    }
  }
  await ours.close();
  await base?.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
