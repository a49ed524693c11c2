// The real CLI on a DATA_DIR that holds no log: `audit verify --json` on a mistyped path answered
// "problems 0, events 0", exit 0, and made events.sqlite and keys.sqlite there (an existing empty
// directory the same; `audit erase --pending` and the others too). Now refused, exit 2, naming the
// path, nothing created; a command that sets up a service (restaurants create) still starts a log.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createRestaurantByCli, runCli } from '../helpers/cli-process';

const t = suite<{ root: string }>('cli: a DATA_DIR without a log');
t.before((ctx) => {
  ctx.root = mkdtempSync(join(tmpdir(), 'couvert-cli-nolog-'));
});
t.after(({ root }) => rmSync(root, { recursive: true, force: true }));

t('audit verify on a missing DATA_DIR: exit 2, the path named, nothing created', async ({ root }) => {
  const dataDir = join(root, 'nonexistent');
  const run = await runCli({ dataDir }, ['audit', 'verify', '--json']);
  assert.is(run.code, 2, run.stderr);
  assert.is(run.stdout, '', 'no verdict');
  assert.match(run.stderr, `DATA_DIR ${dataDir} does not exist`);
  assert.not.ok(existsSync(dataDir), 'nothing created');
});

t('audit erase --pending on an empty DATA_DIR: exit 2, nothing created', async ({ root }) => {
  const dataDir = join(root, 'empty');
  mkdirSync(dataDir);
  const run = await runCli({ dataDir }, ['audit', 'erase', '--pending']);
  assert.is(run.code, 2, run.stderr);
  assert.match(run.stderr, `DATA_DIR ${dataDir} holds no event log (no events.sqlite)`);
  assert.equal(readdirSync(dataDir), []);
});

t('restaurants create starts a log on a missing DATA_DIR; verify then reads it', async ({ root }) => {
  const dataDir = join(root, 'new');
  const made = await createRestaurantByCli({ dataDir });
  assert.is(made.code, 0, made.stderr);
  const verify = await runCli({ dataDir }, ['audit', 'verify', '--json', '--no-progress']);
  assert.is(verify.code, 0, verify.stderr);
  const report = JSON.parse(verify.stdout) as { problems: number; chain: { events: number } };
  assert.is(report.problems, 0);
  assert.ok(report.chain.events > 0, verify.stdout);
});

t.run();
