// An import that stops part way says exactly what it did (src/customer-import/reconcile.ts): its
// summary has one line for every row of the file — the recorded rows, the rows written after them
// (created / updated, as the log shows them) and `not_imported` for the others — and its counts add
// up. Made to fail mid-way: a row's append fails, the read models' catch-up fails, the job's own
// stream refuses its records (the process then leaves the job running: read from the log once it is
// seen stopped), on the memory log and on the SQLite one (read beside the writer). A resume of the
// failed job then imports every other row, none twice.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerImportStream } from '../../commands/customer-import/events';
import { loadImportJob } from '../../commands/customer-import/handler';
import { STALE_AFTER_MS } from '../../commands/customer-import/slot';
import { customerStream } from '../../commands/customers/events';
import { createCustomer, updateCustomer } from '../../commands/customers/handler';
import { matchKeyHolds } from '../../commands/customers/upsert';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customer-docs';
import {
  CUSTOMER_IMPORTS,
  type CustomerImportDoc,
  customerImportsProjection,
} from '../../projections/customer-imports';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { operatorMeta } from '../../src/core/command-meta';
import {
  type ImportDeps,
  importCustomers,
  importedCustomerId,
  prepareImport,
  resumeImport,
  stopImports,
} from '../../src/customer-import/engine';
import { jobSummaryCsv } from '../../src/customer-import/summary';
import type { EventStore } from '../../src/ports/event-store';
import { storedEvents } from '../../src/privacy/sealing-event-store';
import { ProjectionRunner } from '../../src/projection/runner';
import { type CustomerWorld, customerWorld } from '../helpers/customers';
import { importWorld } from '../helpers/import-file';

const meta = operatorMeta('test');
const bytes = (lines: string[]) => new TextEncoder().encode(`${lines.join('\r\n')}\r\n`);
const ROWS = 400;
/** Every 7th row matches one of the 30 customers already there (on email); every 11th has a fault. */
const file = () =>
  bytes([
    'name,email,note',
    ...Array.from({ length: ROWS }, (_, i) => {
      const row = i + 1;
      if (row % 11 === 0) return `,broken${row}@example.com,`;
      return row % 7 === 0
        ? `Known,known${row % 30}@example.com,row ${row}`
        : `Guest ${row},g${row}@example.com,`;
    }),
  ]);

async function world(): Promise<{ w: CustomerWorld; deps: ImportDeps }> {
  const w = await customerWorld();
  const deps: ImportDeps = {
    events: w.events,
    clock: w.clock,
    docs: w.docs,
    settle: async () => {
      await w.settle();
    },
  };
  await seed(w, deps);
  return { w, deps };
}

async function seed(w: CustomerWorld, deps: ImportDeps) {
  for (let i = 0; i < 30; i++)
    await createCustomer(deps, w.restaurant, { name: `Known ${i}`, email: `known${i}@example.com` }, w.meta);
  await w.settle();
}

/** `events` with the appends `refuse` names failing (a disk error). */
function failing(
  events: EventStore,
  refuse: (stream: string, evs: { metadata?: Record<string, unknown> }[]) => boolean,
): EventStore {
  return new Proxy(events, {
    get(target, key, receiver) {
      if (key === 'append')
        return (stream: string, ...rest: unknown[]) =>
          refuse(stream, rest[0] as { metadata?: Record<string, unknown> }[])
            ? Promise.reject(new Error('SQLITE_IOERR: disk I/O error'))
            : (target.append as (...a: unknown[]) => Promise<unknown>).call(target, stream, ...rest);
      const v = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * `events` where row `row`'s append fails once row `until`'s has begun: the rows between are written
 * while it is pending (the pipeline writes ahead), so rows after the failed one are written and not
 * recorded whatever the timing. Only for files whose rows wait for no earlier row (distinct keys).
 */
function failingLate(events: EventStore, row: number, until: number): EventStore {
  let fail: (err: Error) => void = () => undefined;
  return new Proxy(events, {
    get(target, key, receiver) {
      if (key === 'append')
        return (stream: string, evs: { metadata?: Record<string, unknown> }[], ...rest: unknown[]) => {
          const at = evs[0]?.metadata?.import_row;
          if (at === row)
            return new Promise((_resolve, reject) => {
              fail = reject;
            });
          if (at === until) fail(new Error('SQLITE_IOERR: disk I/O error'));
          return (target.append as (...a: unknown[]) => Promise<unknown>).call(target, stream, evs, ...rest);
        };
      const v = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** Every row the log shows written by the job: row → [outcome, customer id]. */
async function writtenInLog(events: EventStore, jobId: string): Promise<Map<number, [string, string]>> {
  const out = new Map<number, [string, string]>();
  for await (const e of storedEvents(events).readAll()) {
    if (e.metadata.import_job_id !== jobId) continue;
    const row = e.metadata.import_row as number;
    out.set(row, [e.type === 'CustomerCreated' ? 'created' : 'updated', e.stream.slice('customer-'.length)]);
  }
  return out;
}

/**
 * The summary has one line per row of the file, in order; its created / updated lines are exactly the
 * rows the log shows written (same customer), and no row the log shows written is `not_imported`.
 */
async function assertSummaryIsTheLog(deps: ImportDeps, jobId: string) {
  const lines = (await jobSummaryCsv(deps, jobId)).trim().split('\r\n').slice(1);
  assert.is(lines.length, ROWS, 'one line for every row of the file');
  const log = await writtenInLog(deps.events, jobId);
  const counts: Record<string, number> = {};
  lines.forEach((l, i) => {
    const [row, outcome, customer] = l.split(',');
    assert.is(Number(row), i + 1);
    counts[outcome as string] = (counts[outcome as string] ?? 0) + 1;
    const written = log.get(i + 1);
    if (outcome === 'created' || outcome === 'updated') {
      assert.ok(written, `row ${row} says ${outcome}, the log shows no write`);
      assert.equal([outcome, customer], written, `row ${row}`);
    } else assert.not.ok(written, `row ${row} says ${outcome} but the log shows it written (${written})`);
  });
  return { lines, counts, log };
}

const t = suite('customer import: stopped part way');

for (const onMatch of ['create_new', 'update'] as const)
  t(
    `a row whose append fails (${onMatch}): the summary says every row written after the last recorded one`,
    async () => {
      const { w, deps } = await world();
      const prepared = await prepareImport(deps, 'rest_a', file());
      const jobId = `imp_fail_${onMatch}`;
      // create_new waits for no earlier row: row 200 fails once row 230 is being written. With update
      // rows wait for those sharing a key: it fails at once.
      const refused = customerStream(importedCustomerId(jobId, 200));
      const events =
        onMatch === 'create_new' ? failingLate(w.events, 200, 230) : failing(w.events, (s) => s === refused);
      let err: unknown = null;
      await importCustomers({ ...deps, events }, prepared, {
        onMatch,
        fileName: 'f.csv',
        meta,
        batchSize: 10,
        jobId,
      }).catch((e) => {
        err = e;
      });
      assert.match(String(err), /SQLITE_IOERR/);
      const { state } = await loadImportJob(deps, jobId);
      assert.is(state.status, 'failed');
      assert.is(matchKeyHolds.size, 0, 'no match key left held');
      const { counts, log } = await assertSummaryIsTheLog(deps, jobId);
      // The customers it wrote are in the read models (the job settles its writes itself), nothing else.
      const docs = await w.docs.collection<CustomerDoc>(CUSTOMERS).find({ restaurant_id: 'rest_a' });
      assert.is(docs.length, 30 + (counts.created ?? 0));
      // Rows in flight when the append failed were written without being recorded: the summary has them.
      const beyond = [...log.keys()].filter((row) => row > state.processed);
      if (onMatch === 'create_new')
        assert.ok(
          beyond.some((row) => row > 200),
          `rows written after row ${state.processed}: the case under test`,
        );
      assert.equal(
        state.written?.map((r) => r.row),
        beyond.sort((a, b) => a - b),
      );
      assert.ok(!log.has(200), 'the refused row is not written');
      assert.is(counts.not_imported, ROWS - state.processed - beyond.length);
      // The rest, resumed with the same file: every other row once, nothing twice.
      const resumed = await resumeImport(deps, prepared, jobId, { meta, batchSize: 10 });
      assert.is(resumed.status, 'finished');
      // The history's document holds no written_after once resumed, as a store built before that
      // field existed holds none: a replay writes the same document (audit verify compares them).
      const historyStore = new EmbeddedDocumentStore();
      const history = new ProjectionRunner(w.events, historyStore, [customerImportsProjection]);
      await history.start();
      await history.catchUp();
      const doc = await historyStore.collection<CustomerImportDoc>(CUSTOMER_IMPORTS).findOne({ _id: jobId });
      await history.stop();
      assert.is(doc?.status, 'finished');
      assert.ok(doc && !('written_after' in doc), JSON.stringify(doc));
      const after = await assertSummaryIsTheLog(deps, jobId);
      assert.is(after.counts.not_imported, undefined);
      assert.is(after.counts.skipped, Math.floor(ROWS / 11));
      for (const [row, [outcome, id]] of log) assert.equal(after.log.get(row), [outcome, id], `row ${row}`);
      if (onMatch === 'create_new') assert.is(after.counts.created, ROWS - Math.floor(ROWS / 11));
    },
  );

t('the read models failing mid-way: rows in flight are in the summary as written', async () => {
  const { w, deps } = await world();
  const prepared = await prepareImport(deps, 'rest_a', file());
  const jobId = 'imp_catchup';
  let settles = 0;
  let err: unknown = null;
  await importCustomers(
    {
      ...deps,
      settle: async () => {
        // The fifth slice's retirement: its catch-up fails while later slices are written.
        if (++settles === 5) throw new Error('catch-up failed');
        await w.settle();
      },
    },
    prepared,
    { onMatch: 'create_new', fileName: 'f.csv', meta, batchSize: 10, jobId },
  ).catch((e) => {
    err = e;
  });
  assert.match(String(err), /catch-up failed/);
  const { state } = await loadImportJob(deps, jobId);
  assert.is(state.status, 'failed');
  assert.is(matchKeyHolds.size, 0, 'no match key left held');
  const { log } = await assertSummaryIsTheLog(deps, jobId);
  assert.ok(
    [...log.keys()].some((row) => row > state.processed),
    'rows written after the last recorded one',
  );
});

t(
  'a job whose own stream refuses its records stays running: once seen stopped, the summary reads the log',
  async () => {
    const { w, deps } = await world();
    const prepared = await prepareImport(deps, 'rest_a', file());
    const jobId = 'imp_norecord';
    const stream = customerImportStream(jobId);
    let records = 0;
    let err: unknown = null;
    // The job's stream takes its start and two records, then nothing (the failure's record neither).
    const events = failing(w.events, (s) => s === stream && ++records > 3);
    await importCustomers({ ...deps, events }, prepared, {
      onMatch: 'create_new',
      fileName: 'f.csv',
      meta,
      batchSize: 10,
      jobId,
    }).catch((e) => {
      err = e;
    });
    assert.match(String(err), /SQLITE_IOERR/);
    const { state } = await loadImportJob(deps, jobId);
    assert.is(state.status, 'running');
    // While it may still run: the rows recorded so far.
    const early = (await jobSummaryCsv(deps, jobId)).trim().split('\r\n').slice(1);
    assert.is(early.length, state.processed);
    // Silent past the stale limit (its process gone): every row, as the log shows it.
    w.clock.advance(STALE_AFTER_MS / 1000 + 1);
    const { log } = await assertSummaryIsTheLog(deps, jobId);
    assert.ok([...log.keys()].some((row) => row > state.processed));
  },
);

t('on the SQLite log (read beside the writer): the failed job keeps the rows written', async () => {
  const { w, deps, close } = await importWorld();
  try {
    const lines = [
      'name,email',
      ...Array.from({ length: ROWS }, (_, i) => `Guest ${i + 1},s${i + 1}@example.com`),
    ];
    const prepared = await prepareImport(deps, w.restaurant._id, bytes(lines));
    const jobId = 'imp_sqlite';
    await importCustomers({ ...deps, events: failingLate(w.events, 150, 180) }, prepared, {
      onMatch: 'return_existing',
      fileName: 'f.csv',
      meta,
      batchSize: 10,
      jobId,
      thread: false,
    }).catch(() => undefined);
    const { state } = await loadImportJob(deps, jobId);
    assert.is(state.status, 'failed');
    assert.is(matchKeyHolds.size, 0, 'no match key left held');
    const { log } = await assertSummaryIsTheLog(deps, jobId);
    const beyond = [...log.keys()].filter((row) => row > state.processed).sort((a, b) => a - b);
    assert.ok(beyond.some((row) => row > 150));
    assert.equal(
      state.written?.map((r) => r.row),
      beyond,
    );
  } finally {
    await close();
  }
});

t(
  'a row written before the job failed keeps the key it matched on, even where its update added an earlier one',
  async () => {
    const w = await customerWorld();
    const deps: ImportDeps = {
      events: w.events,
      clock: w.clock,
      docs: w.docs,
      settle: async () => {
        await w.settle();
      },
    };
    for (let i = 1; i <= ROWS; i++)
      await createCustomer(deps, w.restaurant, { name: `Known ${i}`, email: `k${i}@example.com` }, w.meta);
    await w.settle();
    // Each row matches on email and gives its customer a phone, a key matched before email.
    const lines = [
      'name,email,phone_number',
      ...Array.from(
        { length: ROWS },
        (_, i) => `Row ${i + 1},k${i + 1}@example.com,+336123${String(i + 1).padStart(5, '0')}`,
      ),
    ];
    const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
    const jobId = 'imp_matched_on';
    const events = failingLate(w.events, 200, 230);
    await importCustomers({ ...deps, events }, prepared, {
      onMatch: 'update',
      fileName: 'f.csv',
      meta,
      batchSize: 10,
      jobId,
    }).catch(() => undefined);
    const { state } = await loadImportJob(deps, jobId);
    const written = state.written ?? [];
    assert.ok(
      written.some((r) => r.outcome === 'updated'),
      `updates written after row ${state.processed}`,
    );
    for (const r of written) assert.is(r.matched_on, 'email', `row ${r.row} in the failed job`);
    const done = await resumeImport(deps, prepared, jobId, { meta, batchSize: 10 });
    assert.is(done.status, 'finished');
    const summary = (await jobSummaryCsv(deps, jobId)).trim().split('\r\n').slice(1);
    assert.equal(
      summary.filter((line) => !line.endsWith(',email,')),
      [],
      'every row matched on email, as a run that did not stop',
    );
  },
);

t('a resume does not write again an update the failed run wrote: a change made since stays', async () => {
  const w = await customerWorld();
  const deps: ImportDeps = {
    events: w.events,
    clock: w.clock,
    docs: w.docs,
    settle: async () => {
      await w.settle();
    },
  };
  for (let i = 1; i <= ROWS; i++)
    await createCustomer(deps, w.restaurant, { name: `Known ${i}`, email: `k${i}@example.com` }, w.meta);
  await w.settle();
  const lines = [
    'name,email,note',
    ...Array.from({ length: ROWS }, (_, i) => `Row ${i + 1},k${i + 1}@example.com,from row ${i + 1}`),
  ];
  const prepared = await prepareImport(deps, 'rest_a', bytes(lines));
  const jobId = 'imp_update_again';
  // Row 200's append fails once row 230's is under way: rows after it are written, not recorded.
  const events = failingLate(w.events, 200, 230);
  await importCustomers({ ...deps, events }, prepared, {
    onMatch: 'update',
    fileName: 'f.csv',
    meta,
    batchSize: 10,
    jobId,
  }).catch(() => undefined);
  const { state } = await loadImportJob(deps, jobId);
  const later = state.written?.find((r) => r.outcome === 'updated');
  assert.ok(later, `an update written after row ${state.processed}`);
  const customer = later.customer_id as string;
  // The manager (or a partner) changes that customer before the import is finished.
  await updateCustomer(deps, w.restaurant, customer, { note: 'changed since' }, w.meta);
  await w.settle();
  const done = await resumeImport(deps, prepared, jobId, { meta, batchSize: 10 });
  assert.is(done.status, 'finished');
  const doc = (await w.docs.collection<CustomerDoc>(CUSTOMERS).findOne({ _id: customer })) as CustomerDoc;
  assert.is(doc.note, 'changed since', 'the resume wrote the row again over the later change');
  const stream = await w.events.readStream(customerStream(customer));
  assert.is(stream.filter((e) => e.metadata.import_row === later.row).length, 1, 'the row written once');
  const summary = (await jobSummaryCsv(deps, jobId)).trim().split('\r\n');
  assert.is(summary[later.row], `${later.row},updated,${customer},email,`);
  assert.is(done.counts.updated, ROWS);
});

t(
  'a stop that begins as an import is asked for (its slot not taken yet), or once it began, stops that import',
  async () => {
    const { w, deps } = await world();
    const prepared = await prepareImport(deps, 'rest_a', file());
    const options = { onMatch: 'create_new' as const, fileName: 'f.csv', meta, batchSize: 10 };
    // The server's stop (src/app.ts) begins while a request has just asked for an import: the import is
    // still taking the restaurant's slot and starting its job.
    const first = importCustomers(deps, prepared, { ...options, jobId: 'imp_stop_early' });
    const stopping = stopImports(deps.events);
    const err = await first.then(
      () => null,
      (e: unknown) => e,
    );
    await stopping;
    assert.is((err as Error | null)?.name, 'ImportInterrupted', 'stopped, not run to its end');
    // Stopped before its first slice: the job holds no row, the log no customer of it, and its summary
    // says every row of the file is not imported.
    const { state } = await loadImportJob(deps, 'imp_stop_early');
    assert.is(state.status, 'failed');
    assert.is(matchKeyHolds.size, 0, 'no match key left held');
    assert.match(state.failure ?? '', /ImportInterrupted/);
    assert.is(state.processed, 0);
    assert.equal(state.counts, { created: 0, updated: 0, matched: 0, skipped: 0 });
    assert.equal(state.written, []);
    assert.is((await writtenInLog(deps.events, 'imp_stop_early')).size, 0, 'no customer written');
    const customers = w.docs.collection<CustomerDoc>(CUSTOMERS);
    assert.is((await customers.find({ restaurant_id: 'rest_a' })).length, 30);
    const { counts: stoppedCounts } = await assertSummaryIsTheLog(deps, 'imp_stop_early');
    assert.equal(stoppedCounts, { not_imported: ROWS });
    // A request answered during the drain asks for another once the stop began: stopped as it begins.
    const late = await resumeImport(deps, prepared, 'imp_stop_early', { meta, batchSize: 10 }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.is((late as Error | null)?.name, 'ImportInterrupted');
    const after = await loadImportJob(deps, 'imp_stop_early');
    assert.is(after.state.status, 'failed');
    assert.is(after.state.processed, 0, 'no further row written');
    assert.is((await writtenInLog(deps.events, 'imp_stop_early')).size, 0);
    assert.is((await customers.find({ restaurant_id: 'rest_a' })).length, 30);
    // Once restarted (a store nobody stopped), the resume imports every row once: the 36 faulty rows
    // (every 11th) skipped, the 364 others created (create_new), the 30 customers there untouched.
    const restarted: ImportDeps = { ...deps, events: failing(w.events, () => false) };
    const done = await resumeImport(restarted, prepared, 'imp_stop_early', { meta, batchSize: 10 });
    assert.is(done.status, 'finished');
    assert.is(done.processed, ROWS);
    const skippedRows = Math.floor(ROWS / 11);
    assert.equal(done.counts, { created: ROWS - skippedRows, updated: 0, matched: 0, skipped: skippedRows });
    const log = await writtenInLog(deps.events, 'imp_stop_early');
    assert.is(log.size, ROWS - skippedRows);
    assert.ok([...log.values()].every(([outcome]) => outcome === 'created'));
    for (let row = 1; row <= ROWS; row++)
      if (row % 11 !== 0)
        assert.equal(log.get(row), ['created', importedCustomerId('imp_stop_early', row)], `row ${row}`);
    const { counts: doneCounts } = await assertSummaryIsTheLog(deps, 'imp_stop_early');
    assert.equal(doneCounts, { created: ROWS - skippedRows, skipped: skippedRows });
    const docs = await customers.find({ restaurant_id: 'rest_a' });
    assert.is(docs.length, 30 + ROWS - skippedRows);
    const matching = Array.from({ length: ROWS }, (_, i) => i + 1).filter((r) => r % 7 === 0 && r % 11 !== 0);
    assert.is(matching.length, 52);
    assert.is(docs.filter((d) => d.name === 'Known').length, 52, 'the rows matching a customer created anew');
  },
);

t.run();
