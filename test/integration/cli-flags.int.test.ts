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
import { createRuntime } from '../../src/runtime';
import { runCli } from '../helpers/cli-in-process';

test('every command refuses an unknown flag first, naming it and what it accepts', async () => {
  registerModules();
  registerAllCliCommands();
  const rt = await createRuntime(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/nonexistent-unused' }), {
    logger: createLogger('silent'),
    events: new MemoryEventStore(),
  });
  const head = await rt.events.headPosition();
  const wrong: string[] = [];
  try {
    for (const command of cliCommands()) {
      const err = await runCli(rt, command.name, { 'zz-typo': 'x' }, []).then(
        () => null,
        (e: unknown) => e,
      );
      if (!(err instanceof CliUsageError) || !/unknown flag --zz-typo \(accepted: /.test(err.message))
        wrong.push(`${command.name}: ${err instanceof Error ? `${err.name}: ${err.message}` : 'ran'}`);
    }
    assert.equal(wrong, [], wrong.join('\n'));
    assert.is(await rt.events.headPosition(), head, 'nothing was appended');
  } finally {
    await rt.close();
  }
});

test('a word left over is refused by every command that takes no argument (customers delete --id a b)', async () => {
  registerModules();
  registerAllCliCommands();
  const rt = await createRuntime(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/nonexistent-unused' }), {
    logger: createLogger('silent'),
    events: new MemoryEventStore(),
  });
  const head = await rt.events.headPosition();
  // The commands that take an argument (their usage names one standing alone).
  const taking = ['catalog apply', 'bootstrap apply', 'audit history', 'audit as-of'];
  const wrong: string[] = [];
  try {
    for (const command of cliCommands()) {
      if (taking.includes(command.name)) continue;
      const err = await runCli(rt, command.name, {}, ['cus_2']).then(
        () => null,
        (e: unknown) => e,
      );
      if (!(err instanceof CliUsageError) || !err.message.startsWith('unexpected argument "cus_2": '))
        wrong.push(`${command.name}: ${err instanceof Error ? `${err.name}: ${err.message}` : 'ran'}`);
    }
    assert.equal(wrong, [], wrong.join('\n'));
    assert.is(await rt.events.headPosition(), head, 'nothing was appended');
    // `audit erase --customer <id>`: the <id> is the flag's value, not an argument of its own.
    const erase = await runCli(rt, 'audit erase', { customer: 'cus_1' }, ['cus_2']).then(
      () => null,
      (e: unknown) => e,
    );
    assert.match((erase as Error).message, /^unexpected argument "cus_2": audit erase takes only flags/);
  } finally {
    await rt.close();
  }
});

test('a required flag given without its value says so, not that it is missing', async () => {
  registerModules();
  const rt = await createRuntime(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/nonexistent-unused' }), {
    logger: createLogger('silent'),
    events: new MemoryEventStore(),
  });
  try {
    // `keys create --restaurant rest_x --name POS --scopes` parses --scopes as a bare flag (true).
    const err = await runCli(rt, 'keys create', { restaurant: 'rest_x', name: 'POS', scopes: true }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(err, CliUsageError);
    assert.is((err as Error).message, '--scopes needs a value');
    const missing = await runCli(rt, 'keys create', { restaurant: 'rest_x', name: 'POS' }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.is((missing as Error).message, '--scopes is required');
  } finally {
    await rt.close();
  }
});

test.run();
