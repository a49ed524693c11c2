// Every operator command refuses a flag it does not take, naming it and the flags it accepts, before
// anything else (a missing required flag, a lookup): a mistyped `--reson` or `--idd` must not be
// silently dropped (the command would do something else: a cancellation without its reason) nor
// reported as "--id is required". Before, the catalog, customers, reservations, keys and restaurants
// list commands ignored unknown flags (`keys list --json` printed its table and exited 0), and a
// required flag given without its value was reported as missing. A word left over (`customers delete
// --id cus_1 cus_2`, `audit erase --customer cus_1 cus_2`) was ignored: only part of what was asked
// was done, silently.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { registerAllCliCommands } from '../../src/cli/commands';
import { CliUsageError, cliCommands } from '../../src/cli/registry';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { runCli } from '../helpers/cli-in-process';

/** Runs `check` against a runtime on an empty log in memory (no DATA_DIR), closed after it. */
async function onEmptyLog(check: (rt: Runtime) => Promise<void>): Promise<void> {
  registerModules();
  registerAllCliCommands();
  const rt = await createRuntime(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/nonexistent-unused' }), {
    logger: createLogger('silent'),
    events: new MemoryEventStore(),
  });
  try {
    await check(rt);
  } finally {
    await rt.close();
  }
}

/** The error a command threw, or null when it ran. */
const errorOf = (
  rt: Runtime,
  name: string,
  flags: Record<string, string | boolean>,
  positionals: string[] = [],
): Promise<unknown> =>
  runCli(rt, name, flags, positionals).then(
    () => null,
    (e: unknown) => e,
  );

/**
 * Runs every command but those `skipped` with `flags` and `positionals`: each must refuse them with a
 * CliUsageError whose message `expected` takes, appending nothing. Fails naming every command that did not.
 */
async function everyCommandRefuses(
  rt: Runtime,
  flags: Record<string, string | boolean>,
  positionals: string[],
  expected: (message: string) => boolean,
  skipped: readonly string[] = [],
): Promise<void> {
  const head = await rt.events.headPosition();
  const wrong: string[] = [];
  for (const command of cliCommands()) {
    if (skipped.includes(command.name)) continue;
    const err = await errorOf(rt, command.name, flags, positionals);
    if (!(err instanceof CliUsageError) || !expected(err.message))
      wrong.push(`${command.name}: ${err instanceof Error ? `${err.name}: ${err.message}` : 'ran'}`);
  }
  assert.equal(wrong, [], wrong.join('\n'));
  assert.is(await rt.events.headPosition(), head, 'nothing was appended');
}

test('every command refuses an unknown flag first, naming it and what it accepts', () =>
  onEmptyLog((rt) =>
    everyCommandRefuses(rt, { 'zz-typo': 'x' }, [], (m) => /unknown flag --zz-typo \(accepted: /.test(m)),
  ));

test('a word left over is refused by every command that takes no argument (customers delete --id a b)', () =>
  onEmptyLog(async (rt) => {
    // The commands that take an argument (their usage names one standing alone).
    const taking = ['catalog apply', 'bootstrap apply', 'audit history', 'audit as-of'];
    await everyCommandRefuses(
      rt,
      {},
      ['cus_2'],
      (m) => m.startsWith('unexpected argument "cus_2": '),
      taking,
    );
    // `audit erase --customer <id>`: the <id> is the flag's value, not an argument of its own.
    const erase = await errorOf(rt, 'audit erase', { customer: 'cus_1' }, ['cus_2']);
    assert.match((erase as Error).message, /^unexpected argument "cus_2": audit erase takes only flags/);
  }));

test('a required flag given without its value says so, not that it is missing', () =>
  onEmptyLog(async (rt) => {
    // `keys create --restaurant rest_x --name POS --scopes` parses --scopes as a bare flag (true).
    const err = await errorOf(rt, 'keys create', { restaurant: 'rest_x', name: 'POS', scopes: true });
    assert.instance(err, CliUsageError);
    assert.is((err as Error).message, '--scopes needs a value');
    const missing = await errorOf(rt, 'keys create', { restaurant: 'rest_x', name: 'POS' });
    assert.is((missing as Error).message, '--scopes is required');
  }));

test('audit erase given neither --customer nor --pending names both forms', () =>
  onEmptyLog(async (rt) => {
    const err = await errorOf(rt, 'audit erase', {});
    assert.instance(err, CliUsageError);
    assert.match((err as Error).message, /--customer <id>/);
    assert.match((err as Error).message, /--pending/);
    const reasonOnly = await errorOf(rt, 'audit erase', { reason: 'asked by the guest' });
    assert.match((reasonOnly as Error).message, /--customer <id>.*--pending/);
  }));

test.run();
