// Customers: a full sync pass over 100,000 customers (GET /customers, limit 100, following
// next_cursor) and POST /customers throughput with durable commits (SQLite synchronous=FULL).
// Goals (issue 5): full pass ≤ 10 s; ≥ 500 creates/s. Run alone: npx tsx bench/customers.bench.ts
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CustomerEvent, CustomerProfile } from '../commands/customers/events';
import { customerStream } from '../commands/customers/events';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite';
import { fmt, load, median, serve, table, writeJson } from './harness';

const TOKEN = 'couvert_pk_bench_customers_00000000000000000001';
const RESTAURANT = 'rest_bench';
const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 100_000);

export const bootstrap = (dir: string) =>
  writeJson(dir, 'bootstrap.json', {
    restaurants: [
      {
        id: RESTAURANT,
        name: 'Bench',
        slug: 'bench',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
        api_keys: [
          { id: 'key_bench', name: 'bench', token: TOKEN, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'] },
        ],
      },
    ],
  });

/**
 * Writes `count` CustomerCreated events straight into the log the service will open. Seeding is not
 * what is measured, so it runs with synchronous=NORMAL (no fsync per append).
 */
export async function seed(dataDir: string, count: number): Promise<number> {
  const started = performance.now();
  const store = await SqliteEventStore.open(join(dataDir, 'events.sqlite'), { synchronous: 'NORMAL' });
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  try {
    for (let i = 0; i < count; i++) {
      const id = `cus_bench${String(i).padStart(7, '0')}`;
      const n = String(i).padStart(8, '0');
      const profile: CustomerProfile = {
        name: `Guest ${i}`,
        email: `guest${i}@example.com`,
        phone_number: `+3361${n}`,
        country_code: 'FR',
        lang: 'FR',
        tags: i % 10 === 0 ? ['vip'] : [],
        note: null,
        custom_fields: {},
        newsletter_consent: i % 2 === 0,
        external_id: `crm-${i}`,
      };
      const event: CustomerEvent = {
        type: 'CustomerCreated',
        data: {
          customer_id: id,
          restaurant_id: RESTAURANT,
          at: new Date(base + i * 250).toISOString(),
          profile,
          draft: false,
          origin: 'IMPORT',
        },
      };
      await store.append(
        customerStream(id),
        [
          {
            type: event.type,
            data: event.data as never,
            metadata: { actor: 'bench', restaurant_id: RESTAURANT },
          },
        ],
        'no_stream',
      );
    }
  } finally {
    await store.close();
  }
  return performance.now() - started;
}

/** One full pass: from no cursor until has_more is false. Returns [ms, customers seen, pages]. */
export async function fullPass(url: string): Promise<[number, number, number]> {
  const headers = { authorization: `Bearer ${TOKEN}` };
  const started = performance.now();
  let cursor: string | null = null;
  let seen = 0;
  let pages = 0;
  for (;;) {
    const q: string = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : '?limit=100';
    const res = await fetch(`${url}/api/partner/v1/customers${q}`, { headers });
    if (res.status !== 200) throw new Error(`page ${pages}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as {
      data: unknown[];
      pagination: { next_cursor: string | null; has_more: boolean };
    };
    seen += body.data.length;
    pages++;
    if (!body.pagination.has_more) break;
    cursor = body.pagination.next_cursor;
  }
  return [performance.now() - started, seen, pages];
}

export async function customersBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-bench-customers-'));
  const seedMs = await seed(dataDir, CUSTOMERS);
  const startAt = performance.now();
  const api = await serve({
    DATA_DIR: dataDir,
    BOOTSTRAP_FILE: bootstrap(dataDir),
    RATE_LIMIT_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
  });
  const startMs = performance.now() - startAt;
  try {
    await fullPass(api.url); // warm-up (JIT, connection)
    const passes: [number, number, number][] = [];
    for (let i = 0; i < 3; i++) passes.push(await fullPass(api.url));
    passes.sort((a, b) => a[0] - b[0]);
    const [passMs, seen, pages] = passes[1] as [number, number, number];
    if (seen !== CUSTOMERS) throw new Error(`a full pass saw ${seen} customers, expected ${CUSTOMERS}`);

    const post = (label: string) =>
      load(label, {
        url: `${api.url}/api/partner/v1/customers`,
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        // A new guest each time: matching runs (external_id, phone, email) and finds nobody.
        body: JSON.stringify({
          name: 'Bench [<id>]',
          email: 'bench-[<id>]@example.com',
          external_id: 'crm-[<id>]',
        }),
        idReplacement: true,
      });
    await post('warm');
    const creates = await median(3, () => post('POST /customers'));
    table(`Customers (${CUSTOMERS.toLocaleString('en')} seeded; durable commits; medians of 3)`, [
      {
        case: 'seed the log (NORMAL sync, not measured)',
        value: `${fmt(seedMs / 1000)} s`,
        goal: '',
      },
      { case: 'service start (replays the log)', value: `${fmt(startMs / 1000)} s`, goal: '' },
      {
        case: `full sync pass, limit 100 (${pages} pages)`,
        value: `${fmt(passMs / 1000, 2)} s (${fmt(passMs / pages, 2)} ms/page)`,
        goal: '≤ 10 s',
      },
      {
        case: 'POST /customers (10 connections, 8 s)',
        value: `${fmt(creates.rps, 0)} creates/s (p50 ${creates.p50} ms, p99 ${creates.p99} ms, errors ${creates.errors + creates.non2xx})`,
        goal: '≥ 500/s',
      },
    ]);
  } finally {
    await api.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await customersBench();
