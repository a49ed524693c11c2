// A DATA_DIR that holds no event log (missing, mistyped, empty, or only a log file without an event) is
// refused by every CLI command but those that set up a service, naming the path and creating nothing.
// Before, `DATA_DIR=/tmp/nonexistent npm run cli -- audit verify --json` answered "problems 0, events 0",
// exit 0, and left events.sqlite and keys.sqlite there: a clean verdict on a log that was never read.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { registerAllCliCommands } from '../../src/cli/commands';
import { requireLog } from '../../src/cli/log-required';
import { CliUsageError, cliCommands } from '../../src/cli/registry';
import { registerModules } from '../../src/modules';

const t = suite<{ root: string }>('cli: a DATA_DIR without a log');
t.before((ctx) => {
  registerModules();
  registerAllCliCommands();
  ctx.root = mkdtempSync(join(tmpdir(), 'couvert-cli-nolog-'));
});
t.after(({ root }) => rmSync(root, { recursive: true, force: true }));

/** The message requireLog refused `dir` with for `name`, or null when it let the command run. */
function refusal(name: string, dir: string): string | null {
  const command = cliCommands().find((c) => c.name === name);
  assert.ok(command, name);
  try {
    requireLog(command, dir);
    return null;
  } catch (err) {
    assert.instance(err, CliUsageError, `${name}: ${String(err)}`);
    return (err as Error).message;
  }
}

/** The commands that may start a new log: the ones that set up a service (README, quick start). */
const STARTING = ['bootstrap apply', 'restaurants create'];

t('only bootstrap apply and restaurants create may start a new log', () => {
  assert.equal(
    cliCommands()
      .filter((c) => c.startsLog)
      .map((c) => c.name)
      .sort(),
    STARTING,
  );
});

t('every other command refuses a missing DATA_DIR, naming it, and creates nothing', ({ root }) => {
  const dir = join(root, 'nonexistent');
  const wrong: string[] = [];
  for (const { name } of cliCommands()) {
    const message = refusal(name, dir);
    if (STARTING.includes(name)) {
      if (message !== null) wrong.push(`${name} refused: ${message}`);
    } else if (message === null || !message.includes(`DATA_DIR ${dir} `) || !/does not exist/.test(message))
      wrong.push(`${name}: ${message ?? 'ran'}`);
  }
  assert.equal(wrong, [], wrong.join('\n'));
  assert.not.ok(existsSync(dir), 'nothing created');
});

t('an empty directory, an empty events.sqlite, and one without an event are refused too', ({ root }) => {
  const empty = join(root, 'empty');
  mkdirSync(empty);
  assert.match(refusal('audit verify', empty) ?? '', /holds no event log \(no events\.sqlite\)/);
  assert.match(refusal('audit erase', empty) ?? '', /nothing was created/);
  assert.equal(readdirSync(empty), [], 'nothing created');

  const zero = join(root, 'zero');
  mkdirSync(zero);
  writeFileSync(join(zero, 'events.sqlite'), '');
  assert.match(refusal('audit export', zero) ?? '', /events\.sqlite is empty/);

  // What the CLI left before this fix: a log file with its tables and no event.
  const made = join(root, 'made');
  mkdirSync(made);
  const db = new Database(join(made, 'events.sqlite'));
  db.exec('CREATE TABLE events (position INTEGER PRIMARY KEY, data TEXT)');
  db.close();
  assert.match(refusal('restaurants list', made) ?? '', /events\.sqlite holds no event/);
  assert.is(refusal('restaurants create', made), null);
  // A server ran here (its lock file): its DATA_DIR, whose log holds nothing yet (started without the demo).
  for (const file of ['server.lock', 'projection-versions.json']) {
    const ran = join(root, `ran-${file}`);
    mkdirSync(ran);
    writeFileSync(join(ran, file), '');
    assert.is(refusal('restaurants list', ran), null, file);
  }
});

t('a log with an event is let through', ({ root }) => {
  const dir = join(root, 'log');
  mkdirSync(dir);
  const db = new Database(join(dir, 'events.sqlite'));
  db.exec(
    "CREATE TABLE events (position INTEGER PRIMARY KEY, data TEXT); INSERT INTO events VALUES (1, '{}')",
  );
  db.close();
  assert.is(refusal('audit verify', dir), null);
});

t.run();
