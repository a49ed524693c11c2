// The CLI as an operator types it: a mistyped or incomplete command says what was wrong, on stderr,
// and exits 2, before the list of commands. Before, it printed the list alone on stdout (where a
// script piping the output took it for the command's answer) and never named the mistake.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRestaurantByCli, runCli } from '../helpers/cli-process';
import type { TestService } from '../helpers/service';

const dataDir = mkdtempSync(join(tmpdir(), 'couvert-cli-usage-'));
const svc = { dataDir } as TestService;
test.after(() => rmSync(dataDir, { recursive: true, force: true }));

test('a mistyped or incomplete command is named on stderr, exit 2, nothing on stdout', async () => {
  const cases: [string[], string][] = [
    [['restaurnts', 'list'], 'error: unknown command "restaurnts list"'],
    [['keys'], 'error: "keys" needs one of: keys create, keys list'],
    [['keys', 'lst'], 'error: "keys" needs one of: keys create, keys list'],
    [['--restaurant', 'rest_x'], 'error: no command, only flags (--restaurant rest_x)'],
    // A command whose words a flag's value comes before or between: named as the command it is
    // (it was '"keys" needs one of: keys create, keys list…', as if "keys list" were not typed).
    [
      ['--restaurant', 'rest_x', 'keys', 'list'],
      'error: the command comes first, then its flags: npm run cli -- keys list [flags] (got: --restaurant rest_x keys list)',
    ],
    [
      ['keys', '--restaurant', 'rest_x', 'list'],
      'error: the command comes first, then its flags: npm run cli -- keys list [flags] (got: keys --restaurant rest_x list)',
    ],
  ];
  for (const [args, message] of cases) {
    const run = await runCli(svc, args);
    assert.is(run.code, 2, args.join(' '));
    assert.is(run.stdout, '', `${args.join(' ')}: stdout`);
    assert.ok(run.stderr.startsWith(message), run.stderr.slice(0, 200));
    assert.match(run.stderr, 'Usage: npm run cli -- <command> [flags]');
  }
});

test('--help, and no words at all, print the list on stdout and exit 0', async () => {
  for (const args of [['--help'], [], ['keys', 'create', '--help']]) {
    const run = await runCli(svc, args);
    assert.is(run.code, 0, args.join(' '));
    assert.is(run.stderr, '');
    assert.match(run.stdout, args.length === 3 ? 'npm run cli -- keys create' : 'Usage: npm run cli');
  }
});

test('`help` is --help, and a group name with --help lists that group only', async () => {
  const all = await runCli(svc, ['help']);
  assert.is(all.code, 0, all.stderr);
  assert.is(all.stderr, '');
  assert.match(all.stdout, 'Usage: npm run cli');
  assert.match(all.stdout, 'restaurants create');
  const one = await runCli(svc, ['help', 'keys', 'create']);
  assert.is(one.code, 0, one.stderr);
  assert.match(one.stdout, 'npm run cli -- keys create --restaurant');
  for (const args of [
    ['keys', '--help'],
    ['help', 'keys'],
  ]) {
    const group = await runCli(svc, args);
    assert.is(group.code, 0, args.join(' '));
    assert.match(group.stdout, 'keys create');
    assert.match(group.stdout, 'keys revoke');
    assert.not.match(group.stdout, 'restaurants create', args.join(' '));
  }
});

test('LOG_LEVEL set but empty (`LOG_LEVEL=` in an env file) is its default, as for the server', async () => {
  // The CLI passed "" to pino, which refused it: every command failed with "default level: must be
  // included in custom levels". The directory holds a log first: the CLI refuses one holding none.
  const started = await createRestaurantByCli(svc);
  assert.is(started.code, 0, started.stderr);
  const run = await runCli(svc, ['restaurants', 'list'], { LOG_LEVEL: '' });
  assert.is(run.code, 0, run.stderr);
  assert.is(run.stderr, '');
  const bad = await runCli(svc, ['restaurants', 'list'], { LOG_LEVEL: 'verbose' });
  assert.is(bad.code, 2, 'a bad environment variable is a usage error');
  assert.match(bad.stderr, 'LOG_LEVEL must be one of');
});

test.run();
