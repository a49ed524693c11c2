// The customer CSV import (issue 15 item 4): 100,000 rows imported inside the running server (as the
// dashboard will), and the API's p99 on GET /reservations at a fixed rate (autocannon on loopback)
// before and during the import. Goals: ≥ 5,000 rows/s; p99 during at most twice p99 before.
// A fresh server per run; medians over BENCH_RUNS runs (default 3). BENCH_IMPORT_ROWS (100,000),
// BENCH_IMPORT_RATE (200 GET /reservations a second; 0: the import alone) change the run;
// BENCH_IMPORT_WRITES=N adds N POST /reservations a second during the import (their latency printed);
// BENCH_IMPORT_CLIENT=plain sends the reads from Node's own http client instead of autocannon.
// Run: npm run bench -- import   (or npm run bench:import)
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, fmt, type LoadResult, load, plainLoad, serve, table, writeJson } from './harness';
import { importCsv } from './import-file';
import { benchBootstrap, createBody } from './reservations.bench';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const RATE = Number(process.env.BENCH_IMPORT_RATE ?? 200);
const WRITES = Number(process.env.BENCH_IMPORT_WRITES ?? 0);
/** BENCH_IMPORT_CLIENT=plain: the reads from Node's own http client instead of autocannon (harness.ts plainLoad). */
const PLAIN = process.env.BENCH_IMPORT_CLIENT === 'plain';
const RESERVATIONS = 300;
const TOKEN = 'couvert_pk_bench_res_000000000000000000000001';
/**
 * The node flags the service is started with (Dockerfile CMD, `npm start`): none beyond tsx, now
 * (docs/customer-import.md: the young generation at V8's default). `BENCH_NODE_ARGS` adds some.
 */
export const SERVICE_NODE_ARGS: string[] = [];

interface Run {
  seconds: number;
  rowsPerSecond: number;
  importCpu: number;
  mainCpu: number;
  loopDelay: { p50: number; p99: number; max: number };
  /** Requests' time inside the server (bench/import-server.ts), before and during the import. */
  inServer?: Record<'before' | 'during', { p50: number; p99: number }>;
  /** The event loop's longest holds over 40 ms while importing: [s into the import, ms]. */
  longHolds?: [number, number][];
  gc?: Record<'major' | 'minor', { count: number; total_ms: number; p99_ms: number; max_ms: number }>;
  before: LoadResult;
  during: LoadResult;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function once(csvFile: string): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-bench-import-'));
  const boot = benchBootstrap();
  (boot.restaurants[0] as Record<string, unknown>).customer_fields = [
    { id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] },
  ];
  const file = writeJson(dir, 'bootstrap.json', boot);
  const api = await serve(
    {
      DATA_DIR: dir,
      BOOTSTRAP_FILE: file,
      RATE_LIMIT_PER_MINUTE: '10000000',
      ROLES: 'api,projector',
      IMPORT_FILE: csvFile,
      IMPORT_RESTAURANT: 'rest_bench',
    },
    'bench/import-server.ts',
    // The service's own start flags (SERVICE_NODE_ARGS), then BENCH_NODE_ARGS, e.g.
    // '--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the server (a later V8 flag wins).
    [...SERVICE_NODE_ARGS, ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])],
  );
  try {
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    for (let n = 0; n < RESERVATIONS; n++) {
      const r = await fetch(`${api.url}/api/partner/v1/reservations`, {
        method: 'POST',
        headers,
        body: createBody(n),
      });
      if (r.status !== 201) throw new Error(`seeding reservation ${n}: ${r.status} ${await r.text()}`);
    }
    const idle: LoadResult = { label: 'none', rps: 0, total: 0, p50: 0, p99: 0, errors: 0, non2xx: 0 };
    // BENCH_IMPORT_RATE=0: the import alone, no requests (its own CPU a row, while iterating).
    const url = `${api.url}/api/partner/v1/reservations?per_page=25&page=3`;
    const reads = async (label: string, duration: number) =>
      RATE <= 0
        ? idle
        : PLAIN
          ? plainLoad(label, { url, headers, rate: RATE, connections: 10, duration })
          : load(label, { url, headers, overallRate: RATE, connections: 10, duration });
    await reads('warm', 3);
    const before = await reads('before', 8);
    const cpu0 = cpuSeconds(api.child.pid);
    api.child.kill('SIGUSR2');
    // BENCH_IMPORT_WRITES=N: also N POST /reservations a second (one at a time) during the import:
    // a write waits for the read models to apply its own position (rt.settle), the import's rows
    // before it included.
    const writeMs: number[] = [];
    const writing =
      WRITES > 0
        ? (async () => {
            const end = Date.now() + 8000;
            for (let n = RESERVATIONS; Date.now() < end; n++) {
              const t0 = performance.now();
              const r = await fetch(`${api.url}/api/partner/v1/reservations`, {
                method: 'POST',
                headers,
                body: createBody(n),
              });
              if (r.status !== 201) throw new Error(`POST /reservations during the import: ${r.status}`);
              await r.arrayBuffer();
              writeMs.push(performance.now() - t0);
              await sleep(1000 / WRITES);
            }
          })()
        : Promise.resolve();
    const during = await reads('during', 8);
    await writing;
    if (writeMs.length > 0) {
      const w = [...writeMs].sort((a, b) => a - b);
      const at = (q: number) => fmt(w[Math.min(w.length - 1, Math.floor(w.length * q))] as number, 1);
      console.log(
        `POST /reservations during the import: ${w.length} requests, p50 ${at(0.5)} / p90 ${at(0.9)} / max ${at(1)} ms`,
      );
    }
    const resultFile = join(dir, 'import-result.json');
    for (let waited = 0; !existsSync(resultFile); waited += 200) {
      if (waited > 600_000) throw new Error('the import did not finish in 10 minutes');
      await sleep(200);
    }
    const result = JSON.parse(readFileSync(resultFile, 'utf8'));
    if (result.error) throw new Error(`import failed: ${result.error}`);
    if (result.counts.created !== ROWS) throw new Error(`import created ${result.counts.created} of ${ROWS}`);
    const cpu1 = cpuSeconds(api.child.pid);
    return {
      seconds: result.seconds,
      rowsPerSecond: ROWS / result.seconds,
      loopDelay: result.loop_delay_ms,
      inServer: result.in_server_ms,
      longHolds: result.long_holds,
      gc: result.gc_pauses,
      importCpu: result.cpu_seconds ?? (cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : Number.NaN),
      mainCpu: result.main_thread_cpu_seconds ?? Number.NaN,
      before,
      during,
    };
  } finally {
    await api.stop();
  }
}

export async function importBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-bench-import-file-'));
  const csvFile = join(dir, 'customers.csv');
  writeFileSync(csvFile, importCsv(ROWS));
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await once(csvFile);
    runs.push(r);
    console.log(
      `run ${i + 1}: ${ROWS} rows in ${fmt(r.seconds, 2)} s (${Math.round(r.rowsPerSecond)} rows/s, server CPU ${fmt(r.importCpu, 1)} s, main thread ${fmt(r.mainCpu, 1)} s); event loop held p99 ${fmt(r.loopDelay.p99)} / max ${fmt(r.loopDelay.max)} ms; GET /reservations p99 ${r.before.p99} → ${r.during.p99} ms${r.during.sentLateP99 === undefined ? '' : ` (sent late by the client itself, p99 ${r.before.sentLateP99} → ${r.during.sentLateP99} ms)`} (inside the server: p50 ${r.inServer?.before.p50} → ${r.inServer?.during.p50}, p99 ${r.inServer?.before.p99} → ${r.inServer?.during.p99} ms); holds over 40 ms [s, ms]: ${JSON.stringify(r.longHolds ?? [])}; GC pauses: ${r.gc ? `major ${r.gc.major.count} (${r.gc.major.total_ms} ms, max ${fmt(r.gc.major.max_ms)}), minor ${r.gc.minor.count} (${r.gc.minor.total_ms} ms, p99 ${fmt(r.gc.minor.p99_ms)}, max ${fmt(r.gc.minor.max_ms)})` : 'n/a'}`,
    );
  }
  table(
    `customer import, ${ROWS} rows, inside the server; GET /reservations at ${RATE}/s (medians of ${RUNS} runs)`,
    [
      {
        'import s': fmt(mid(runs.map((r) => r.seconds)), 2),
        'rows/s': Math.round(mid(runs.map((r) => r.rowsPerSecond))),
        'server CPU µs/row': Math.round((mid(runs.map((r) => r.importCpu)) / ROWS) * 1e6),
        'main thread µs/row': Math.round((mid(runs.map((r) => r.mainCpu)) / ROWS) * 1e6),
        'loop held p99 ms': fmt(mid(runs.map((r) => r.loopDelay.p99))),
        'p99 before ms': mid(runs.map((r) => r.before.p99)),
        'p99 during ms': mid(runs.map((r) => r.during.p99)),
        'p99 ratio': fmt(mid(runs.map((r) => r.during.p99 / Math.max(1, r.before.p99))), 2),
        'errors/non-2xx': runs.reduce(
          (n, r) => n + r.before.errors + r.during.errors + r.before.non2xx + r.during.non2xx,
          0,
        ),
      },
    ],
  );
  console.log(
    'goals: ≥ 5,000 rows/s; p99 during ≤ 2 × p99 before. The machine may be shared: see docs/BENCHMARKS.md.',
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await importBench();
