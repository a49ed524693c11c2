// Webhooks fan-out: 1,000 customer events, each delivered to 10 endpoints on loopback (10,000
// deliveries), against the real server in its own process (embedded, durable appends). Two loads:
// a burst (events as fast as POST /customers takes them: the publisher's throughput) and a paced run
// (150 events/s, 1,500 deliveries/s offered: commit-to-delivery latency). Then the same with one
// endpoint that answers after 2 s: the other nine must not slow down.
// Goals (issue 12): ≥ 1,000 deliveries/s; p50 ≤ 25 ms; the slow endpoint changes the others' p50 by < 2×.
// Run alone: npx tsx bench/webhooks.bench.ts

import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, fmt, serve, table, writeJson } from './harness';

const TOKEN = 'couvert_pk_bench_webhooks_0000000000000000001';
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1000);
const ENDPOINTS = 10;
const SLOW_MS = 2000;

interface Arrival {
  endpoint: number;
  latencyMs: number;
  at: number;
}

async function receiver(slowEndpoint: number | null) {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    const endpoint = Number((req.url ?? '/0').slice(1));
    const stamp = req.headers['x-service-timestamp'] as string;
    req.resume();
    req.on('end', () => {
      const now = Date.now();
      arrivals.push({ endpoint, latencyMs: now - Date.parse(stamp), at: now });
      if (endpoint === slowEndpoint) setTimeout(() => res.end('ok'), SLOW_MS);
      else res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    arrivals,
    url: (i: number) => `http://127.0.0.1:${port}/${i}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;

async function post(base: string, path: string, body: unknown) {
  const res = await fetch(`${base}/api/partner/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<{ data: { id: string } }>;
}

async function run(label: string, mode: 'burst' | 'paced', slowEndpoint: number | null) {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-bench-webhooks-'));
  const bootstrap = writeJson(dir, 'bootstrap.json', {
    restaurants: [
      {
        id: 'rest_bench',
        name: 'Bench',
        slug: 'bench',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
        api_keys: [
          {
            id: 'key_bench',
            name: 'bench',
            token: TOKEN,
            scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'],
          },
        ],
      },
    ],
  });
  const rx = await receiver(slowEndpoint);
  const server = await serve(
    {
      BOOTSTRAP_FILE: bootstrap,
      ROLES: 'api,projector,webhooks',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      RATE_LIMIT_PER_MINUTE: '10000000',
      LOG_LEVEL: 'warn',
    },
    'src/main.ts',
    process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [],
  );
  try {
    for (let i = 0; i < ENDPOINTS; i++) await post(server.url, '/webhook-endpoints', { url: rx.url(i) });
    const started = Date.now();
    const cpu0 = cpuSeconds(server.child.pid);
    const concurrency = mode === 'burst' ? 10 : 1;
    const interval = mode === 'paced' ? 1000 / 150 : 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (;;) {
          const i = next++;
          if (i >= EVENTS) return;
          if (interval) {
            const due = started + i * interval;
            const wait = due - Date.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
          await post(server.url, '/customers', { name: `Guest ${i}`, on_match: 'create_new' });
        }
      }),
    );
    const fast = (a: Arrival) => a.endpoint !== slowEndpoint;
    const expected = EVENTS * (slowEndpoint === null ? ENDPOINTS : ENDPOINTS - 1);
    const deadline = Date.now() + 120_000;
    while (rx.arrivals.filter(fast).length < expected && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const cpu = (cpuSeconds(server.child.pid) ?? Number.NaN) - (cpu0 ?? Number.NaN);
    const got = rx.arrivals.filter(fast);
    const latencies = got.map((a) => a.latencyMs).sort((x, y) => x - y);
    const last = Math.max(...got.map((a) => a.at));
    return {
      run: label,
      deliveries: got.length,
      'deliveries/s': fmt(got.length / ((last - started) / 1000), 0),
      'p50 ms': pct(latencies, 50),
      'p99 ms': pct(latencies, 99),
      'slow endpoint got': slowEndpoint === null ? '-' : rx.arrivals.length - got.length,
      // Server CPU (its POST /customers included) per delivery: steadier than throughput on a shared machine.
      'server CPU µs/delivery': fmt((cpu * 1e6) / rx.arrivals.length, 0),
    };
  } finally {
    await server.stop();
    await rx.close();
  }
}

export async function webhooksBench(): Promise<void> {
  const rows = [];
  rows.push(await run('burst, 10 endpoints', 'burst', null));
  if (process.env.BENCH_PROF) return table('profiled', rows);
  rows.push(await run('paced 150 events/s, 10 endpoints', 'paced', null));
  rows.push(await run('burst, 1 of 10 answers in 2 s (9 others)', 'burst', 0));
  rows.push(await run('paced 150 events/s, 1 of 10 answers in 2 s (9 others)', 'paced', 0));
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  table(
    `webhooks: ${EVENTS} customer events × ${ENDPOINTS} endpoints on loopback (commit → received); load average ${load}`,
    rows,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await webhooksBench();
