// The real server as a separate process (`node --import tsx src/main.ts`), for tests that must kill it
// the way a machine or an orchestrator does (SIGKILL: no shutdown hook, no flush) and start it again
// on the same DATA_DIR.
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const repo = resolve(new URL('../..', import.meta.url).pathname);

export interface SpawnedServer {
  child: ChildProcess;
  port: number;
  base: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGKILL to the whole process group; resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (finish in-flight requests, close the stores); resolves with the exit code. */
  stop(): Promise<number | null>;
}

const exited = (child: ChildProcess, timeoutMs: number) =>
  new Promise<number | null>((res, rej) => {
    if (child.exitCode !== null || child.signalCode !== null) return res(child.exitCode);
    const timer = setTimeout(() => rej(new Error(`process ${child.pid} did not exit`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      res(code);
    });
  });

export async function spawnServer(env: Record<string, string>, timeoutMs = 60_000): Promise<SpawnedServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: repo,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so a kill reaches whatever it started too.
    detached: true,
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const port = await new Promise<number>((res, rej) => {
    const timer = setTimeout(() => {
      // Not listening yet, but running: killed, or it would outlive the test (and hold its file open).
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // already gone
      }
      rej(new Error(`no banner after ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const look = () => {
      const m = /listening on http:\/\/[\d.]+:(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout?.off('data', look);
      res(Number(m[1]));
    };
    child.stdout?.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`the server exited (${code}) before listening:\n${out}`));
    });
  });
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // the group is already gone
    }
  };
  return {
    child,
    port,
    base: `http://127.0.0.1:${port}`,
    output: () => out,
    async kill() {
      signal('SIGKILL');
      await exited(child, 20_000);
    },
    async stop() {
      signal('SIGTERM');
      try {
        return await exited(child, 30_000);
      } catch (err) {
        signal('SIGKILL');
        throw err;
      }
    },
  };
}
