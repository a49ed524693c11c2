// A store already full of reservations, for the benchmark of creates on a full store
// (full-store.bench.ts). The reservations are made in-process by the same command handler POST
// /reservations runs, so the log holds exactly the events the API writes (capacity hold, external_id
// claim, ReservationCreated); only HTTP is skipped, and the commits are NORMAL rather than FULL
// (the fill is set-up, not what is measured). The server is then started on that file normally and
// rebuilds its read models from the log.
//
// The restaurant: 200 tables, a lunch and a dinner shift of 30-minute seatings every 30 minutes
// (20 starts a day), so a day holds 4,000 reservations on distinct (start, table) places and a
// create never waits for a table another create holds.
import { join } from 'node:path';
import { createReservation } from '../commands/reservations/handler-create';
import { EmbeddedDocumentStore } from '../src/adapters/document-store/embedded';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite';
import { applyBootstrap } from '../src/bootstrap';
import { systemClock } from '../src/core/clock';
import { operatorMeta } from '../src/core/command-meta';
import { registerModules } from '../src/modules';

export const FILL_TOKEN = 'couvert_pk_bench_full_00000000000000000000001';
export const FILL_RESTAURANT = 'rest_full';
export const FILL_TABLES = 200;

const shift = (id: string, name: string, start: string, end: string) => ({
  id,
  name,
  start_time: start,
  end_time: end,
  days_of_week: [1, 2, 3, 4, 5, 6, 7],
  slot_interval_minutes: 30,
  duration_minutes: 30,
  max_covers: null,
  requires_room_selection: false,
  requires_approval: false,
  deposit: null,
});

/** Local starts of a day: 8 at lunch, 12 at dinner. */
export const FILL_STARTS = [
  ...['11:00', '11:30', '12:00', '12:30', '13:00', '13:30', '14:00', '14:30'],
  ...['18:00', '18:30', '19:00', '19:30', '20:00', '20:30', '21:00', '21:30', '22:00', '22:30', '23:00'],
  '23:30',
];
export const DAY_CAPACITY = FILL_STARTS.length * FILL_TABLES;

export function fillBootstrap() {
  return {
    restaurants: [
      {
        id: FILL_RESTAURANT,
        name: 'Full',
        slug: 'full',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
        rooms: [{ id: 'room_main', name: 'Main' }],
        tables: Array.from({ length: FILL_TABLES }, (_, i) => ({
          id: `tbl_${i}`,
          name: String(i),
          room_id: 'room_main',
          min_pax: 1,
          max_pax: 4,
        })),
        shifts: [
          shift('shift_lunch', 'Lunch', '11:00', '14:30'),
          shift('shift_dinner', 'Dinner', '18:00', '23:30'),
        ],
        api_keys: [
          {
            id: 'key_full',
            name: 'bench',
            token: FILL_TOKEN,
            scopes: ['RESERVATIONS_READ', 'RESERVATIONS_WRITE', 'RESERVATIONS_CANCEL', 'CUSTOMERS_READ'],
          },
        ],
      },
    ],
  };
}

const offsets = new Map<string, string>();
/** Paris is UTC+1 in winter and UTC+2 in summer; the offset must match the instant. */
export function parisOffset(day: string): string {
  let o = offsets.get(day);
  if (!o) {
    const summer = new Date(`${day}T12:00:00Z`)
      .toLocaleString('en-US', { timeZone: 'Europe/Paris', timeZoneName: 'short' })
      .includes('GMT+2');
    o = summer ? '+02:00' : '+01:00';
    offsets.set(day, o);
  }
  return o;
}

export const dayAfter = (first: string, n: number) =>
  new Date(Date.parse(`${first}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** The k-th reservation of a day: its starts fill evenly, a table each (the server picks which). */
export function fillCreate(day: string, k: number, externalId: string) {
  const start = FILL_STARTS[k % FILL_STARTS.length] as string;
  return {
    party_size: 2,
    start_at: `${day}T${start}:00${parisOffset(day)}`,
    external_id: externalId,
    custom_message: 'benchmark',
  };
}

export interface FillPlan {
  /** Days (YYYY-MM-DD, far in the future) and how many reservations each gets. */
  days: { day: string; count: number }[];
  /** Creates in flight at once (on different days; one day's creates queue behind each other anyway). */
  concurrency?: number;
  /** Called every `every` creates with CPU µs per create over the last `every`. */
  onProgress?: (done: number, cpuMicrosPerCreate: number, wallMs: number) => void;
  every?: number;
}

/**
 * Appends the plan's reservations to `<dataDir>/events.sqlite` through createReservation, days
 * interleaved (round robin), the k-th reservation of a day taking its k-th place. Returns how many
 * were made. External ids are `fill-<day>-<k>`.
 */
export async function fill(dataDir: string, plan: FillPlan): Promise<number> {
  registerModules();
  const events = SqliteEventStore.open(join(dataDir, 'events.sqlite'), { synchronous: 'NORMAL' });
  // No read models here: nothing to settle (inline customers, which match on them, would match nobody).
  const deps = { events, clock: systemClock, docs: new EmbeddedDocumentStore(), settle: async () => {} };
  await applyBootstrap(deps, fillBootstrap(), operatorMeta('bootstrap'));
  const restaurant = {
    _id: FILL_RESTAURANT,
    timezone: 'Europe/Paris',
    currency: 'EUR',
    country_code: 'FR',
    customer_matching: true,
  };
  const meta = { actor: 'credential:key_full', restaurant_id: FILL_RESTAURANT };
  const queue: { day: string; k: number }[] = [];
  const max = Math.max(...plan.days.map((d) => d.count));
  for (let k = 0; k < max; k++) for (const d of plan.days) if (k < d.count) queue.push({ day: d.day, k });
  let next = 0;
  let done = 0;
  const every = plan.every ?? 5000;
  let cpu = process.cpuUsage();
  let wall = performance.now();
  const worker = async () => {
    for (;;) {
      const item = queue[next++];
      if (!item) return;
      await createReservation(deps, restaurant, fillCreate(item.day, item.k, `fill-${item.day}-${item.k}`), {
        ...meta,
        request_id: `fill-${done}`,
      });
      if (++done % every === 0) {
        const used = process.cpuUsage(cpu);
        plan.onProgress?.(done, (used.user + used.system) / every, performance.now() - wall);
        cpu = process.cpuUsage();
        wall = performance.now();
      }
    }
  };
  await Promise.all(Array.from({ length: plan.concurrency ?? 16 }, worker));
  await events.close();
  return done;
}
