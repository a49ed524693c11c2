// Runs every uvu suite (test/**/*.test.ts), each file in its own process, and ends with the line
// CI reads: "N passed, N failed, N skipped". Usage: node --import tsx test/run.ts [substring…]
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';

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

const files = listTests(join(root, 'test')).filter(
  (f) => filters.length === 0 || filters.some((x) => relative(root, f).includes(x)),
);

interface Outcome {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  ms: number;
  output: string;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const perFileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 300_000);

function runFile(file: string): Promise<Outcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'node_modules/uvu/bin.js'),
        dirname(file),
        `^${escapeRegex(basename(file))}$`,
      ],
      {
        cwd: root,
        env: { ...process.env, FORCE_COLOR: '0' },
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
    const timer = setTimeout(() => {
      output += `\n[run] ${relative(root, file)} exceeded ${perFileTimeoutMs} ms: killed\n`;
      child.kill('SIGKILL');
    }, perFileTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes
      const clean = output.replace(/\x1b\[[0-9;]*m/g, '');
      const num = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(clean)?.[1] ?? Number.NaN);
      const total = num('Total');
      const passedN = num('Passed');
      const skipped = num('Skipped');
      let passed = Number.isNaN(passedN) ? 0 : passedN;
      let failed = Number.isNaN(total) ? 1 : total - passedN;
      if (code !== 0 && failed === 0) failed = 1; // crashed after its summary, or exited early
      if (Number.isNaN(total) && code === 0) {
        passed = 0;
        failed = 1;
        output += '\n[run] no uvu summary: does the suite call .run()?\n';
      }
      resolve({
        file: relative(root, file),
        passed,
        failed,
        skipped: Number.isNaN(skipped) ? 0 : skipped,
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
    process.stdout.write(
      `${mark} ${outcome.file}  ${outcome.passed} passed, ${outcome.failed} failed, ${outcome.skipped} skipped (${(outcome.ms / 1000).toFixed(1)} s)\n`,
    );
    if (outcome.failed || process.env.TEST_VERBOSE) process.stdout.write(`${outcome.output}\n`);
    else {
      for (const line of outcome.output.split('\n'))
        if (/\bSKIP|skipping/.test(line)) process.stdout.write(`     ${line}\n`);
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const sum = (k: 'passed' | 'failed' | 'skipped') => outcomes.reduce((a, o) => a + o[k], 0);
if (files.length === 0) console.log('no test files matched');
console.log(`${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`);
process.exitCode = sum('failed') > 0 || files.length === 0 ? 1 : 0;
