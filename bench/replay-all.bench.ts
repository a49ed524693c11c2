// Replay of 1,000,000 real events into every projection the service runs (the analytics ones
// included): what an embedded start does. Part of `npm run bench:store`; alone:
// `npx tsx bench/replay-all.bench.ts`. Where the heap goes, per collection: bench/replay-heap.ts.
//
// The log: one restaurant's activity is made in-process by the command handlers the API runs
// (bootstrap, creates with inline customers — a third of them returning guests — cancellations,
// moves to another day, seatings, finished and no-show reservations), then copied under other
// restaurant, reservation and customer ids until the log holds 1,000,000 events. The copies keep every
// event's type and shape; the restaurant's bootstrap (restaurant, catalog, API key) is in the log once,
// so the copies' catalog lookups find nothing, as for a restaurant deleted since.
// Each replay runs in a fresh child process (peak RSS is its own), ROUNDS times, with and without the
// analytics projection; the medians are printed with CPU seconds (the wall clock also measures the
// neighbours on a shared machine).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReservation } from '../commands/reservations/handler-create';
import { cancelReservation, changeStatus } from '../commands/reservations/handler-status';
import { updateReservation } from '../commands/reservations/handler-update';
import { allProjections } from '../projections/index';
import { EmbeddedDocumentStore } from '../src/adapters/document-store/embedded';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite';
import { MemoryKeyStore } from '../src/adapters/key-store/memory';
import { applyBootstrap } from '../src/bootstrap';
import { verifyLog } from '../src/cli/audit-commands';
import type { Clock } from '../src/core/clock';
import { operatorMeta } from '../src/core/command-meta';
import { createLogger } from '../src/logger';
import { registerModules } from '../src/modules';
import { ANY, type NewEvent } from '../src/ports/event-store';
import { ProjectionRunner } from '../src/projection/runner';
import { AliasedDocumentStore, ProjectionVersions } from '../src/projection/versions';
import { dayAfter, FILL_RESTAURANT, fillBootstrap, fillCreate } from './fill';

const TOTAL = Number(process.env.REPLAY_EVENTS ?? 1_000_000);
const ROUNDS = Number(process.env.REPLAY_ROUNDS ?? 3);
const TEMPLATE_DAYS = 10;
const PER_DAY = 120;
const FIRST_DAY = '2031-03-02';

/** The template: one restaurant's activity, made by the command handlers (also the write-back test's log). */
export async function writeTemplate(
  file: string,
  days = TEMPLATE_DAYS,
  perDay = PER_DAY,
): Promise<{ made: Record<string, number> }> {
  registerModules();
  const events = SqliteEventStore.open(file, { synchronous: 'NORMAL' });
  let now = new Date(`${dayAfter(FIRST_DAY, -20)}T09:00:00Z`);
  const clock: Clock = { now: () => now } as Clock;
  // No read models here: nothing to settle (inline customers, which match on them, would match nobody).
  const deps = { events, clock, docs: new EmbeddedDocumentStore(), settle: async () => {} };
  await applyBootstrap(deps, fillBootstrap(), operatorMeta('bootstrap'));
  const restaurant = {
    _id: FILL_RESTAURANT,
    timezone: 'Europe/Paris',
    currency: 'EUR',
    country_code: 'FR',
    customer_matching: true,
  };
  const meta = { actor: 'credential:key_full', restaurant_id: FILL_RESTAURANT, request_id: 'bench' };
  const made = { created: 0, canceled: 0, moved: 0, seated: 0, done: 0, no_show: 0, failed: 0 };
  const ids: { id: string; day: string }[] = [];
  const sources = ['WEBSITE', 'PHONE', 'RESERVE_WITH_GOOGLE', 'INSTAGRAM', 'WALK_IN', 'EMAIL'];
  for (let d = 0; d < days; d++) {
    const day = dayAfter(FIRST_DAY, d);
    for (let k = 0; k < perDay; k++) {
      // Bookings made from 20 days to a few hours ahead.
      now = new Date(Date.parse(`${FIRST_DAY}T09:00:00Z`) - ((k * 7919) % (20 * 24 * 60)) * 60_000);
      const guest = (d * perDay + k) % Math.ceil((days * perDay * 3) / 4); // 1,200 bookings, 900 phones: a quarter come back
      try {
        const out = await createReservation(
          deps,
          restaurant,
          {
            ...fillCreate(day, k, `t-${day}-${k}`),
            party_size: 1 + (k % 4),
            source: sources[k % sources.length],
            customer: { name: `Guest ${guest}`, phone_number: `+3361${String(guest).padStart(7, '0')}` },
          } as never,
          meta,
        );
        ids.push({ id: (out as { state: { r: { reservation_id: string } } }).state.r.reservation_id, day });
        made.created++;
      } catch (err) {
        if (made.failed++ === 0)
          console.error(
            'first refused create:',
            (err as Error).message,
            JSON.stringify((err as { details?: unknown }).details),
          );
      }
    }
  }
  if (days === TEMPLATE_DAYS) console.error(`template: ${made.created} created (${made.failed} refused)`);
  now = new Date(`${dayAfter(FIRST_DAY, -1)}T09:00:00Z`);
  for (const [i, r] of ids.entries()) {
    try {
      if (i % 10 === 0) {
        await cancelReservation(deps, FILL_RESTAURANT, r.id, 'plans changed', meta);
        made.canceled++;
      } else if (i % 10 === 1) {
        const to = dayAfter(r.day, 1);
        await updateReservation(deps, restaurant as never, r.id, { start_at: `${to}T23:30:00+02:00` }, meta);
        made.moved++;
      }
    } catch {
      made.failed++;
    }
  }
  // After the service days: seated and finished, or no-shows.
  now = new Date(`${dayAfter(FIRST_DAY, days + 2)}T09:00:00Z`);
  for (const [i, r] of ids.entries()) {
    if (i % 10 < 2) continue;
    try {
      if (i % 10 === 2) {
        await changeStatus(deps, FILL_RESTAURANT, r.id, { kind: 'no_show', graceMinutes: 15 }, meta);
        made.no_show++;
      } else {
        await changeStatus(deps, FILL_RESTAURANT, r.id, { kind: 'seat' }, meta);
        made.seated++;
        await changeStatus(deps, FILL_RESTAURANT, r.id, { kind: 'finish' }, meta);
        made.done++;
      }
    } catch {
      made.failed++;
    }
  }
  await events.close();
  return { made };
}

/** Random resource ids (newId): a prefix and 16 lowercase base64url characters. */
const ID = /\b([a-z]{2,5})_([a-z0-9]{16})\b/g;

async function writeReplayLog(
  file: string,
): Promise<{ events: number; types: Record<string, number>; made: Record<string, number> }> {
  const templateFile = `${file}.template`;
  const { made } = await writeTemplate(templateFile);
  const template = SqliteEventStore.open(templateFile);
  const all: { stream: string; type: string; data: string; metadata: string; bootstrap: boolean }[] = [];
  let inBootstrap = true;
  for await (const e of template.readAll()) {
    if (e.type === 'ReservationCreated' || e.stream.startsWith('capacity')) inBootstrap = false;
    all.push({
      stream: e.stream,
      type: e.type,
      data: JSON.stringify(e.data),
      metadata: JSON.stringify(e.metadata),
      bootstrap: inBootstrap,
    });
  }
  await template.close();
  rmSync(templateFile, { force: true });
  rmSync(`${templateFile}-wal`, { force: true });
  rmSync(`${templateFile}-shm`, { force: true });
  if (made.created === 0) throw new Error('the template holds no reservation');
  console.error(`template: ${all.length} events (${JSON.stringify(made)}); copying`);
  const out = SqliteEventStore.open(file, { synchronous: 'NORMAL' });
  const types: Record<string, number> = {};
  let written = 0;
  for (let copy = 0; written < TOTAL; copy++) {
    const rename = (s: string) =>
      copy === 0
        ? s
        : s.replaceAll(FILL_RESTAURANT, `${FILL_RESTAURANT}_${copy}`).replace(ID, `$1_$2c${copy}`);
    let i = 0;
    while (i < all.length && written < TOTAL) {
      const first = all[i] as (typeof all)[number];
      if (copy > 0 && first.bootstrap) {
        i++;
        continue;
      }
      // A run of consecutive events of one stream is one append.
      const batch: NewEvent[] = [];
      while (
        i < all.length &&
        (all[i] as (typeof all)[number]).stream === first.stream &&
        written + batch.length < TOTAL
      ) {
        const e = all[i++] as (typeof all)[number];
        batch.push({
          type: e.type,
          data: JSON.parse(rename(e.data)),
          metadata: JSON.parse(rename(e.metadata)),
        });
        types[e.type] = (types[e.type] ?? 0) + 1;
      }
      await out.append(rename(first.stream), batch, ANY);
      written += batch.length;
    }
  }
  await out.close();
  return { events: written, types, made };
}

interface Round {
  applied: number;
  seconds: number;
  cpuSeconds: number;
  /** CPU of the main thread alone (cpuSeconds covers every thread, the read-ahead worker's too). */
  mainCpuSeconds: number;
  peak: number;
  baseline: number;
  analyticsDays: number;
  /** The heap after two full collections at the end (only with --expose-gc): what the read models keep. */
  liveHeap?: number;
}

/**
 * CPU seconds of this process's main thread (Linux: /proc/self/task/<pid>/stat, user + system, in
 * clock ticks of 10 ms); NaN where there is no /proc.
 */
function mainThreadCpuSeconds(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Child: replays the log into every projection, as createRuntime does at an embedded start. */
async function replayChild(file: string, withAnalytics: boolean, only?: string): Promise<void> {
  const baseline = process.memoryUsage().rss;
  // REPLAY_READ_AHEAD=0: the log read on the main thread (the comparison for the read-ahead worker).
  const events = SqliteEventStore.open(
    file,
    process.env.REPLAY_READ_AHEAD === '0' ? { readAhead: false } : {},
  );
  const docs = new EmbeddedDocumentStore();
  // Read through the alias: a versioned projection writes its version's names (analytics_days_v2).
  const aliased = new AliasedDocumentStore(docs);
  const versions = new ProjectionVersions(events, docs, aliased, {
    logger: createLogger('silent'),
  });
  const projections = allProjections().filter((p) =>
    only ? p.name === only : withAnalytics || p.name !== 'analytics',
  );
  // REPLAY_HEADROOM_MB: the catch-up's heap headroom (RunnerOptions.heapHeadroomBytes; 0: the percent alone).
  const headroom = process.env.REPLAY_HEADROOM_MB;
  const runner = new ProjectionRunner(events, docs, await versions.prepare(projections), {
    batchSize: 1000,
    ...(headroom === undefined ? {} : { heapHeadroomBytes: Number(headroom) * 2 ** 20 }),
  });
  await runner.start();
  const cpuStart = process.cpuUsage();
  const mainStart = mainThreadCpuSeconds();
  const start = performance.now();
  const applied = await runner.catchUp();
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const mainCpuSeconds = mainThreadCpuSeconds() - mainStart;
  const analyticsDays = withAnalytics ? await aliased.collection('analytics_days').count() : 0;
  // Started with --expose-gc (REPLAY_NODE_ARGS=--expose-gc): the live heap the read models keep.
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  const liveHeap = gc ? process.memoryUsage().heapUsed : undefined;
  await events.close();
  const round: Round = {
    applied,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    mainCpuSeconds,
    peak: process.resourceUsage().maxRSS * 1024,
    baseline,
    analyticsDays,
    ...(liveHeap === undefined ? {} : { liveHeap }),
  };
  process.stdout.write(`${JSON.stringify(round)}\n`);
}

interface VerifyRound {
  events: number;
  chain: { seconds: number; cpuSeconds: number; findings: number };
  models: { seconds: number; cpuSeconds: number; documents: number; differences: number };
  peak: number;
}

/**
 * Child: `audit verify` over the log, as verifyLog runs it on an embedded start: the live read
 * models are built first (the server's own replay, not measured), then the hash chain of every
 * stream (one SHA-256 per event) and the read-model phase (replay into scratch read models, then
 * every document compared with the live one) are timed apart.
 */
async function verifyChild(file: string): Promise<void> {
  const events = SqliteEventStore.open(file);
  const live = new EmbeddedDocumentStore();
  const versions = new ProjectionVersions(events, live, new AliasedDocumentStore(live), {
    logger: createLogger('silent'),
  });
  const runner = new ProjectionRunner(events, live, await versions.prepare(allProjections()));
  await runner.catchUp();
  const keys = new MemoryKeyStore();
  const measure = async <T>(run: () => Promise<T>) => {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const value = await run();
    const used = process.cpuUsage(cpu);
    return {
      value,
      seconds: (performance.now() - start) / 1000,
      cpuSeconds: (used.user + used.system) / 1e6,
    };
  };
  const rt = { events, docs: live, projections: runner, keys };
  const chain = await measure(() => verifyLog(rt, { chain: true, readModels: false }));
  const models = await measure(() => verifyLog(rt, { chain: false, readModels: true }));
  await events.close();
  const round: VerifyRound = {
    events: chain.value.chain?.chained ?? 0,
    chain: {
      seconds: chain.seconds,
      cpuSeconds: chain.cpuSeconds,
      findings: chain.value.chain?.findings.length ?? -1,
    },
    models: {
      seconds: models.seconds,
      cpuSeconds: models.cpuSeconds,
      documents: models.value.readModels?.documents ?? 0,
      differences: models.value.readModels?.differences.length ?? -1,
    },
    peak: process.resourceUsage().maxRSS * 1024,
  };
  process.stdout.write(`${JSON.stringify(round)}\n`);
}

function runChild(args: string[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
    });
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`child exited ${code}`))));
  });
}

async function replayOnce(file: string, withAnalytics: boolean): Promise<Round> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        // REPLAY_NODE_ARGS: extra node flags for the replaying child only, e.g. '--cpu-prof --cpu-prof-dir=/tmp/p'.
        ...(process.env.REPLAY_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--replay-all',
        file,
        String(withAnalytics),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
    });
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`replay exited ${code}`))));
  });
  return JSON.parse(out.trim().split('\n').pop() as string) as Round;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};
const mb = (b: number) => fmt(b / 2 ** 20);
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export async function replayAllBench(dir: string): Promise<Record<string, string>[]> {
  const file = join(dir, 'replay-all.sqlite');
  if (process.env.REPLAY_KEEP) console.log(`the log stays in ${file}`);
  const t0 = performance.now();
  const log = await writeReplayLog(file);
  console.log(
    `log: ${fmt(log.events)} events written in ${fmt((performance.now() - t0) / 1000, 1)} s; template restaurant: ${JSON.stringify(log.made)}`,
  );
  console.log(`event types: ${JSON.stringify(log.types)}`);
  const rows: Record<string, string>[] = [];
  const rounds: Record<'with' | 'without', Round[]> = { with: [], without: [] };
  // Alternate, so a slow minute on the shared machine hits both.
  // REPLAY_WITHOUT_ANALYTICS=0 skips the comparison rounds (half the time).
  const compare = process.env.REPLAY_WITHOUT_ANALYTICS !== '0';
  for (let r = 0; r < ROUNDS; r++) {
    rounds.with.push(await replayOnce(file, true));
    if (compare) rounds.without.push(await replayOnce(file, false));
    console.log(`round ${r + 1}: ${JSON.stringify(rounds.with.at(-1))}`);
  }
  for (const [label, rs] of [
    ['every projection, analytics included', rounds.with],
    ['every projection but analytics', rounds.without],
  ] as const) {
    if (rs.length === 0) continue;
    const rates = rs.map((x) => x.applied / x.seconds);
    rows.push({
      case: `replay ${fmt(log.events)} events: ${label}`,
      'events/s (median)': fmt(median(rates)),
      rounds: rates.map((x) => `${fmt(x / 1000)}k`).join(' '),
      'CPU s (median)': fmt(median(rs.map((x) => x.cpuSeconds)), 1),
      'CPU µs/event': fmt((median(rs.map((x) => x.cpuSeconds)) * 1e6) / log.events, 1),
      'main thread CPU µs/event': fmt((median(rs.map((x) => x.mainCpuSeconds)) * 1e6) / log.events, 1),
      'peak RSS MB (max)': `${mb(Math.max(...rs.map((x) => x.peak)))} (start ${mb(Math.max(...rs.map((x) => x.baseline)))})`,
      'analytics day docs': rs[0]?.analyticsDays ? fmt(rs[0].analyticsDays) : '',
    });
  }
  // audit verify over the same log (REPLAY_VERIFY_ROUNDS, default 1; 0 skips it).
  const verifyRounds: VerifyRound[] = [];
  for (let r = 0; r < Number(process.env.REPLAY_VERIFY_ROUNDS ?? 1); r++) {
    const out = await runChild(['--verify', file]);
    verifyRounds.push(JSON.parse(out.trim().split('\n').pop() as string) as VerifyRound);
    console.log(`verify round ${r + 1}: ${JSON.stringify(verifyRounds.at(-1))}`);
  }
  if (verifyRounds.length > 0) {
    const peak = `${mb(Math.max(...verifyRounds.map((x) => x.peak)))} (live + scratch)`;
    for (const [label, pick] of [
      ['audit verify: hash chain of every stream', (x: VerifyRound) => x.chain],
      ['audit verify: read models (replay into scratch + compare with live)', (x: VerifyRound) => x.models],
    ] as [string, (x: VerifyRound) => { seconds: number; cpuSeconds: number }][]) {
      const rs = verifyRounds.map(pick);
      const rates = rs.map((x) => log.events / x.seconds);
      const cpu = median(rs.map((x) => x.cpuSeconds));
      rows.push({
        case: `${label}, ${fmt(log.events)} events`,
        'events/s (median)': fmt(median(rates)),
        rounds: rates.map((x) => `${fmt(x / 1000)}k`).join(' '),
        'CPU s (median)': fmt(cpu, 1),
        'CPU µs/event': fmt((cpu * 1e6) / log.events, 1),
        'main thread CPU µs/event': '',
        'peak RSS MB (max)': peak,
        'analytics day docs': '',
      });
    }
    const bad = verifyRounds.find((x) => x.chain.findings !== 0 || x.models.differences !== 0);
    if (bad) throw new Error(`audit verify reported problems on the bench log: ${JSON.stringify(bad)}`);
  }
  return rows;
}

if (process.argv[2] === '--verify') {
  await verifyChild(process.argv[3] as string);
} else if (process.argv[2] === '--replay-all') {
  await replayChild(process.argv[3] as string, process.argv[4] === 'true', process.argv[5]);
} else if (process.argv[2] === '--per-projection') {
  // Where the time goes: the log at process.argv[3] replayed into each projection alone.
  for (const p of allProjections()) {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          fileURLToPath(import.meta.url),
          '--replay-all',
          process.argv[3] as string,
          'true',
          p.name,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let text = '';
      child.stdout.on('data', (d) => {
        text += d;
      });
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`replay exited ${code}`))));
    });
    const r = JSON.parse(out.trim()) as Round;
    console.log(
      `${p.name.padEnd(18)} CPU ${fmt(r.cpuSeconds, 2)} s, ${fmt((r.cpuSeconds * 1e6) / r.applied, 1)} µs/event, peak RSS ${fmt(r.peak / 2 ** 20)} MB`,
    );
  }
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-replay-all-'));
  try {
    console.table(await replayAllBench(dir));
  } finally {
    if (!process.env.REPLAY_KEEP) rmSync(dir, { recursive: true, force: true });
  }
}
