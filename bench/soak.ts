// Soak: the real server (embedded, every role) under a modest mixed load for minutes, sampled over time
// for what grows: RSS, the heap left live after a full collection, open file descriptors and sockets,
// the handles keeping the event loop alive (timers, sockets), event loop delay, the SQLite WAL files,
// and the sockets the webhook receivers still hold open. A resource that climbs with time or with
// distinct ids (keys, customers, client addresses, sessions) while the load stays the same is a leak.
//
// The mix: availability searches and checks, reservations (create, modify, cancel, look up), customers
// (create, update), the customers sync feed, missed calls sent through a loopback WhatsApp Cloud API
// (mostly accepted, some never answered, some cut, some rate-limited), webhook deliveries to loopback
// receivers (fine, slow, hung past the attempt timeout, 500, socket closed mid-body), OAuth consents
// (sign-in, code, token, revocation), dashboard pages of a signed-in manager, requests from many
// client addresses (TRUST_PROXY, X-Forwarded-For) and with unknown tokens, and a CLI command now and then.
//
// Run alone: npm run bench:soak (SOAK_MINUTES=9, SOAK_RATE=60 req/s, SOAK_SAMPLE_S=30, SOAK_PORT=0,
// SOAK_DATA_DIR: a new temporary directory, kept with server.log and soak-probe.jsonl when given;
// SOAK_NICE: the server's threads run at this nice value, a machine busier than this one for it alone;
// SOAK_CPU_PROF=1: a CPU profile of the whole run; SOAK_STALL_MS, SOAK_STALL_PROFILE_MAX_MS: the
// watchdog's, bench/soak-probe.mjs).
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { authorizeQuery, Browser, basic, consent, PASSWORD, pkce } from '../test/helpers/oauth';
import { cpuSeconds, fmt, repo, serve, writeJson } from './harness';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 9);
const RATE = Number(process.env.SOAK_RATE ?? 60);
const SAMPLE_S = Number(process.env.SOAK_SAMPLE_S ?? 30);
const MAX_IN_FLIGHT = 48;
const TOKEN = 'couvert_pk_soak_0000000000000000000000000001';
const WA_TOKEN = 'EAAsoak-token-0001';
const APP_SECRET = 'soak-app-secret-0123456789';
const CALLBACK = 'https://pos.example.test/callback';
const MANAGER = 'manager@soak.test';
const TABLES = 40;
const TIMES = ['19:00', '19:15', '19:30', '19:45', '20:00', '20:15', '20:30', '20:45', '21:00', '21:15'];

const rnd = (n: number) => Math.floor(Math.random() * n);
const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)] as T;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function bootstrap(dir: string): string {
  return writeJson(dir, 'bootstrap.json', {
    restaurants: [
      {
        id: 'rest_soak',
        name: 'Soak',
        slug: 'soak',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
        api_option: true,
        features: ['MISSED_CALLS'],
        booking_url: 'https://soak.example/book',
        whatsapp_phone_number_id: '106540352242922',
        message_templates: [
          {
            id: 'tpl_missed',
            type: 'MISSED_CALL',
            channel: 'WHATSAPP',
            status: 'APPROVED',
            name: 'missed_call_fr',
            body: 'Bonjour {{guest_name}}, réservez chez {{restaurant_name}} : {{booking_link}}',
          },
        ],
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
            id: 'key_soak',
            name: 'soak',
            token: TOKEN,
            scopes: [
              'CATALOG_READ',
              'AVAILABILITY_READ',
              'RESERVATIONS_READ',
              'RESERVATIONS_WRITE',
              'RESERVATIONS_CANCEL',
              'CUSTOMERS_READ',
              'CUSTOMERS_WRITE',
              'MISSED_CALLS_WRITE',
              'WEBHOOKS_WRITE',
            ],
          },
        ],
      },
    ],
    users: [
      { email: MANAGER, password: PASSWORD, restaurants: [{ id: 'rest_soak', manage_integrations: true }] },
    ],
    oauth_applications: [
      {
        client_id: 'app_soak',
        client_secret: APP_SECRET,
        name: 'Soak POS',
        logo_url: null,
        redirect_uris: [CALLBACK],
        allowed_scopes: ['CATALOG_READ', 'RESERVATIONS_READ'],
        published_by_operator: false,
      },
    ],
  });
}

/** Loopback webhook receivers, one behaviour per path; counts what arrived and the sockets held open. */
async function webhookReceivers() {
  const arrived: Record<string, number> = {};
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const kind = (req.url ?? '/ok').slice(1);
    req.resume();
    req.on('end', () => {
      arrived[kind] = (arrived[kind] ?? 0) + 1;
      if (kind === 'ok') res.end('ok');
      else if (kind === 'slow') setTimeout(() => res.end('late'), 3000);
      else if (kind === 'fail') {
        res.statusCode = 500;
        res.end('{"error":"boom"}');
      } else if (kind === 'cut') {
        res.writeHead(200, { 'content-length': '1000' });
        res.write('partial');
        setTimeout(() => res.socket?.destroy(), 50);
      }
      // 'hang': never answers; the attempt's timeout (12 s) must end it and close the socket.
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    arrived,
    url: (kind: string) => `http://127.0.0.1:${port}/${kind}`,
    connections: () => new Promise<number>((r) => server.getConnections((_e, n) => r(n))),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A loopback WhatsApp Cloud API: mostly accepts; some sends never answered, cut, or rate-limited. */
async function fakeWhatsApp() {
  let n = 0;
  const answers: Record<string, number> = {};
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const roll = rnd(100);
      const kind = roll < 85 ? 'accept' : roll < 90 ? 'silence' : roll < 95 ? 'cut' : 'rate';
      answers[kind] = (answers[kind] ?? 0) + 1;
      if (kind === 'accept') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ messaging_product: 'whatsapp', messages: [{ id: `wamid.soak${n++}` }] }));
      } else if (kind === 'cut') req.socket.destroy();
      else if (kind === 'rate') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { message: 'Rate limit hit', type: 'OAuthException', code: 130429 } }),
        );
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    answers,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => new Promise<number>((r) => server.getConnections((_e, c) => r(c))),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

interface Probe {
  at: number;
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  lagP99Ms: number;
  lagMaxMs: number;
  gcLongestMs: number;
  resources: Record<string, number>;
}

function probeLines(file: string): Record<string, unknown>[] {
  try {
    return readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return [];
  }
}

/** The last sample: the watchdog's `stall` and `stallProfile` lines, among them, are not samples. */
function lastProbe(file: string): Probe | null {
  return (probeLines(file).findLast((l) => 'heapUsed' in l) as Probe | undefined) ?? null;
}

function fds(pid: number): { fds: number; sockets: number } {
  try {
    const all = readdirSync(`/proc/${pid}/fd`);
    let sockets = 0;
    for (const fd of all) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++;
      } catch {}
    }
    return { fds: all.length, sockets };
  } catch {
    return { fds: Number.NaN, sockets: Number.NaN };
  }
}

const vm = (pid: number, field: string) => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
};

function walBytes(dir: string): number {
  let total = 0;
  for (const f of readdirSync(dir)) if (f.endsWith('-wal')) total += statSync(join(dir, f)).size;
  return total;
}

const mb = (b: number) => fmt(b / 1024 / 1024, 1);

export async function soak(): Promise<void> {
  // A directory given is kept (server.log, soak-probe.jsonl, the stores) for a look afterwards; one
  // made here is removed at the end, not when the soaked server stops (the fresh process reads it).
  const keep = Boolean(process.env.SOAK_DATA_DIR);
  process.env.BENCH_KEEP_DATA = '1';
  const dataDir = process.env.SOAK_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-soak-'));
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const probeFile = join(dataDir, 'soak-probe.jsonl');
  const hooks = await webhookReceivers();
  const wa = await fakeWhatsApp();
  const bootstrapFile = bootstrap(dataDir);
  const server = await serve(
    {
      DATA_DIR: dataDir,
      PORT: process.env.SOAK_PORT ?? '0',
      BOOTSTRAP_FILE: bootstrapFile,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      TRUST_PROXY: 'true',
      RATE_LIMIT_PER_MINUTE: '100000',
      OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE: '100000',
      SIGN_IN_RATE_LIMIT_PER_IP: '100000',
      WHATSAPP_ACCESS_TOKEN: WA_TOKEN,
      WHATSAPP_API_BASE_URL: wa.url,
      WHATSAPP_TIMEOUT_MS: '2000',
      WHATSAPP_MAX_RETRIES: '1',
      LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'info',
      SOAK_PROBE_FILE: probeFile,
      SOAK_PROBE_MS: String(Math.min(10_000, SAMPLE_S * 1000)),
    },
    'src/main.ts',
    [
      '--expose-gc',
      '--import',
      join(repo, 'bench/soak-probe.mjs'),
      // SOAK_CPU_PROF=1: a CPU profile of the whole run in DATA_DIR (a stall's stack, afterwards).
      ...(process.env.SOAK_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${dataDir}`] : []),
    ],
  );
  const pid = server.child.pid as number;
  // Nice is a thread's on Linux: each thread the server has by now (the main one, the log's writer,
  // the watchdog's), so that its loop gets the CPU share it had on the overloaded machine of the
  // 34 s stalls (~10 % of a core at load average ~20 on 2 cores) without loading the machine more.
  if (process.env.SOAK_NICE)
    for (const tid of readdirSync(`/proc/${pid}/task`))
      setPriority(Number(tid), Number(process.env.SOAK_NICE));
  const base = server.url;
  const api = `${base}/api/partner/v1`;
  const statuses = new Map<string, Map<number, number>>();
  const count = (op: string, status: number) => {
    let m = statuses.get(op);
    if (!m) {
      m = new Map();
      statuses.set(op, m);
    }
    m.set(status, (m.get(status) ?? 0) + 1);
  };
  /** Requests that took more than 5 s: when they began, and what they were. */
  const slow: { op: string; began: string; ms: number; status: number }[] = [];
  const call = async (
    op: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; json: any }> => {
    const began = Date.now();
    const noteSlow = (status: number) => {
      const ms = Date.now() - began;
      if (ms > 5000) slow.push({ op, began: new Date(began).toISOString().slice(11, 23), ms, status });
    };
    try {
      const res = await fetch(path.startsWith('http') ? path : `${api}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      count(op, res.status);
      noteSlow(res.status);
      let json: any = null;
      try {
        json = JSON.parse(text);
      } catch {}
      return { status: res.status, json };
    } catch {
      count(op, 0);
      noteSlow(0);
      return { status: 0, json: null };
    }
  };

  const customers: string[] = [];
  const reservations: string[] = [];
  let seq = 0;
  let feedSince: string | null = null;
  let feedCursor: string | null = null;
  const dayAhead = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10);
  // Paris in winter (+01:00) or summer (+02:00): the slot text is taken from GET /availability where it matters.
  const startAt = (day: string, time: string) => {
    const probe = new Date(`${day}T12:00:00Z`);
    const offset = new Intl.DateTimeFormat('en', { timeZone: 'Europe/Paris', timeZoneName: 'longOffset' })
      .formatToParts(probe)
      .find((p) => p.type === 'timeZoneName')
      ?.value.replace('GMT', '');
    return `${day}T${time}:00${offset || '+00:00'}`;
  };
  const phone = (n: number) => `06${String(20_000_000 + n).padStart(8, '0')}`;

  const ops: [number, string, () => Promise<unknown>][] = [
    [
      22,
      'availability',
      () => {
        const day = dayAhead(1 + rnd(60));
        const q = new URLSearchParams({
          start_at_from: startAt(day, '00:00'),
          start_at_to: startAt(day, '23:59'),
          party_size: String(1 + rnd(4)),
        });
        return call('GET /availability', 'GET', `/availability?${q}`);
      },
    ],
    [
      4,
      'availability check',
      () =>
        call('POST /availability/check', 'POST', '/availability/check', {
          start_at: startAt(dayAhead(1 + rnd(60)), pick(TIMES)),
          party_size: 2,
          shift_id: 'shift_dinner',
        }),
    ],
    [
      10,
      'customer create',
      async () => {
        const n = seq++;
        const r = await call('POST /customers', 'POST', '/customers', {
          name: `Soak Guest ${n}`,
          phone_number: phone(n),
          email: `guest${n}@soak.test`,
          external_id: `soak-c-${n}`,
        });
        if (r.json?.data?.id) customers.push(r.json.data.id);
      },
    ],
    [
      5,
      'customer update',
      () =>
        customers.length
          ? call('PATCH /customers/{id}', 'PATCH', `/customers/${pick(customers)}`, {
              tags: [`t${rnd(5)}`],
              name: `Renamed ${rnd(1e6)}`,
            })
          : Promise.resolve(),
    ],
    [
      8,
      'customers feed',
      async () => {
        const q = new URLSearchParams({ limit: '100' });
        if (feedCursor) q.set('cursor', feedCursor);
        else if (feedSince) q.set('updated_since', feedSince);
        const r = await call('GET /customers (feed)', 'GET', `/customers?${q}`);
        const items = (r.json?.data ?? []) as { updated_at: string }[];
        if (items.length) feedSince = items.at(-1)?.updated_at ?? feedSince;
        feedCursor = r.json?.pagination?.has_more ? r.json.pagination.next_cursor : null;
      },
    ],
    [
      9,
      'reservation create',
      async () => {
        const n = seq++;
        const r = await call('POST /reservations', 'POST', '/reservations', {
          customer: { name: `Booker ${n}`, phone_number: phone(500_000 + n) },
          party_size: 1 + rnd(4),
          start_at: startAt(dayAhead(1 + rnd(60)), pick(TIMES)),
          shift_id: 'shift_dinner',
          external_id: `soak-r-${n}`,
        });
        if (r.json?.data?.id) reservations.push(r.json.data.id);
        if (reservations.length > 5000) reservations.splice(0, 1000);
      },
    ],
    [
      4,
      'reservation modify',
      () =>
        reservations.length
          ? call('PATCH /reservations/{id}', 'PATCH', `/reservations/${pick(reservations)}`, {
              party_size: 1 + rnd(4),
            })
          : Promise.resolve(),
    ],
    [
      3,
      'reservation cancel',
      () =>
        reservations.length
          ? call('POST /reservations/{id}/cancel', 'POST', `/reservations/${pick(reservations)}/cancel`, {
              reason: 'soak',
            })
          : Promise.resolve(),
    ],
    [
      4,
      'reservation lookup',
      () => call('GET /reservations', 'GET', `/reservations?external_id=soak-r-${rnd(seq + 1)}`),
    ],
    [
      8,
      'missed call',
      () => {
        // New callers mostly; a tenth replays an earlier call's id (a duplicate or a retry).
        const n = rnd(10) === 0 ? rnd(seq + 1) : seq++;
        return call('POST /missed-calls', 'POST', '/missed-calls', {
          caller_phone_number: phone(1_000_000 + n),
          external_call_id: `soak-mc-${n}`,
        });
      },
    ],
    [3, 'missed calls list', () => call('GET /missed-calls', 'GET', '/missed-calls?limit=50')],
    [
      6,
      'many clients',
      // A new client address each time (TRUST_PROXY): one rate-limit budget per address.
      () =>
        call('GET /me (distinct IPs)', 'GET', '/me', undefined, {
          'x-forwarded-for': `10.${rnd(256)}.${rnd(256)}.${rnd(256)}`,
        }),
    ],
    [
      3,
      'unknown tokens',
      () =>
        call('GET /me (unknown token)', 'GET', '/me', undefined, {
          authorization: `Bearer couvert_pk_unknown_${rnd(1e9)}_${seq++}`,
        }),
    ],
  ];
  const totalWeight = ops.reduce((a, [w]) => a + w, 0);
  const chooseOp = () => {
    let r = Math.random() * totalWeight;
    for (const op of ops) {
      r -= op[0];
      if (r < 0) return op;
    }
    return ops[0] as (typeof ops)[number];
  };

  // Webhook endpoints of the main key: every customer and reservation write is delivered to each.
  for (const kind of ['ok', 'ok', 'slow', 'hang', 'fail', 'cut']) {
    const r = await call('POST /webhook-endpoints', 'POST', '/webhook-endpoints', { url: hooks.url(kind) });
    if (r.status !== 201) throw new Error(`webhook endpoint ${kind}: ${r.status} ${JSON.stringify(r.json)}`);
  }

  const stopAt = Date.now() + MINUTES * 60_000;
  let inFlight = 0;
  let dropped = 0;
  let sent = 0;
  const running = new Set<Promise<unknown>>();
  const launch = (p: () => Promise<unknown>) => {
    inFlight++;
    sent++;
    const done = p()
      .catch(() => {})
      .finally(() => {
        inFlight--;
        running.delete(done);
      });
    running.add(done);
  };

  // A signed-in manager browsing the dashboard (one session, kept).
  const manager = new Browser(base);
  const first = await manager.get('/dashboard');
  const signInPage = await manager.get(first.location as string);
  const fields = /name="csrf_token" value="([^"]*)"/.exec(signInPage.text);
  const signedIn = await manager.post('/sign-in', {
    csrf_token: fields?.[1] ?? '',
    email: MANAGER,
    password: PASSWORD,
  });
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`);
  const pages = [
    '/dashboard',
    '/dashboard/webhooks',
    '/dashboard/api-keys',
    '/dashboard/insights',
    '/dashboard/import',
  ];
  const background = async (everyMs: number, fn: () => Promise<unknown>) => {
    while (Date.now() < stopAt) {
      await sleep(everyMs * (0.5 + Math.random()));
      if (Date.now() >= stopAt) return;
      try {
        await fn();
      } catch (err) {
        count(`background error: ${(err as Error).message.slice(0, 60)}`, 0);
      }
    }
  };
  const cliTimes: string[] = [];
  let cliRuns = 0;
  let cliFailures = 0;
  const loops = [
    background(1500, async () => {
      const r = await manager.get(`${pick(pages)}?restaurant=rest_soak`);
      count('dashboard page', r.status);
    }),
    // An OAuth consent by a new browser (a new session each time), the code exchanged, the token used, then revoked.
    background(6000, async () => {
      const b = new Browser(base);
      const { verifier, challenge } = pkce();
      const back = await consent(b, {
        query: authorizeQuery({ client_id: 'app_soak', challenge, restaurant_hint: 'rest_soak' }),
        email: MANAGER,
        restaurant: 'rest_soak',
      });
      const code = back.searchParams.get('code') ?? '';
      const auth = {
        authorization: basic('app_soak', APP_SECRET),
        'content-type': 'application/x-www-form-urlencoded',
      };
      const res = await fetch(`${base}/api/oauth/token`, {
        method: 'POST',
        headers: auth,
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: CALLBACK,
          code_verifier: verifier,
        }).toString(),
      });
      count('POST /api/oauth/token', res.status);
      const token = ((await res.json()) as { access_token?: string }).access_token;
      if (!token) return;
      await call('GET /me (OAuth token)', 'GET', '/me', undefined, { authorization: `Bearer ${token}` });
      const revoked = await fetch(`${base}/api/oauth/revoke`, {
        method: 'POST',
        headers: auth,
        body: new URLSearchParams({ token }).toString(),
      });
      await revoked.text();
      count('POST /api/oauth/revoke', revoked.status);
    }),
    // The operator's CLI beside the server: a new key, then used once.
    background(60_000, async () => {
      const cliBegan = Date.now();
      const out = await new Promise<string>((resolve) =>
        execFile(
          process.execPath,
          [
            '--import',
            'tsx',
            'src/cli/main.ts',
            'keys',
            'create',
            '--restaurant',
            'rest_soak',
            '--name',
            `cli ${cliRuns}`,
            '--scopes',
            'CATALOG_READ',
          ],
          { cwd: repo, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, timeout: 120_000 },
          (err, stdout) => {
            cliRuns++;
            if (err) cliFailures++;
            resolve(stdout);
          },
        ),
      );
      cliTimes.push(
        `${new Date(cliBegan).toISOString().slice(11, 19)} (${fmt((Date.now() - cliBegan) / 1000)} s)`,
      );
      const token = /Token \(shown once\): (\S+)/.exec(out)?.[1];
      if (token)
        await call('GET /me (CLI key)', 'GET', '/me', undefined, { authorization: `Bearer ${token}` });
    }),
  ];

  const rows: Record<string, string | number>[] = [];
  const started = Date.now();
  const cpu0 = cpuSeconds(pid) ?? Number.NaN;
  let lastSample = 0;
  const sampleRow = async () => {
    const p = lastProbe(probeFile);
    const f = fds(pid);
    const t = (Date.now() - started) / 1000;
    rows.push({
      't s': Math.round(t),
      sent,
      'RSS MB': mb(vm(pid, 'VmRSS')),
      'heap live MB': p ? mb(p.heapUsed) : '-',
      'ext MB': p ? mb(p.external) : '-',
      fds: f.fds,
      sockets: f.sockets,
      timers: p?.resources.Timeout ?? '-',
      'TCP handles': p ? (p.resources.TCPSocketWrap ?? 0) + (p.resources.TCPServerWrap ?? 0) : '-',
      'lag p99 ms': p ? fmt(p.lagP99Ms, 0) : '-',
      'lag max ms': p ? fmt(p.lagMaxMs, 0) : '-',
      'gc max ms': p?.gcLongestMs ?? '-',
      'WAL MB': mb(walBytes(dataDir)),
      'hook conns': await hooks.connections(),
      'wa conns': await wa.connections(),
      threads: /^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '-',
      'cpu %': fmt((((cpuSeconds(pid) ?? Number.NaN) - cpu0) / t) * 100, 0),
      inflight: inFlight,
    });
    console.log(JSON.stringify(rows.at(-1)));
  };
  await sampleRow();
  try {
    const interval = 1000 / RATE;
    let next = Date.now();
    while (Date.now() < stopAt) {
      next += interval;
      const wait = next - Date.now();
      if (wait > 0) await sleep(wait);
      if (inFlight >= MAX_IN_FLIGHT) dropped++;
      else launch(chooseOp()[2]);
      if (Date.now() - lastSample >= SAMPLE_S * 1000) {
        lastSample = Date.now();
        await sampleRow();
      }
    }
    await Promise.all(loops);
    await Promise.all(running);
    // After the load: what stays once the hung attempts' timeouts have passed and the idle sockets closed.
    await sleep(20_000);
    await sampleRow();
  } finally {
    await server.stop();
    await hooks.close();
    await wa.close();
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `\nsoak: ${MINUTES} min at ${RATE} req/s offered (${sent} sent, ${dropped} not sent: ${MAX_IN_FLIGHT} in flight), CLI runs ${cliRuns} (${cliFailures} failed); load average ${load}; data ${dataDir}`,
  );
  console.table(rows);
  const byOp = [...statuses].map(([op, m]) => ({
    op,
    ...Object.fromEntries([...m].sort((a, b) => a[0] - b[0]).map(([s, n]) => [String(s), n])),
  }));
  console.table(byOp);
  console.log(`CLI runs began at ${cliTimes.join(', ')}`);
  if (slow.length) {
    console.log(`${slow.length} requests took more than 5 s; the slowest:`);
    console.table(slow.sort((a, b) => b.ms - a.ms).slice(0, 15));
  }
  console.log('webhook receivers:', hooks.arrived, ' WhatsApp answers:', wa.answers);
  // The watchdog's records of the loop standing still (bench/soak-probe.mjs): each stall's longest
  // line, and what its profile says the main thread ran.
  const watchdog = probeLines(probeFile);
  const stalls = new Map<number, Record<string, unknown>>();
  for (const l of watchdog) {
    const s = l.stall as { since: number } | undefined;
    if (s) stalls.set(s.since, s);
  }
  if (stalls.size) {
    console.log(`${stalls.size} stall(s) of the event loop (${probeFile}):`);
    for (const s of stalls.values()) console.log(JSON.stringify(s));
    for (const l of watchdog) if (l.stallProfile) console.log(JSON.stringify(l.stallProfile, null, 1));
  } else console.log("no stall of the event loop past the watchdog's threshold");
  copyFileSync(join(dataDir, 'server.log'), join(dataDir, 'server-soak.log'));
  // The same data read by a fresh process: the heap the read models need for it. What the soaked
  // process held live beyond that was kept by the load, not by the data.
  const freshProbe = join(dataDir, 'soak-probe-fresh.jsonl');
  const fresh = await serve(
    {
      DATA_DIR: dataDir,
      BOOTSTRAP_FILE: bootstrapFile,
      PORT: process.env.SOAK_FRESH_PORT ?? '0',
      ROLES: 'api,projector',
      LOG_LEVEL: 'warn',
      SOAK_PROBE_FILE: freshProbe,
      SOAK_PROBE_MS: '3000',
    },
    'src/main.ts',
    ['--expose-gc', '--import', join(repo, 'bench/soak-probe.mjs')],
    // Its start replays the whole log into the read models: minutes on a busy machine.
    600_000,
  ).catch((err: Error) => {
    console.log(`the fresh process did not start: ${err.message.slice(0, 300)}`);
    return null;
  });
  let freshHeap: Probe | null = null;
  if (fresh)
    try {
      for (let i = 0; i < 3; i++) {
        await sleep(3500);
        freshHeap = lastProbe(freshProbe);
      }
    } finally {
      await fresh.stop();
    }
  const soaked = lastProbe(probeFile);
  if (!keep) rmSync(dataDir, { recursive: true, force: true });
  if (soaked && freshHeap)
    console.log(
      `heap live at the end ${mb(soaked.heapUsed)} MB; a fresh process on the same data ${mb(freshHeap.heapUsed)} MB (RSS ${mb(freshHeap.rss)} MB): ${mb(soaked.heapUsed - freshHeap.heapUsed)} MB held by the soaked process beyond its data`,
    );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await soak();
