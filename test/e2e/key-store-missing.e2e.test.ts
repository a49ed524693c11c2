// DATA_DIR/keys.sqlite missing, empty or new beside a log that holds sealed personal data (a backup
// restored without it, a file moved): the start is refused with a message naming the file. Before, the
// service started on a new empty key store and every customer read as "[erased]", and the keys of new
// customers went into that new file, which restoring the real one would then have lost. The same for
// DATA_DIR/secrets.key beside webhook endpoints: a new key was generated, which opens none of their
// signing secrets (no delivery could be signed again).
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime } from '../../src/runtime';
import { demoBootstrap, startTestService } from '../helpers/service';

const TOKEN = 'couvert_pk_keys_missing_00000000000000000001';
const bootstrap = demoBootstrap({}, [
  { id: 'key_k', token: TOKEN, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'] },
]);

async function open(dataDir: string) {
  registerModules();
  return createRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
}

async function refused(dataDir: string): Promise<string> {
  try {
    const rt = await open(dataDir);
    await rt.close();
  } catch (err) {
    return (err as Error).message;
  }
  return 'opened';
}

test('a missing, empty or new keys.sqlite beside sealed data is refused, naming it; restored, it opens', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-keys-missing-'));
  const saved = join(dataDir, 'keys.backup');
  try {
    const svc = await startTestService({ bootstrap, dataDir });
    let made: Awaited<ReturnType<typeof svc.api>>;
    try {
      made = await svc.api('POST', '/customers', {
        token: TOKEN,
        body: { name: 'Ada Sealed', email: 'ada@example.test' },
      });
      assert.is(made.status, 201, made.text);
    } finally {
      await svc.stop();
    }
    const keys = join(dataDir, 'keys.sqlite');
    copyFileSync(keys, saved);

    rmSync(keys);
    for (const f of ['keys.sqlite-wal', 'keys.sqlite-shm']) rmSync(join(dataDir, f), { force: true });
    const missing = await refused(dataDir);
    assert.match(missing, `${keys} is missing`);
    assert.match(missing, 'restore keys.sqlite from the backup');
    assert.not.ok(existsSync(keys), 'no new key store was made');

    writeFileSync(keys, '');
    assert.match(await refused(dataDir), `${keys} is empty`);

    rmSync(keys);
    const fresh = await open(mkdtempSync(join(tmpdir(), 'couvert-keys-fresh-')));
    await fresh.close();
    // A key store made by another (new) directory: tables, no key.
    copyFileSync(join(fresh.config.dataDir, 'keys.sqlite'), keys);
    rmSync(fresh.config.dataDir, { recursive: true, force: true });
    assert.match(await refused(dataDir), `${keys} holds no key`);

    // The real one back: the customer reads as written.
    rmSync(keys);
    copyFileSync(saved, keys);
    const again = await startTestService({ bootstrap, dataDir });
    try {
      const read = await again.api('GET', `/customers/${made.body.data.id}`, { token: TOKEN });
      assert.is(read.body.data.name, 'Ada Sealed');
      assert.is(read.body.data.email, 'ada@example.test');
    } finally {
      await again.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a missing or garbled secrets.key beside webhook endpoints is refused, naming it; restored, it opens', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-secrets-missing-'));
  try {
    const svc = await startTestService({
      dataDir,
      bootstrap: demoBootstrap({}, [{ id: 'key_w', token: TOKEN, scopes: ['WEBHOOKS_WRITE'] }]),
    });
    try {
      const ep = await svc.api('POST', '/webhook-endpoints', {
        token: TOKEN,
        body: { url: 'https://hooks.example.com/couvert' },
      });
      assert.is(ep.status, 201, ep.text);
    } finally {
      await svc.stop();
    }
    const file = join(dataDir, 'secrets.key');
    const saved = readFileSync(file);

    rmSync(file);
    const missing = await refused(dataDir);
    assert.match(missing, `${file} is missing`);
    assert.match(missing, 'webhook endpoints');
    assert.not.ok(existsSync(file), 'no new key was made');

    writeFileSync(file, 'not a key\n');
    assert.match(await refused(dataDir), `${file} does not hold a 32-byte key`);

    writeFileSync(file, saved);
    assert.is(await refused(dataDir), 'opened');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a directory whose log holds nothing sealed still starts without keys.sqlite (a first start)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-keys-first-'));
  try {
    const rt = await open(dataDir);
    await rt.close();
    assert.ok(existsSync(join(dataDir, 'keys.sqlite')));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
