// `npm run cli -- customers import` in its own process beside a running server: the dry run writes
// nothing; the import's customers appear in the partners' sync feed (GET /customers, updated_since)
// and their events are marked "publish no webhook"; the summary CSV; the header refusal; status.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadImportJob, startImportJob } from '../../commands/customer-import/handler';
import { takeImportSlot } from '../../commands/customer-import/slot';
import { customerStream, webhookTypeOf } from '../../commands/customers/events';
import { operatorMeta } from '../../src/core/command-meta';
import { publishesWebhook } from '../../src/core/no-webhook';
import { runCli } from '../helpers/cli-process';
import { startCustomerService, TOKENS } from '../helpers/customer-service';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('customer import: operator CLI beside a running server');
t.before(async (ctx) => {
  ctx.svc = await startCustomerService();
});
t.after(async ({ svc }) => svc.close());

const cli = runCli;

const FILE = [
  '\uFEFFname;email;phone_number;tags;VIP level;Children',
  'Ann Import;ann@import.test;06 11 22 33 44;vip|regular;gold;2',
  '"Bob; Jr";bob@import.test;;;;',
  ';nobody@import.test;;;;',
  'Ann Again;ANN@import.test;;;silver;',
].join('\r\n');

const feed = async (svc: TestService, since: string) =>
  (
    await svc.api('GET', `/customers?updated_since=${encodeURIComponent(since)}&limit=100`, {
      token: TOKENS.read,
    })
  ).body.data as { id: string; name: string; email: string; phone_number: string; custom_fields: object }[];

t('dry run, import with --on-match update, summary, sync feed, no-webhook mark, status', async ({ svc }) => {
  const file = join(svc.dataDir, 'customers.csv');
  writeFileSync(file, FILE);
  const since = new Date(Date.now() - 60_000).toISOString();
  const before = (await feed(svc, since)).length;

  const dry = await cli(svc, [
    'customers',
    'import',
    '--restaurant',
    'rest_fr',
    '--file',
    file,
    '--dry-run',
    '--on-match',
    'update',
  ]);
  assert.is(dry.code, 0, dry.stderr);
  assert.match(
    dry.stdout,
    /dry run of 4 rows \(nothing written\): would be created 2, updated 1, matched 0, skipped 1/,
  );
  const drySummary = readFileSync(join(svc.dataDir, 'customers.dry-run.summary.csv'), 'utf8').split('\r\n');
  assert.is(drySummary[3], '3,skipped,,,name: name is required');
  assert.is((await feed(svc, since)).length, before);
  // Spelled --dry-run=true, it is a dry run too (it read as not one, and imported for real).
  const spelled = await cli(svc, [
    'customers',
    'import',
    '--restaurant',
    'rest_fr',
    '--file',
    file,
    '--dry-run=true',
    '--on-match',
    'update',
  ]);
  assert.is(spelled.code, 0, spelled.stderr);
  assert.match(spelled.stdout, /dry run of 4 rows \(nothing written\)/);
  assert.is((await feed(svc, since)).length, before);

  const run = await cli(svc, [
    'customers',
    'import',
    '--restaurant',
    'rest_fr',
    '--file',
    file,
    '--on-match',
    'update',
  ]);
  assert.is(run.code, 0, run.stderr);
  const job =
    /import (imp_\w+) finished: 4 rows in [\d.]+ s: created 2, updated 1, matched 0, skipped 1/.exec(
      run.stdout,
    )?.[1];
  assert.ok(job, run.stdout);
  // Its id and the command that finishes it are printed as it starts, before any row: a run killed
  // part way (SIGKILL, a lost terminal) printed nothing else, and --resume needs that id.
  assert.ok(
    run.stdout.startsWith(
      `import ${job} started: 4 rows; should it be interrupted, finish it with: npm run cli -- customers import --resume ${job} --restaurant rest_fr --file ${file}\n`,
    ),
    run.stdout,
  );
  const summaryPath = /summary: (.+)/.exec(run.stdout)?.[1] as string;
  assert.is(summaryPath, join(svc.dataDir, `customers.${job}.summary.csv`));
  const summary = readFileSync(summaryPath, 'utf8').trim().split('\r\n');
  assert.is(summary[0], 'row,outcome,customer_id,matched_on,errors');
  const annId = summary[1]?.split(',')[2] as string;
  assert.match(summary[1] as string, /^1,created,cus_\w+,,$/);
  assert.is(summary[4], `4,updated,${annId},email,`);

  // The partners' sync feed shows the imported customers (the server reads the CLI's events).
  const seen = await feed(svc, since);
  const ann = seen.find((c) => c.id === annId);
  assert.ok(ann);
  assert.equal([ann.name, ann.email, ann.phone_number], ['Ann Again', 'ANN@import.test', '+33611223344']);
  assert.equal(ann.custom_fields, {
    cf_vip: { name: 'VIP level', value: 'silver' },
    cf_kids: { name: 'Children', value: 2 },
  });
  assert.ok(seen.some((c) => c.name === 'Bob; Jr'));

  // Every event the import appended publishes no webhook.
  const events = await svc.rt.events.readStream(customerStream(annId));
  assert.equal(
    events.map((e) => [e.type, publishesWebhook(e), webhookTypeOf(e)]),
    [
      ['CustomerCreated', false, null],
      ['CustomerUpdated', false, null],
    ],
  );
  assert.is(events[0]?.metadata.actor, 'operator:cli');

  const status = await cli(svc, ['customers', 'import-status', '--job', job]);
  assert.is(status.code, 0, status.stderr);
  assert.match(
    status.stdout,
    new RegExp(
      `import ${job} \\(finished\\) of customers.csv into rest_fr, on_match update, by operator:cli`,
    ),
  );
  assert.match(status.stdout, /rows 4\/4: created 2, updated 1, matched 0, skipped 1/);

  // The same file again with return_existing: every row matches, nothing is written.
  const again = await cli(svc, ['customers', 'import', '--restaurant', 'rest_fr', '--file', file]);
  assert.match(again.stdout, /created 0, updated 0, matched 3, skipped 1/, again.stdout + again.stderr);
  assert.is((await svc.rt.events.readStream(customerStream(annId))).length, 2);
});

t('a header that cannot be imported: exit 1, every problem named, nothing written', async ({ svc }) => {
  const file = join(svc.dataDir, 'bad.csv');
  writeFileSync(file, 'email,nickname,email\na@b.fr,A,c@d.fr\n');
  const head = await svc.rt.events.headPosition();
  const r = await cli(svc, ['customers', 'import', '--restaurant', 'rest_fr', '--file', file]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /error: The header row cannot be imported/);
  assert.match(r.stderr, /header\.2: "nickname" is not a customer field/);
  assert.match(r.stderr, /header\.3: "email" is the same column as column 1/);
  assert.match(r.stderr, /header: the file has no name column/);
  assert.is(await svc.rt.events.headPosition(), head);
  const usage = await cli(svc, [
    'customers',
    'import',
    '--restaurant',
    'rest_fr',
    '--file',
    file,
    '--on-match',
    'merge',
  ]);
  assert.is(usage.code, 2, 'a usage error');
  assert.match(usage.stderr, /--on-match takes return_existing, update, create_new/);
});

t(
  'summary paths: the input file never, an existing file only with --force, checked before importing',
  async ({ svc }) => {
    const file = join(svc.dataDir, 'guard.csv');
    const csv = 'name;email\nGuard One;guard1@import.test\n';
    writeFileSync(file, csv);
    const existing = join(svc.dataDir, 'kept.csv');
    writeFileSync(existing, 'precious\n');
    const head = await svc.rt.events.headPosition();
    const base = ['customers', 'import', '--restaurant', 'rest_fr', '--file', file];

    for (const extra of [[], ['--force']]) {
      const onInput = await cli(svc, [...base, '--summary', file, ...extra]);
      assert.is(onInput.code, 2, onInput.stdout);
      assert.match(onInput.stderr, /--summary .*guard\.csv is the input file/);
      assert.is(readFileSync(file, 'utf8'), csv);
    }
    const onExisting = await cli(svc, [...base, '--summary', existing]);
    assert.is(onExisting.code, 2, onExisting.stdout);
    assert.match(
      onExisting.stderr,
      /--summary .*kept\.csv already exists: choose a new file, or add --force/,
    );
    const dryExisting = await cli(svc, [...base, '--dry-run', '--summary', existing]);
    assert.is(dryExisting.code, 2, dryExisting.stdout);
    assert.is(readFileSync(existing, 'utf8'), 'precious\n');
    assert.is(await svc.rt.events.headPosition(), head, 'nothing imported');

    const forced = await cli(svc, [...base, '--summary', existing, '--force']);
    assert.is(forced.code, 0, forced.stderr);
    assert.match(
      readFileSync(existing, 'utf8'),
      /^row,outcome,customer_id,matched_on,errors\r\n1,created,cus_/,
    );
    const job = /import (imp_\w+) finished/.exec(forced.stdout)?.[1] as string;
    assert.ok(job, forced.stdout);

    writeFileSync(existing, 'precious\n');
    const out = await cli(svc, ['customers', 'import-summary', '--job', job, '--out', existing]);
    assert.is(out.code, 2, out.stdout);
    assert.match(out.stderr, /--out .*kept\.csv already exists/);
    assert.is(readFileSync(existing, 'utf8'), 'precious\n');
    const outForced = await cli(svc, [
      'customers',
      'import-summary',
      '--job',
      job,
      '--out',
      existing,
      '--force',
    ]);
    assert.is(outForced.code, 0, outForced.stderr);
    assert.match(readFileSync(existing, 'utf8'), /^row,outcome/);
    const fresh = join(svc.dataDir, 'fresh.summary.csv');
    const outNew = await cli(svc, ['customers', 'import-summary', '--job', job, '--out', fresh]);
    assert.is(outNew.code, 0, outNew.stderr);
  },
);

t(
  'an import refused because another runs names that one, so a dead run of it can be finished',
  async ({ svc }) => {
    const file = join(svc.dataDir, 'second.csv');
    writeFileSync(file, 'name\nSecond One\n');
    // An import whose process died a moment ago: its slot taken, its job started, no row recorded.
    const held = 'imp_heldbyadeadcli';
    const meta = { ...operatorMeta('cli'), restaurant_id: 'rest_fr' };
    await takeImportSlot(svc.rt, { jobId: held, restaurantId: 'rest_fr' }, meta);
    await startImportJob(
      svc.rt,
      {
        jobId: held,
        restaurantId: 'rest_fr',
        fileName: 'first.csv',
        fileSha256: '0'.repeat(64),
        rowCount: 10,
        onMatch: 'return_existing',
        columns: ['name'],
        actor: 'operator:cli',
      },
      meta,
    );
    const head = await svc.rt.events.headPosition();
    const r = await cli(svc, ['customers', 'import', '--restaurant', 'rest_fr', '--file', file]);
    assert.is(r.code, 1, r.stdout);
    assert.match(
      r.stderr,
      /error: An import is already running for this restaurant \(first\.csv, 0 of 10 rows done\)/,
    );
    // Still active (it started a moment ago: a CLI run elsewhere, or a dashboard import in the server):
    // its last activity and rows done, and no --resume, which would make two processes write one job.
    const { state } = await loadImportJob(svc.rt, held);
    assert.match(
      r.stdout,
      `the running import is ${held} (first.csv, 0 of 10 rows done, last activity ${state.lastEventAt}; npm run cli -- customers import-status --job ${held}): it is still active`,
    );
    assert.not.match(r.stdout, '--resume');
    // Resuming it is refused as well, saying why.
    const resumed = await cli(svc, [
      'customers',
      'import',
      '--resume',
      held,
      '--restaurant',
      'rest_fr',
      '--file',
      file,
    ]);
    assert.is(resumed.code, 1, resumed.stdout);
    assert.match(
      resumed.stderr,
      `error: import ${held} is still running (last activity ${state.lastEventAt}, 0 of 10 rows done)`,
    );
    assert.is(await svc.rt.events.headPosition(), head, 'nothing imported');
  },
);

t.run();
