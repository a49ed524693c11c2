// Sustained POST /reservations on distinct slots (so creates do not refuse each other: 60 tables, 26
// creates per service day, a fresh day every 26 requests) with durable commits (SQLite FULL: an fsync
// per append), then GET /reservations pages over what was created. Goals (issue 6): ≥ 300 creates/s,
// p99 ≤ 50 ms. Run alone: npx tsx bench/reservations.bench.ts
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { parisOffset } from './fill';
import { fmt, type LoadResult, load, median, serve, table, writeJson } from './harness';

const TOKEN = 'couvert_pk_bench_res_000000000000000000000001';
const TABLES = 60;
const PER_DAY = 26;
const SLOTS = [
  '19:00',
  '19:15',
  '19:30',
  '19:45',
  '20:00',
  '20:15',
  '20:30',
  '20:45',
  '21:00',
  '21:15',
  '21:30',
  '21:45',
  '22:00',
];
/** Far enough ahead for the real clock; one day per PER_DAY creates. */
const FIRST_DAY = Date.UTC(2031, 0, 1);

export function benchBootstrap() {
  return {
    restaurants: [
      {
        id: 'rest_bench',
        name: 'Bench',
        slug: 'bench',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
        rooms: [{ id: 'room_main', name: 'Main' }],
        tables: Array.from({ length: TABLES }, (_, i) => ({
          id: `tbl_${i}`,
          name: String(i),
          room_id: 'room_main',
          min_pax: 1,
          max_pax: 4,
        })),
        shifts: [
          {
            id: 'shift_dinner',
            name: 'Dinner',
            start_time: '19:00',
            end_time: '22:00',
            days_of_week: [1, 2, 3, 4, 5, 6, 7],
            slot_interval_minutes: 15,
            duration_minutes: 90,
            max_covers: null,
            requires_room_selection: false,
            requires_approval: false,
            deposit: null,
          },
        ],
        api_keys: [
          {
            id: 'key_bench',
            name: 'bench',
            token: TOKEN,
            scopes: ['RESERVATIONS_READ', 'RESERVATIONS_WRITE', 'RESERVATIONS_CANCEL', 'CUSTOMERS_READ'],
          },
        ],
      },
    ],
  };
}

/** The n-th create of the whole run: its own day and slot, and its own external_id. */
export function createBody(n: number): string {
  const day = new Date(FIRST_DAY + Math.floor(n / PER_DAY) * 86_400_000).toISOString().slice(0, 10);
  const slot = SLOTS[n % SLOTS.length] as string;
  const offset = parisOffset(day);
  return JSON.stringify({
    party_size: 2,
    start_at: `${day}T${slot}:00${offset}`,
    external_id: `bench-${n}`,
    custom_message: 'benchmark',
  });
}

/** How long one durable append takes on this disk right now: a create makes three. */
async function appendLatencyMs(dir: string, name: string): Promise<number> {
  const { SqliteEventStore } = await import('../src/adapters/event-store/sqlite');
  // One append, one transaction, one fsync: what the disk costs, without group commit's turn wait.
  const store = SqliteEventStore.open(`${dir}/probe-${name}.sqlite`, { groupCommit: false });
  const started = performance.now();
  for (let i = 0; i < 200; i++)
    await store.append(`probe-${i}`, [{ type: 'Probe', data: { i } }], 'no_stream');
  const ms = (performance.now() - started) / 200;
  await store.close();
  return ms;
}

export async function reservationsBench(): Promise<void> {
  const dir = (await import('node:fs')).mkdtempSync(
    `${(await import('node:os')).tmpdir()}/couvert-bench-res-`,
  );
  const file = writeJson(dir, 'bootstrap.json', benchBootstrap());
  const api = await serve({
    DATA_DIR: dir,
    BOOTSTRAP_FILE: file,
    RATE_LIMIT_PER_MINUTE: '10000000',
    // The bench measures the API, not the cron jobs.
    ROLES: 'api,projector',
  });
  let counter = 0;
  let failed = 0;
  const creates = (label: string, options: Partial<autocannon.Options> = {}): Promise<LoadResult> =>
    load(label, {
      url: `${api.url}/api/partner/v1/reservations`,
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (req) => ({ ...req, body: createBody(counter++) }),
          onResponse: (status) => {
            if (status !== 201) failed++;
          },
        },
      ],
      ...options,
    } as autocannon.Options);
  try {
    const before = await appendLatencyMs(dir, 'before');
    await creates('warm', { duration: 3 });
    const sustained = await median(3, () => creates('POST /reservations'));
    const paced = await median(3, () =>
      // No coordinated-omission correction: autocannon's assumes 1 ms between a connection's requests.
      creates('POST /reservations @300/s', {
        overallRate: 300,
        connections: 10,
        ignoreCoordinatedOmission: true,
      }),
    );
    const pages = (label: string, query: (n: number) => string): Promise<LoadResult> => {
      let n = 0;
      return load(label, {
        url: `${api.url}/api/partner/v1/reservations`,
        headers: { authorization: `Bearer ${TOKEN}` },
        requests: [
          { setupRequest: (req) => ({ ...req, path: `/api/partner/v1/reservations?${query(n++)}` }) },
        ],
      } as autocannon.Options);
    };
    const total = counter;
    const list = await median(3, () =>
      pages('GET /reservations (25 a page)', (n) => `page=${1 + (n % Math.floor(total / 25))}&per_page=25`),
    );
    const days = Math.floor(total / PER_DAY);
    const oneDay = await median(3, () =>
      pages('GET /reservations, one day', (n) => {
        const day = new Date(FIRST_DAY + (n % days) * 86_400_000).toISOString().slice(0, 10);
        return `start_at_from=${day}T00:00:00Z&start_at_to=${day}T23:59:59Z`;
      }),
    );
    const byExternal = await median(3, () =>
      pages('GET /reservations?external_id=', (n) => `external_id=bench-${(n * 7919) % total}`),
    );
    table(
      `Reservations (${TABLES} tables, ${PER_DAY} creates a day, durable appends; 10 connections, 8 s, median of 3)`,
      [
        ...[sustained, paced, list, oneDay, byExternal].map((r) => ({
          case: r.label,
          'req/s': fmt(r.rps, 0),
          'p50 ms': r.p50,
          'p99 ms': r.p99,
          errors: r.errors + r.non2xx,
        })),
      ],
    );
    const after = await appendLatencyMs(dir, 'after');
    console.log(
      `one durable append (fsync) on this disk: ${fmt(before, 2)} ms before the run, ${fmt(after, 2)} ms after; a create makes 3 (capacity hold, external_id claim, ReservationCreated)`,
    );
    console.log(
      `creates: ${fmt(sustained.rps, 0)}/s sustained (goal ≥ 300), p99 ${paced.p99} ms at 300/s (goal ≤ 50 ms); ${total} reservations created, ${failed} not 201`,
    );
  } finally {
    await api.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await reservationsBench();
