// The CLI's exit codes, as an operator's script reads them: 2 when the command was not run as given (a
// usage error: an unknown command or flag, a flag repeated, missing or without its value, a word left
// over, a bad environment variable), 1 when it ran and failed or found problems. Before, every usage
// error but an unknown command exited 1, the code of "audit verify found problems" and "log unreadable",
// so a script could not tell a mistyped flag from a damaged log.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createRestaurantByCli, runCli } from '../helpers/cli-process';

const t = suite<{ dataDir: string }>('cli: exit codes');
t.before(async (ctx) => {
  ctx.dataDir = mkdtempSync(join(tmpdir(), 'couvert-cli-exit-'));
  const made = await createRestaurantByCli(ctx);
  assert.is(made.code, 0, made.stderr);
});
t.after(({ dataDir }) => rmSync(dataDir, { recursive: true, force: true }));

const usageErrors: [string, string[], RegExp, Record<string, string>?][] = [
  ['an unknown command', ['audit', 'verifyy'], /needs one of/],
  ['an unknown flag', ['audit', 'export', '--restaurant', 'rest_x', '--frm', 'x'], /unknown flag --frm/],
  [
    'a flag given twice',
    ['audit', 'export', '--restaurant', 'rest_x', '--restaurant', 'rest_y'],
    /--restaurant is given more than once/,
  ],
  ['a required flag missing', ['audit', 'export'], /--restaurant is required/],
  ['a flag without its value', ['keys', 'list', '--restaurant'], /--restaurant needs a value/],
  ['a word left over', ['restaurants', 'list', 'rest_x'], /unexpected argument "rest_x"/],
  ['a bad environment variable', ['restaurants', 'list'], /PORT/, { PORT: 'abc' }],
];
for (const [what, args, message, env] of usageErrors)
  t(`${what} exits 2 (npm run cli -- ${args.join(' ')})`, async ({ dataDir }) => {
    const run = await runCli({ dataDir }, args, env);
    assert.is(run.code, 2, run.stderr);
    assert.match(run.stderr, message);
  });

t('a command the service refuses exits 1 (a restaurant not found)', async ({ dataDir }) => {
  const run = await runCli({ dataDir }, ['keys', 'list', '--restaurant', 'rest_nope']);
  assert.is(run.code, 1, run.stderr);
  assert.match(run.stderr, /restaurant rest_nope not found/);
});

// Not found is the service refusing, as `customers show --id nope` (exit 1), never a usage error:
// before, the audit commands answered an unknown id with exit 2 and "(run with --help)".
const notFoundInAudit: [string[], RegExp][] = [
  [['audit', 'history', 'nope'], /the log holds no event of nope/],
  [['audit', 'history', 'nope', '--kind', 'customer'], /no customer nope in the log/],
  [['audit', 'as-of', 'nope', '--at', '1'], /the log holds no event of nope/],
  [['audit', 'erase', '--customer', 'nope'], /no customer nope in the log/],
];
for (const [args, message] of notFoundInAudit)
  t(`an unknown id exits 1 (npm run cli -- ${args.join(' ')})`, async ({ dataDir }) => {
    const run = await runCli({ dataDir }, args);
    assert.is(run.code, 1, run.stderr);
    assert.match(run.stderr, message);
    assert.not.match(run.stderr, /run with --help/);
  });

t('--help names the exit codes', async ({ dataDir }) => {
  const run = await runCli({ dataDir }, ['--help']);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /Exit codes: 0 .*\n.*1 .*\n.*2 /);
});

t.run();
