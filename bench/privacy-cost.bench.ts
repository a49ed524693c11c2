// `npm run bench:privacy` (issue 16): what the hash chain and the sealing of personal data cost per
// append, and on POST /customers and POST /reservations. Goal: ≤ 10 % each.
//   port   durable single-event appends (SQLite synchronous=FULL, one transaction and fsync each, no
//          group commit) through the EventStore port, in this process, alternating rounds:
//            before-chain  the SQLite store of the commit before the chain (git archive into .bench/)
//            chain         this tree's store (the chain hash computed in the append's transaction)
//            sealed        this tree's store under the sealing layer, keys in SQLite (FULL): a
//                          reservation event with free text of a known customer (cached key), and a
//                          CustomerCreated of a new customer in their own stream, their id minted
//                          here (a key of the layer's pool, made ahead in durable pages), as POST
//                          /customers appends it
//   http   POST /customers (a new guest each time) and POST /reservations (a new inline guest with
//          allergies and a message) against two real servers started side by side, one with the
//          sealing layer and one without (bench/privacy-server.ts, BENCH_UNSEALED=1), alternating
//          rounds; requests/s, p50/p99 and server CPU ms per request (from /proc).
//   parts  where sealing's cost per request goes: the sealed service with one part taken out at a
//          time, beside the unsealed one, in one process (bench/privacy-parts.bench.ts)
//   inproc POST /customers and POST /reservations (bodies as in `http`) fired without sockets into
//          services in this one process, sealed and unsealed (and, with PRIVACY_BENCH_BASE=DIR, the
//          same from another checkout), in paired chunks whose order rotates every round; the median
//          of the per-round CPU ratios, its spread and its 95 % interval, and a verdict against 10 %
//          (bench/privacy-inproc.ts). The steadiest figure on a shared machine.
// Medians of ROUNDS rounds. The machine may be shared: the CPU columns are the steadier figures.
// `npm run bench:privacy -- port` or `-- http` runs one part; PRIVACY_BENCH_ROUNDS, PRIVACY_BENCH_MS
// and PRIVACY_BENCH_SECONDS shorten it; PRIVACY_BENCH_CPU_PROF=DIR profiles both servers (DIR/sealed,
// DIR/unsealed).
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { chainHash, GENESIS } from '../src/adapters/event-store/chain';
import { SqliteEventStore } from '../src/adapters/event-store/sqlite';
import { prepareAppend } from '../src/adapters/event-store/validate';
import { MemoryKeyStore } from '../src/adapters/key-store/memory';
import { SqliteKeyStore } from '../src/adapters/key-store/sqlite';
import { ANY, type EventStore, type NewEvent, NO_STREAM, type RecordedEvent } from '../src/ports/event-store';
import { SealingEventStore } from '../src/privacy/sealing-event-store';
import { cpuSeconds, fmt, load, repo, serve, table, writeJson } from './harness';
import { pairedInprocRows } from './privacy-inproc';
import { benchBootstrap, createBody } from './reservations.bench';

const ROUNDS = Number(process.env.PRIVACY_BENCH_ROUNDS ?? 3);
const MS = Number(process.env.PRIVACY_BENCH_MS ?? 3000);
const SECONDS = Number(process.env.PRIVACY_BENCH_SECONDS ?? 6);
/** The commit before the hash chain: its parent is the code without chain and without sealing. */
const CHAIN_COMMIT = 'afc6f23';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** A reservation-sized event as a handler appends it, with what the guest wrote (sealed). */
function reservationEvent(i: number): NewEvent {
  return {
    type: 'ReservationUpdated',
    data: {
      reservation_id: `res_${i % 100}`,
      restaurant_id: 'rest_bench',
      at: '2026-06-01T10:00:00.000Z',
      changes: {
        party_size: 2 + (i % 6),
        custom_message: `window table, birthday ${i}`,
        allergies: 'peanuts',
      },
      previous: { party_size: 2, custom_message: null, allergies: null },
      actor_kind: 'PARTNER',
    },
    metadata: { restaurant_id: 'rest_bench', actor: 'credential:key_bench', request_id: `req_${i}` },
  };
}

function customerCreated(i: number): NewEvent {
  return {
    type: 'CustomerCreated',
    data: {
      customer_id: `cus_${i}`,
      restaurant_id: 'rest_bench',
      at: '2026-06-01T10:00:00.000Z',
      profile: {
        name: 'Ada Lovelace',
        email: `ada${i}@example.test`,
        phone_number: '+33612345678',
        country_code: 'FR',
        lang: 'EN',
        tags: [],
        note: 'window table',
        custom_fields: {},
        newsletter_consent: true,
        external_id: null,
      },
      draft: false,
      origin: 'API',
    },
    metadata: { restaurant_id: 'rest_bench', actor: 'credential:key_bench' },
  };
}

/** A checkout of the code before the chain, inside the repository so it finds node_modules. */
function beforeChain(): string | null {
  const dir = join(repo, '.bench', `before-chain-${CHAIN_COMMIT}`);
  if (existsSync(join(dir, 'src/adapters/event-store/sqlite.ts'))) return dir;
  try {
    mkdirSync(dir, { recursive: true });
    execSync(`git archive ${CHAIN_COMMIT}^ src | tar -x -C ${dir}`, { cwd: repo, stdio: 'pipe' });
    return dir;
  } catch (err) {
    console.error(
      `no checkout before the chain (${(err as Error).message.split('\n')[0]}): that row is left out`,
    );
    return null;
  }
}

interface Rate {
  perSecond: number;
  cpuUs: number;
}

/**
 * Sequential durable appends for MS milliseconds: appends/s and CPU µs per append. `streams` 0: each
 * event a new customer's stream (`customer-<id>`, its id minted here), as POST /customers appends it.
 */
async function appendRun(store: EventStore, event: (i: number) => NewEvent, streams: number): Promise<Rate> {
  const revisions = new Array<number>(streams).fill(-1);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let i = 0;
  while (performance.now() - t0 < MS) {
    if (streams === 0) {
      const e = event(i);
      await store.append(`customer-${String(e.data.customer_id)}`, [e], NO_STREAM, { mintedId: true });
      i++;
      continue;
    }
    const s = i % streams;
    const r = await store.append(`bench-${s}`, [event(i)], revisions[s] === -1 ? NO_STREAM : revisions[s]!);
    revisions[s] = r.nextRevision;
    i++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: i / seconds, cpuUs: (cpu.user + cpu.system) / i };
}

let fileNo = 0;
async function portRows(dir: string): Promise<Record<string, string | number>[]> {
  const base = beforeChain();
  const Before = base
    ? (
        (await import(join(base, 'src/adapters/event-store/sqlite.ts'))) as {
          SqliteEventStore: typeof SqliteEventStore;
        }
      ).SqliteEventStore
    : null;
  const open = (S: typeof SqliteEventStore) =>
    S.open(join(dir, `port-${fileNo++}.sqlite`), { synchronous: 'FULL', groupCommit: false });
  const cases: { label: string; run: () => Promise<Rate> }[] = [];
  const plain = async (S: typeof SqliteEventStore, event: (i: number) => NewEvent, streams: number) => {
    const store = open(S);
    try {
      return await appendRun(store, event, streams);
    } finally {
      await store.close();
    }
  };
  const sealed = async (event: (i: number) => NewEvent, streams: number, warmKeys: number) => {
    const keys = SqliteKeyStore.open(join(dir, `keys-${fileNo++}.sqlite`));
    const store = new SealingEventStore(open(SqliteEventStore), keys);
    try {
      // Known customers: the reservation events' keys exist and are cached, as in the service.
      for (let k = 0; k < warmKeys; k++) await store.seal(event(k));
      return await appendRun(store, event, streams);
    } finally {
      await store.close();
      await keys.close();
    }
  };
  // Reservation events of the streams `bench-N` name no customer: the layer looks the stream up
  // once; seed each stream's customer with a ReservationCreated so it is known, as in the service.
  const reservationSealed = async () => {
    const keys = SqliteKeyStore.open(join(dir, `keys-${fileNo++}.sqlite`));
    const inner = open(SqliteEventStore);
    const store = new SealingEventStore(inner, keys);
    try {
      const revisions: number[] = [];
      for (let s = 0; s < 100; s++) {
        await keys.obtain(`customer:cus_${s}`);
        const r = await store.append(
          `reservation-bench-${s}`,
          [
            {
              type: 'ReservationCreated',
              data: {
                reservation_id: `res_${s}`,
                restaurant_id: 'rest_bench',
                at: 't',
                reservation: { customer_id: `cus_${s}` },
              },
            },
          ],
          NO_STREAM,
        );
        revisions.push(r.nextRevision);
      }
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      let i = 0;
      while (performance.now() - t0 < MS) {
        const s = i % 100;
        const r = await store.append(`reservation-bench-${s}`, [reservationEvent(i)], revisions[s]!);
        revisions[s] = r.nextRevision;
        i++;
      }
      const cpu = process.cpuUsage(cpu0);
      return { perSecond: i / ((performance.now() - t0) / 1000), cpuUs: (cpu.user + cpu.system) / i };
    } finally {
      await store.close();
      await keys.close();
    }
  };
  if (Before)
    cases.push({
      label: 'reservation event, before the chain',
      run: () => plain(Before, reservationEvent, 100),
    });
  cases.push({
    label: 'reservation event, chain',
    run: () => plain(SqliteEventStore, reservationEvent, 100),
  });
  cases.push({ label: 'reservation event, chain + sealed (known customer)', run: reservationSealed });
  // A new customer as POST /customers appends one: their own stream, the id minted here, so the
  // sealing layer hands them a key of its pool (made ahead in durable pages), as in the service.
  cases.push({
    label: 'CustomerCreated, chain, not sealed',
    run: () => plain(SqliteEventStore, customerCreated, 0),
  });
  cases.push({
    label: 'CustomerCreated, chain + sealed (new customer: a pool key)',
    run: () => sealed(customerCreated, 0, 0),
  });
  const results = new Map<string, Rate[]>();
  for (let r = 0; r < ROUNDS; r++)
    for (const c of cases) {
      const list = results.get(c.label) ?? [];
      list.push(await c.run());
      results.set(c.label, list);
    }
  const rate = (label: string) => median((results.get(label) ?? []).map((x) => x.perSecond));
  const cpu = (label: string) => median((results.get(label) ?? []).map((x) => x.cpuUs));
  const against: Record<string, string> = {
    'reservation event, chain': 'reservation event, before the chain',
    'reservation event, chain + sealed (known customer)': 'reservation event, chain',
    'CustomerCreated, chain + sealed (new customer: a pool key)': 'CustomerCreated, chain, not sealed',
  };
  // The chain's own CPU per event: the hash alone, in a tight loop.
  const prepared = prepareAppend('reservation-res_1', [reservationEvent(1)], ANY).events[0]!;
  let prev = GENESIS;
  const n = 100_000;
  const h0 = process.cpuUsage();
  for (let i = 0; i < n; i++)
    prev = chainHash(prev, { ...prepared, stream: 'reservation-res_1', revision: i });
  const h = process.cpuUsage(h0);
  const hashUs = (h.user + h.system) / n;
  // Sealing's own CPU per event (key cached), and opening it again, in tight loops.
  const layer = new SealingEventStore(open(SqliteEventStore), new MemoryKeyStore());
  await layer.seal(reservationEvent(0), 'cus_0');
  const sealedOne = await layer.seal(reservationEvent(0), 'cus_0');
  const recorded = {
    ...sealedOne,
    id: 'x',
    created: 't',
    stream: 's',
    revision: 0,
    position: 1n,
  } as RecordedEvent;
  const m = 20_000;
  const s0 = process.cpuUsage();
  for (let i = 0; i < m; i++) await layer.seal(reservationEvent(i), 'cus_0');
  const s1 = process.cpuUsage(s0);
  const o0 = process.cpuUsage();
  for (let i = 0; i < m; i++) await layer.open(recorded);
  const o1 = process.cpuUsage(o0);
  await layer.close();
  const micro = (label: string, us: number) => ({
    case: label,
    'appends/s': '',
    'CPU µs/append': fmt(us, 2),
    rounds: '',
    'cost vs the row it adds to': `${fmt((100 * us) / cpu('reservation event, chain'), 1)} % of a durable append's CPU`,
  });
  return [
    ...cases.map((c) => {
      const ref = against[c.label];
      const cost = ref && results.has(ref) ? rate(ref) / rate(c.label) - 1 : null;
      const cpuCost = ref && results.has(ref) ? cpu(c.label) - cpu(ref) : null;
      return {
        case: c.label,
        'appends/s': fmt(rate(c.label), 0),
        'CPU µs/append': fmt(cpu(c.label), 1),
        rounds: (results.get(c.label) ?? []).map((x) => fmt(x.perSecond, 0)).join(' '),
        'cost vs the row it adds to':
          cost === null ? '' : `${fmt(100 * cost, 1)} % time, ${fmt(cpuCost ?? 0, 1)} µs CPU`,
      };
    }),
    micro('the chain hash alone (CPU per event)', hashUs),
    micro('sealing a reservation event alone (key cached)', (s1.user + s1.system) / m),
    micro('opening it alone (key cached)', (o1.user + o1.system) / m),
  ];
}

const TOKEN = 'couvert_pk_bench_res_000000000000000000000001';

/** PRIVACY_BENCH_ROUTES=customers (or reservations): one route only (`http` and `inproc`). */
const benchRoutes = () =>
  (['customers', 'reservations'] as const).filter(
    (r) => !process.env.PRIVACY_BENCH_ROUTES || process.env.PRIVACY_BENCH_ROUTES.split(',').includes(r),
  );

async function httpRows(): Promise<Record<string, string | number>[]> {
  const boot = benchBootstrap();
  const key = boot.restaurants[0]!.api_keys[0]!;
  key.scopes = [...key.scopes, 'CUSTOMERS_WRITE'];
  const servers: Record<string, Awaited<ReturnType<typeof serve>>> = {};
  for (const [name, unsealed] of [
    ['sealed', '0'],
    ['unsealed', '1'],
  ] as const) {
    const dir = mkdtempSync(join(tmpdir(), `couvert-bench-privacy-${name}-`));
    servers[name] = await serve(
      {
        DATA_DIR: dir,
        BOOTSTRAP_FILE: writeJson(dir, 'bootstrap.json', boot),
        RATE_LIMIT_PER_MINUTE: '10000000',
        ROLES: 'api,projector',
        LOG_LEVEL: 'warn',
        BENCH_UNSEALED: unsealed,
      },
      'bench/privacy-server.ts',
      // PRIVACY_BENCH_CPU_PROF=DIR: each server writes a V8 CPU profile there when it stops.
      process.env.PRIVACY_BENCH_CPU_PROF
        ? ['--cpu-prof', '--cpu-prof-dir', join(process.env.PRIVACY_BENCH_CPU_PROF, name)]
        : [],
    );
  }
  const counters: Record<string, number> = { sealed: 0, unsealed: 0 };
  const failures: Record<string, number> = { sealed: 0, unsealed: 0 };
  const run = async (server: string, route: 'customers' | 'reservations', seconds: number) => {
    const api = servers[server]!;
    const body = (n: number) =>
      route === 'customers'
        ? JSON.stringify({
            name: `Guest ${n}`,
            email: `guest-${server}-${n}@example.test`,
            phone_number: `+336${String(10_000_000 + n).slice(-8)}`,
            note: 'window table',
          })
        : JSON.stringify({
            ...JSON.parse(createBody(n)),
            customer: { name: `Guest ${n}`, email: `res-${server}-${n}@example.test` },
            allergies: 'peanuts',
          });
    const cpu0 = cpuSeconds(api.child.pid);
    const before = counters[server]!;
    const r = await load(`${route} ${server}`, {
      url: `${api.url}/api/partner/v1/${route}`,
      method: 'POST',
      duration: seconds,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (req: autocannon.Request) => ({ ...req, body: body(counters[server]!++) }),
          onResponse: (status: number, text: string) => {
            if (status === 201) return;
            if (failures[server]! < 3) console.error(`${route} ${server}: ${status} ${text.slice(0, 300)}`);
            failures[server]!++;
          },
        },
      ],
    } as autocannon.Options);
    const cpu1 = cpuSeconds(api.child.pid);
    const done = counters[server]! - before;
    return {
      ...r,
      cpuMs: cpu0 !== null && cpu1 !== null ? ((cpu1 - cpu0) * 1000) / Math.max(1, done) : Number.NaN,
    };
  };
  const rows: Record<string, string | number>[] = [];
  try {
    for (const route of benchRoutes()) {
      for (const s of ['sealed', 'unsealed']) await run(s, route, 2); // warm-up
      const res: Record<string, Awaited<ReturnType<typeof run>>[]> = { sealed: [], unsealed: [] };
      for (let i = 0; i < ROUNDS; i++)
        for (const s of i % 2 ? ['unsealed', 'sealed'] : ['sealed', 'unsealed'])
          res[s]!.push(await run(s, route, SECONDS));
      for (const s of ['unsealed', 'sealed']) {
        const xs = res[s]!;
        const rps = median(xs.map((x) => x.rps));
        const base = median(res.unsealed!.map((x) => x.rps));
        const cpu = median(xs.map((x) => x.cpuMs));
        const baseCpu = median(res.unsealed!.map((x) => x.cpuMs));
        rows.push({
          case: `POST /${route}, ${s === 'sealed' ? 'sealing layer (as shipped)' : 'without sealing'}`,
          'req/s': fmt(rps, 0),
          'p50 ms': fmt(median(xs.map((x) => x.p50)), 1),
          'p99 ms': fmt(median(xs.map((x) => x.p99)), 1),
          'server CPU ms/req': fmt(cpu, 2),
          rounds: xs.map((x) => fmt(x.rps, 0)).join(' '),
          cost:
            s === 'sealed'
              ? `${fmt(100 * (base / rps - 1), 1)} % time, ${fmt(100 * (cpu / baseCpu - 1), 1)} % CPU`
              : '',
        });
      }
    }
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
  if (failures.sealed || failures.unsealed)
    console.error(`non-201 answers: sealed ${failures.sealed}, unsealed ${failures.unsealed}`);
  return rows;
}

// `-- parts [customers|reservations]`: where sealing's cost goes (bench/privacy-parts.bench.ts).
if (process.argv[2] === 'parts') {
  await import('./privacy-parts.bench');
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'couvert-privacy-bench-'));
console.log(
  `node ${process.version}, ${availableParallelism()} CPUs, data in ${dir}; the machine may be shared`,
);
try {
  const only = process.argv[2];
  if (!only || only === 'port')
    table(
      `Durable appends through the port (synchronous=FULL, one fsync each; medians of ${ROUNDS} alternating rounds of ${MS} ms)`,
      await portRows(dir),
    );
  if (!only || only === 'inproc') {
    const rows = await pairedInprocRows(dir, benchRoutes());
    if (rows.length)
      table(
        `POST with and without sealing, in one process without sockets: CPU of paired chunks (${process.env.PRIVACY_BENCH_RUNS ?? 3} runs of ${process.env.PRIVACY_BENCH_PAIRS ?? 20} rounds of ${process.env.PRIVACY_BENCH_CHUNK ?? 100} requests a service, order swapped every round; bench/privacy-inproc.ts)`,
        rows,
      );
  }
  if (!only || only === 'http')
    table(
      `POST with and without sealing (two servers side by side; medians of ${ROUNDS} alternating ${SECONDS} s rounds)`,
      await httpRows(),
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
