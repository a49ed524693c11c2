// `npx tsx bench/privacy-calls.ts [customers|reservations]`: where sealing's time goes, call by call.
// The sealed and the unsealed service (and with PRIVACY_BENCH_BASE=DIR a sealed service built from
// DIR's code, e.g. `git archive <commit> | tar -x -C DIR` with node_modules linked) in this one
// process, fed POSTs without sockets in chunks of 100 (10 in flight) whose order is reversed every
// round, as `npm run bench:privacy -- inproc`. The methods named below of each service's sealing layer
// and of the store under it are wrapped in a clock (process.hrtime around the synchronous part of a
// call; what an append then waits for is not in it): per label, calls per request and the median and
// 25th percentile of a call's time. Medians of single calls are what a shared machine distorts least
// (a neighbour's burst lands on few calls); they are wall time, and a call's callees are in it (the
// layer's append holds its sealNow, which holds sealWith, which holds the cipher).
// A second copy of the same code in one process is not the same: its functions have their own type
// feedback and run a little slower (2026-11-27, a copy of HEAD as the base: the store's append 9.5 vs
// 10.6 µs a call, the layer's append 33.6 vs 35.7): compare a change against such a run of the
// unchanged tree (PRIVACY_BENCH_BASE=<a copy of HEAD>), not against zero.
// PRIVACY_CALLS_ROUNDS chunks a service (default 16). PRIVACY_CALLS_WRAP: the layer's methods to
// clock besides append, sealNow, afterAppend, openNow and openWith (default handOut,customersNow).
// Measuring only: the wrapped methods are private, so a rename needs this list changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Handler, postJson } from './in-process-request';
import { benchBootstrap, createBody } from './reservations.bench';

const TOKEN = 'couvert_pk_bench_res_000000000000000000000001';
const route = (process.argv[2] ?? 'customers') as 'customers' | 'reservations';
if (route !== 'customers' && route !== 'reservations') throw new Error(`route: customers or reservations`);
const ROUNDS = Number(process.env.PRIVACY_CALLS_ROUNDS ?? 16);
const CHUNK = 100;
const BASE = process.env.PRIVACY_BENCH_BASE;
const LAYER = [
  'append',
  'sealNow',
  'sealWith',
  'afterAppend',
  'openNow',
  'openWith',
  ...(process.env.PRIVACY_CALLS_WRAP ?? 'handOut,customersNow').split(',').filter(Boolean),
];

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const names = ['sealed', 'unsealed', ...(BASE ? ['base-sealed'] : [])];
/** Service → label → each call's nanoseconds. */
const calls = new Map<string, Map<string, number[]>>(names.map((n) => [n, new Map()]));
let current: string | null = null;

/** Wraps `obj[method]` in a clock charged to the service whose chunk is running. */
function clock(obj: Record<string, unknown>, method: string, label: string): void {
  const orig = obj[method];
  if (typeof orig !== 'function') throw new Error(`no method ${method} to clock`);
  obj[method] = function (this: unknown, ...args: unknown[]) {
    const t = process.hrtime.bigint();
    try {
      return orig.apply(this, args);
    } finally {
      const ns = Number(process.hrtime.bigint() - t);
      if (current !== null) {
        const by = calls.get(current) as Map<string, number[]>;
        const list = by.get(label);
        if (list === undefined) by.set(label, [ns]);
        else list.push(ns);
      }
    }
  };
}

/** The code bases whose modules are registered (once each: this tree's, the base's). */
const registered = new Set<string>();

async function service(
  name: string,
): Promise<{ handler: Handler; catchUp: () => Promise<unknown>; close: () => Promise<void> }> {
  const from = name.startsWith('base-') ? resolve(BASE as string) : resolve(import.meta.dirname, '..');
  const load = (file: string) => import(join(from, file));
  const { registerModules } = await load('src/modules.ts');
  const { loadConfig } = await load('src/config.ts');
  const { createRuntime } = await load('src/runtime.ts');
  const { applyBootstrap } = await load('src/bootstrap.ts');
  const { operatorMeta } = await load('src/core/command-meta.ts');
  const { createApp } = await load('src/http/server.ts');
  const { allRoutes } = await load('src/http/routes/index.ts');
  if (!registered.has(from)) {
    registerModules();
    registered.add(from);
  }
  const boot = benchBootstrap();
  boot.restaurants[0]!.api_keys[0]!.scopes.push('CUSTOMERS_WRITE');
  const dir = mkdtempSync(join(tmpdir(), `couvert-privacy-calls-${name}-`));
  const rt = await createRuntime(
    loadConfig({
      ...process.env,
      DATA_DIR: dir,
      RATE_LIMIT_PER_MINUTE: '10000000',
      ROLES: 'api,projector',
      LOG_LEVEL: 'warn',
    }),
    { unsealedForBenchmark: name === 'unsealed' },
  );
  await rt.settle((await applyBootstrap(rt, boot as never, operatorMeta('bootstrap'))).position);
  const layer = name === 'unsealed' ? null : (rt.events as Record<string, unknown>);
  const inner = (layer?.inner ?? rt.events) as Record<string, unknown>;
  clock(inner, 'append', 'store.append');
  if (layer !== null) for (const m of LAYER) clock(layer, m, `layer.${m}`);
  return {
    handler: createApp(rt, allRoutes(rt)).callback() as Handler,
    catchUp: () => rt.projections.catchUp(),
    close: async () => {
      await rt.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const bodies = (i: number, who: string) =>
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

const services = new Map<string, Awaited<ReturnType<typeof service>>>();
for (const n of names) services.set(n, await service(n));
const counters = new Map<string, number>();
async function chunk(who: string, n: number): Promise<void> {
  const s = services.get(who) as Awaited<ReturnType<typeof service>>;
  let left = n;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (left-- > 0) {
        const i = (counters.get(who) ?? 0) + 1;
        counters.set(who, i);
        const status = await postJson(s.handler, TOKEN, `/api/partner/v1/${route}`, bodies(i, who));
        if (status !== 201) throw new Error(`${who}: POST /${route} answered ${status}`);
      }
    }),
  );
  await s.catchUp();
}
try {
  for (const n of names) await chunk(n, 300); // warm-up, not clocked
  for (let r = 0; r < ROUNDS; r++)
    for (const who of r % 2 ? [...names].reverse() : names) {
      gc();
      current = who;
      await chunk(who, CHUNK);
      current = null;
    }
} finally {
  for (const s of services.values()) await s.close();
}

const at = (xs: number[] | undefined, p: number) =>
  xs === undefined || xs.length === 0
    ? 0
    : ([...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)] as number) / 1000;
const requests = ROUNDS * CHUNK;
const labels = new Set<string>();
for (const by of calls.values()) for (const k of by.keys()) labels.add(k);
console.log(
  `POST /${route}: ${ROUNDS} chunks of ${CHUNK} a service; per label: calls a request, median µs a call, p25 µs a call`,
);
console.log(['label'.padEnd(22), ...names.map((n) => n.padStart(26))].join(' '));
for (const label of [...labels].sort())
  console.log(
    [
      label.padEnd(22),
      ...names.map((n) => {
        const xs = calls.get(n)?.get(label);
        if (xs === undefined) return '–'.padStart(26);
        return `${(xs.length / requests).toFixed(2)} × ${at(xs, 0.5).toFixed(2)} (${at(xs, 0.25).toFixed(2)})`.padStart(
          26,
        );
      }),
    ].join(' '),
  );
