// A start that fails part-way (a missing keys.sqlite beside sealed data, a catch-up that throws, the
// port in use) releases everything it opened: no file of DATA_DIR stays open in the process. Before,
// buildRuntime left the event log's and the change detector's SQLite handles (and, scaled out, the
// EventStoreDB connection) open when a later step threw: an embedding process kept DATA_DIR's files
// open, and on the scaled-out stores a refused start hung on its connections.
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import type { Projection } from '../../src/projection/projection';
import { createRuntime } from '../../src/runtime';
import { demoBootstrap, startTestService } from '../helpers/service';

const TOKEN = 'couvert_pk_failed_start_000000000000000000001';
const bootstrap = demoBootstrap({}, [
  { id: 'key_f', token: TOKEN, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'] },
]);

/** The files of `dir` this process holds open (Linux: /proc/self/fd). */
function openFilesIn(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(`${dir}/`)) out.push(target);
    } catch {
      // closed between the listing and the read (the listing's own descriptor)
    }
  }
  return out;
}

/** A DATA_DIR holding a log with a sealed customer, the server stopped. */
async function sealedDataDir(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-failed-start-'));
  const svc = await startTestService({ bootstrap, dataDir });
  const made = await svc.api('POST', '/customers', {
    token: TOKEN,
    body: { name: 'Ada Sealed', email: 'ada@example.test' },
  });
  assert.is(made.status, 201, made.text);
  await svc.stop();
  assert.equal(openFilesIn(dataDir), [], 'a stopped service holds no file of DATA_DIR');
  return dataDir;
}

const config = (dataDir: string, env: Record<string, string> = {}) =>
  loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });

async function refusal(start: () => Promise<{ close?: () => Promise<void>; stop?: () => Promise<void> }>) {
  try {
    const started = await start();
    await (started.stop ?? started.close)?.();
  } catch (err) {
    return (err as Error).message;
  }
  return 'started';
}

test('keys.sqlite missing beside sealed data: refused, and the log opened before is closed', async () => {
  registerModules();
  const dataDir = await sealedDataDir();
  try {
    for (const f of ['keys.sqlite', 'keys.sqlite-wal', 'keys.sqlite-shm'])
      rmSync(join(dataDir, f), { force: true });
    const message = await refusal(() => createRuntime(config(dataDir), { logger: createLogger('silent') }));
    assert.match(message, 'keys.sqlite is missing');
    assert.equal(openFilesIn(dataDir), [], 'the failed start left no file of DATA_DIR open');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a catch-up that throws at start: refused, and every store it opened is closed', async () => {
  registerModules();
  const dataDir = await sealedDataDir();
  try {
    const failing: Projection = {
      name: 'fails_at_start',
      eventTypes: ['CustomerCreated'],
      apply() {
        throw new Error('the projection refused the event');
      },
    };
    const message = await refusal(() =>
      createRuntime(config(dataDir), { logger: createLogger('silent'), projections: [failing] }),
    );
    assert.match(message, 'the projection refused the event');
    assert.equal(openFilesIn(dataDir), [], 'the failed start left no file of DATA_DIR open');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the port in use: the service start is refused and closes the stores it opened', async () => {
  registerModules();
  const dataDir = await sealedDataDir();
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as { port: number }).port;
  try {
    const message = await refusal(() =>
      startService(config(dataDir, { PORT: String(port), HOST: '127.0.0.1' }), {
        logger: createLogger('silent'),
      }),
    );
    assert.match(message, 'EADDRINUSE');
    assert.equal(openFilesIn(dataDir), [], 'the failed start left no file of DATA_DIR open');
  } finally {
    await new Promise((resolve) => holder.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
