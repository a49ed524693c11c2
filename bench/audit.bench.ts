// `npm run bench:audit` (issue 16): the auditors' tools over a log of 1,000,000 events, and what the
// hash chain and the sealing of personal data cost per append.
//   export     audit export of 1,000,000 events of one restaurant to a file: first the user's command
//              itself (`npm run cli -- audit export --restaurant R --out file`, a child process on the
//              log as its data directory, progress bar on: the goal's figure is the export phase as
//              the CLI reports it, with the whole process beside it), then in this process the
//              SQLite fast path (pages built inside SQLite) and the generic path (through the port, as
//              on EventStoreDB). `npm run bench:audit -- export` runs only these (and the log they
//              need); AUDIT_BENCH_EVENTS / AUDIT_BENCH_ROUNDS shrink it.
//   verify     the hash chain check over the same log; and the read-model phase (replay into scratch
//              read models + comparison) with the service's projections
//   chain      durable appends/s through the port with the chain, and, when AUDIT_BENCH_BASE names a
//              checkout of the code before the chain (git archive of that commit), the same appends
//              through that checkout's port, alternating rounds; plus the hash's own CPU per event
//   sealing    CPU of sealing a CustomerCreated (cached key), and of creating a key (durable)
// Figures are medians of ROUNDS rounds; the machine may be shared: CPU seconds are shown too.
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideCreate, initialRestaurant } from '../commands/restaurants/decide';
import { type RestaurantProfile, restaurantStream } from '../commands/restaurants/events';
import { allProjections } from '../projections/index';
import { EmbeddedDocumentStore } from '../src/adapters/document-store/embedded';
import { chainHash, GENESIS } from '../src/adapters/event-store/chain';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite';
import { prepareAppend } from '../src/adapters/event-store/validate';
import { MemoryKeyStore } from '../src/adapters/key-store/memory';
import { SqliteKeyStore } from '../src/adapters/key-store/sqlite';
import { ChainVerifier } from '../src/audit/chain-verifier';
import { exportEvents } from '../src/audit/export';
import { compareReadModels, replayInto } from '../src/audit/replay';
import { ANY, type EventStore, type NewEvent, NO_STREAM } from '../src/ports/event-store';
import { SealingEventStore } from '../src/privacy/sealing-event-store';
import { fmt, repo, table } from './harness';

const EVENTS = Number(process.env.AUDIT_BENCH_EVENTS ?? 1_000_000);
/** What the log holds: the restaurant's creation, then LOGGED reservation events. */
const LOGGED = EVENTS + 1;
const ROUNDS = Number(process.env.AUDIT_BENCH_ROUNDS ?? 3);
const RESTAURANT = 'rest_bench';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** A reservation-sized event as a handler appends it (about 600 bytes of JSON). */
function reservationEvent(i: number): NewEvent {
  return {
    type: 'ReservationUpdated',
    data: {
      reservation_id: `res_${i % 50_000}`,
      restaurant_id: RESTAURANT,
      at: '2026-06-01T10:00:00.000Z',
      changes: {
        party_size: 2 + (i % 6),
        table_ids: ['tbl_1', 'tbl_2'],
        start_at: '2026-06-01T19:30:00+02:00',
      },
      previous: { party_size: 2, table_ids: ['tbl_1'], start_at: '2026-06-01T19:00:00+02:00' },
      actor_kind: 'PARTNER',
    },
    metadata: { restaurant_id: RESTAURANT, actor: 'credential:key_bench', request_id: `req_${i}` },
  };
}

const BENCH_PROFILE: RestaurantProfile = {
  name: 'Bench',
  slug: 'bench',
  country_code: 'FR',
  timezone: 'Europe/Paris',
  currency: 'EUR',
  api_option: true,
  customer_matching: true,
  features: [],
};

async function writeLog(file: string): Promise<number> {
  const store = SqliteEventStore.open(file, { synchronous: 'NORMAL' });
  const started = performance.now();
  // The restaurant itself, as `restaurants create` writes it: the export refuses a restaurant the log
  // has never heard of (requireKnownRestaurant), and the CLI's start projects it like any other.
  await store.append(
    restaurantStream(RESTAURANT),
    decideCreate(initialRestaurant, RESTAURANT, BENCH_PROFILE, '2026-06-01T09:00:00.000Z'),
    NO_STREAM,
  );
  const batch = 100;
  for (let a = 0; a < EVENTS / batch; a++)
    await store.append(
      `reservation-res_${a % 10_000}`,
      Array.from({ length: batch }, (_, k) => reservationEvent(a * batch + k)),
      ANY,
    );
  await store.close();
  return EVENTS / ((performance.now() - started) / 1000);
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; cpu: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const cpu = process.cpuUsage(cpu0);
  return { value, seconds: (performance.now() - t0) / 1000, cpu: (cpu.user + cpu.system) / 1e6 };
}

/**
 * One run of the user's command in a child process: `node --import tsx src/cli/main.ts` is what
 * `npm run cli` runs (tsx), without npm's own start. Answers the export phase as the CLI reports it
 * (wall seconds and CPU per event, process.cpuUsage around the export) and the whole process (wall,
 * and its user+system CPU from /usr/bin/time when there is one).
 */
function cliRound(dataDir: string, out: string) {
  const args = [
    process.execPath,
    '--import',
    'tsx',
    'src/cli/main.ts',
    'audit',
    'export',
    '--restaurant',
    RESTAURANT,
    '--out',
    out,
  ];
  const timer = existsSync('/usr/bin/time') ? ['/usr/bin/time', '-f', 'process-cpu %U %S'] : [];
  const command = [...timer, ...args];
  const t0 = performance.now();
  const r = spawnSync(command[0] as string, command.slice(1), {
    cwd: repo,
    env: { ...process.env, DATA_DIR: dataDir, STORE: 'embedded', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const wall = (performance.now() - t0) / 1000;
  const summary =
    /exported (\d+) event\(s\) of \S+ in [\d.]+ s, (\d+) events\/s, ([\d.]+) µs CPU per event/.exec(r.stderr);
  if (r.status !== 0 || summary === null) throw new Error(`the CLI failed (status ${r.status}): ${r.stderr}`);
  if (Number(summary[1]) !== LOGGED)
    throw new Error(`the CLI exported ${summary[1]} events, expected ${LOGGED}`);
  const cpu = /process-cpu ([\d.]+) ([\d.]+)/.exec(r.stderr);
  return {
    export: { seconds: LOGGED / Number(summary[2]), cpu: (Number(summary[3]) * LOGGED) / 1e6 },
    process: { seconds: wall, cpu: cpu === null ? Number.NaN : Number(cpu[1]) + Number(cpu[2]) },
  };
}

async function exportRound(store: EventStore, out: string, generic: boolean) {
  const stream = createWriteStream(out, { highWaterMark: 16 << 20 });
  const r = await timed(() =>
    exportEvents(
      store,
      { restaurantId: RESTAURANT, from: null, to: null },
      async (chunk) => {
        if (!stream.write(chunk)) await once(stream, 'drain');
      },
      undefined,
      { forceGeneric: generic },
    ),
  );
  await new Promise((resolve) => stream.end(resolve));
  if (r.value !== LOGGED) throw new Error(`exported ${r.value} events, expected ${LOGGED}`);
  return r;
}

async function auditRows(dir: string, exportOnly = false): Promise<Record<string, string | number>[]> {
  // The name the service gives its log, so the CLI run on `dir` as DATA_DIR exports it.
  const file = join(dir, 'events.sqlite');
  const writeRate = await writeLog(file);
  const rows: Record<string, string | number>[] = [
    {
      case: `write the log (${LOGGED.toLocaleString('en')} events, 100-event appends, NORMAL)`,
      'events/s': fmt(writeRate, 0),
      'CPU s': '',
      'CPU µs/event': '',
      rounds: '',
    },
  ];
  const store = SqliteEventStore.open(file);
  try {
    const row = (label: string, rs: { seconds: number; cpu: number }[]) => {
      const rates = rs.map((r) => LOGGED / r.seconds);
      rows.push({
        case: label,
        'events/s': fmt(median(rates), 0),
        'CPU s': fmt(median(rs.map((r) => r.cpu)), 2),
        'CPU µs/event': fmt((median(rs.map((r) => r.cpu)) * 1e6) / LOGGED, 2),
        rounds: rates.map((r) => `${fmt(r / 1000, 0)}k`).join(' '),
      });
    };
    const cliExport: { seconds: number; cpu: number }[] = [];
    const cliProcess: { seconds: number; cpu: number }[] = [];
    const fast: { seconds: number; cpu: number }[] = [];
    const generic: { seconds: number; cpu: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const cli = cliRound(dir, join(dir, `cli-${i}.ndjson`));
      rmSync(join(dir, `cli-${i}.ndjson`));
      cliExport.push(cli.export);
      cliProcess.push(cli.process);
      fast.push(await exportRound(store, join(dir, `fast-${i}.ndjson`), false));
      rmSync(join(dir, `fast-${i}.ndjson`));
      generic.push(await exportRound(store, join(dir, `generic-${i}.ndjson`), true));
      rmSync(join(dir, `generic-${i}.ndjson`));
    }
    row(
      'npm run cli -- audit export --out file: the export, as the CLI reports it (goal ≥ 200,000/s)',
      cliExport,
    );
    row('  the same command, whole process (node + tsx start, runtime, export, exit)', cliProcess);
    row('exportEvents → file in this process, SQLite fast path', fast);
    row('audit export → file, generic path (readAll + JSON.stringify)', generic);
    if (exportOnly) return rows;
    const chain: { seconds: number; cpu: number }[] = [];
    for (let i = 0; i < ROUNDS; i++)
      chain.push(
        await timed(async () => {
          const v = new ChainVerifier(true);
          for await (const e of store.readAll({ batchSize: 5000 })) v.add(e);
          const s = v.finish();
          if (s.findings.length || s.chained !== LOGGED) throw new Error('the bench log does not verify');
        }),
      );
    row('audit verify: hash chain of every stream', chain);
    const models: { seconds: number; cpu: number }[] = [];
    for (let i = 0; i < ROUNDS; i++)
      models.push(
        await timed(async () => {
          const scratch = new EmbeddedDocumentStore();
          const live = new EmbeddedDocumentStore();
          await replayInto(store, scratch, allProjections(), null);
          await compareReadModels(scratch, live, scratch.collectionNames());
          await scratch.close();
          await live.close();
        }),
      );
    row("audit verify: read-model phase (replay through the service's projections + compare)", models);
  } finally {
    await store.close();
  }
  return rows;
}

/** Appends/s of `SqliteEventStore` from a module path (this tree, or a checkout before the chain). */
async function appendRate(
  modulePath: string,
  file: string,
  sync: 'FULL' | 'NORMAL',
  ms: number,
): Promise<number> {
  const { SqliteEventStore: Store } = (await import(modulePath)) as {
    SqliteEventStore: typeof SqliteEventStore;
  };
  const store = Store.open(file, { synchronous: sync, groupCommit: false });
  const revisions = new Array<number>(100).fill(-1);
  const t0 = performance.now();
  let i = 0;
  while (performance.now() - t0 < ms) {
    const s = i % 100;
    const r = await store.append(
      `bench-${s}`,
      [reservationEvent(i)],
      revisions[s] === -1 ? NO_STREAM : revisions[s]!,
    );
    revisions[s] = r.nextRevision;
    i++;
  }
  const rate = i / ((performance.now() - t0) / 1000);
  await store.close();
  return rate;
}

async function chainRows(dir: string): Promise<Record<string, string | number>[]> {
  const rows: Record<string, string | number>[] = [];
  // The hash alone, on the prepared event a store hashes.
  const prepared = prepareAppend('reservation-res_1', [reservationEvent(1)], ANY).events[0]!;
  const n = 200_000;
  let prev = GENESIS;
  const t0 = performance.now();
  for (let i = 0; i < n; i++)
    prev = chainHash(prev, { ...prepared, stream: 'reservation-res_1', revision: i });
  const hashUs = ((performance.now() - t0) * 1000) / n;
  rows.push({
    case: 'chain hash of one reservation-sized event (CPU)',
    value: `${fmt(hashUs, 2)} µs`,
    ratio: '',
  });
  const here = new URL('../src/adapters/event-store/sqlite.ts', import.meta.url).pathname;
  const base = process.env.AUDIT_BENCH_BASE;
  let k = 0;
  for (const [sync, ms] of [
    ['FULL', 3000],
    ['NORMAL', 1500],
  ] as const) {
    const now: number[] = [];
    const before: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      if (base)
        before.push(
          await appendRate(
            join(base, 'src/adapters/event-store/sqlite.ts'),
            join(dir, `a-${k++}.sqlite`),
            sync,
            ms,
          ),
        );
      now.push(await appendRate(here, join(dir, `a-${k++}.sqlite`), sync, ms));
    }
    const perAppendUs = 1e6 / median(now);
    rows.push({
      case: `single-event appends, synchronous=${sync}, with the chain`,
      value: `${fmt(median(now), 0)}/s (${now.map((x) => fmt(x, 0)).join(', ')})`,
      ratio: `hash = ${fmt((100 * hashUs) / perAppendUs, 2)}% of an append`,
    });
    if (base)
      rows.push({
        case: `single-event appends, synchronous=${sync}, code before the chain`,
        value: `${fmt(median(before), 0)}/s (${before.map((x) => fmt(x, 0)).join(', ')})`,
        ratio: `with/before cost ${fmt(median(before) / median(now), 3)}`,
      });
  }
  return rows;
}

async function sealingRows(dir: string): Promise<Record<string, string | number>[]> {
  const created = (i: number): NewEvent => ({
    type: 'CustomerCreated',
    data: {
      customer_id: `cus_${i}`,
      restaurant_id: RESTAURANT,
      at: '2026-06-01T10:00:00.000Z',
      profile: {
        name: 'Ada Lovelace',
        email: 'ada@example.test',
        phone_number: '+33612345678',
        country_code: 'FR',
        lang: 'EN',
        tags: ['vip'],
        note: 'window table',
        custom_fields: { cf_vip: { name: 'VIP level', value: 'gold' } },
        newsletter_consent: true,
        external_id: 'crm-1',
      },
      draft: false,
      origin: 'API',
    },
  });
  const sealing = new SealingEventStore(
    SqliteEventStore.open(join(dir, 'seal.sqlite')),
    new MemoryKeyStore(),
  );
  await sealing.seal(created(0));
  const n = 50_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await sealing.seal(created(0));
  const sealUs = ((performance.now() - t0) * 1000) / n;
  await sealing.close();
  const keys = SqliteKeyStore.open(join(dir, 'keys.sqlite'));
  const m = 300;
  const t1 = performance.now();
  for (let i = 0; i < m; i++) await keys.obtain(`customer:cus_${i}`);
  const keyMs = (performance.now() - t1) / m;
  await keys.close();
  return [
    { case: 'seal a CustomerCreated (key cached; AES-256-GCM)', value: `${fmt(sealUs, 2)} µs` },
    { case: "create a customer's key (SQLite, synchronous=FULL: one fsync)", value: `${fmt(keyMs, 2)} ms` },
  ];
}

const dir = mkdtempSync(join(tmpdir(), 'couvert-audit-bench-'));
console.log(`node ${process.version}, ${availableParallelism()} CPUs, data in ${dir}`);
try {
  const only = process.argv[2];
  if (!only || only === 'chain')
    table('Hash chain: cost per append (medians; alternating rounds)', await chainRows(dir));
  if (!only || only === 'sealing') table('Sealing personal data', await sealingRows(dir));
  if (only === 'export')
    table(
      `audit export of ${LOGGED.toLocaleString('en')} events (medians of ${ROUNDS}; the machine may be shared)`,
      await auditRows(dir, true),
    );
  if (!only || only === 'log')
    table(
      `Export and verify over ${LOGGED.toLocaleString('en')} events (medians of ${ROUNDS})`,
      await auditRows(dir),
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
