// GET /me with a valid key against a bare Koa route answering the same JSON, in the same run.
import { fileURLToPath } from 'node:url';
import { cpuSeconds, fmt, type LoadResult, load, median, serve, table, writeJson } from './harness';

const PAIRS = 7;
/** The run with the median throughput. */
const middle = (runs: LoadResult[]) =>
  [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)] as LoadResult;

const TOKEN = 'couvert_pk_bench_000000000000000000000000000001';

export async function platformBench(): Promise<void> {
  const bare = await serve({}, 'bench/bare-koa.ts');
  const dir = bare.dataDir;
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
          { id: 'key_bench', name: 'bench', token: TOKEN, scopes: ['CATALOG_READ', 'AVAILABILITY_READ'] },
        ],
      },
    ],
  });
  const api = await serve({ BOOTSTRAP_FILE: bootstrap, RATE_LIMIT_PER_MINUTE: '10000000' }).catch(
    async (err) => {
      await bare.stop();
      throw err;
    },
  );
  try {
    const headers = { authorization: `Bearer ${TOKEN}` };
    // Warm both up (JIT, connection pools) before measuring.
    await load('warm', { url: `${bare.url}/me`, duration: 2 });
    await load('warm', { url: `${api.url}/api/partner/v1/me`, headers, duration: 2 });
    // Alternating pairs, each pair's ratio taken on its own: the machine's speed drifts over a run
    // (shared, noisy), and a drift between "all of one, then all of the other" would show as a ratio.
    const pairs: { koa: LoadResult; me: LoadResult }[] = [];
    const cpu = { koa: [] as number[], me: [] as number[] };
    // Server CPU per request (µs) over a run, when /proc tells.
    const measured = async (pid: number | undefined, into: number[], run: () => Promise<LoadResult>) => {
      const before = cpuSeconds(pid);
      const result = await run();
      const after = cpuSeconds(pid);
      if (before !== null && after !== null && result.total > 0)
        into.push(((after - before) * 1e6) / result.total);
      return result;
    };
    for (let i = 0; i < PAIRS; i++) {
      const koaRun = await measured(bare.child.pid, cpu.koa, () =>
        load('bare Koa', { url: `${bare.url}/me`, duration: 5 }),
      );
      const meRun = await measured(api.child.pid, cpu.me, () =>
        load('GET /me', { url: `${api.url}/api/partner/v1/me`, headers, duration: 5 }),
      );
      pairs.push({ koa: koaRun, me: meRun });
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const koa = middle(pairs.map((p) => p.koa));
    const me = middle(pairs.map((p) => p.me));
    const ratios = pairs.map((p) => p.me.rps / p.koa.rps).sort((a, b) => a - b);
    const ratio = ratios[Math.floor(ratios.length / 2)] as number;
    const rate = await median(3, () =>
      load('GET /me @1000 rps', {
        url: `${api.url}/api/partner/v1/me`,
        headers,
        overallRate: 1000,
        // autocannon's correction assumes 1 ms between a connection's requests and adds a fake
        // sample per millisecond of every slower answer; at a fixed rate it inflates p99 many times.
        ignoreCoordinatedOmission: true,
        connections: 20,
      }),
    );
    table(
      `Throughput (10 connections, ${PAIRS} alternating pairs of 5 s runs, median) and latency at a fixed 1,000 req/s (median of 3)`,
      [
        ...[koa, me, rate].map((r) => ({
          case: r.label,
          'req/s': fmt(r.rps, 0),
          'p50 ms': r.p50,
          'p99 ms': r.p99,
          'server CPU µs/req':
            r === koa && cpu.koa.length
              ? fmt(med(cpu.koa), 1)
              : r === me && cpu.me.length
                ? fmt(med(cpu.me), 1)
                : '-',
          errors: r.errors + r.non2xx,
        })),
      ],
    );
    if (cpu.koa.length && cpu.me.length)
      console.log(
        `server CPU per request (median of the runs): bare Koa ${fmt(med(cpu.koa), 1)} µs, GET /me ${fmt(med(cpu.me), 1)} µs; bare/ours ${fmt(med(cpu.koa) / med(cpu.me), 2)}, the throughput ratio a run bound by the server alone would show`,
      );
    console.log(
      `GET /me / bare Koa throughput ratio: ${fmt(ratio, 2)} (median of ${PAIRS} pairs: ${ratios.map((r) => fmt(r, 2)).join(' ')}; goal ≥ 0.6); p99 at 1,000 req/s: ${rate.p99} ms (goal ≤ 10 ms)`,
    );
  } finally {
    await api.stop();
    await bare.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await platformBench();
