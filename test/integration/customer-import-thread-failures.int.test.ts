// A large CSV import in a thread of its own (src/customer-import/thread-host.ts) when something goes
// wrong: the thread cannot start or dies before its first message (the job runs on the main thread
// instead, with the very results of a normal run), the thread dies after it started (the job fails
// with a stored reason, nothing hangs, a resume ends as a normal run would), and the main thread's
// catch-up of a retired slice fails (the job fails with that error, never finishes as if its rows were
// in the read models), whatever the job's on_match.
//
// The thread is reached through node:worker_threads' own Worker: the test puts a subclass in its place
// for the time of one import (`module.syncBuiltinESMExports()` updates the named export thread-host.ts
// imported), which replaces the thread's code, or terminates the real thread at a chosen moment. No
// test hook in the source, nothing the HTTP API could reach.
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as WorkerThreads from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerImportStream, type OnMatch, type RowResult } from '../../commands/customer-import/events';
import { loadImportJob } from '../../commands/customer-import/handler';
import type { ImportJobState } from '../../commands/customer-import/state';
import { customerStream } from '../../commands/customers/events';
import { matchKeyHolds } from '../../commands/customers/upsert';
import { operatorMeta } from '../../src/core/command-meta';
import {
  type ImportDeps,
  importCustomers,
  importedCustomerId,
  prepareImport,
  resumeImport,
} from '../../src/customer-import/engine';
import { jobSummaryCsv } from '../../src/customer-import/summary';
import { importThreadsStarted } from '../../src/customer-import/thread-host';
import type { ToHost } from '../../src/customer-import/thread-protocol';
import type { CustomerWorld } from '../helpers/customers';
import { type ImportWorld, importFile, importWorld } from '../helpers/import-file';

/** Large enough for a thread (WORKER_MIN_ROWS); the last row is a new customer whatever on_match. */
const ROWS = 2500;
const LAST_ROW = ['Last Guest', 'last.guest@example.org', '', 'crm-last-row', '', ''];
const FILE = importFile(ROWS - 1, [LAST_ROW]);
const JOB = 'imp_fail';
const LAST_CUSTOMER = importedCustomerId(JOB, ROWS);

// ---------------------------------------------------------------------------------------------------
// The import's thread, replaced or watched for one import

type WorkerCtor = typeof WorkerThreads.Worker;
const workerThreads = createRequire(import.meta.url)('node:worker_threads') as typeof WorkerThreads;
const RealWorker: WorkerCtor = workerThreads.Worker;

interface ThreadPlan {
  /** Code the import's thread runs instead of its own (eval). */
  code?: string;
  /** The import's thread's workerData, changed (the real thread then runs with it). */
  data?: (data: Record<string, unknown>) => Record<string, unknown>;
  /** Called with the import's thread once constructed (a listener added here runs before the host's). */
  started?: (worker: WorkerThreads.Worker) => void;
}

/** What the import's threads of one `withImportThread` did. */
interface Seen {
  /** Import threads constructed (through the plan). */
  threads: number;
  /** Messages they sent to the main thread. */
  messages: number;
}

/**
 * Runs `body` with the import's thread (thread-host.ts's Worker) as `plan` says; other workers (the
 * rows' analysis, the log's writer) as they are. `seen` is filled in as it goes.
 */
async function withImportThread<T>(plan: ThreadPlan, body: () => Promise<T>, seen?: Seen): Promise<T> {
  class PlannedWorker extends RealWorker {
    constructor(filename: string | URL, options?: WorkerThreads.WorkerOptions) {
      const importThread = options?.eval === true && String(filename).includes('import-thread.ts');
      super(
        importThread && plan.code !== undefined ? plan.code : filename,
        importThread && plan.data !== undefined
          ? { ...options, workerData: plan.data(options?.workerData as Record<string, unknown>) }
          : options,
      );
      if (!importThread) return;
      if (seen) {
        seen.threads++;
        this.on('message', () => {
          seen.messages++;
        });
      }
      plan.started?.(this);
    }
  }
  workerThreads.Worker = PlannedWorker as WorkerCtor;
  syncBuiltinESMExports();
  try {
    return await body();
  } finally {
    workerThreads.Worker = RealWorker;
    syncBuiltinESMExports();
  }
}

/** Fails if `p` has not settled within `ms` (a hang is a failure, not a stuck suite). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------
// A deployment like the service's (SQLite log and key file, sealed, system clock), its outcomes

const importJob = (deps: ImportDeps, onMatch: OnMatch, thread: boolean) =>
  prepareImport(deps, 'rest_a', FILE).then((prepared) =>
    importCustomers(deps, prepared, {
      onMatch,
      fileName: 'f.csv',
      meta: operatorMeta('test'),
      jobId: JOB,
      thread,
    }),
  );

/** A value without what depends on when it was written, and where in the log. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !/(_at|_seq|^_v|version|position|stamp|^at)$/.test(k) && k !== '_pos')
      .filter(([k]) => k !== 'sync_bucket')
      .map(([k, v]) => [k, stable(v)]),
  );
}

interface Outcome {
  state: ImportJobState;
  summary: string;
  customers: unknown[];
  /** Every customer event of the log, by stream, as written (the import's row on each). */
  customerEvents: Record<string, unknown[]>;
  /** The rows the job recorded, in the order recorded (each exactly once). */
  recorded: number[];
  job: string[];
}

async function outcome({ w, deps }: ImportWorld, state: ImportJobState): Promise<Outcome> {
  await w.settle();
  const customers = (await w.docs.collection('customers').find({}))
    .map((d) => stable(d) as Record<string, unknown>)
    .sort((a, b) => String(a._id).localeCompare(String(b._id)));
  const customerEvents: Record<string, unknown[]> = {};
  const recorded: number[] = [];
  const job: string[] = [];
  for await (const e of w.events.readAll()) {
    if (e.stream === customerImportStream(JOB)) {
      job.push(e.type);
      if (e.type === 'CustomerImportRowsRecorded')
        for (const r of (e.data as { rows: RowResult[] }).rows) recorded.push(r.row);
    } else if (e.stream.startsWith('customer-') && !e.stream.startsWith('customer-import')) {
      const list = customerEvents[e.stream] ?? [];
      customerEvents[e.stream] = list;
      list.push({
        type: e.type,
        row: e.metadata.import_row ?? null,
        data: stable(e.data),
      });
    }
  }
  return { state, summary: await jobSummaryCsv(deps, JOB), customers, customerEvents, recorded, job };
}

/** What every run must end with, whatever went wrong on the way: a normal run's rows and customers. */
function assertSameRows(got: Outcome, want: Outcome) {
  assert.is(got.state.status, 'finished');
  assert.equal(got.state.counts, want.state.counts);
  assert.is(got.state.processed, ROWS);
  assert.is(got.summary, want.summary);
  assert.equal(got.customers, want.customers);
  assert.equal(
    got.recorded,
    Array.from({ length: ROWS }, (_, i) => i + 1),
    'every row recorded once, in order',
  );
  const created = (o: Outcome) =>
    Object.values(o.customerEvents)
      .flat()
      .filter((e) => (e as { type: string }).type === 'CustomerCreated').length;
  assert.is(created(got), created(want), 'no customer created twice');
}

let reference: Outcome | null = null;
/** The import on the main thread, from start to end (thread: false): what a normal run gives. */
async function normalRun(): Promise<Outcome> {
  if (reference) return reference;
  const world_ = await importWorld();
  try {
    const state = await importJob(world_.deps, 'update', false);
    reference = await outcome(world_, state);
    const c = reference.state.counts;
    assert.ok(c.created > 0 && c.updated > 0 && c.skipped > 0, JSON.stringify(c));
    return reference;
  } finally {
    await world_.close();
  }
}

const t = suite('customer import in a thread of its own, when something fails');

// ---------------------------------------------------------------------------------------------------
// 1. The thread cannot start, dies before its first message, or dies after it started

/** A file where a directory is expected: nothing can be opened under it (even by root). */
const FILE_NOT_A_DIR = fileURLToPath(import.meta.url);

const fallbacks: { name: string; plan: ThreadPlan; said?: number }[] = [
  {
    name: 'a thread whose code throws as it loads (an error before any message)',
    plan: { code: "throw new Error('the import thread cannot load')" },
  },
  {
    name: 'a thread that exits before its first message',
    plan: { code: 'process.exit(3)' },
  },
  {
    name: 'the real thread, whose key file will not open (it says it is unable, before it wrote anything)',
    plan: { data: (d) => ({ ...d, keysFile: join(FILE_NOT_A_DIR, 'keys.sqlite') }) },
    said: 1,
  },
  {
    name: 'the real thread, terminated once it runs and before its first message',
    plan: {
      started: (worker) => {
        worker.once('online', () => void worker.terminate());
      },
    },
  },
];

for (const { name, plan, said = 0 } of fallbacks)
  t(`${name}: the job runs on the main thread, ending exactly as a normal run`, async () => {
    const want = await normalRun();
    const world_ = await importWorld();
    try {
      const before = importThreadsStarted();
      const seen: Seen = { threads: 0, messages: 0 };
      const state = await within(
        withImportThread(plan, () => importJob(world_.deps, 'update', true), seen),
        60_000,
        'the import',
      );
      assert.is(importThreadsStarted() - before, 1, 'a thread was started');
      assert.is(seen.threads, 1, 'the planned thread');
      assert.is(seen.messages, said, 'which said nothing but that: the job ran on the main thread');
      const got = await outcome(world_, state);
      assertSameRows(got, want);
      assert.equal(got.customerEvents, want.customerEvents, "the customers' events, as a normal run's");
      assert.is(got.job[0], 'CustomerImportStarted');
      assert.is(got.job.at(-1), 'CustomerImportFinished');
      assert.not.ok(got.job.includes('CustomerImportFailed'), 'never failed on the way');
      assert.not.ok(got.job.includes('CustomerImportResumed'), 'one run, not a resume');
      assert.is(matchKeyHolds.size, 0, 'no match key left held');
    } finally {
      await world_.close();
    }
  });

t(
  'a thread that dies after it started fails the job with its reason stored; resumed, it ends as a normal run',
  async () => {
    const want = await normalRun();
    const world_ = await importWorld();
    try {
      // The size of this process's match-key queue when the job is marked failed (after the log scan).
      let heldAtFailure: number | null = null;
      const events = world_.deps.events;
      const append = events.append.bind(events);
      events.append = (stream, written, expected, options) => {
        if (written.some((e) => e.type === 'CustomerImportFailed')) heldAtFailure ??= matchKeyHolds.size;
        return append(stream, written, expected, options);
      };
      // Terminated at its third retirement: rows written, some recorded, some in flight.
      let settles = 0;
      const plan: ThreadPlan = {
        started: (worker) => {
          worker.on('message', (m: ToHost) => {
            if ('settle' in m && ++settles === 3) void worker.terminate();
          });
        },
      };
      const err = await within(
        withImportThread(plan, () => importJob(world_.deps, 'update', true)).then(
          () => null,
          (e: unknown) => e as Error,
        ),
        60_000,
        'the import',
      );
      assert.ok(err instanceof Error, 'the import fails');
      assert.match(err.message, /the import's thread stopped \(exit code \d+\) before the job ended/);
      assert.is(settles, 3);
      assert.is(heldAtFailure, 0, 'its match keys let go before the bookkeeping of its failure');
      assert.is(matchKeyHolds.size, 0, 'no match key left held');
      const { state } = await loadImportJob(world_.deps, JOB);
      assert.is(state.status, 'failed', 'the job is seen failed');
      assert.match(
        String(state.failure),
        /the import's thread stopped \(exit code \d+\) before the job ended/,
      );
      assert.ok(state.processed < ROWS, `stopped on the way (${state.processed} rows recorded)`);
      // Nothing lost or written twice: the job goes on from its last recorded row (on this thread).
      const prepared = await prepareImport(world_.deps, 'rest_a', FILE);
      const resumed = await within(
        resumeImport(world_.deps, prepared, JOB, { meta: operatorMeta('test'), thread: false }),
        60_000,
        'the resume',
      );
      assertSameRows(await outcome(world_, resumed), want);
    } finally {
      await world_.close();
    }
  },
);

// ---------------------------------------------------------------------------------------------------
// 2. The main thread's catch-up of a retired slice fails

/**
 * The main thread's catch-up (deps.settle, as thread-host.ts calls it for the thread's retirements)
 * failing: at its first call, or at the one that takes in the file's last row (the job's last
 * retired slice), slowly.
 */
function failingCatchUp(which: 'first' | 'last') {
  let calls = 0;
  let failed = 0;
  const settle = async (position: bigint | null | undefined, w: CustomerWorld) => {
    calls++;
    if (which === 'first' && calls === 1) {
      failed++;
      throw new Error('catch-up failed (test)');
    }
    if (which === 'last' && position !== null && position !== undefined) {
      const [last] = await w.events.readStream(customerStream(LAST_CUSTOMER), { limit: 1 });
      if (last && last.position <= position) {
        failed++;
        await delay(100);
        throw new Error('catch-up failed (test)');
      }
    }
    await w.settle();
  };
  return { settle, failures: () => failed };
}

for (const onMatch of ['update', 'return_existing', 'create_new'] as const)
  for (const which of ['first', 'last'] as const)
    t(
      `on_match ${onMatch}: a failed catch-up of the ${which} retired slice fails the job with that error`,
      async () => {
        const catchUp = failingCatchUp(which);
        const world_ = await importWorld(catchUp.settle);
        try {
          const before = importThreadsStarted();
          const err = await within(
            importJob(world_.deps, onMatch, true).then(
              (s) => new Error(`the import ended ${s.status} (${s.processed} rows)`),
              (e: unknown) => e as Error,
            ),
            60_000,
            'the import',
          );
          assert.is(importThreadsStarted() - before, 1, 'the job ran in a thread');
          assert.ok(catchUp.failures() > 0, 'a catch-up failed');
          assert.is(err.message, 'catch-up failed (test)');
          const { state } = await loadImportJob(world_.deps, JOB);
          assert.is(state.status, 'failed', `the job failed, not ${state.status}`);
          assert.match(String(state.failure), /catch-up failed \(test\)/);
          assert.is(matchKeyHolds.size, 0, 'no match key left held');
          if (which === 'first') assert.ok(state.processed < ROWS, `stopped on the way (${state.processed})`);
        } finally {
          await world_.close();
        }
      },
    );

t.run();
