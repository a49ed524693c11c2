// The real service, plus one thing for the import benchmark: on SIGUSR2 it imports IMPORT_FILE into
// IMPORT_RESTAURANT in-process (as the dashboard will), beside the requests it serves, and writes
// the outcome to DATA_DIR/import-result.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { startService } from '../src/app';
import { loadConfig } from '../src/config';
import { operatorMeta } from '../src/core/command-meta';
import { importCustomers, prepareImport, threadChoice } from '../src/customer-import/engine';
import { clockTicks } from './harness';

const config = loadConfig();
const service = await startService(config);
console.log(`Couvert is listening on ${service.url}`);

/** CPU seconds of the main thread alone (Linux): the process's figure also counts the import's
 * worker thread and V8's helper threads. */
function mainThreadCpu(): number | null {
  try {
    const fields =
      readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return null;
  }
}

// What the client's p99 does not separate: each GET's time inside the server (Node's 'request'
// to the response handed to the kernel), and the event loop's long holds while importing (a 2 ms
// timer's gaps over 40 ms, with when they happened): a hold delays every request that arrives in it.
const inServer: [number, number][] = [];
service.server.on('request', (req, res) => {
  if (req.method !== 'GET') return;
  const t0 = performance.now();
  res.on('finish', () => inServer.push([t0, performance.now() - t0]));
});
const holds: [number, number][] = [];
// BENCH_HOLDS_FILE=file: every gap over 10 ms as [process.hrtime µs at its start, µs], the clock of a
// --cpu-prof profile's samples, to see what ran in each (written with the result).
const fineHolds: [number, number][] = [];
const hrUs = () => Number(process.hrtime.bigint() / 1000n);
let lastTick = performance.now();
let lastHr = hrUs();
setInterval(() => {
  const now = performance.now();
  if (now - lastTick > 40) holds.push([lastTick, now - lastTick]);
  if (process.env.BENCH_HOLDS_FILE) {
    const hr = hrUs();
    if (hr - lastHr > 10_000) fineHolds.push([lastHr, hr - lastHr]);
    lastHr = hr;
  }
  lastTick = now;
}, 2).unref();
const percentiles = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number) => Math.round((sorted[Math.floor(sorted.length * q)] ?? 0) * 10) / 10;
  return { p50: at(0.5), p99: at(0.99) };
};

process.on('SIGUSR2', () => {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const main0 = mainThreadCpu();
  // How long the event loop was held while the import ran: what a request arriving then waited.
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  // Garbage collection's pauses of the main thread meanwhile (a suspect for the loop's long holds).
  const pauses: { major: number[]; minor: number[] } = { major: [], minor: [] };
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
      (kind === constants.NODE_PERFORMANCE_GC_MAJOR ? pauses.major : pauses.minor).push(e.duration);
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  // BENCH_ALLOC_PROFILE=file: where the main thread allocated during the import (sampled, objects
  // that died young included), as a .heapprofile for Chrome DevTools: what the scavenges are fed.
  const allocFile = process.env.BENCH_ALLOC_PROFILE;
  const session = allocFile ? new Session() : null;
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session?.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))),
    );
  const startHr = hrUs();
  (async () => {
    if (session) {
      session.connect();
      await post('HeapProfiler.startSampling', {
        samplingInterval: 32 * 1024,
        includeObjectsCollectedByMajorGC: true,
        // BENCH_ALLOC_SURVIVORS=1: only what survived a scavenge (promoted: what makes scavenges long).
        includeObjectsCollectedByMinorGC: !process.env.BENCH_ALLOC_SURVIVORS,
      });
    }
    const bytes = readFileSync(process.env.IMPORT_FILE as string);
    const prepared = await prepareImport(service.rt, process.env.IMPORT_RESTAURANT as string, bytes);
    const state = await importCustomers(service.rt, prepared, {
      ...threadChoice(service.rt.config),
      onMatch: 'return_existing',
      fileName: 'bench.csv',
      meta: operatorMeta('bench'),
      batchSize: process.env.IMPORT_BATCH ? Number(process.env.IMPORT_BATCH) : undefined,
    });
    const used = process.cpuUsage(cpu);
    if (session && allocFile) {
      const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: unknown };
      writeFileSync(allocFile, JSON.stringify(profile));
      session.disconnect();
    }
    if (process.env.BENCH_HOLDS_FILE)
      writeFileSync(
        process.env.BENCH_HOLDS_FILE,
        JSON.stringify({ startHr, hr: fineHolds.filter(([t]) => t >= startHr) }),
      );
    delay.disable();
    gc.disconnect();
    const summary = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return {
        count: xs.length,
        total_ms: Math.round(xs.reduce((a, b) => a + b, 0)),
        p99_ms: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
        max_ms: sorted.at(-1) ?? 0,
      };
    };
    const before = inServer.filter(([t]) => t < started);
    const during = inServer.filter(([t]) => t >= started);
    return {
      in_server_ms: {
        before: percentiles(before.map(([, d]) => d)),
        during: percentiles(during.map(([, d]) => d)),
      },
      long_holds: holds
        .filter(([t]) => t >= started)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([t, d]) => [Math.round((t - started) / 100) / 10, Math.round(d)]),
      loop_delay_ms: {
        p50: delay.percentile(50) / 1e6,
        p99: delay.percentile(99) / 1e6,
        max: delay.max / 1e6,
      },
      gc_pauses: { major: summary(pauses.major), minor: summary(pauses.minor) },
      seconds: (performance.now() - started) / 1000,
      cpu_seconds: (used.user + used.system) / 1e6,
      main_thread_cpu_seconds: main0 === null ? null : (mainThreadCpu() as number) - main0,
      rows: prepared.table.rows.length,
      status: state.status,
      counts: state.counts,
    };
  })().then(
    (result) => writeFileSync(join(config.dataDir, 'import-result.json'), JSON.stringify(result)),
    (err) =>
      writeFileSync(join(config.dataDir, 'import-result.json'), JSON.stringify({ error: String(err) })),
  );
});

const stop = () => service.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
