// The CLI's output read by a command that stops early (`audit export … | head -1`): the closed stdout
// ends the CLI quietly, exit 141 (what a shell reports for a process a SIGPIPE ended: the output is
// incomplete, and `set -o pipefail` says so), nothing on stderr. Before: "error: write EPIPE", exit 1,
// the code of a failed command.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createRestaurantByCli } from '../helpers/cli-process';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const t = suite<{ dataDir: string }>('cli: a closed stdout');
t.before(async (ctx) => {
  ctx.dataDir = mkdtempSync(join(tmpdir(), 'couvert-cli-epipe-'));
  const made = await createRestaurantByCli(ctx);
  assert.is(made.code, 0, made.stderr);
});
t.after(({ dataDir }) => rmSync(dataDir, { recursive: true, force: true }));

/** Runs the CLI with its stdout's reading end closed before it writes anything (it is still starting). */
function withStdoutClosed(dataDir: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

for (const args of [
  ['audit', 'export', '--restaurant', 'rest_x', '--no-progress'],
  ['restaurants', 'list'],
])
  t(`${args.join(' ')} | head -1: exit 141, nothing on stderr`, async ({ dataDir }) => {
    const run = await withStdoutClosed(dataDir, args);
    assert.is(run.stderr, '');
    assert.is(run.code, 141);
  });

t.run();
