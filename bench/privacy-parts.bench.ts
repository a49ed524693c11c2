// `npm run bench:privacy -- parts [customers|reservations]` (or `npx tsx bench/privacy-parts.bench.ts …`):
// where sealing's cost per request goes. Several services in this one process, each with its own data
// directory, get POSTs without sockets in chunks of 100, in turn (the order reversed every other
// chunk), so they all meet the same machine:
//   unsealed   the service without the sealing layer (the reference)
//   unsealed2  the same again: the harness's own spread (its ratio should be 1.00)
//   sealed     the service as shipped
//   and the sealed service with one part of sealing taken out (a stand-in that does no work there):
//   no-lookup  the new customer's own subject is not looked up in the key store (POST /customers' minted
//              ids are not looked up at all since the key pages change: no difference expected)
//   no-pool    the pool hands out one fixed key (no key-store writes, no worker)
//   no-crypto  the box is a constant string (no AES-GCM), the rest as shipped (memo, open)
//   no-open    reading back a box sealed here gives the data as appended (no memo, no parse)
//   no-seal    nothing is sealed (the layer only passes events through)
// The parts taken out are stand-ins for measuring only: those services are not correct.
// Per service: CPU µs per request of the whole process while its chunks ran (median, 25th and 10th
// percentile of the chunks: other processes only ever add time, so the low percentiles are the
// steadier figures on a shared machine) and its ratio to `unsealed` at the same percentile.
// PRIVACY_PARTS=sealed,no-crypto,no-lookup+no-pool picks services (`+`: parts taken out together); PRIVACY_BENCH_ROUNDS (default 6) rounds of
// PRIVACY_BENCH_REQUESTS (default 1000) requests per service.
// Before / after in one process: PRIVACY_BENCH_BASE=DIR (another checkout's files, e.g. `git archive
// 8fa9ac5 | tar -x -C DIR` with node_modules linked) adds the services `base-sealed` and
// `base-unsealed` built from DIR's code (its own modules, so its own JIT state); PRIVACY_PARTS may
// name them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { applyBootstrap } from '../src/bootstrap';
import { loadConfig } from '../src/config';
import { operatorMeta } from '../src/core/command-meta';
import { allRoutes } from '../src/http/routes/index';
import { createApp } from '../src/http/server';
import { registerModules } from '../src/modules';
import type { NewEvent, RecordedEvent } from '../src/ports/event-store';
import type { SealingEventStore } from '../src/privacy/sealing-event-store';
import { createRuntime, type Runtime } from '../src/runtime';
import { fmt, table } from './harness';
import { type Handler as InProcessHandler, postJson } from './in-process-request';
import { benchBootstrap, createBody } from './reservations.bench';

const TOKEN = 'couvert_pk_bench_res_000000000000000000000001';
const ROUNDS = Number(process.env.PRIVACY_BENCH_ROUNDS ?? 6);
const PER_ROUND = Number(process.env.PRIVACY_BENCH_REQUESTS ?? 1000);
const CHUNK = 100;

type Handler = InProcessHandler;

const post = (handler: Handler, url: string, body: string) => postJson(handler, TOKEN, url, body);

/** The layer's private parts the stand-ins replace (measuring only). */
interface LayerParts {
  lookUp(subject: string): unknown;
  takeSpare(): unknown;
  sealWith(
    event: NewEvent,
    fields: [string, unknown][],
    key: Buffer | null,
    customer: string,
    kid: string | undefined,
  ): Record<string, unknown>;
  seal(e: NewEvent): Promise<NewEvent>;
  sealNew(e: NewEvent): Promise<NewEvent>;
  plains: Map<string, { plaintext: string; customer: string }>;
  open(e: RecordedEvent): Promise<RecordedEvent>;
}

/** Takes one part of sealing out of a service's layer (see the top of the file). */
function standIn(layer: SealingEventStore, part: string): void {
  const l = layer as unknown as LayerParts;
  if (part === 'no-lookup') l.lookUp = () => ({ state: 'none' });
  if (part === 'no-pool') {
    const fixed = { kid: '0000000000fixedfixedfixed', key: Buffer.alloc(32, 7) };
    l.takeSpare = () => fixed;
  }
  if (part === 'no-crypto') {
    let n = 0;
    l.sealWith = (event, fields, _key, customer, kid) => {
      const paths = fields.map(([p]) => p);
      const data: Record<string, unknown> = {};
      for (const k of Object.keys(event.data)) if (!paths.includes(k)) data[k] = event.data[k];
      for (const p of paths) {
        const [a, b] = p.split('.') as [string, string | undefined];
        if (b === undefined || data[a] !== event.data[a]) continue;
        const inner: Record<string, unknown> = {};
        const from = event.data[a] as Record<string, unknown>;
        for (const k of Object.keys(from)) if (!paths.includes(`${a}.${k}`)) inner[k] = from[k];
        data[a] = inner;
      }
      const box = `${'A'.repeat(160)}${(n++).toString(36).padStart(8, '0')}`;
      data.sealed = kid === undefined ? { v: 1, paths, box } : { v: 2, kid, paths, box };
      if (customer !== event.data.customer_id)
        (data.sealed as { customer_id?: string }).customer_id = customer;
      l.plains.set(box, { plaintext: JSON.stringify(fields.map(([, v]) => v)), customer });
      if (l.plains.size > 4096) l.plains.delete(l.plains.keys().next().value as string);
      return data;
    };
  }
  if (part === 'no-open') {
    // Reading back a box sealed here returns the data as given to append (no memo look-up, no parse).
    const given = new Map<string, Record<string, unknown>>();
    const sealWith = l.sealWith.bind(l);
    l.sealWith = (event, fields, key, customer, kid) => {
      const data = sealWith(event, fields, key, customer, kid);
      const box = (data.sealed as { box?: string } | undefined)?.box;
      if (box !== undefined) {
        given.set(box, event.data);
        if (given.size > 4096) given.delete(given.keys().next().value as string);
      }
      return data;
    };
    const open = l.open.bind(l);
    l.open = (e) => {
      const box = (e.data.sealed as { box?: string } | undefined)?.box;
      const data = box === undefined ? undefined : given.get(box);
      return data === undefined ? open(e) : Promise.resolve({ ...e, data });
    };
  }
  if (part === 'no-seal') {
    l.seal = async (e) => e;
    l.sealNew = async (e) => e;
    // The synchronous path seals through sealWith: the data as given.
    l.sealWith = (event) => event.data;
  }
}

const args = process.argv.slice(2).filter((a) => a !== 'parts');
const route = (args[0] ?? 'customers') as 'customers' | 'reservations';
if (route !== 'customers' && route !== 'reservations')
  throw new Error(`route: customers or reservations, not ${route}`);
const parts = (process.env.PRIVACY_PARTS ?? 'unsealed2,sealed,no-lookup,no-pool,no-crypto,no-seal').split(
  ',',
);
const BASE = process.env.PRIVACY_BENCH_BASE;
if (BASE && !parts.some((p) => p.startsWith('base-'))) parts.push('base-sealed', 'base-unsealed');
const names = ['unsealed', ...parts.filter((p) => p !== 'unsealed')];

/** The pieces of a service, from this tree or from PRIVACY_BENCH_BASE's. */
async function serviceParts(base: boolean) {
  if (!base)
    return { registerModules, loadConfig, createRuntime, applyBootstrap, operatorMeta, createApp, allRoutes };
  if (!BASE) throw new Error('base-* services need PRIVACY_BENCH_BASE=DIR');
  const load = (file: string) => import(join(resolve(BASE), file));
  return {
    registerModules: (await load('src/modules.ts')).registerModules as typeof registerModules,
    loadConfig: (await load('src/config.ts')).loadConfig as typeof loadConfig,
    createRuntime: (await load('src/runtime.ts')).createRuntime as typeof createRuntime,
    applyBootstrap: (await load('src/bootstrap.ts')).applyBootstrap as typeof applyBootstrap,
    operatorMeta: (await load('src/core/command-meta.ts')).operatorMeta as typeof operatorMeta,
    createApp: (await load('src/http/server.ts')).createApp as typeof createApp,
    allRoutes: (await load('src/http/routes/index.ts')).allRoutes as typeof allRoutes,
  };
}
registerModules();
const boot = benchBootstrap();
boot.restaurants[0]!.api_keys[0]!.scopes.push('CUSTOMERS_WRITE');
const dirs: string[] = [];
const runtimes: Runtime[] = [];
const handlers: Record<string, Handler> = {};
for (const name of names) {
  const dir = mkdtempSync(join(tmpdir(), `couvert-privacy-parts-${name}-`));
  dirs.push(dir);
  const base = name.startsWith('base-');
  const { loadConfig, createRuntime, applyBootstrap, operatorMeta, createApp, allRoutes, registerModules } =
    await serviceParts(base);
  if (base) registerModules();
  const rt = await createRuntime(
    loadConfig({
      ...process.env,
      DATA_DIR: dir,
      RATE_LIMIT_PER_MINUTE: '10000000',
      ROLES: 'api,projector',
      LOG_LEVEL: 'warn',
    }),
    { unsealedForBenchmark: name.startsWith('unsealed') || name === 'base-unsealed' },
  );
  await rt.settle((await applyBootstrap(rt, boot as never, operatorMeta('bootstrap'))).position);
  // `no-lookup+no-pool`: several parts taken out together.
  if (!name.startsWith('unsealed') && name !== 'sealed' && !base)
    for (const part of name.split('+')) standIn(rt.events as SealingEventStore, part);
  runtimes.push(rt);
  handlers[name] = createApp(rt, allRoutes(rt)).callback() as Handler;
}
const counters: Record<string, number> = {};
const body = (i: number, who: string) =>
  route === 'customers'
    ? JSON.stringify({
        name: `Guest ${i}`,
        email: `guest-${who}-${i}@example.test`,
        phone_number: `+336${String(10_000_000 + i).slice(-8)}`,
        note: 'window table',
      })
    : JSON.stringify({
        ...JSON.parse(createBody(i)),
        customer: { name: `Guest ${i}`, email: `res-${who}-${i}@example.test` },
        allergies: 'peanuts',
      });
/** `n` requests, 10 in flight: CPU µs per request of the whole process. */
async function chunk(who: string, n: number): Promise<number> {
  let left = n;
  const c0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (left-- > 0) {
        counters[who] = (counters[who] ?? 0) + 1;
        const status = await post(handlers[who]!, `/api/partner/v1/${route}`, body(counters[who]!, who));
        if (status !== 201) throw new Error(`${who}: POST /${route} answered ${status}`);
      }
    }),
  );
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}
try {
  for (const who of names) await chunk(who, 300); // warm-up
  const chunks: Record<string, number[]> = {};
  for (let r = 0; r < ROUNDS; r++)
    for (let done = 0, k = 0; done < PER_ROUND; done += CHUNK, k++)
      for (const who of k % 2 ? [...names].reverse() : names) {
        const list = chunks[who] ?? [];
        chunks[who] = list;
        list.push(await chunk(who, CHUNK));
      }
  const at = (who: string, p: number) => {
    const xs = [...(chunks[who] ?? [])].sort((a, b) => a - b);
    return xs[Math.floor(xs.length * p)] as number;
  };
  table(
    `POST /${route}: CPU µs per request by chunk of ${CHUNK} (${ROUNDS} × ${PER_ROUND} requests a service; the machine may be shared)`,
    names.map((who) => ({
      service: who,
      'median µs': fmt(at(who, 0.5), 0),
      'p25 µs': fmt(at(who, 0.25), 0),
      'p10 µs': fmt(at(who, 0.1), 0),
      'vs unsealed (median / p25 / p10)': [0.5, 0.25, 0.1]
        .map((p) => fmt(at(who, p) / at('unsealed', p), 2))
        .join(' / '),
    })),
  );
} finally {
  for (const rt of runtimes) await rt.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
