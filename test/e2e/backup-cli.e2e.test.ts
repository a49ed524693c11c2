// `backup --out DIR` beside a running server: a copy of DATA_DIR that a server starts on and that
// reads back every customer as it was answered. A plain `cp` of events.sqlite while the server runs
// copies a stub (the log's pages live in events.sqlite-wal until a checkpoint): a server started on it
// begins again on an empty log, silently.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { registerAllCliCommands } from '../../src/cli/commands';
import { cliCommands } from '../../src/cli/registry';
import { registerModules } from '../../src/modules';
import { runCli } from '../helpers/cli-process';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const TOKEN = 'couvert_pk_backup_000000000000000000000000001';
const SCOPES = ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'];

const t = suite<{ svc: TestService; scratch: string }>('backup beside a running server');
t.before(async (ctx) => {
  ctx.scratch = mkdtempSync(join(tmpdir(), 'couvert-backup-'));
  ctx.svc = await startTestService({
    bootstrap: demoBootstrap({}, [{ id: 'key_backup', token: TOKEN, scopes: SCOPES }]),
  });
});
t.after(async ({ svc, scratch }) => {
  await svc.close();
  rmSync(scratch, { recursive: true, force: true });
});

t('a backup taken while the server runs starts a server that reads back every customer', async (ctx) => {
  const { svc } = ctx;
  const created = await svc.api('POST', '/customers', {
    token: TOKEN,
    body: { name: 'Ana Souza', email: 'ana@example.com', external_id: 'crm-1' },
  });
  assert.is(created.status, 201, created.text);
  const id = created.body.data.id as string;
  const before = await svc.api('GET', `/customers/${id}`, { token: TOKEN });
  assert.is(before.status, 200, before.text);

  const out = join(ctx.scratch, 'copy');
  const run = await runCli(svc, ['backup', '--out', out]);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, out);
  const files = readdirSync(out).sort();
  for (const f of ['events.sqlite', 'keys.sqlite', 'secrets.key']) assert.ok(files.includes(f), files.join());
  // Self-contained: no WAL to carry beside the files (one left behind would be replayed onto them).
  assert.not.ok(
    files.some((f) => f.endsWith('-wal') || f.endsWith('-shm')),
    files.join(),
  );
  assert.is(statSync(out).mode & 0o777, 0o700);

  const restored = await startTestService({ dataDir: out });
  try {
    const after = await restored.api('GET', `/customers/${id}`, { token: TOKEN });
    assert.is(after.status, 200, after.text);
    assert.equal(after.body, before.body);
  } finally {
    await restored.close();
  }
});

t(
  'the keys are copied after the log: a key made once the log is copied is in the copy of the keys',
  async (ctx) => {
    // The other order loses data: a customer appended between the two copies would be in the log's copy,
    // sealed with a key the keys' copy lacks, and read as erased once restored. A key made after the
    // log's copy is only extra. The key page is written the moment the command says the log is copied.
    registerModules();
    registerAllCliCommands();
    const backup = cliCommands().find((c) => c.name === 'backup');
    assert.ok(backup);
    const out = join(ctx.scratch, 'ordered');
    const live = new Database(join(ctx.svc.dataDir, 'keys.sqlite'));
    const said: string[] = [];
    try {
      await backup.run({
        rt: ctx.svc.rt,
        flags: { out },
        positionals: [],
        out: (line) => {
          said.push(line);
          if (line === 'copied events.sqlite')
            live
              .prepare('INSERT INTO key_pages (page, keys, created) VALUES (?, ?, ?)')
              .run('page_after_the_log', Buffer.alloc(32, 7), new Date().toISOString());
        },
      });
    } finally {
      live.close();
    }
    assert.ok(said.includes('copied events.sqlite'), said.join('\n'));
    const copy = new Database(join(out, 'keys.sqlite'), { readonly: true });
    try {
      const page = copy.prepare("SELECT 1 FROM key_pages WHERE page = 'page_after_the_log'").get();
      assert.ok(page, 'the key made after the log was copied is in the copy of keys.sqlite');
    } finally {
      copy.close();
    }
  },
);

t('a directory that already holds files is refused, and nothing is written into it', async (ctx) => {
  const out = join(ctx.scratch, 'busy');
  mkdirSync(out);
  writeFileSync(join(out, 'events.sqlite'), 'older backup');
  const run = await runCli(ctx.svc, ['backup', '--out', out]);
  assert.is(run.code, 2, 'a usage error');
  assert.match(run.stderr, `--out ${out} is not empty`);
  assert.equal(readdirSync(out), ['events.sqlite']);
});

t('--out is required', async (ctx) => {
  const run = await runCli(ctx.svc, ['backup']);
  assert.is(run.code, 2, 'a usage error');
  assert.match(run.stderr, '--out is required');
  assert.not.ok(existsSync(join(ctx.scratch, 'undefined')));
});

t.run();
