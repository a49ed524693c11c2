// The operator CLI as an operator runs it: its own process, on a running test server's data directory.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestService } from './service';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run cli -- …args` (without npm); a run past 60 s is killed, so a hang fails instead of stalling uvu. */
export function runCli(
  svc: Pick<TestService, 'dataDir'>,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATA_DIR: svc.dataDir,
        LOG_LEVEL: 'silent',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * `restaurants create` of rest_x (Chez X, FR, Europe/Paris, EUR): one of the two commands that start a
 * log (the others refuse a DATA_DIR holding none), so the set-up of a suite running the CLI on its own
 * directory.
 */
export const createRestaurantByCli = (svc: Pick<TestService, 'dataDir'>): Promise<CliRun> =>
  runCli(svc, [
    'restaurants',
    'create',
    '--id',
    'rest_x',
    '--name',
    'Chez X',
    '--slug',
    'chez-x',
    '--country',
    'FR',
    '--timezone',
    'Europe/Paris',
    '--currency',
    'EUR',
  ]);
