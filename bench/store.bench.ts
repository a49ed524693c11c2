// `npm run bench:store`: the embedded event store (SQLite through the EventStore port) against the
// same work done directly with better-sqlite3, then a log replay into a projection.
//   appends   durable (synchronous=FULL) single-event and 10-event appends/s, port vs raw; the same
//             with synchronous=NORMAL, where no fsync hides the port's CPU overhead
//   reads     readAll and subscription catch-up events/s, port vs raw paged SELECT (.raw() rows) + JSON.parse
//   replay    replayBench(): 1,000,000 small events replayed from SQLite into a projection on the
//             embedded document store (events/s, peak RSS), in a fresh child process per round so
//             RSS is its own; CPU seconds are shown too, since on a shared machine the wall clock
//             also measures the neighbours
// Figures are medians of alternating rounds; disks and shared machines are noisy.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { EmbeddedDocumentStore } from '../src/adapters/document-store/embedded';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite';
import { uuidv7 } from '../src/adapters/event-store/validate';
import { ANY, type NewEvent, NO_STREAM } from '../src/ports/event-store';
import { applyOnce } from '../src/projection/idempotent';
import type { Projection } from '../src/projection/projection';
import { ProjectionRunner } from '../src/projection/runner';
import { replayAllBench } from './replay-all.bench';

type Sync = 'FULL' | 'NORMAL';
type Row = Record<string, string | number>;

const STREAMS = 100;
const ROUNDS = 3;
const fmt = (n: number, digits = 0) => Number(n.toFixed(digits));

/** A reservation-sized event, as a command handler would append it. */
function bookingEvent(i: number): NewEvent {
  return {
    type: 'ReservationBooked',
    data: {
      reservation_id: `res_${i}`,
      shift_id: 'shift_dinner',
      start_at: '2026-06-01T19:30:00.000Z',
      party_size: 2 + (i % 6),
      table_ids: ['tbl_1'],
      customer: { first_name: 'Ada', last_name: 'Lovelace', phone: '+33612345678' },
    },
    metadata: { restaurant_id: 'rest_bench', actor: 'key_bench', request_id: `req_${i}` },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Runs `op` repeatedly for `ms` and answers operations per second. */
async function rate(ms: number, op: (i: number) => unknown): Promise<number> {
  const start = performance.now();
  let i = 0;
  while (performance.now() - start < ms) await op(i++);
  return i / ((performance.now() - start) / 1000);
}

async function portAppender(file: string, sync: Sync, batch: number) {
  // One transaction per append, like the raw appender it is compared with (group commit has its own row).
  const store = SqliteEventStore.open(file, { synchronous: sync, groupCommit: false });
  const revisions = new Array<number>(STREAMS).fill(-1);
  return {
    op: async (i: number) => {
      const s = i % STREAMS;
      const events = Array.from({ length: batch }, (_, k) => bookingEvent(i * batch + k));
      const r = await store.append(`bench-${s}`, events, revisions[s] === -1 ? NO_STREAM : revisions[s]!);
      revisions[s] = r.nextRevision;
    },
    close: () => store.close(),
  };
}

/**
 * The baseline: what any writer of this table pays without the port. The same schema and pragmas,
 * one IMMEDIATE transaction per append, ids (the same time-ordered kind), timestamps and JSON
 * included; no validation, no expected-revision check, no promise.
 */
async function rawAppender(file: string, sync: Sync, batch: number) {
  // Borrow the port's schema, then write with a connection of our own.
  await SqliteEventStore.open(file).close();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync}`);
  const insert = db.prepare(
    'INSERT INTO events (id, stream, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const revisions = new Array<number>(STREAMS).fill(-1);
  const tx = db.transaction((stream: string, first: number, events: NewEvent[]) => {
    const created = new Date().toISOString();
    events.forEach((e, k) => {
      insert.run(
        uuidv7(),
        stream,
        first + k,
        e.type,
        JSON.stringify(e.data),
        JSON.stringify(e.metadata),
        created,
      );
    });
  }).immediate;
  return {
    op: (i: number) => {
      const s = i % STREAMS;
      const events = Array.from({ length: batch }, (_, k) => bookingEvent(i * batch + k));
      tx(`bench-${s}`, revisions[s]! + 1, events);
      revisions[s]! += batch;
    },
    close: async () => db.close(),
  };
}

async function appendRows(dir: string): Promise<Row[]> {
  const rows: Row[] = [];
  let n = 0;
  for (const [sync, ms] of [
    ['FULL', 2000],
    ['NORMAL', 1000],
  ] as const) {
    for (const batch of [1, 10]) {
      const port: number[] = [];
      const raw: number[] = [];
      // Alternating rounds on fresh files, so drift (disk cache, CPU boost) hits both sides alike.
      for (let round = 0; round < ROUNDS; round++) {
        for (const [make, into] of [
          [rawAppender, raw],
          [portAppender, port],
        ] as const) {
          const appender = await make(join(dir, `append-${n++}.sqlite`), sync, batch);
          into.push(await rate(ms, appender.op));
          await appender.close();
        }
      }
      const [p, r] = [median(port), median(raw)];
      const what = `${batch === 1 ? 'single-event' : `${batch}-event batch`} appends, synchronous=${sync}`;
      rows.push({
        case: `${what}: port`,
        'appends/s': fmt(p),
        'events/s': fmt(p * batch),
        'port/raw cost': fmt(r / p, 2),
      });
      rows.push({
        case: `${what}: raw better-sqlite3`,
        'appends/s': fmt(r),
        'events/s': fmt(r * batch),
        'port/raw cost': '',
      });
    }
  }
  // Concurrent callers (as under HTTP load): group commit writes what arrives in one event-loop
  // turn in one transaction, one fsync; without it, every append pays its own.
  const callers = 32;
  for (const sync of ['FULL', 'NORMAL'] as const) {
    const grouped: number[] = [];
    const single: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [groupCommit, into] of [
        [false, single],
        [true, grouped],
      ] as const) {
        const store = SqliteEventStore.open(join(dir, `append-${n++}.sqlite`), {
          synchronous: sync,
          groupCommit,
        });
        let i = 0;
        const end = performance.now() + 2000;
        const start = performance.now();
        await Promise.all(
          Array.from({ length: callers }, async (_, c) => {
            // Each caller owns its streams, so no append conflicts with another.
            const revisions = new Map<string, number>();
            while (performance.now() < end) {
              const stream = `bench-${c}-${i % 3}`;
              const r = await store.append(stream, [bookingEvent(i++)], revisions.get(stream) ?? NO_STREAM);
              revisions.set(stream, r.nextRevision);
            }
          }),
        );
        into.push(i / ((performance.now() - start) / 1000));
        await store.close();
      }
    }
    const [g, o] = [median(grouped), median(single)];
    const what = `single-event appends, ${callers} concurrent callers, synchronous=${sync}`;
    rows.push({
      case: `${what}: port, group commit`,
      'appends/s': fmt(g),
      'events/s': fmt(g),
      'port/raw cost': '',
    });
    rows.push({
      case: `${what}: port, groupCommit: false`,
      'appends/s': fmt(o),
      'events/s': fmt(o),
      'port/raw cost': '',
    });
  }
  return rows;
}

async function readRows(dir: string): Promise<Row[]> {
  const file = join(dir, 'read.sqlite');
  const store = SqliteEventStore.open(file, { synchronous: 'NORMAL' });
  const total = 200_000;
  for (let i = 0; i < total / 500; i++)
    await store.append(
      `read-${i % STREAMS}`,
      Array.from({ length: 500 }, (_, k) => bookingEvent(i * 500 + k)),
      ANY,
    );

  const db = new Database(file, { readonly: true });
  // Rows as arrays (.raw()), the cheapest way better-sqlite3 hands them over, as the port reads them.
  const page = db
    .prepare<[number, number], [number, string, string, number, string, string, string, string]>(
      'SELECT position, id, stream, revision, type, data, metadata, created FROM events WHERE position > ? ORDER BY position LIMIT ?',
    )
    .raw();
  const timed = async (fn: () => Promise<number>) => {
    const start = performance.now();
    const count = await fn();
    if (count !== total) throw new Error(`read ${count} events, expected ${total}`);
    return total / ((performance.now() - start) / 1000);
  };
  const port: number[] = [];
  const raw: number[] = [];
  const sub: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    raw.push(
      await timed(async () => {
        let count = 0;
        let after = 0;
        for (;;) {
          const rows = page.all(after, 1000);
          for (const row of rows) {
            JSON.parse(row[5]);
            JSON.parse(row[6]);
            count++;
          }
          if (rows.length < 1000) return count;
          after = rows[rows.length - 1]![0];
        }
      }),
    );
    port.push(
      await timed(async () => {
        let count = 0;
        for await (const _ of store.readAll({ batchSize: 1000 })) count++;
        return count;
      }),
    );
    sub.push(
      await timed(async () => {
        const subscription = store.subscribe();
        let count = 0;
        for await (const _ of subscription) if (++count === total) break;
        return count;
      }),
    );
  }
  db.close();
  await store.close();
  const r = median(raw);
  return [
    {
      case: 'readAll (batchSize 1000): port',
      'events/s': fmt(median(port)),
      'port/raw cost': fmt(r / median(port), 2),
    },
    {
      case: 'subscription catch-up: port',
      'events/s': fmt(median(sub)),
      'port/raw cost': fmt(r / median(sub), 2),
    },
    { case: 'paged SELECT + JSON.parse: raw', 'events/s': fmt(r), 'port/raw cost': '' },
  ];
}

// ---- replay: 1,000,000 small events into a projection on the embedded document store ----------

const REPLAY_EVENTS = 1_000_000;
const RESTAURANTS = 1000;
const DAYS = 30;

/** Covers booked per restaurant and day: 30,000 documents, each event an idempotent $inc. */
const coversByDay: Projection = {
  name: 'bench_covers_by_day',
  eventTypes: ['CoversBooked'],
  async apply(event, docs) {
    const { restaurant_id, day, covers } = event.data as {
      restaurant_id: string;
      day: string;
      covers: number;
    };
    await applyOnce(
      docs.collection('bench_covers_by_day'),
      `${restaurant_id}:${day}`,
      event.position,
      { $inc: { covers, bookings: 1 }, $set: { restaurant_id, day } },
      { upsert: true },
    );
  },
};

async function writeReplayLog(file: string): Promise<void> {
  const store = SqliteEventStore.open(file, { synchronous: 'NORMAL' });
  const batch = 100;
  for (let a = 0; a < REPLAY_EVENTS / batch; a++) {
    const restaurant = `rest_${a % RESTAURANTS}`;
    const events = Array.from({ length: batch }, (_, k) => ({
      type: 'CoversBooked',
      data: {
        restaurant_id: restaurant,
        day: `2026-06-${String(1 + ((a + k) % DAYS)).padStart(2, '0')}`,
        covers: 1 + (k % 8),
      },
      metadata: { restaurant_id: restaurant },
    }));
    await store.append(`capacity-${restaurant}`, events, ANY);
  }
  await store.close();
}

/** Child side: replays the log and prints one JSON line. */
async function replayChild(file: string): Promise<void> {
  const baseline = process.memoryUsage().rss;
  const events = SqliteEventStore.open(file);
  const docs = new EmbeddedDocumentStore();
  const runner = new ProjectionRunner(events, docs, [coversByDay], { batchSize: 1000 });
  await runner.start();
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const applied = await runner.catchUp();
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const documents = await docs.collection('bench_covers_by_day').count();
  const peakKb = process.resourceUsage().maxRSS;
  await events.close();
  process.stdout.write(
    `${JSON.stringify({
      applied,
      seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      documents,
      baseline,
      peak: peakKb * 1024,
    })}\n`,
  );
}

interface ReplayRound {
  applied: number;
  seconds: number;
  cpuSeconds: number;
  documents: number;
  baseline: number;
  peak: number;
}

/** One replay of the log in a fresh process: what a start of the embedded deployment does. */
async function replayOnce(file: string): Promise<ReplayRound> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--replay', file],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
    });
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`replay exited ${code}`))));
  });
  const r = JSON.parse(out.trim().split('\n').pop()!) as ReplayRound;
  if (r.applied !== REPLAY_EVENTS || r.documents !== RESTAURANTS * DAYS)
    throw new Error(`replay applied ${r.applied} events into ${r.documents} documents`);
  return r;
}

/** The replay measurement: builds the log here, replays it ROUNDS times, each in a fresh process. */
export async function replayBench(dir: string): Promise<Row[]> {
  const file = join(dir, 'replay.sqlite');
  const writeStart = performance.now();
  await writeReplayLog(file);
  const written = REPLAY_EVENTS / ((performance.now() - writeStart) / 1000);
  const rounds: ReplayRound[] = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push(await replayOnce(file));
  const rates = rounds.map((r) => r.applied / r.seconds);
  const mb = (bytes: number) => fmt(bytes / 2 ** 20);
  const peak = Math.max(...rounds.map((r) => r.peak));
  const baseline = Math.max(...rounds.map((r) => r.baseline));
  return [
    {
      case: 'write the replay log (100-event appends, NORMAL)',
      'events/s': fmt(written),
      rounds: '',
      'CPU s': '',
      'peak RSS MB': '',
    },
    {
      case: `replay ${REPLAY_EVENTS.toLocaleString('en')} events → ${rounds[0]!.documents} documents`,
      'events/s': fmt(median(rates)),
      rounds: rates.map((r) => `${fmt(r / 1000)}k`).join(' '),
      'CPU s': fmt(median(rounds.map((r) => r.cpuSeconds)), 2),
      'peak RSS MB': `${mb(peak)} (process start: ${mb(baseline)})`,
    },
  ];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-store-bench-'));
  const version = (new Database(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  console.log(`node ${process.version}, SQLite ${version}, ${availableParallelism()} CPUs, data in ${dir}`);
  const started = performance.now();
  try {
    console.log('\nAppends: median of 3 alternating rounds, 100 streams, expected revision on every append');
    console.table(await appendRows(dir));
    console.log('\nReads: 200,000 events, median of 3 rounds');
    console.table(await readRows(dir));
    console.log(
      '\nReplay into a projection (embedded document store, applyOnce upserts with $inc): median of 3 rounds, max peak RSS; CPU s counts every thread of the replay process',
    );
    console.table(await replayBench(dir));
    console.log(
      '\nReplay of real events (handler-made, copied to 1,000,000) into every projection, analytics included (bench/replay-all.bench.ts)',
    );
    console.table(await replayAllBench(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\ntotal ${fmt((performance.now() - started) / 1000, 1)} s`);
}

if (process.argv[2] === '--replay') await replayChild(process.argv[3]!);
else if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
