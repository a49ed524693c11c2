// Runs every uvu suite (test/**/*.test.ts), each file in its own process (test/harness/run-suite-file.ts,
// which reports whatever a test throws), and ends with the line CI reads:
// "N passed, N failed, N skipped" (", N not run" added when a file stopped before its last test).
// Usage: node --import tsx test/run.ts [substring…]; COUVERT_TEST_DIR=<dir> searches another directory
// (test/unit/test-harness.unit.test.ts runs the runner on suites it writes to a temporary one).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileCounts } from './harness/file-outcome';

const root = join(dirname(new URL(import.meta.url).pathname), '..');
const filters = process.argv.slice(2);

function listTests(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...listTests(full));
    else if (entry.endsWith('.test.ts')) out.push(full);
  }
  return out.sort();
}

// Projections run with every document they read or write deep-frozen (src/projection/write-back.ts):
// one that changes a shared document throws in the tests.
process.env.COUVERT_STRICT_PROJECTIONS ??= '1';

const files = listTests(resolve(process.env.COUVERT_TEST_DIR ?? join(root, 'test'))).filter(
  (f) => filters.length === 0 || filters.some((x) => relative(root, f).includes(x)),
);

interface Outcome {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  notRun: number;
  ms: number;
  output: string;
}

const perFileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 300_000);
const killGraceMs = 5_000;

function runFile(file: string): Promise<Outcome> {
  const started = Date.now();
  const tag = randomBytes(6).toString('hex');
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'test/harness/run-suite-file.ts'), file],
      {
        cwd: root,
        env: { ...process.env, FORCE_COLOR: '0', HARNESS_SUMMARY_TAG: tag },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    // SIGUSR2 first: the file's process prints the test it was in and its counts (run-suite-file.ts;
    // not SIGTERM, which tests emit in-process); SIGKILL only for one that does not end on it (a test
    // stuck in a loop).
    let killer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      output += `\n[run] ${relative(root, file)} exceeded ${perFileTimeoutMs} ms: stopped (SIGUSR2)\n`;
      child.kill('SIGUSR2');
      killer = setTimeout(() => {
        output += `\n[run] ${relative(root, file)} still running ${killGraceMs} ms after SIGUSR2: killed\n`;
        child.kill('SIGKILL');
      }, killGraceMs);
    }, perFileTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      clearTimeout(killer);
      const counts = fileCounts(output, code, tag);
      if (counts.note) output += `\n[run] ${counts.note}\n`;
      resolve({
        file: relative(root, file),
        passed: counts.passed,
        failed: counts.failed,
        skipped: counts.skipped,
        notRun: counts.notRun,
        ms: Date.now() - started,
        output,
      });
    });
  });
}

const concurrency = Math.max(1, Math.min(Number(process.env.TEST_CONCURRENCY ?? availableParallelism()), 4));
const queue = [...files];
const outcomes: Outcome[] = [];
async function worker() {
  for (let file = queue.shift(); file; file = queue.shift()) {
    const outcome = await runFile(file);
    outcomes.push(outcome);
    const mark = outcome.failed ? 'FAIL' : 'ok  ';
    const notRun = outcome.notRun ? `, ${outcome.notRun} not run` : '';
    process.stdout.write(
      `${mark} ${outcome.file}  ${outcome.passed} passed, ${outcome.failed} failed, ${outcome.skipped} skipped${notRun} (${(outcome.ms / 1000).toFixed(1)} s)\n`,
    );
    if (outcome.failed || process.env.TEST_VERBOSE) process.stdout.write(`${outcome.output}\n`);
    else {
      for (const line of outcome.output.split('\n'))
        if (/\bSKIP|skipping/.test(line)) process.stdout.write(`     ${line}\n`);
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const sum = (k: 'passed' | 'failed' | 'skipped' | 'notRun') => outcomes.reduce((a, o) => a + o[k], 0);
if (files.length === 0) console.log('no test files matched');
const notRun = sum('notRun') ? `, ${sum('notRun')} not run` : '';
console.log(`${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped${notRun}`);
process.exitCode = sum('failed') > 0 || files.length === 0 ? 1 : 0;
