// Missed calls: POST /missed-calls throughput with durable commits and the default sender (the
// outbox), for the three paths a telephony partner drives: a new caller each time (match misses,
// a customer is created, the message is requested, recorded and marked sent), a caller already in
// cooldown (matched, skipped), and a replayed external_call_id (answered from the record).
// Run alone: npx tsx bench/missed-calls.bench.ts (BENCH_ROUNDS=1 for a quick look). Besides the rates, the
// server's CPU time per request (from /proc), steadier than throughput on a shared machine.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { cpuSeconds, fmt, type LoadResult, load, median, serve, table, writeJson } from './harness';

const TOKEN = 'couvert_pk_bench_missed_calls_000000000000001';

const bootstrap = (dir: string) =>
  writeJson(dir, 'bootstrap.json', {
    restaurants: [
      {
        id: 'rest_bench',
        name: 'Bench',
        slug: 'bench',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
        features: ['MISSED_CALLS'],
        booking_url: 'https://bench.example/book',
        message_templates: [
          {
            id: 'tpl_missed',
            type: 'MISSED_CALL',
            channel: 'WHATSAPP',
            status: 'APPROVED',
            body: 'Bonjour {{guest_name}}, réservez chez {{restaurant_name}} : {{booking_link}}',
          },
        ],
        api_keys: [{ id: 'key_bench', name: 'bench', token: TOKEN, scopes: ['MISSED_CALLS_WRITE'] }],
      },
    ],
  });

export async function missedCallsBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-bench-missed-calls-'));
  const api = await serve({
    DATA_DIR: dataDir,
    BOOTSTRAP_FILE: bootstrap(dataDir),
    RATE_LIMIT_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
  });
  const url = `${api.url}/api/partner/v1/missed-calls`;
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  let n = 0;
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  /** Server CPU µs per request of each run. */
  const cpuPerRequest = new Map<LoadResult, number | null>();
  const measured = async (label: string, options: autocannon.Options) => {
    const before = cpuSeconds(api.child.pid);
    const r = await load(label, options);
    const after = cpuSeconds(api.child.pid);
    cpuPerRequest.set(
      r,
      before !== null && after !== null && r.total ? ((after - before) * 1e6) / r.total : null,
    );
    return r;
  };
  // A distinct French mobile number per request: 06 10 00 00 00 onwards.
  const fresh = () =>
    JSON.stringify({ caller_phone_number: `06${String(10_000_000 + n++).padStart(8, '0')}` });
  const outcomes = new Map<string, number>();
  const count = (body: Buffer | string) => {
    const o = (JSON.parse(String(body)) as { data?: { outcome?: string } }).data?.outcome ?? 'error';
    outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
  };
  try {
    const newCallers = (label: string) =>
      measured(label, {
        url,
        method: 'POST',
        headers,
        requests: [
          { setupRequest: (req) => ({ ...req, body: fresh() }), onResponse: (_s, body) => count(body) },
        ],
      });
    await newCallers('warm');
    outcomes.clear();
    const created = await median(rounds, () => newCallers('new caller'));
    const sentShare = `${outcomes.get('SENT') ?? 0} SENT of ${[...outcomes.values()].reduce((a, b) => a + b, 0)}`;
    const same = await median(rounds, () =>
      measured('same caller', {
        url,
        method: 'POST',
        headers,
        body: JSON.stringify({ caller_phone_number: '0610000000' }),
      }),
    );
    const replay = await median(rounds, () =>
      measured('replay', {
        url,
        method: 'POST',
        headers,
        body: JSON.stringify({ caller_phone_number: '0699999999', external_call_id: 'bench-replay' }),
      }),
    );
    const row = (r: typeof created) =>
      `${fmt(r.rps, 0)} req/s (p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors + r.non2xx}; server CPU ${fmt(cpuPerRequest.get(r) ?? Number.NaN, 0)} µs/req)`;
    table(`POST /missed-calls (outbox sender, durable commits, 10 connections, 8 s; medians of ${rounds})`, [
      { case: 'new caller each time (customer created, message sent)', value: row(created), note: sentShare },
      { case: 'same caller (SKIPPED_COOLDOWN)', value: row(same), note: '' },
      { case: 'replayed external_call_id (SKIPPED_DUPLICATE)', value: row(replay), note: '' },
    ]);
  } finally {
    await api.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await missedCallsBench();
