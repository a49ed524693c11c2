// Creates on a full store (issue 11): throughput must not fall as the store fills. The store first
// holds 100,450 reservations (bench/fill.ts: made in-process by the create handler; 1,150 on each of
// 63 days, 1,000 on each of the 28 days of the horizon), the server starts on it (rebuilding its
// read models from the log), then POST /reservations runs for a minute on distinct slots of the
// 28-day horizon, day after day in turn, so every create lands on a day already holding 1,000
// seatings and more (after a 5-second warm-up). Reported per 10-second window: creates/s, latency and the server's CPU time per
// create. Goals: the last window within 20% of the first; afterwards p99 ≤ 50 ms at a fixed 300/s.
//
// Run alone: npx tsx bench/full-store.bench.ts (or npm run bench -- full-store). FULL_STORE_FROM=<dir>
// starts from a copy of the events.sqlite a previous run kept (BENCH_KEEP_DATA=1) instead of filling.
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { DAY_CAPACITY, dayAfter, FILL_TOKEN, fill, fillBootstrap, fillCreate } from './fill';
import { cpuSeconds, fmt, type LoadResult, load, serve, table, writeJson } from './harness';

const FIRST_DAY = '2031-01-01';
const BUSY_DAYS = 63;
const BUSY = 1150;
const HORIZON = 28;
const HORIZON_START = 1000;
const WINDOWS = Number(process.env.FULL_STORE_WINDOWS ?? 6);
const WINDOW_S = 10;
const WARM_UP_S = 5;
const PACED_RUNS = Number(process.env.FULL_STORE_PACED_RUNS ?? 3);

/** Resident memory of a process in MB, from /proc (null elsewhere). */
function rssMb(pid: number | undefined): number | null {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : null;
  } catch {
    return null;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export async function fullStoreBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-bench-full-'));
  const file = writeJson(dir, 'bootstrap.json', fillBootstrap());
  const from = process.env.FULL_STORE_FROM;
  // FULL_STORE_FILL=0 (or a fraction) fills less: the same run on an empty store, for comparison.
  const scale = Number(process.env.FULL_STORE_FILL ?? 1);
  const plan = [
    ...Array.from({ length: BUSY_DAYS }, (_, i) => ({
      day: dayAfter(FIRST_DAY, i),
      count: Math.round(BUSY * scale),
    })),
    ...Array.from({ length: HORIZON }, (_, i) => ({
      day: dayAfter(FIRST_DAY, BUSY_DAYS + i),
      count: Math.round(HORIZON_START * scale),
    })),
  ];
  const stored = plan.reduce((n, d) => n + d.count, 0);
  if (from) {
    copyFileSync(join(from, 'events.sqlite'), join(dir, 'events.sqlite'));
    console.log(`store copied from ${from}`);
  } else {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const made = await fill(dir, {
      days: plan,
      every: 10_000,
      onProgress: (n, us) => process.stdout.write(`  filled ${n}: ${fmt(us, 0)} µs CPU a create\n`),
    });
    const used = process.cpuUsage(cpu);
    console.log(
      `filled ${made} reservations in ${fmt((performance.now() - started) / 1000)} s (${fmt((used.user + used.system) / made, 0)} µs CPU a create, in-process)`,
    );
  }

  const spawned = performance.now();
  const api = await serve(
    {
      DATA_DIR: dir,
      BOOTSTRAP_FILE: file,
      RATE_LIMIT_PER_MINUTE: '10000000',
      ROLES: 'api,projector',
    },
    'src/main.ts',
    // e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", to profile the server under this load.
    process.env.SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
  );
  const pid = api.child.pid;
  const headers = { authorization: `Bearer ${FILL_TOKEN}`, 'content-type': 'application/json' };
  const me = await fetch(`${api.url}/api/partner/v1/me`, { headers });
  const startS = (performance.now() - spawned) / 1000;
  const startCpu = cpuSeconds(pid);
  if (me.status !== 200) throw new Error(`GET /me answered ${me.status}`);
  console.log(
    `server started on the store (read models rebuilt from the log) in ${fmt(startS)} s, ${startCpu === null ? '?' : fmt(startCpu)} s CPU, RSS ${rssMb(pid)} MB`,
  );

  // The horizon: each create goes to the next day in turn, at that day's next place.
  const horizon = plan.slice(BUSY_DAYS).map((d) => ({ ...d }));
  let nextDay = BUSY_DAYS + HORIZON;
  let n = 0;
  let failed = 0;
  const body = () => {
    const i = n++ % HORIZON;
    let slot = horizon[i] as { day: string; count: number };
    // Only if the machine outruns 4,000 creates a day: a fresh day (logged, it starts empty).
    if (slot.count >= DAY_CAPACITY) {
      slot = { day: dayAfter(FIRST_DAY, nextDay++), count: 0 };
      horizon[i] = slot;
      console.log(`  horizon day full: moved to ${slot.day}`);
    }
    return JSON.stringify(fillCreate(slot.day, slot.count++, `full-${n}`));
  };
  const creates = (label: string, options: Partial<autocannon.Options> = {}): Promise<LoadResult> =>
    load(label, {
      url: `${api.url}/api/partner/v1/reservations`,
      method: 'POST',
      headers,
      duration: WINDOW_S,
      requests: [
        {
          setupRequest: (req) => ({ ...req, body: body() }),
          onResponse: (status) => {
            if (status !== 201) failed++;
          },
        },
      ],
      ...options,
    } as autocannon.Options);

  try {
    const rows: Record<string, string | number>[] = [];
    const windows: LoadResult[] = [];
    const cpuPer: number[] = [];
    // Warm-up, not counted: the JIT, and the first create of each horizon day folding the day's
    // stream (1,000 events) into the capacity cache; otherwise the first window pays for them and
    // the last-to-first ratio flatters the run.
    const warm = await creates('warm-up', { duration: WARM_UP_S });
    rows.push({
      case: `warm-up, ${WARM_UP_S} s (not counted)`,
      'req/s': fmt(warm.rps, 0),
      'p50 ms': warm.p50,
      'p99 ms': warm.p99,
      'server CPU µs/create': '',
      errors: warm.errors + warm.non2xx,
    });
    for (let w = 0; w < WINDOWS; w++) {
      const before = cpuSeconds(pid);
      const r = await creates(`window ${w + 1}`);
      const after = cpuSeconds(pid);
      const cpu =
        before === null || after === null || r.total === 0 ? null : ((after - before) / r.total) * 1e6;
      windows.push(r);
      if (cpu !== null) cpuPer.push(cpu);
      rows.push({
        case: `creates ${w * WINDOW_S}–${(w + 1) * WINDOW_S} s`,
        'req/s': fmt(r.rps, 0),
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'server CPU µs/create': cpu === null ? '?' : fmt(cpu, 0),
        errors: r.errors + r.non2xx,
      });
    }
    const paced: LoadResult[] = [];
    for (let i = 0; i < PACED_RUNS; i++) {
      const r = await creates(`@300/s run ${i + 1}`, {
        overallRate: 300,
        connections: 10,
        // No coordinated-omission correction: autocannon's assumes 1 ms between a connection's requests.
        ignoreCoordinatedOmission: true,
      });
      paced.push(r);
      rows.push({
        case: `creates at 300/s, run ${i + 1}`,
        'req/s': fmt(r.rps, 0),
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'server CPU µs/create': '',
        errors: r.errors + r.non2xx,
      });
    }
    table(
      `POST /reservations on a full store (${stored} reservations stored; 28-day horizon, 10 connections, ${WINDOW_S} s windows)`,
      rows,
    );
    const first = windows[0] as LoadResult;
    const last = windows[windows.length - 1] as LoadResult;
    const ratio = last.rps / first.rps;
    const p99 = median(paced.map((r) => r.p99));
    const perDay = horizon.map((d) => d.count);
    console.log(
      `last window / first: ${fmt(ratio, 2)} (goal ≥ 0.8); server CPU per create first/last window: ${cpuPer.length ? `${fmt(cpuPer[0] as number, 0)} / ${fmt(cpuPer[cpuPer.length - 1] as number, 0)} µs` : '?'}; p99 at 300/s: ${paced.map((r) => r.p99).join(', ')} ms, median ${p99} (goal ≤ 50 ms)`,
    );
    console.log(
      `${n} creates sent, ${failed} not 201; server RSS ${rssMb(pid)} MB; horizon days now hold ${Math.min(...perDay)}–${Math.max(...perDay)} reservations`,
    );
  } finally {
    await api.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await fullStoreBench();
