// Shared pieces of the HTTP benchmarks: start a server in its own process, drive it with autocannon
// from this one, and print tables. Figures are medians of the runs; machines are shared and noisy.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';

export const repo = resolve(new URL('..', import.meta.url).pathname);

export interface Served {
  url: string;
  child: ChildProcess;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Starts `script` (default: the real service) with PORT=0 and waits for its URL. The server's stdout
 * (banner and access log) goes to `server.log` in its data directory, not to this process: the load
 * generator runs here and must not spend its time reading the server's log lines. The data directory
 * (given or made here) is removed when the server stops, unless BENCH_KEEP_DATA is set. `nodeArgs` go
 * to node before the script (e.g. --cpu-prof, which NODE_OPTIONS refuses).
 */
export async function serve(
  env: Record<string, string>,
  script = 'src/main.ts',
  nodeArgs: string[] = [],
  startTimeoutMs = 120_000,
): Promise<Served> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-bench-'));
  const logFile = join(dataDir, 'server.log');
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
    cwd: repo,
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', out, 'inherit'],
  });
  closeSync(out);
  const url = await new Promise<string>((res, rej) => {
    const started = Date.now();
    const timer = setInterval(() => {
      const text = readFileSync(logFile, 'utf8');
      const m = /listening on (http:\/\/[\d.:]+)/.exec(text);
      if (m) {
        clearInterval(timer);
        res(m[1] as string);
      } else if (Date.now() - started > startTimeoutMs) {
        clearInterval(timer);
        // Not left running behind the failed start.
        child.kill('SIGKILL');
        rej(new Error(`server did not start:\n${text}`));
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(timer);
      rej(new Error(`server exited ${code}:\n${readFileSync(logFile, 'utf8')}`));
    });
  });
  return {
    url,
    child,
    dataDir,
    stop: async () => {
      await new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      });
      if (process.env.BENCH_KEEP_DATA) console.log(`kept ${dataDir} (server.log, events.sqlite)`);
      else rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc; null where there is no /proc.
 * Per request it is a steadier figure than throughput on a shared machine: another tenant's burst
 * slows the wall clock of a run much more than the work each request costs.
 */
export function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) ", in clock ticks.
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return null;
  }
}

let ticks: number | null = null;
/** Clock ticks per second (USER_HZ) that /proc counts in: 100 on most Linux systems, but asked, not assumed. */
export function clockTicks(): number {
  if (ticks === null) {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    ticks = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return ticks;
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

export interface LoadResult {
  label: string;
  rps: number;
  /** Requests answered in the run. */
  total: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /**
   * plainLoad only: how late the client itself sent its requests (ms after they were due, p99): on a
   * machine the server shares, the part of the client's latency that is the client's own wait for a core.
   */
  sentLateP99?: number;
}

export async function load(
  label: string,
  options: autocannon.Options & { overallRate?: number },
): Promise<LoadResult> {
  const r = await autocannon({ connections: 10, duration: 8, ...options });
  return {
    label,
    rps: r.requests.average,
    total: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

/**
 * The same kind of load as `load` (a fixed rate over keep-alive connections) from Node's own `http`
 * client: a second opinion on latency, without autocannon's own overhead (docs/BENCHMARKS.md, eighth
 * pass). Each request is timed from the moment it is due (so a client that falls behind counts it).
 */
export async function plainLoad(
  label: string,
  o: { url: string; headers?: Record<string, string>; rate: number; connections?: number; duration: number },
): Promise<LoadResult> {
  const { Agent, request } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: o.connections ?? 10 });
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  const started = performance.now();
  const total = Math.round(o.rate * o.duration);
  const done: Promise<void>[] = [];
  const late: number[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / o.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    late.push(performance.now() - due);
    done.push(
      new Promise<void>((resolve) => {
        const req = request(o.url, { agent, headers: o.headers }, (res) => {
          res.resume();
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 300) non2xx++;
            latencies.push(performance.now() - due);
            resolve();
          });
        });
        req.on('error', () => {
          errors++;
          resolve();
        });
        req.end();
      }),
    );
  }
  await Promise.all(done);
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0);
  return {
    label,
    rps: latencies.length / ((performance.now() - started) / 1000),
    total: latencies.length,
    p50: at(0.5),
    p99: at(0.99),
    errors,
    non2xx,
    sentLateP99: fmt(late.sort((a, b) => a - b)[Math.floor(late.length * 0.99)] ?? 0),
  };
}

/** Runs `fn` `times` times and keeps the run with the median throughput. */
export async function median(times: number, fn: () => Promise<LoadResult>): Promise<LoadResult> {
  const runs: LoadResult[] = [];
  for (let i = 0; i < times; i++) runs.push(await fn());
  runs.sort((a, b) => a.rps - b.rps);
  return runs[Math.floor(runs.length / 2)] as LoadResult;
}

export function table(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n${title}`);
  console.table(rows);
}

export const fmt = (n: number, digits = 1) => Number(n.toFixed(digits));
