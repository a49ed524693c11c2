// DATA_DIR after an operator's restore or mistake. events.sqlite missing (or empty) beside traces of a
// log (keys made for it, the webhook checkpoint in it): the start is refused, naming them, instead of
// starting silently on an empty log; so is a stub (events.sqlite copied without its -wal while the server
// ran: a few kilobytes, no event), while a first start that died before its first event goes on. events.sqlite and keys.sqlite restored from a backup older than
// webhooks.checkpoint: the checkpoint, past the restored log's head, used to make the publisher skip
// every event appended until the log grew past it (no webhook for them, ever); it now counts as none.
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { positionFromString } from '../../src/ports/event-store';
import { CHECKPOINT_FILE } from '../../src/webhooks/runner';
import { runCli } from '../helpers/cli-process';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';
import { spawnServer } from '../helpers/spawned-server';
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

/** The events a log file holds, read from a copy (SQLite leaves -wal and -shm beside a file it opens). */
function eventsIn(file: string): number {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-restore-look-'));
  try {
    copyFileSync(file, join(dir, 'events.sqlite'));
    const db = new Database(join(dir, 'events.sqlite'), { readonly: true });
    try {
      const table = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'events'").get();
      return table ? (db.prepare('SELECT count(*) FROM events').pluck().get() as number) : 0;
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const started = (env: Record<string, string>) =>
  spawnServer({ LOG_LEVEL: 'warn', ...env }).then(
    (s) => ({ server: s, failure: null }),
    (err: Error) => ({ server: null, failure: err.message }),
  );

test('a stub copy (events.sqlite copied without its -wal while the server ran, keys.sqlite whole): refused, pointing to backup', async () => {
  const live = mkdtempSync(join(tmpdir(), 'couvert-restore-live-'));
  const copy = mkdtempSync(join(tmpdir(), 'couvert-restore-stub-'));
  try {
    // A first start (the demo restaurant and its month of activity), copied file by file while it runs.
    const server = await spawnServer({ DATA_DIR: live, LOG_LEVEL: 'warn' });
    try {
      for (const f of ['events.sqlite', 'keys.sqlite', 'keys.sqlite-wal', 'secrets.key'])
        if (existsSync(join(live, f))) copyFileSync(join(live, f), join(copy, f));
    } finally {
      await server.stop();
    }
    const stub = join(copy, 'events.sqlite');
    const size = statSync(stub).size;
    assert.ok(size > 0, 'a stub, not an empty file');
    assert.is(eventsIn(stub), 0, 'the copy holds no event (its events were in the -wal)');
    assert.ok(eventsIn(join(live, 'events.sqlite')) > 0, 'the log copied held events');

    const { server: wrongly, failure } = await started({ DATA_DIR: copy });
    await wrongly?.kill();
    assert.ok(failure !== null, 'the start on the stub is refused');
    assert.match(failure as string, 'the server exited (1) before listening');
    assert.match(failure as string, `${stub} holds no event`);
    assert.match(failure as string, `${join(copy, 'keys.sqlite')} holds`);
    assert.match(failure as string, 'npm run cli -- backup');
    assert.match(failure as string, 'Backup and restore');
    assert.not.match(failure as string, /\n\s+at /, 'no stack trace');
    assert.is(statSync(stub).size, size, 'the stub was left as it was');
    assert.is(eventsIn(stub), 0, 'no demo restaurant was made on it');
    assert.not.ok(existsSync(`${stub}-wal`), 'nothing was made beside it');

    const cli = await runCli({ dataDir: copy } as TestService, ['restaurants', 'list']);
    assert.is(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, `${stub} holds no event`);
  } finally {
    rmSync(live, { recursive: true, force: true });
    rmSync(copy, { recursive: true, force: true });
  }
});

test('a first start that died before its first event (log without events, keys.sqlite without keys, secrets.key): the next start goes on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-restore-first-'));
  const other = mkdtempSync(join(tmpdir(), 'couvert-restore-other-'));
  try {
    // What the first start left: secrets.key (made first), keys.sqlite opened but holding no key, and
    // events.sqlite opened in WAL mode with its tables but no event.
    const first = await spawnServer({ DATA_DIR: other, LOG_LEVEL: 'warn' });
    await first.stop();
    copyFileSync(join(other, 'secrets.key'), join(dir, 'secrets.key'));
    const keys = SqliteKeyStore.open(join(dir, 'keys.sqlite'));
    assert.ok(keys.holdsNothing());
    await keys.close();
    const log = await SqliteEventStore.open(join(dir, 'events.sqlite'));
    await log.close();
    assert.ok(statSync(join(dir, 'events.sqlite')).size > 0);
    assert.is(eventsIn(join(dir, 'events.sqlite')), 0);

    const { server, failure } = await started({ DATA_DIR: dir });
    assert.is(failure, null, failure ?? '');
    try {
      assert.match(server?.output() ?? '', /Demo restaurant rest_demo/);
    } finally {
      await server?.stop();
    }
    assert.ok(eventsIn(join(dir, 'events.sqlite')) > 0, 'the demo was written');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
});

test.run();
