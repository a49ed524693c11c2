// A large CSV import in a thread of its own (src/customer-import/thread-host.ts, import-thread.ts):
// the same outcomes, summary and customers as the import on the main thread, matching against
// customers that were there before and against the file's own earlier rows; its appends reported
// as settled by their caller (settled-ring.ts), so a request on the main thread does not wait for
// the read models to take them in, while another process's commit still makes it wait.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer, deleteCustomer } from '../../commands/customers/handler';
import { heldMatchKey, matchKeyHolds } from '../../commands/customers/upsert';
import { createRestaurant } from '../../commands/restaurants/handler';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { SettledRing } from '../../src/adapters/event-store/settled-ring';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { systemClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError, notFound } from '../../src/core/errors';
import { importCustomers, prepareImport } from '../../src/customer-import/engine';
import { jobSummaryCsv } from '../../src/customer-import/summary';
import { IMPORT_NICENESS, importThreadsStarted } from '../../src/customer-import/thread-host';
import { rebuiltError, threadError } from '../../src/customer-import/thread-protocol';
import { ANY } from '../../src/ports/event-store';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { importFile, importWorld } from '../helpers/import-file';
import { restaurantProfile } from '../helpers/restaurants';

const ROWS = 3000;
const FILE = importFile(ROWS);

/** A customer document without what depends on when it was written, and where in the log. */
const comparable = (doc: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(doc).filter(
      ([k]) => !/(_at|_seq|^_v|version|position|stamp)$/.test(k) && k !== '_pos' && k !== 'sync_bucket',
    ),
  );

async function importOnce(
  thread: boolean,
  onMatch: 'update' | 'create_new' = 'update',
  /** ms each catch-up of the read models waits first: the main thread far behind the import's thread. */
  lag = 0,
) {
  const { w, deps, close } = await importWorld(async (_position, w) => {
    if (lag > 0) await new Promise((r) => setTimeout(r, lag));
    await w.settle();
  });
  const before = importThreadsStarted();
  const prepared = await prepareImport(deps, 'rest_a', FILE);
  const state = await importCustomers(deps, prepared, {
    onMatch,
    fileName: 'f.csv',
    meta: operatorMeta('test'),
    jobId: 'imp_same',
    thread,
  });
  const threads = importThreadsStarted() - before;
  await w.settle();
  const customers = (await w.docs.collection('customers').find({}))
    .map((d) => comparable(d as Record<string, unknown>))
    .sort((a, b) => String(a._id).localeCompare(String(b._id)));
  const summary = await jobSummaryCsv(deps, 'imp_same');
  await close();
  return { state, summary, customers, threads };
}

const t = suite('customer import in a thread of its own');

t(
  'the import in its own thread ends exactly as on the main thread: outcomes, summary, customers',
  async () => {
    const inThread = await importOnce(true);
    const onMain = await importOnce(false);
    assert.is(inThread.threads, 1, 'the job ran in a thread');
    assert.is(onMain.threads, 0);
    assert.is(inThread.state.status, 'finished');
    assert.equal(inThread.state.counts, onMain.state.counts);
    assert.is(inThread.summary, onMain.summary);
    assert.equal(inThread.customers, onMain.customers);
    const c = onMain.state.counts;
    assert.ok(c.created > 0 && c.updated > 0 && c.skipped > 0, JSON.stringify(c));
    const known = inThread.customers.find((d) => d._id === 'cus_known00000000010');
    assert.match(
      String(known?.name),
      /^Guest \d+$/,
      'a customer there before, updated by rows matching its email',
    );
  },
);

t(
  'read models far behind the thread (each catch-up late) change nothing: rows sharing a key or a customer with a slice not yet in them wait for it',
  async () => {
    const lagging = await importOnce(true, 'update', 40);
    const onMain = await importOnce(false);
    assert.is(lagging.threads, 1);
    assert.equal(lagging.state.counts, onMain.state.counts);
    assert.is(lagging.summary, onMain.summary);
    assert.equal(lagging.customers, onMain.customers);
  },
);

/** This process's threads' nice values (Linux: /proc/self/task/<tid>/stat, field 19). */
function threadNiceness(): number[] {
  const out: number[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The command name, in parentheses, may hold spaces: the fields after it are counted from there.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push(Number(fields[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

t('the import thread runs niced (Linux), and the API thread does not', async () => {
  if (!existsSync('/proc/self/task')) return;
  let niced = 0;
  const watch = setInterval(() => {
    niced = Math.max(niced, threadNiceness().filter((n) => n === IMPORT_NICENESS).length);
  }, 5);
  try {
    const run = await importOnce(true, 'create_new');
    assert.is(run.threads, 1);
  } finally {
    clearInterval(watch);
  }
  assert.ok(niced >= 1, `a thread at niceness ${IMPORT_NICENESS} while importing (saw ${niced})`);
  assert.is(threadNiceness()[0], 0, 'the main thread keeps its niceness');
});

t(
  'with on_match create_new (no matching to wait for) too: every row created, the read models complete at the end',
  async () => {
    const inThread = await importOnce(true, 'create_new');
    const onMain = await importOnce(false, 'create_new');
    assert.is(inThread.threads, 1);
    assert.equal(inThread.state.counts, onMain.state.counts);
    assert.is(inThread.summary, onMain.summary);
    assert.equal(inThread.customers, onMain.customers);
    assert.is(inThread.customers.length, 40 + inThread.state.counts.created);
  },
);

t(
  'a retired slice is taken in over turns of its own: its plaintexts remembered, then its catch-up begun in a later turn',
  async () => {
    // The loop's turns, counted once each in the check phase. A catch-up begun in the turn that
    // remembered the plaintexts (itself the turn the thread's message arrived in, among the requests
    // polled with it) ran its first slice there, and its next slice in the same turn's check phase:
    // two slices and the hand-over in one hold of the API's event loop.
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const seen: ['remember' | 'settle', number][] = [];
    const { w, deps, close } = await importWorld(async (_position, world) => {
      seen.push(['settle', turn]);
      await world.settle();
    });
    const events = deps.events as SealingEventStore;
    const remember = events.rememberPlains.bind(events);
    events.rememberPlains = async (entries) => {
      if (entries.length > 0) seen.push(['remember', turn]);
      return remember(entries);
    };
    try {
      const before = importThreadsStarted();
      const prepared = await prepareImport(deps, 'rest_a', FILE);
      const state = await importCustomers(deps, prepared, {
        onMatch: 'update',
        fileName: 'f.csv',
        meta: operatorMeta('test'),
        jobId: 'imp_turns',
        thread: true,
      });
      assert.is(importThreadsStarted() - before, 1, 'the job ran in a thread');
      assert.is(state.status, 'finished');
    } finally {
      ticking = false;
      await w.settle();
      await close();
    }
    const retired = seen.flatMap(([kind, at], i) => {
      if (kind !== 'remember') return [];
      const next = seen.slice(i + 1).find(([k]) => k === 'settle');
      return next === undefined ? [] : [[at, next[1]] as const];
    });
    assert.ok(retired.length > 1, `slices retired with plaintexts (${retired.length})`);
    const sameTurn = retired.filter(([remembered, settled]) => settled <= remembered);
    assert.is(
      sameTurn.length,
      0,
      `catch-ups begun in their plaintexts' turn: ${sameTurn.length} of ${retired.length}`,
    );
  },
);

t('a hand-over of plaintexts after the customer was erased keeps the customer erased', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-handover-'));
  const open = () => {
    const log = SqliteEventStore.open(join(dir, 'e.sqlite'));
    const keys = SqliteKeyStore.open(join(dir, 'k.sqlite'));
    return { log, keys, layer: new SealingEventStore(log, keys) };
  };
  const main = open();
  const thread = open();
  thread.layer.collectSealedPlains();
  const meta = { actor: 'test' };
  const r = { _id: 'rest_a', country_code: 'FR', customer_matching: true };
  const id = 'cus_handover00000001';
  const profileOf = async () => {
    const [created] = await main.layer.readStream(`customer-${id}`);
    return (created?.data as { profile: Record<string, unknown> } | undefined)?.profile ?? {};
  };
  const readAll = async () => {
    for await (const _ of main.layer.readAll()) void _;
  };
  try {
    await createRestaurant(
      { events: main.layer, clock: systemClock },
      'rest_a',
      restaurantProfile('rest-a'),
      meta,
    );
    // The import's thread creates the customer; the main thread's read models take it in.
    await createCustomer(
      { events: thread.layer, clock: systemClock },
      r,
      { name: 'Alice Secret', email: 'alice@example.com' },
      meta,
      { customerId: id },
    );
    await readAll();
    assert.is((await profileOf()).email, 'alice@example.com');
    // Erased on the main thread before the thread's slice is retired (its plaintexts handed over).
    // No reservations here: an empty read model for the deletion's relink (commands/reservations/relink.ts).
    const noReservations = { docs: new EmbeddedDocumentStore(), settle: async () => {} };
    await deleteCustomer({ events: main.layer, clock: systemClock, ...noReservations }, id, null, meta);
    await readAll();
    assert.is((await profileOf()).email, null, 'erased');
    await main.layer.rememberPlains(thread.layer.takeSealedPlains());
    const after = await profileOf();
    assert.is(after.email, null, 'still erased after the hand-over');
    assert.is.not(after.name, 'Alice Secret');
  } finally {
    await thread.layer.close();
    await main.layer.close();
    await thread.keys.close();
    await main.keys.close();
  }
});

t(
  "the main thread's look at the log leaves out what another thread settles itself, not the rest",
  async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'couvert-ring-')), 'e.sqlite');
    const main = SqliteEventStore.open(file);
    const ring = new SettledRing(undefined, 64);
    const other = SqliteEventStore.open(file, { settledRing: new SettledRing(ring.buffer) });
    const ev = (n: number) => ({ type: 'Noted', data: { n } });
    try {
      main.watchSettledRing(ring);
      assert.is(main.unsettled(), false, 'an empty log');
      await Promise.all(
        [1, 2, 3].map((n) => other.append(`s-${n}`, [ev(n)], ANY, { settledByCaller: true })),
      );
      assert.is(main.unsettled(), false, "the other thread's appends, settled by their caller");
      await other.append('s-4', [ev(4)], ANY);
      assert.is(main.unsettled(), true, 'one it does not settle itself');
      assert.is(main.unsettled(), false, 'seen once');
      // More ranges than the ring holds between two looks (a group commit each): unknown, so unsettled.
      for (let n = 0; n < 80; n++) await other.append(`r-${n}`, [ev(n)], ANY, { settledByCaller: true });
      assert.is(main.unsettled(), true, 'a ring that lapped tells nothing');
      assert.is(main.unsettled(), false);
      main.unwatchSettledRing(ring);
      await other.append('s-5', [ev(5)], ANY, { settledByCaller: true });
      assert.is(main.unsettled(), true, 'no longer watched: like any other commit');
    } finally {
      await other.close();
      await main.close();
    }
  },
);

t('an error crosses between the threads as it was: an ApiError keeps what the API shows', () => {
  const api = rebuiltError(structuredClone(threadError(notFound('restaurant rest_x'))));
  assert.ok(api instanceof ApiError);
  assert.is((api as ApiError).status, 404);
  assert.is((api as ApiError).code, 'RESOURCE_NOT_FOUND');
  assert.is(api.message, 'restaurant rest_x not found');
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  const other = rebuiltError(structuredClone(threadError(busy)));
  assert.not.ok(other instanceof ApiError);
  assert.is((other as Error & { code?: string }).code, 'SQLITE_BUSY');
  assert.is(other.message, 'database is locked');
});

t(
  "a slice's match keys are let go on the main thread once its customers are in the read models, not at the job's end",
  async () => {
    const { deps, close } = await importWorld();
    try {
      const prepared = await prepareImport(deps, 'rest_a', FILE);
      // The email keys of the file's first rows (their own, no other row's): their slices were let
      // go long before the last one is recorded, IN_FLIGHT_ROWS rows ahead of the read models at most.
      const early = Array.from({ length: 100 }, (_, i) => i + 1)
        .filter((i) => i % 5 !== 0 && i % 17 !== 0)
        .map((i) => heldMatchKey('rest_a', `e:g${i}@example.com`));
      let stillHeld: number | null = null;
      const state = await importCustomers(deps, prepared, {
        onMatch: 'update',
        fileName: 'f.csv',
        meta: operatorMeta('test'),
        thread: true,
        worker: true,
        batchSize: 50,
        onProgress: (p) => {
          if (p.processed !== ROWS) return;
          // The last rows are recorded, the job not ended: a request for an early row's guest would
          // have its keys at once (taken and let go here, in this one turn).
          stillHeld = early.filter((k) => {
            const free = matchKeyHolds.take([k]) === null;
            if (free) matchKeyHolds.release([k]);
            return !free;
          }).length;
        },
      });
      assert.is(state.status, 'finished');
      assert.is(stillHeld, 0, `of ${early.length} early rows' keys, held at the last row's record`);
      assert.is(matchKeyHolds.size, 0, 'all let go at the end');
    } finally {
      await close();
    }
  },
);

t.run();
