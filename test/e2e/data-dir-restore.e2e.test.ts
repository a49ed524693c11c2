// DATA_DIR after an operator's restore or mistake. events.sqlite missing (or empty) beside traces of a
// log (keys made for it, the webhook checkpoint in it): the start is refused, naming them, instead of
// starting silently on an empty log. events.sqlite and keys.sqlite restored from a backup older than
// webhooks.checkpoint: the checkpoint, past the restored log's head, used to make the publisher skip
// every event appended until the log grew past it (no webhook for them, ever); it now counts as none.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { positionFromString } from '../../src/ports/event-store';
import { CHECKPOINT_FILE } from '../../src/webhooks/runner';
import { runCli } from '../helpers/cli-process';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';
import { startReceiver } from '../helpers/webhook-receiver';

const TOKEN = 'couvert_pk_restore_000000000000000000000001';
const bootstrap = demoBootstrap({}, [
  { id: 'key_r', token: TOKEN, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'] },
]);
const env = { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
const FILES = ['events.sqlite', 'keys.sqlite'];

function copyFiles(from: string, to: string): void {
  for (const f of FILES)
    for (const suffix of ['', '-wal']) {
      rmSync(join(to, f + suffix), { force: true });
      if (existsSync(join(from, f + suffix))) copyFileSync(join(from, f + suffix), join(to, f + suffix));
    }
  for (const f of FILES) rmSync(join(to, `${f}-shm`), { force: true });
}

const customer = (svc: TestService, name: string) =>
  svc.api('POST', '/customers', { token: TOKEN, body: { name } }).then((r) => {
    assert.is(r.status, 201, r.text);
    return r.body.data.id as string;
  });

test('restored from a backup older than webhooks.checkpoint: the events appended after the restore are delivered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-restore-'));
  const backup = mkdtempSync(join(tmpdir(), 'couvert-restore-backup-'));
  const rx = await startReceiver();
  let svc: TestService | null = null;
  try {
    svc = await startTestService({ bootstrap, env, dataDir: dir });
    const ep = await svc.api('POST', '/webhook-endpoints', {
      token: TOKEN,
      body: { url: rx.url('/hook'), enabled_events: ['customer.created'] },
    });
    assert.is(ep.status, 201, ep.text);
    await svc.stop();
    copyFiles(dir, backup);

    // Life goes on after the backup: the checkpoint moves well past the backup's head.
    svc = await startTestService({ bootstrap, env, dataDir: dir });
    for (let i = 0; i < 20; i++) await customer(svc, `After the backup ${i}`);
    await rx.waitFor('/hook', 20);
    await svc.stop();
    svc = null;
    const checkpoint = positionFromString(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8').trim());

    // The disk is lost; events.sqlite and keys.sqlite come back from the backup, the checkpoint stays.
    copyFiles(backup, dir);
    svc = await startTestService({ bootstrap, env, dataDir: dir });
    const id = await customer(svc, 'After the restore');
    const head = await svc.rt.events.headPosition();
    assert.ok(head !== null && head < checkpoint, 'the new customer sits below the old checkpoint');
    const got = await rx.waitFor('/hook', 21);
    assert.is(got[20]?.json.data.object.id, id, 'its customer.created is delivered');
  } finally {
    await svc?.stop();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(backup, { recursive: true, force: true });
  }
});

test('events.sqlite missing or empty beside keys and a checkpoint: refused, naming them; nothing is made', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-restore-'));
  try {
    const svc = await startTestService({ bootstrap, env, dataDir: dir });
    try {
      await customer(svc, 'Ada Kept');
    } finally {
      await svc.stop();
    }
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `events.sqlite${suffix}`), { force: true });

    const missing = await runCli({ dataDir: dir } as TestService, ['restaurants', 'list']);
    assert.is(missing.code, 1, missing.stderr);
    assert.match(missing.stderr, `${join(dir, 'events.sqlite')} is missing, but this DATA_DIR held a log`);
    assert.match(missing.stderr, `${join(dir, 'keys.sqlite')} holds`);
    assert.match(missing.stderr, `${join(dir, CHECKPOINT_FILE)} is at position`);
    assert.not.ok(existsSync(join(dir, 'events.sqlite')), 'no new log was made');

    writeFileSync(join(dir, 'events.sqlite'), '');
    const empty = await runCli({ dataDir: dir } as TestService, ['restaurants', 'list']);
    assert.is(empty.code, 1, empty.stderr);
    assert.match(empty.stderr, `${join(dir, 'events.sqlite')} is empty`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
