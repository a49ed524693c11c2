import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { FixedClock } from '../../src/core/clock';
import {
  ANY,
  InvalidEventStoreInputError,
  NO_STREAM,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store';
import { eventStoreContract } from '../contracts/event-store.contract';
import { collect, ev, expectError, HANG_MS, take, withTimeout } from '../contracts/event-store.helpers';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const writer = join(root, 'test/fixtures/event-store-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'couvert-events-'));
let files = 0;
const freshFile = () => join(dir, `events-${files++}.sqlite`);

const test = suite('event-store: sqlite');
test.after(() => rmSync(dir, { recursive: true, force: true }));

// The contract with one transaction per append (group commit off: it is on by default)…
eventStoreContract(
  test,
  { open: () => SqliteEventStore.open(freshFile(), { groupCommit: false }) },
  { fresh: true, strictIds: true },
);

// …and again with group commit (the default, named here so it stays tested if that changes):
// batching must not change what the port promises.
const grouped = suite('event-store: sqlite, group commit');
eventStoreContract(
  grouped,
  { open: () => SqliteEventStore.open(freshFile(), { groupCommit: true }) },
  { fresh: true, strictIds: true },
);

// …and with every group commit written by the writer thread (sqlite-writer.ts), as a large import's
// are: the thread must not change what the port promises either.
const threaded = suite('event-store: sqlite, writer thread');
eventStoreContract(
  threaded,
  { open: () => SqliteEventStore.open(freshFile(), { writerThread: 'always' }) },
  { fresh: true, strictIds: true },
);

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

function startWriter(args: string[]): {
  child: ChildProcess;
  lines: AsyncIterable<string>;
  stderr: () => string;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', writer, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => {
    err += d;
  });
  async function* lines() {
    let buffer = '';
    for await (const chunk of child.stdout!) {
      buffer += chunk;
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        yield buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf('\n');
      }
    }
  }
  return { child, lines: lines(), stderr: () => err };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

/** Whole-log invariants: gap-free positions, contiguous revisions per stream. */
function assertLogShape(all: RecordedEvent[]): void {
  assert.equal(
    all.map((e) => Number(e.position)),
    range(all.length),
    'positions are 1..n without gaps',
  );
  const revisions = new Map<string, number>();
  for (const e of all) {
    const expected = revisions.get(e.stream) ?? 0;
    assert.is(e.revision, expected, `${e.stream} revision ${e.revision} follows ${expected - 1}`);
    revisions.set(e.stream, expected + 1);
  }
}

test('the file is in WAL mode with one events table keyed by position, id and (stream, revision)', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file);
  await store.append('s', [ev('A')], NO_STREAM);
  await store.close();
  const db = new Database(file, { readonly: true });
  try {
    assert.is(db.pragma('journal_mode', { simple: true }), 'wal');
    const columns = (db.pragma('table_info(events)') as { name: string; pk: number }[]).map((c) => c.name);
    assert.equal(columns, [
      'position',
      'id',
      'stream',
      'revision',
      'type',
      'data',
      'metadata',
      'created',
      'hash',
    ]);
    const unique = (db.pragma('index_list(events)') as { name: string; unique: number }[])
      .filter((i) => i.unique)
      .map((i) => (db.pragma(`index_info(${i.name})`) as { name: string }[]).map((c) => c.name).join(','))
      .sort();
    assert.equal(unique, ['id', 'stream,revision']);
  } finally {
    db.close();
  }
});

test('created comes from the injected clock', async () => {
  const clock = new FixedClock('2026-05-04T19:30:00Z');
  const store = SqliteEventStore.open(freshFile(), { clock });
  try {
    await store.append('s', [ev('A'), ev('B')], NO_STREAM);
    clock.advance(1);
    await store.append('s', [ev('C')], 1);
    assert.equal(
      (await store.readStream('s')).map((e) => e.created),
      ['2026-05-04T19:30:00.000Z', '2026-05-04T19:30:00.000Z', '2026-05-04T19:30:01.000Z'],
    );
  } finally {
    await store.close();
  }
});

test('readAll pages lazily, stops on return() and ends after an error, as a generator would', async () => {
  const store = SqliteEventStore.open(freshFile());
  try {
    await store.append('s', [ev('A'), ev('B'), ev('C')], NO_STREAM);
    const lazy = store.readAll({ batchSize: 2 })[Symbol.asyncIterator]();
    assert.is((await lazy.next()).value?.type, 'A');
    await store.append('s', [ev('D')], 2);
    const rest: string[] = [];
    for (let r = await lazy.next(); !r.done; r = await lazy.next()) rest.push(r.value.type);
    assert.equal(rest, ['B', 'C', 'D'], 'a page read after the append sees it');

    const stopped = store.readAll({ batchSize: 2 })[Symbol.asyncIterator]();
    await stopped.next();
    assert.equal(await stopped.return!(), { done: true, value: undefined });
    assert.equal(await stopped.next(), { done: true, value: undefined }, 'nothing after return()');

    const broken = store.readAll({ batchSize: 2 })[Symbol.asyncIterator]();
    await broken.next();
    await broken.next();
    await store.close();
    await expectError(() => broken.next(), Error, 'the next page cannot be read from a closed store');
    assert.equal(await broken.next(), { done: true, value: undefined }, 'an error ends the iteration');
  } finally {
    await store.close();
  }
});

test('events, positions and revisions survive close and reopen', async () => {
  const file = freshFile();
  const first = SqliteEventStore.open(file, { synchronous: 'NORMAL' });
  await first.append('a', [ev('A1', { x: 1 }, { restaurant_id: 'r1' }), ev('A2')], NO_STREAM);
  await first.append('b', [ev('B1')], NO_STREAM);
  await first.append('a', [ev('A3')], 1);
  const before = await collect(first.readAll());
  await first.close();
  const again = SqliteEventStore.open(file);
  try {
    assert.equal(await collect(again.readAll()), before);
    assert.is(await again.headPosition(), 4n);
    await expectError(
      () => again.append('a', [ev('A4')], 1),
      WrongExpectedRevisionError,
      'stale after reopen',
    );
    const next = await again.append('a', [ev('A4')], 2);
    assert.equal(next, { nextRevision: 3, position: 5n });
  } finally {
    await again.close();
  }
});

test('two instances on one file: conflicts detected, positions gap-free, subscribers see each other', async () => {
  const file = freshFile();
  const a = SqliteEventStore.open(file, { pollIntervalMs: 50 });
  const b = SqliteEventStore.open(file, { pollIntervalMs: 50 });
  try {
    await a.append('s', [ev('A')], NO_STREAM);
    assert.is((await b.readStream('s')).length, 1);
    await a.append('s', [ev('B')], 0);
    const err = await expectError(() => b.append('s', [ev('C')], 0), WrongExpectedRevisionError, 'stale');
    assert.is(err.actual, 1);
    for (let i = 0; i < 20; i++) await (i % 2 ? a : b).append(`x${i % 3}`, [ev('E'), ev('F')], ANY);
    const head = await a.headPosition();
    const sub = a.subscribe({ after: head });
    try {
      const pending = take(sub[Symbol.asyncIterator](), 2, HANG_MS, "the other instance's events");
      await b.append('late', [ev('L1'), ev('L2')], NO_STREAM);
      assert.equal(
        (await pending).map((e) => e.type),
        ['L1', 'L2'],
      );
    } finally {
      await sub.close();
    }
    const all = await collect(b.readAll());
    assert.is(all.length, 2 + 40 + 2);
    assertLogShape(all);
  } finally {
    await a.close();
    await b.close();
  }
});

test('SIGKILL in the middle of multi-event appends leaves only whole appends', async () => {
  const file = freshFile();
  const acked = new Map<string, number>();
  for (const stopAfter of [20, 35, 50]) {
    const { child, lines, stderr } = startWriter(['batches', file]);
    let count = 0;
    await withTimeout(
      (async () => {
        for await (const line of lines) {
          const [, batch, size] = line.split(' ');
          acked.set(batch!, Number(size));
          // Killed before the pipe is released, so the writer dies by the signal, mid-loop.
          if (++count >= stopAfter) {
            child.kill('SIGKILL');
            break;
          }
        }
      })(),
      HANG_MS,
      'the writer to acknowledge appends',
    );
    assert.is(count, stopAfter, `the writer stopped early: ${stderr()}`);
    await exited(child);
    assert.is(child.signalCode, 'SIGKILL');
  }
  const store = SqliteEventStore.open(file);
  try {
    const all = await collect(store.readAll());
    assertLogShape(all);
    const batches = new Map<string, RecordedEvent[]>();
    for (const e of all) {
      const key = String(e.metadata.batch);
      batches.set(key, [...(batches.get(key) ?? []), e]);
    }
    for (const [batch, events] of batches) {
      const size = Number(events[0]!.metadata.size);
      assert.equal(
        events.map((e) => e.metadata.index),
        Array.from({ length: size }, (_, i) => i),
        `batch ${batch} is whole`,
      );
      const first = Number(events[0]!.position);
      assert.equal(
        events.map((e) => Number(e.position)),
        Array.from({ length: size }, (_, i) => first + i),
        `batch ${batch} is contiguous in the log`,
      );
    }
    for (const [batch, size] of acked)
      assert.is(batches.get(batch)?.length, size, `acknowledged ${batch} is there`);
  } finally {
    await store.close();
  }
});

test('several processes appending to one stream: every conflict detected, nothing lost', async () => {
  const file = freshFile();
  await SqliteEventStore.open(file).close();
  const perWorker = 30;
  const startAt = String(Date.now() + 2000);
  const workers = ['w1', 'w2', 'w3'].map((w) => ({
    w,
    ...startWriter(['increment', file, String(perWorker), w, startAt]),
  }));
  const reports = await withTimeout(
    Promise.all(
      workers.map(async ({ w, child, lines, stderr }) => {
        let report = '';
        for await (const line of lines) report = line;
        const code = await exited(child);
        assert.is(code, 0, `${w} failed: ${stderr()}`);
        return JSON.parse(report) as { conflicts: number };
      }),
    ),
    HANG_MS,
    'the writers to finish',
  );
  const store = SqliteEventStore.open(file);
  try {
    const all = await collect(store.readAll());
    assertLogShape(all);
    assert.is(all.length, 3 * perWorker);
    for (const { w } of workers)
      assert.equal(
        all.filter((e) => e.data.worker === w).map((e) => e.data.i),
        Array.from({ length: perWorker }, (_, i) => i),
        `${w}'s appends are all there, once, in order`,
      );
    console.log(`  (conflicts retried by the writers: ${reports.map((r) => r.conflicts).join(', ')})`);
  } finally {
    await store.close();
  }
});

// Group commit: appends called in one event-loop turn share one transaction (see sqlite.ts).

/** Settles every promise, answering results and errors alike, so two runs compare as values. */
const settle = (ps: Promise<unknown>[]) =>
  Promise.all(
    ps.map((p) =>
      p.then(
        (value) => ({ value }),
        (err: Error) => ({ error: err.name, message: err.message }),
      ),
    ),
  );

test('group commit: concurrent appends to one stream at the same expected revision: exactly one wins', async () => {
  const store = SqliteEventStore.open(freshFile(), { groupCommit: true });
  try {
    await store.append('race', [ev('Opened')], NO_STREAM);
    const before = store.transactions;
    const outcomes = await settle(range(50).map((i) => store.append('race', [ev('Took', { i })], 0)));
    assert.is(store.transactions - before, 1, 'one transaction for the 50 appends');
    const won = outcomes.filter((o) => 'value' in o);
    assert.equal(won, [{ value: { nextRevision: 1, position: 2n } }], 'exactly one wins');
    assert.is(outcomes.filter((o) => 'error' in o && o.error === 'WrongExpectedRevisionError').length, 49);
    assert.equal(outcomes[0], won[0], 'the first caller wins');
    const events = await store.readStream('race');
    assert.equal(
      events.map((e) => [e.type, e.data.i]),
      [
        ['Opened', undefined],
        ['Took', 1],
      ],
    );
  } finally {
    await store.close();
  }
});

test('group commit: concurrent appends to many streams all win, gap-free in call order, one transaction', async () => {
  const store = SqliteEventStore.open(freshFile(), { groupCommit: true });
  try {
    const before = store.transactions;
    const results = await Promise.all(
      range(200).map((i) => store.append(`s-${i % 17}`, [ev('A', { i }), ev('B', { i })], ANY)),
    );
    assert.is(store.transactions - before, 1, 'one transaction for the 200 appends');
    assert.equal(
      results.map((r) => r.position),
      range(200).map((i) => BigInt(2 * i)),
      'positions follow call order',
    );
    const all = await collect(store.readAll());
    assertLogShape(all);
    assert.equal(
      all.map((e) => e.data.i),
      range(200).flatMap((i) => [i, i]),
    );
    // Appends to one stream in the same batch see each other: revisions were checked in order.
    const chained = await Promise.all([
      store.append('chain', [ev('C0')], NO_STREAM),
      store.append('chain', [ev('C1')], 0),
      store.append('chain', [ev('C2')], 1),
    ]);
    assert.equal(
      chained.map((r) => r.nextRevision),
      [0, 1, 2],
    );
    assert.is(store.transactions - before, 2);
  } finally {
    await store.close();
  }
});

test('group commit: a failing append mid-batch leaves its neighbours alone, as a one-by-one run would', async () => {
  const idA = '0190a3c4-0000-7000-8000-00000000000a';
  const idX = '0190a3c4-0000-7000-8000-00000000000b';
  // The same calls, in one turn, on a batching store and on one without batching.
  const scenario = (store: SqliteEventStore) =>
    settle([
      store.append('a', [ev('A0', {}, undefined, idA)], NO_STREAM),
      store.append('a', [ev('Stale')], 5),
      store.append('x', [ev('X0', {}, undefined, idX)], NO_STREAM),
      // An id already stored in another stream (earlier in this batch): a caller bug.
      store.append('y', [ev('Y0'), ev('Y1', {}, undefined, idX)], NO_STREAM),
      // The same with one event (written without a savepoint of its own: the INSERT undoes itself).
      store.append('z', [ev('Z0', {}, undefined, idX)], NO_STREAM),
      // A retry of the first append: answers its result, writes nothing.
      store.append('a', [ev('A0', {}, undefined, idA)], NO_STREAM),
      store.append('a', [ev('A1')], 0),
      store.append('x', [ev('X1')], NO_STREAM),
      store.append('y', [ev('Y0')], NO_STREAM),
    ]);
  const batched = SqliteEventStore.open(freshFile(), {
    clock: new FixedClock('2030-01-01T00:00:00Z'),
    groupCommit: true,
  });
  const single = SqliteEventStore.open(freshFile(), {
    clock: new FixedClock('2030-01-01T00:00:00Z'),
    groupCommit: false,
  });
  try {
    const got = await scenario(batched);
    const want = await scenario(single);
    assert.is(batched.transactions, 1, 'one transaction with batching');
    assert.is(single.transactions, 9, 'one transaction per append without');
    assert.equal(got, want, 'the same results and errors');
    assert.equal(
      got.map((o) => ('value' in o ? o.value : o.error)),
      [
        { nextRevision: 0, position: 1n },
        'WrongExpectedRevisionError',
        { nextRevision: 0, position: 2n },
        'InvalidEventStoreInputError',
        'InvalidEventStoreInputError',
        { nextRevision: 0, position: 1n },
        { nextRevision: 1, position: 3n },
        'WrongExpectedRevisionError',
        { nextRevision: 0, position: 4n },
      ],
    );
    const strip = (es: RecordedEvent[]) =>
      // Generated ids differ between the two runs, and the chain hash covers the id.
      es.map(({ id, hash, ...rest }) => ({
        ...rest,
        id: id === idA || id === idX ? id : '',
        hash: id === idA || id === idX ? hash : '',
      }));
    assert.equal(strip(await collect(batched.readAll())), strip(await collect(single.readAll())));
    assertLogShape(await collect(batched.readAll()));
  } finally {
    await batched.close();
    await single.close();
  }
});

test('group commit: bad input throws before queueing; reads see an append once it resolved; close writes the queue', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file, { groupCommit: true });
  const sub = store.subscribe();
  const it = sub[Symbol.asyncIterator]();
  const before = store.transactions;
  const ok = store.append('q', [ev('One')], NO_STREAM);
  await expectError(() => store.append('', [ev('Bad')], ANY), InvalidEventStoreInputError, 'empty stream');
  await ok;
  assert.is((await store.readStream('q')).length, 1, 'a read after the append resolved sees it');
  assert.is(store.transactions - before, 1, 'the bad append never reached the transaction');
  assert.is((await take(it, 1, HANG_MS))[0]!.type, 'One', 'subscribers are told after commit');
  await sub.close();
  const late = store.append('q', [ev('Two')], 0);
  await store.close();
  assert.equal(await late, { nextRevision: 1, position: 2n }, 'close() writes what was queued');
  const again = SqliteEventStore.open(file);
  try {
    assert.is((await again.readStream('q')).length, 2);
  } finally {
    await again.close();
  }
});

test('group commit: another process holding the write lock past busy_timeout fails the batch, which writes nothing', async () => {
  const file = freshFile();
  const store = SqliteEventStore.open(file, { busyTimeoutMs: 100, groupCommit: true });
  const other = new Database(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    const outcomes = await settle([store.append('b', [ev('B0')], ANY), store.append('c', [ev('C0')], ANY)]);
    for (const o of outcomes) assert.ok('error' in o && /locked|busy/i.test(o.message), JSON.stringify(o));
    other.exec('ROLLBACK');
    assert.equal(await store.append('b', [ev('B0')], NO_STREAM), { nextRevision: 0, position: 1n });
  } finally {
    other.close();
    await store.close();
  }
});

test.run();
grouped.run();
threaded.run();

// The writer thread (sqlite-writer.ts): the contract above runs through it; here, that it is really
// used, when it starts, and what happens when it is gone or the lock is taken.
const thread = suite('event-store: sqlite writer thread');

thread(
  "'large' writes small groups here and starts the thread with a large one, which every group then takes",
  async () => {
    const store = SqliteEventStore.open(freshFile(), { writerThread: 'large' });
    try {
      await store.append('a', [ev('A0')], NO_STREAM);
      assert.is(store.threadTransactions, 0, 'a small group is written on the main thread');
      const big = await Promise.all(range(70).map((i) => store.append(`s-${i}`, [ev(`E${i}`)], NO_STREAM)));
      assert.equal(
        big.map((r) => r.position),
        range(70).map((i) => BigInt(i + 1)),
        'gap-free, in call order',
      );
      assert.is(store.threadTransactions, 1, 'the large group went to the thread');
      await store.append('a', [ev('A1')], 0);
      assert.is(store.threadTransactions, 2, 'and the next small one too');
      await expectError(() => store.append('a', [ev('A9')], 0), WrongExpectedRevisionError, 'wrong revision');
      assert.is((await store.readStream('a')).length, 2);
    } finally {
      await store.close();
    }
  },
);

thread(
  'a writer thread that dies leaves the writes to the main thread; a repeat of a committed append is its retry',
  async () => {
    const file = freshFile();
    const store = SqliteEventStore.open(file, { writerThread: 'always' });
    try {
      const first = ev('One', {}, undefined, '7d0c4a52-3f0e-4b8e-9a35-0c6f8e1f2a01');
      assert.equal(await store.append('w', [first], NO_STREAM), { nextRevision: 0, position: 1n });
      assert.is(store.threadTransactions, 1);
      await (store as unknown as { writer: { close(): Promise<void> } }).writer.close();
      assert.equal(await store.append('w', [first], NO_STREAM), { nextRevision: 0, position: 1n }, 'retry');
      assert.equal(await store.append('w', [ev('Two')], 0), { nextRevision: 1, position: 2n });
      assert.is(store.threadTransactions, 1, 'nothing more through the dead thread');
    } finally {
      await store.close();
    }
  },
);

thread(
  'another process holding the write lock past busy_timeout fails the group, which writes nothing',
  async () => {
    const file = freshFile();
    const store = SqliteEventStore.open(file, { busyTimeoutMs: 100, writerThread: 'always' });
    await store.append('warm', [ev('W')], NO_STREAM);
    const other = new Database(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      const outcomes = await settle([store.append('b', [ev('B0')], ANY), store.append('c', [ev('C0')], ANY)]);
      for (const o of outcomes) assert.ok('error' in o && /locked|busy/i.test(o.message), JSON.stringify(o));
      other.exec('ROLLBACK');
      assert.equal(await store.append('b', [ev('B0')], NO_STREAM), { nextRevision: 0, position: 2n });
    } finally {
      other.close();
      await store.close();
    }
  },
);

thread(
  'wroteAnew tells an append that wrote its events from one answered as a retry, on every path',
  async () => {
    for (const options of [{}, { groupCommit: false }, { writerThread: 'always' as const }]) {
      const store = SqliteEventStore.open(freshFile(), options);
      try {
        const id = 'a3c1e2f0-1b2c-4d5e-8f90-123456789abc';
        const first = await store.append('w', [ev('One', {}, undefined, id)], NO_STREAM);
        assert.ok(store.wroteAnew(first), `fresh (${JSON.stringify(options)})`);
        const again = await store.append('w', [ev('One', {}, undefined, id)], NO_STREAM);
        assert.equal(again, first);
        assert.not.ok(store.wroteAnew(again), `retry (${JSON.stringify(options)})`);
        assert.not.ok(store.wroteAnew({ nextRevision: 0, position: 1n }), 'not a result of this store');
      } finally {
        await store.close();
      }
    }
  },
);

thread.run();
