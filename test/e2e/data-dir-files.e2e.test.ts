// DATA_DIR's files as an operator may find them broken. A directory in place of one (what `docker run
// -v ./events.sqlite:/data/events.sqlite` makes of a host file that is missing) failed the start with
// SQLite's "unable to open database file" or "EISDIR: illegal operation on a directory", naming
// nothing; in place of webhooks.checkpoint the server started and its publisher failed and restarted
// forever, delivering nothing, while /healthz said ok. A damaged server.lock (it holds no data) failed
// the start with "file is not a database". Each is now named, with what to do, and nothing is written.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LOCK_FILE, lockDataDir, writableDataDir } from '../../src/data-dir-lock';
import { runCli } from '../helpers/cli-process';
import type { TestService } from '../helpers/service';
import { spawnServer } from '../helpers/spawned-server';

const NAMES = [
  'events.sqlite',
  'keys.sqlite',
  'secrets.key',
  'server.lock',
  'webhooks.checkpoint',
  'projection-versions.json',
];

/** What a server started on `dataDir` says: its failure, or 'listening'. */
const startOn = (dataDir: string) =>
  spawnServer({ DATA_DIR: dataDir }).then(
    async (server) => {
      await server.kill();
      return 'listening';
    },
    (err: Error) => err.message,
  );

test('a directory in place of a DATA_DIR file is named (server and CLI), and nothing is written', async () => {
  for (const name of NAMES) {
    const dataDir = mkdtempSync(join(tmpdir(), 'couvert-files-'));
    try {
      const file = join(dataDir, name);
      mkdirSync(file);
      assert.throws(
        () => writableDataDir(dataDir),
        (err: Error) => err.message.startsWith(`${file} is not a file`),
        name,
      );
      assert.equal(readdirSync(dataDir), [name], `${name}: nothing else made`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  // As the operator meets it: the server's start and the CLI.
  for (const name of ['events.sqlite', 'webhooks.checkpoint']) {
    const dataDir = mkdtempSync(join(tmpdir(), 'couvert-files-'));
    try {
      const file = join(dataDir, name);
      mkdirSync(file);
      assert.match(await startOn(dataDir), `failed to start: ${file} is not a file`);
      const cli = await runCli({ dataDir } as TestService, ['restaurants', 'list']);
      assert.is(cli.code, 1, cli.stderr);
      assert.match(cli.stderr, `error: ${file} is not a file`);
      assert.equal(readdirSync(dataDir), [name], `${name}: nothing else made`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
});

test('a damaged server.lock is named, with what to do', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-files-'));
  try {
    const file = join(dataDir, LOCK_FILE);
    writeFileSync(file, 'not a lock file, not SQLite either: garbage from a damaged disk\n'.repeat(100));
    assert.throws(
      () => lockDataDir(dataDir),
      (err: Error) => err.message.startsWith(`${file} is damaged`) && err.message.includes('delete it'),
    );
    const said = await startOn(dataDir);
    assert.match(said, `failed to start: ${file} is damaged`);
    assert.equal(readdirSync(dataDir), [LOCK_FILE], 'nothing else made');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
