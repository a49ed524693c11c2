// The import engine against the customers module (memory log + customer read model): outcomes of
// each on_match, matching as POST /customers does (external_id, then phone in any spelling, then
// email in any case), rows of the same file matching each other, re-import, the job stream, the
// no-webhook mark, and a resume after a crash.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerImportStream } from '../../commands/customer-import/events';
import { loadImportJob } from '../../commands/customer-import/handler';
import { takeImportSlot } from '../../commands/customer-import/slot';
import { evolveImportJob, initialImportJob } from '../../commands/customer-import/state';
import { customerStream, webhookTypeOf } from '../../commands/customers/events';
import { createCustomer, deleteCustomer, updateCustomer } from '../../commands/customers/handler';
import { mergeCustomers } from '../../commands/customers/merge';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customer-docs';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { publishesWebhook } from '../../src/core/no-webhook';
import {
  type ImportDeps,
  type ImportProgress,
  importCustomers,
  importedCustomerId,
  planImport,
  prepareImport,
  resumeImport,
  withCurrentRules,
} from '../../src/customer-import/engine';
import { jobSummaryCsv } from '../../src/customer-import/summary';
import { type ExpectedRevision, WrongExpectedRevisionError } from '../../src/ports/event-store';
import { type CustomerWorld, customerWorld } from '../helpers/customers';
import { countingReads } from '../helpers/hooked-events';

const meta = operatorMeta('test');
const bytes = (lines: string[]) => new TextEncoder().encode(`${lines.join('\r\n')}\r\n`);

async function world(): Promise<{ w: CustomerWorld; deps: ImportDeps }> {
  const w = await customerWorld();
  await w.defineFields([{ id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] }]);
  await w.settle();
  const deps: ImportDeps = {
    events: w.events,
    clock: w.clock,
    docs: w.docs,
    settle: async () => {
      await w.settle();
    },
  };
  return { w, deps };
}

const all = async (w: CustomerWorld, restaurant = 'rest_a') =>
  (await w.docs.collection<CustomerDoc>(CUSTOMERS).find({ restaurant_id: restaurant })).sort(
    (a, b) => a.created_seq - b.created_seq,
  );

async function run(
  deps: ImportDeps,
  lines: string[],
  onMatch: 'return_existing' | 'update' | 'create_new',
  batchSize?: number,
) {
  const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
  const state = await importCustomers(deps, prepared, { onMatch, fileName: 'f.csv', meta, batchSize });
  const summary = await jobSummaryCsv(deps, state.jobId as string);
  return { state, summary: summary.trim().split('\r\n').slice(1) };
}

/** loadImportJob reads only the job's first and last events: it must equal the fold of all of them. */
async function assertJobLoads(w: CustomerWorld, deps: ImportDeps, jobId: string) {
  const events = await w.events.readStream(customerImportStream(jobId));
  const loaded = await loadImportJob(deps, jobId);
  assert.equal(loaded.state, events.reduce(evolveImportJob, initialImportJob));
  assert.is(loaded.revision, events.length - 1);
  return loaded.state;
}

const t = suite('customer import: engine');

t(
  'creates customers as POST /customers would store them; bad rows are skipped with their faults',
  async () => {
    const { w, deps } = await world();
    const { state, summary } = await run(
      deps,
      [
        'name,email,phone_number,tags,newsletter_consent,VIP level,lang',
        'Ann,ann@example.com,06 12 34 56 78,vip|regular,yes,gold,',
        'Bob,,,,,,it',
        ',nobody@example.com,,,,,',
        'Eve,eve@example.com,,,,bronze,',
      ],
      'return_existing',
    );
    assert.is(state.status, 'finished');
    assert.equal(state.counts, { created: 2, updated: 0, matched: 0, skipped: 2 });
    const docs = await all(w);
    assert.equal(
      docs.map((d) => [d.name, d.email, d.phone_number, d.lang, d.tags, d.newsletter_consent]),
      [
        ['Ann', 'ann@example.com', '+33612345678', 'FR', ['vip', 'regular'], true],
        ['Bob', null, null, 'IT', [], false],
      ],
    );
    assert.equal(docs[0]?.custom_fields, { cf_vip: { name: 'VIP level', value: 'gold' } });
    assert.equal(summary, [
      `1,created,${docs[0]?._id},,`,
      `2,created,${docs[1]?._id},,`,
      '3,skipped,,,name: name is required',
      '4,skipped,,,"custom_fields.cf_vip: VIP level takes one of gold, silver"',
    ]);
  },
);

t('matching: external_id, then phone in any spelling, then email in any case; each on_match', async () => {
  for (const onMatch of ['return_existing', 'update', 'create_new'] as const) {
    const { w, deps } = await world();
    const a = await createCustomer(deps, w.restaurant, { name: 'A', external_id: 'crm-1' }, w.meta);
    const b = await createCustomer(
      deps,
      w.restaurant,
      { name: 'B', phone_number: '+33 6 12 34 56 78' },
      w.meta,
    );
    const c = await createCustomer(deps, w.restaurant, { name: 'C', email: 'c@example.com' }, w.meta);
    await w.settle();
    const { state, summary } = await run(
      deps,
      [
        'name,external_id,phone_number,email',
        'A2,crm-1,,',
        'B2,,0612345678,',
        'C2,,,C@Example.COM',
        'D,,,d@example.com',
      ],
      onMatch,
    );
    const docs = await all(w);
    if (onMatch === 'create_new') {
      assert.equal(state.counts, { created: 4, updated: 0, matched: 0, skipped: 0 });
      assert.is(docs.length, 7);
      continue;
    }
    const outcome = onMatch === 'update' ? 'updated' : 'matched';
    assert.equal(summary.slice(0, 3), [
      `1,${outcome},${a.customerId},external_id,`,
      `2,${outcome},${b.customerId},phone,`,
      `3,${outcome},${c.customerId},email,`,
    ]);
    assert.is(docs.length, 4);
    assert.equal(
      docs.map((d) => d.name),
      onMatch === 'update' ? ['A2', 'B2', 'C2', 'D'] : ['A', 'B', 'C', 'D'],
    );
    // update writes the given email as given (the match was case-insensitive).
    if (onMatch === 'update') assert.is(docs[2]?.email, 'C@Example.COM');
  }
});

t(
  'rows of one file match each other as consecutive POST /customers calls would, in any batch size',
  async () => {
    for (const batchSize of [1, 2, 200]) {
      const { w, deps } = await world();
      const { summary } = await run(
        deps,
        [
          'name,email,phone_number,external_id',
          'Ann,ann@example.com,,',
          'Ann again,ANN@example.com,06 12 34 56 78,',
          'By phone,,+33612345678,x-1',
          'By ext,,,x-1',
          'Other,other@example.com,,',
        ],
        'update',
        batchSize,
      );
      const docs = await all(w);
      assert.is(docs.length, 2, `batch ${batchSize}`);
      const [ann, other] = docs;
      assert.equal(
        summary.map((l) => l.split(',').slice(1, 4).join(',')),
        [
          `created,${ann?._id},`,
          `updated,${ann?._id},email`,
          `updated,${ann?._id},phone`,
          `updated,${ann?._id},external_id`,
          `created,${other?._id},`,
        ],
        `batch ${batchSize}`,
      );
      assert.equal([ann?.name, ann?.phone_number, ann?.external_id], ['By ext', '+33612345678', 'x-1']);
    }
  },
);

t(
  'importing the same file again writes nothing: every row matches (return_existing and update)',
  async () => {
    const { w, deps } = await world();
    const file = [
      'name,email,external_id,tags',
      'Ann,ann@example.com,crm-1,a|b',
      'Bob,bob@example.com,crm-2,',
    ];
    await run(deps, file, 'return_existing');
    const head = await w.events.headPosition();
    for (const onMatch of ['return_existing', 'update'] as const) {
      const { state } = await run(deps, file, onMatch);
      assert.equal(state.counts, { created: 0, updated: 0, matched: 2, skipped: 0 });
    }
    // Only the two jobs' own events were appended, no customer event.
    const after: string[] = [];
    for await (const e of w.events.readAll({ after: head }))
      after.push(e.stream.split('-').slice(0, 2).join('-'));
    assert.ok(
      after.every((s) => s === 'customer-import'),
      after.join(' '),
    );
    assert.is((await all(w)).length, 2);
  },
);

t(
  'imported events are marked "publish no webhook" and carry the job; the customer read model shows them',
  async () => {
    const { w, deps } = await world();
    await createCustomer(deps, w.restaurant, { name: 'Old', email: 'old@example.com' }, w.meta);
    await w.settle();
    const { state } = await run(
      deps,
      ['name,email', 'New,new@example.com', 'Old renamed,old@example.com'],
      'update',
    );
    const docs = await all(w);
    const created = await w.events.readStream(customerStream(docs[1]?._id as string));
    const updated = (await w.events.readStream(customerStream(docs[0]?._id as string))).at(-1);
    for (const e of [created[0], updated]) {
      assert.ok(e);
      assert.is(publishesWebhook(e), false);
      assert.is(webhookTypeOf(e), null);
      assert.is(e.metadata.import_job_id, state.jobId);
      assert.is(e.metadata.actor, 'operator:test');
    }
    assert.is(created[0]?.type, 'CustomerCreated');
    assert.is((created[0]?.data as { origin?: string } | undefined)?.origin, 'IMPORT');
    assert.is(updated?.type, 'CustomerUpdated');
    // An ordinary write of the same customer is published as before.
    const own = await w.events.readStream(customerStream(docs[0]?._id as string));
    assert.is(webhookTypeOf(own[0] as never), 'customer.created');
    assert.equal(
      docs.map((d) => d.name),
      ['Old renamed', 'New'],
    );
  },
);

t("tenancy: an import matches only its own restaurant's customers", async () => {
  const { w, deps } = await world();
  const a = await createCustomer(
    deps,
    w.restaurant,
    { name: 'A', email: 'a@example.com', external_id: 'crm-1' },
    w.meta,
  );
  await w.settle();
  const prepared = await prepareImport(
    deps,
    'rest_b',
    bytes(['name,email,external_id', 'B,a@example.com,crm-1']),
  );
  const state = await importCustomers(deps, prepared, { onMatch: 'update', fileName: 'f.csv', meta });
  assert.equal(state.counts, { created: 1, updated: 0, matched: 0, skipped: 0 });
  assert.is((await all(w, 'rest_b')).length, 1);
  assert.equal(
    (await all(w)).map((d) => [d._id, d.name]),
    [[a.customerId, 'A']],
  );
  let unknown: unknown = null;
  await prepareImport(deps, 'rest_nope', bytes(['name', 'X'])).catch((e) => {
    unknown = e;
  });
  assert.is((unknown as ApiError).status, 404);
});

t('the job: started with file, rows, on_match and actor; progress; finished with counts', async () => {
  const { w, deps } = await world();
  const lines = ['name', ...Array.from({ length: 25 }, (_, i) => `Guest ${i}`)];
  const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
  const progress: ImportProgress[] = [];
  const state = await importCustomers(deps, prepared, {
    onMatch: 'create_new',
    fileName: 'guests.csv',
    meta,
    batchSize: 10,
    onProgress: (p) => progress.push(p),
  });
  // Slices are cut by time too (SLICE_MS), so how the 25 rows split depends on the machine's speed:
  // at most 10 a slice, in order, from 0 to 25.
  const processed = progress.map((p) => p.processed);
  assert.is(processed[0], 0);
  assert.is(processed.at(-1), 25);
  for (let i = 1; i < processed.length; i++) {
    const step = (processed[i] as number) - (processed[i - 1] as number);
    assert.ok(step > 0 && step <= 10, `progress ${processed}`);
  }
  assert.ok(processed.length >= 4, `at least three slices of at most 10 rows: ${processed}`);
  assert.equal(progress.at(-1)?.counts, { created: 25, updated: 0, matched: 0, skipped: 0 });
  const events = await w.events.readStream(customerImportStream(state.jobId as string));
  const types = events.map((e) => e.type);
  assert.is(types[0], 'CustomerImportStarted');
  assert.is(types.at(-1), 'CustomerImportFinished');
  const records = events.slice(1, -1);
  assert.ok(records.length >= 1 && records.every((e) => e.type === 'CustomerImportRowsRecorded'), `${types}`);
  // Every row's outcome recorded once, in row order.
  assert.equal(
    records.flatMap((e) => (e.data.rows as unknown[]).map((_, i) => (e.data.first_row as number) + i)),
    Array.from({ length: 25 }, (_, i) => (records[0]!.data.first_row as number) + i),
  );
  assert.is(records.at(-1)?.data.processed, 25);
  const started = events[0]?.data as Record<string, unknown>;
  assert.equal(
    [started.file_name, started.row_count, started.on_match, started.actor, started.restaurant_id],
    ['guests.csv', 25, 'create_new', 'operator:test', 'rest_a'],
  );
  assert.is(events[0]?.metadata.actor, 'operator:test');
  assert.is((await assertJobLoads(w, deps, state.jobId as string)).status, 'finished');
});

t('a header that cannot be imported is refused before any row is read, and no job is started', async () => {
  const { w, deps } = await world();
  const head = await w.events.headPosition();
  let err: unknown = null;
  try {
    await prepareImport(deps, 'rest_a', bytes(['email,nickname,email', 'a@example.com,A,b@example.com']));
  } catch (e) {
    err = e;
  }
  assert.instance(err, ApiError);
  const issues = (err as ApiError).details?.issues as { path: string; code: string }[];
  assert.equal(
    issues.map((i) => [i.path, i.code]),
    [
      ['header.2', 'unknown_column'],
      ['header.3', 'duplicate_column'],
      ['header', 'missing_column'],
    ],
  );
  assert.is(await w.events.headPosition(), head);
  let notUtf8: unknown = null;
  await prepareImport(deps, 'rest_a', new Uint8Array([0x6e, 0xff])).catch((e) => {
    notUtf8 = e;
  });
  const utf8Issues = ((notUtf8 as ApiError).details?.issues ?? []) as { code: string }[];
  assert.is(utf8Issues[0]?.code, 'not_utf8');
});

t('preview and dry run: what each row would do, nothing written', async () => {
  const { w, deps } = await world();
  const old = await createCustomer(deps, w.restaurant, { name: 'Old', email: 'old@example.com' }, w.meta);
  await w.settle();
  const head = await w.events.headPosition();
  const prepared = await prepareImport(
    deps,
    'rest_a',
    bytes(['name,email', 'A,old@example.com', 'B,b@example.com', 'B2,B@example.com', ',x@example.com']),
  );
  const plan = await planImport(deps, prepared, 'update');
  assert.equal(
    plan.rows.map((r) => [r.outcome, r.customer_id, r.matched_on, r.matched_row]),
    [
      ['updated', old.customerId, 'email', null],
      ['created', null, null, null],
      ['updated', null, 'email', 2],
      ['skipped', null, null, null],
    ],
  );
  assert.equal(plan.counts, { created: 1, updated: 2, matched: 0, skipped: 1 });
  const preview = await planImport(deps, prepared, 'return_existing', 2);
  assert.is(preview.row_count, 4);
  assert.equal(
    preview.rows.map((r) => r.outcome),
    ['matched', 'created'],
  );
  assert.is(await w.events.headPosition(), head);
});

t(
  'a crash mid-import: resume with the same file finishes it, each row once, reported as it was',
  async () => {
    const { w, deps } = await world();
    const lines = [
      'name,email',
      ...Array.from({ length: 30 }, (_, i) => `Guest ${i},guest${i}@example.com`),
      'Guest 0 again,GUEST0@example.com',
    ];
    const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
    // The process "dies" at its third catch-up: later slices written, not recorded.
    let settles = 0;
    const dying: ImportDeps = {
      ...deps,
      settle: async (p) => {
        if (++settles === 3) throw new Error('process stopped');
        await deps.settle(p);
      },
    };
    let err: unknown = null;
    await importCustomers(dying, prepared, {
      onMatch: 'update',
      fileName: 'f.csv',
      meta,
      batchSize: 7,
      jobId: 'imp_crash',
    }).catch((e) => {
      err = e;
    });
    assert.match(String(err), /process stopped/);
    await w.settle();
    const stopped = await assertJobLoads(w, deps, 'imp_crash');
    assert.is(stopped.status, 'failed');
    // Slices are written ahead of their recording (a pipeline): the crash leaves rows written but
    // not recorded, which the resume must report as created by this job, not as matches.
    // The first slice was recorded before the crash. A slice holds at most batchSize rows but ends
    // early once its work took SLICE_MS / 2, so on a loaded machine it may hold fewer (5 of 7 seen).
    const written = (await all(w)).length;
    assert.ok(stopped.processed >= 1 && stopped.processed < written, `${stopped.processed} < ${written}`);
    // Another file is refused.
    let other: unknown = null;
    const otherFile = await prepareImport(deps, 'rest_a', bytes(['name', 'X']));
    await resumeImport(deps, otherFile, 'imp_crash', { meta, batchSize: 7 }).catch((e) => {
      other = e;
    });
    assert.instance(other, ApiError);
    const done = await resumeImport(deps, prepared, 'imp_crash', { meta, batchSize: 7 });
    assert.is(done.status, 'finished');
    assert.equal(done.counts, { created: 30, updated: 1, matched: 0, skipped: 0 });
    const docs = await all(w);
    assert.is(docs.length, 30);
    const summary = (await jobSummaryCsv(deps, 'imp_crash')).trim().split('\r\n').slice(1);
    assert.is(summary.length, 31);
    assert.equal(summary.slice(7, 9), [
      `8,created,${importedCustomerId('imp_crash', 8)},,`,
      `9,created,${importedCustomerId('imp_crash', 9)},,`,
    ]);
    assert.is(summary[30], `31,updated,${importedCustomerId('imp_crash', 1)},email,`);
    const events = await w.events.readStream(customerImportStream('imp_crash'));
    assert.ok(events.some((e) => e.type === 'CustomerImportResumed'));
  },
);

t(
  "preview with update: a row matching a customer's key that an earlier row changed is previewed as the import does it",
  async () => {
    const lines = [
      'name,email,phone_number,external_id',
      // Row 1 matches Old on its phone and gives it another email: Old's email no longer matches.
      'R1,other@example.com,06 11 11 11 11,',
      'R2,old@example.com,,',
      // Row 3 creates a customer, row 4 matches it on its phone and changes its email.
      'R3,first@example.com,06 22 22 22 22,',
      'R4,second@example.com,+33 6 22 22 22 22,',
      'R5,FIRST@example.com,,',
      'R6,second@example.com,,',
      // Row 7 gives Ext another external_id: row 8's old one matches nothing.
      'R7,ext@example.com,,E2',
      'R8,,,E1',
      'R9,,,E2',
    ];
    const outcomes = async (onMatch: 'update' | 'return_existing') => {
      const { w, deps } = await world();
      await createCustomer(
        deps,
        w.restaurant,
        { name: 'Old', email: 'old@example.com', phone_number: '+33611111111' },
        w.meta,
      );
      await createCustomer(
        deps,
        w.restaurant,
        { name: 'Ext', email: 'ext@example.com', external_id: 'E1' },
        w.meta,
      );
      await w.settle();
      const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
      const plan = await planImport(deps, prepared, onMatch);
      const { summary } = await run(deps, lines, onMatch);
      return {
        planned: plan.rows.map((r) => `${r.row},${r.outcome},${r.matched_on ?? ''}`),
        imported: summary.map((l) =>
          l
            .split(',')
            .filter((_, i) => i !== 2)
            .slice(0, 3)
            .join(','),
        ),
      };
    };
    for (const onMatch of ['update', 'return_existing'] as const) {
      const { planned, imported } = await outcomes(onMatch);
      assert.equal(planned, imported, onMatch);
    }
    const { imported } = await outcomes('update');
    assert.equal(imported, [
      '1,updated,phone',
      '2,created,',
      '3,created,',
      '4,updated,phone',
      '5,created,',
      '6,updated,email',
      '7,updated,email',
      '8,created,',
      '9,updated,external_id',
    ]);
  },
);

t(
  'a row whose write fails stops the import at once: later rows are not written behind the failed job',
  async () => {
    const { w, deps } = await world();
    const lines = [
      'name,email',
      ...Array.from({ length: 400 }, (_, i) => `Guest ${i},guest${i}@example.com`),
    ];
    const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
    // The log refuses row 20's customer (a disk error): its slice's writes fail.
    const failing = customerStream(importedCustomerId('imp_fails', 20));
    const events = new Proxy(w.events, {
      get(target, key, receiver) {
        if (key === 'append')
          return (stream: string, ...rest: unknown[]) =>
            stream === failing
              ? Promise.reject(new Error('SQLITE_IOERR: disk I/O error'))
              : (target.append as (...a: unknown[]) => Promise<unknown>).call(target, stream, ...rest);
        const v = Reflect.get(target, key, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    let err: unknown = null;
    await importCustomers({ ...deps, events }, prepared, {
      onMatch: 'return_existing',
      fileName: 'f.csv',
      meta,
      batchSize: 10,
      jobId: 'imp_fails',
    }).catch((e) => {
      err = e;
    });
    assert.match(String(err), /SQLITE_IOERR/);
    await w.settle();
    const failed = await assertJobLoads(w, deps, 'imp_fails');
    assert.is(failed.status, 'failed');
    assert.ok(failed.processed < 20, `${failed.processed} rows recorded`);
    // The page tells the manager to import the rows after the last recorded one again: rows written
    // beyond it would be imported twice. Only the slices in flight when the write failed are (a slice
    // holds at most 10 rows here); the import used to go on writing every later row of the file
    // (399 customers for 19 recorded rows), since a slice whose writes failed was never retired
    // until the pipeline was full or the file ended.
    const written = (await all(w)).length;
    assert.ok(written < 60, `${written} customers written, ${failed.processed} rows recorded`);
  },
);

t(
  'a match deleted before its update is written: matched again as POST /customers does, not skipped',
  async () => {
    const { w, deps } = await world();
    const made = await createCustomer(
      deps,
      w.restaurant,
      { name: 'Erased', email: 'gone@example.com' },
      w.meta,
    );
    const other = await createCustomer(
      deps,
      w.restaurant,
      { name: 'Other', phone_number: '+33611223344' },
      w.meta,
    );
    await w.settle();
    // Deleted (an erasure, say) after the read models were last brought up to date: the import still
    // matches the row on its email, and the update finds the customer gone.
    await deleteCustomer(deps, made.customerId, null, w.meta);
    await deleteCustomer(deps, other.customerId, null, w.meta);
    const prepared = await prepareImport(
      deps,
      'rest_a',
      bytes([
        'name,email,phone_number',
        'New Gone,gone@example.com,',
        'New Other,other@example.com,+33611223344',
      ]),
    );
    const state = await importCustomers(deps, prepared, {
      onMatch: 'update',
      fileName: 'f.csv',
      meta,
      jobId: 'imp_rematch',
    });
    assert.equal(state.counts, { created: 2, updated: 0, matched: 0, skipped: 0 });
    const summary = (await jobSummaryCsv(deps, 'imp_rematch')).trim().split('\r\n').slice(1);
    assert.match(summary[0] as string, /^1,created,cus_/);
    const names = (await all(w)).map((c) => c.name);
    assert.equal(names, ['New Gone', 'New Other']);
  },
);

t(
  'a match merged away before its update is written: matched again once the survivor is in the read models',
  async () => {
    const { w, deps } = await world();
    const dup = await createCustomer(deps, w.restaurant, { name: 'Dup', email: 'dup@example.com' }, w.meta);
    const kept = await createCustomer(
      deps,
      w.restaurant,
      { name: 'Kept', phone_number: '+33611223355' },
      w.meta,
    );
    await w.settle();
    // Merged after the read models were last brought up to date: the row matches the absorbed
    // customer on its email, whose update finds it gone. The merge wrote the survivor (its new email)
    // after closing the absorbed one: matching again as of the absorbed customer's last event alone
    // can miss it (a catch-up's slice commits between them) and create a duplicate.
    await mergeCustomers(deps, dup.customerId, kept.customerId, w.meta);
    const asked: (bigint | null | undefined)[] = [];
    const spying: ImportDeps = {
      ...deps,
      settle: async (position) => {
        asked.push(position);
        await deps.settle(position);
      },
    };
    const prepared = await prepareImport(
      spying,
      'rest_a',
      bytes(['name,email,note', 'Kept Again,dup@example.com,vip']),
    );
    const state = await importCustomers(spying, prepared, {
      onMatch: 'update',
      fileName: 'f.csv',
      meta,
      jobId: 'imp_rematch_merged',
    });
    assert.equal(state.counts, { created: 0, updated: 1, matched: 0, skipped: 0 });
    const survivorWrite = (await w.events.readStream(customerStream(kept.customerId))).find(
      (e) => e.type === 'CustomerMerged',
    )?.position as bigint;
    assert.ok(survivorWrite, 'the merge wrote the survivor');
    // The first read-your-writes of this one-row import is the rematch's (the slice's own come after).
    assert.ok(
      typeof asked[0] === 'bigint' && asked[0] >= survivorWrite,
      'matched again once the read models include the survivor as the merge left it',
    );
  },
);

/** The log, with the customer's appends losing their race (another writer first) `times` times. */
function racedOn(w: CustomerWorld, customerId: string, times: number) {
  const raced = customerStream(customerId);
  let lost = 0;
  return new Proxy(w.events, {
    get(target, key, receiver) {
      if (key === 'append')
        return (stream: string, batch: unknown, expected: ExpectedRevision, ...rest: unknown[]) => {
          if (stream === raced && lost < times) {
            lost += 1;
            return Promise.reject(new WrongExpectedRevisionError(stream, expected, 0));
          }
          return (target.append as (...a: unknown[]) => Promise<unknown>).call(
            target,
            stream,
            batch,
            expected,
            ...rest,
          );
        };
      const v = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

t(
  'a customer whose update keeps losing its race to another writer: the row is skipped with that reason, the job finishes',
  async () => {
    // A large import runs in a thread of its own (its own command queues): a partner's PATCHes of a
    // customer in the file can win every retry of the import's update. That failed the whole import.
    const { w, deps } = await world();
    const made = await createCustomer(
      deps,
      w.restaurant,
      { name: 'Busy', email: 'busy@example.com' },
      w.meta,
    );
    await w.settle();
    const events = racedOn(w, made.customerId, Number.POSITIVE_INFINITY);
    const prepared = await prepareImport(
      deps,
      'rest_a',
      bytes(['name,email', 'Busy Again,busy@example.com', 'Calm,calm@example.com']),
    );
    const state = await importCustomers({ ...deps, events }, prepared, {
      onMatch: 'update',
      fileName: 'f.csv',
      meta,
      jobId: 'imp_raced',
    });
    assert.is(state.status, 'finished');
    assert.equal(state.counts, { created: 1, updated: 0, matched: 0, skipped: 1 });
    const summary = (await jobSummaryCsv(deps, 'imp_raced')).trim().split('\r\n').slice(1);
    assert.match(summary[0] as string, /^1,skipped,.*changed by another writer during the import/);
    assert.equal(
      (await all(w)).map((c) => c.name),
      ['Busy', 'Calm'],
    );
  },
);

t('a customer whose update loses more races than one update retries: matched and written again', async () => {
  const { w, deps } = await world();
  const made = await createCustomer(deps, w.restaurant, { name: 'Busy', email: 'busy@example.com' }, w.meta);
  await w.settle();
  // One update retries 5 times: 8 lost races take a second round, matched again on the fresh state.
  const events = racedOn(w, made.customerId, 8);
  const prepared = await prepareImport(deps, 'rest_a', bytes(['name,email', 'Busy Again,busy@example.com']));
  const state = await importCustomers({ ...deps, events }, prepared, {
    onMatch: 'update',
    fileName: 'f.csv',
    meta,
    jobId: 'imp_raced_then_landed',
  });
  assert.is(state.status, 'finished');
  assert.equal(state.counts, { created: 0, updated: 1, matched: 0, skipped: 0 });
  assert.equal(
    (await all(w)).map((c) => c.name),
    ['Busy Again'],
  );
});

t(
  'a file read before the custom fields changed is imported by the fields defined when the import starts',
  async () => {
    const { w, deps } = await world();
    const lines = ['name,email,VIP level', 'Ann,ann@example.com,gold', 'Bob,bob@example.com,silver'];
    // Read (a dashboard upload waits up to 30 minutes for its Import), then the catalog changes.
    const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
    await w.defineFields([
      { id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['silver', 'bronze'] },
    ]);
    await w.settle();
    const state = await importCustomers(deps, prepared, {
      onMatch: 'return_existing',
      fileName: 'f.csv',
      meta,
    });
    assert.equal(state.counts, { created: 1, updated: 0, matched: 0, skipped: 1 });
    const summary = (await jobSummaryCsv(deps, state.jobId as string)).trim().split('\r\n');
    assert.is(summary[1], '1,skipped,,,"custom_fields.cf_vip: VIP level takes one of silver, bronze"');
    // The field removed: the column is refused as the upload would be now, and nothing is written.
    const again = await prepareImport(deps, 'rest_a', bytes(lines));
    await w.defineFields([]);
    await w.settle();
    const before = (await all(w)).length;
    try {
      await importCustomers(deps, again, { onMatch: 'return_existing', fileName: 'f.csv', meta });
      assert.unreachable('imported under a removed custom field');
    } catch (err) {
      assert.instance(err, ApiError);
      assert.is((err as ApiError).status, 400);
      assert.match((err as ApiError).message, 'header row');
    }
    await w.settle();
    assert.is((await all(w)).length, before);
  },
);

t(
  'a partner writing the customer an import updates: both land, the import is not failed (one queue per customer)',
  async () => {
    const { w, deps } = await world();
    const a = await createCustomer(w, w.restaurant, { name: 'A', email: 'a@example.com' }, meta);
    await w.settle();
    // A slow log: the import's append to A's stream lets the event loop turn 50 times first, and a
    // partner's PATCH of A is sent as each attempt begins. The import wrote through a view of the log
    // (settledByCaller) whose commands queued apart from the API's: each PATCH landed inside the
    // import's attempt, which lost five rounds and failed the whole import (WrongExpectedRevisionError).
    const patches: Promise<unknown>[] = [];
    const events = Object.create(w.events) as typeof w.events;
    events.append = async (stream, batch, expected, options) => {
      if (options?.settledByCaller && stream === customerStream(a.customerId)) {
        patches.push(updateCustomer(api, w.restaurant, a.customerId, { note: `n${patches.length}` }, meta));
        for (let i = 0; i < 50; i++) await new Promise(setImmediate);
      }
      return w.events.append(stream, batch, expected, options);
    };
    const api = { events, clock: w.clock };
    const { state } = await run(
      { ...deps, events },
      ['name,email,tags', 'A,a@example.com,imported'],
      'update',
    );
    await Promise.all(patches);
    await w.settle();
    assert.equal(state.counts, { created: 0, updated: 1, matched: 0, skipped: 0 });
    const doc = (await all(w)).find((d) => d._id === a.customerId);
    assert.equal([doc?.tags, doc?.note], [['imported'], `n${patches.length - 1}`]);
  },
);

// The dashboard's Import checks the rules, takes the slot, then starts the job: a start failing before
// the job's first event (the rows refused by the rules of now) held the slot for its 2 minutes, so every
// other import of the restaurant was refused as running behind a job that never started.
t('a start failing before its job exists frees the slot it was given at once', async () => {
  const { w, deps } = await world();
  const lines = ['name,email,VIP level', 'Ann,ann@example.com,gold'];
  const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
  await w.defineFields([]);
  await w.settle();
  await takeImportSlot(deps, { jobId: 'imp_early', restaurantId: 'rest_a' }, meta);
  const err = await importCustomers(deps, prepared, {
    onMatch: 'return_existing',
    fileName: 'f.csv',
    meta,
    jobId: 'imp_early',
  }).catch((e: unknown) => e);
  assert.instance(err, ApiError);
  assert.is((err as ApiError).status, 400);
  const taken = await takeImportSlot(deps, { jobId: 'imp_next', restaurantId: 'rest_a' }, meta).catch(
    (e: unknown) => e,
  );
  assert.not.instance(taken, Error, 'the slot is free: no job runs');
});

// The dashboard checks the rules before it takes the slot and says so (rulesChecked): the import does not
// read the restaurant and its catalog again (two stream reads, and a check whose failure came too late).
t('an import whose caller checked the rules does not check them again', async () => {
  const { deps } = await world();
  const prepared = await withCurrentRules(deps, await prepareImport(deps, 'rest_a', bytes(['name', 'Ann'])));
  const { events, read } = countingReads(deps.events);
  const counting: ImportDeps = { ...deps, events };
  const state = await importCustomers(counting, prepared, {
    onMatch: 'return_existing',
    fileName: 'f.csv',
    meta,
    rulesChecked: true,
  });
  assert.is(state.counts.created, 1);
  assert.equal(
    read.filter((s) => s === 'restaurant-rest_a' || s.startsWith('catalog-')),
    [],
  );
});

t.run();
