// The CLI starts the event log's writer thread (a worker registering tsx: ~0.5 s of CPU, ~30 MB) only
// when its command appends: a command that only reads (audit verify, audit export, backup, a list)
// never starts it. The service starts it with the log, so that no request waits for its start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WriterThread } from '../../src/adapters/event-store/sqlite-writer';
import { openCliRuntime } from '../../src/cli/cli-runtime';
import { registerAllCliCommands } from '../../src/cli/commands';
import { cliCommands } from '../../src/cli/registry';
import { loadConfig } from '../../src/config';
import { registerModules } from '../../src/modules';
import { createRuntime } from '../../src/runtime';
import { runCli } from '../helpers/cli-in-process';

const dir = mkdtempSync(join(tmpdir(), 'couvert-cli-writer-'));
const config = () => loadConfig({ DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' });

/** Runs `name` as src/cli/main.ts does (its runtime, then the command); the writer threads it started. */
async function threadsStartedBy(name: string, flags: Record<string, string | boolean> = {}): Promise<number> {
  registerModules();
  registerAllCliCommands();
  const command = cliCommands().find((c) => c.name === name);
  assert.ok(command, name);
  const before = WriterThread.started;
  const rt = await openCliRuntime(config(), command, flags);
  try {
    await runCli(rt, name, flags);
  } finally {
    await rt.close();
  }
  return WriterThread.started - before;
}

test('a CLI command starts the log writer thread with its first append, and one that only reads never', async () => {
  const restaurant = {
    id: 'rest_writer',
    name: 'Chez Writer',
    slug: 'chez-writer',
    country: 'FR',
    timezone: 'Europe/Paris',
    currency: 'EUR',
  };
  assert.is(await threadsStartedBy('restaurants create', restaurant), 1, 'a command that appends');
  for (const [name, flags] of [
    ['restaurants list', {}],
    ['keys list', { restaurant: 'rest_writer' }],
    ['audit verify', {}],
    ['audit export', { restaurant: 'rest_writer', out: join(dir, 'export.jsonl'), 'no-progress': true }],
    ['backup', { out: join(dir, 'backup') }],
  ] as const)
    assert.is(await threadsStartedBy(name, flags), 0, `${name} only reads`);
});

test('the service starts it with the log', async () => {
  const before = WriterThread.started;
  const rt = await createRuntime(config());
  try {
    assert.is(WriterThread.started - before, 1);
  } finally {
    await rt.close();
  }
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
