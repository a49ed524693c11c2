// readAll read ahead in a worker thread (src/adapters/event-store/sqlite-read-ahead.ts): the same
// events, in the same order, with the same ends (after, limit, a short page) as the paged read on
// the calling thread; and the same again when the worker fails at start or dies half-way.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkerOptions } from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeTemplate } from '../../bench/replay-all.bench';
import { allProjections } from '../../projections/index';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { ReadAheadEvents } from '../../src/adapters/event-store/sqlite-read-ahead';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import type { Doc } from '../../src/ports/document-store';
import { ANY, type EventStore, type RecordedEvent } from '../../src/ports/event-store';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { ProjectionRunner } from '../../src/projection/runner';
import { HANG_MS, withTimeout } from '../contracts/event-store.helpers';

const dir = mkdtempSync(join(tmpdir(), 'couvert-read-ahead-'));
const file = join(dir, 'events.sqlite');
const test = suite('event-store: sqlite read-ahead');
const TOTAL = 2_345;

// Data that must come back exactly as stored: the page's JSON text splices it in as it is.
const awkward = [
  'é à ü',
  '😀 and \ud83d\udc4d',
  'line\u2028separator\u2029',
  'quotes " and \\ backslashes \\"',
  '\u0000\u001f control',
  '</script>',
];

test.before(async () => {
  const store = SqliteEventStore.open(file, { synchronous: 'NORMAL' });
  let n = 0;
  while (n < TOTAL) {
    const stream = `reservation-${n % 37}`;
    const events = Array.from({ length: Math.min(1 + (n % 5), TOTAL - n) }, (_, k) => ({
      type: k % 2 ? 'ReservationUpdated' : 'ReservationCreated',
      data: {
        n: n + k,
        text: awkward[(n + k) % awkward.length],
        nested: { list: [1, 2.5, -3e-7, null, true], empty: {}, none: [] },
        big: 2 ** 53 - 1,
      },
      metadata: { actor: 'test', request_id: `r-${n + k}`, note: awkward[(n + k + 1) % awkward.length] },
    }));
    await store.append(stream, events, ANY);
    n += events.length;
  }
  await store.close();
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

async function all(it: AsyncIterable<RecordedEvent>): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  const run = async () => {
    for await (const e of it) out.push(e);
  };
  await withTimeout(run(), HANG_MS, 'the events');
  return out;
}

const plain = () => SqliteEventStore.open(file, { readAhead: false });

test('the worker gives the events the calling thread reads, in order, every field equal', async () => {
  const store = plain();
  try {
    const expected = await all(store.readAll({ batchSize: 100 }));
    assert.is(expected.length, TOTAL);
    for (const batchSize of [1, 7, 100, 1000, 5000]) {
      const ahead = store.readAllAhead({ batchSize });
      const got = await all(ahead);
      assert.equal(got, expected, `batchSize ${batchSize}`);
      assert.ok(ahead.usedWorkerOnly, 'every page came from the worker');
      assert.is(ahead.workerPages, Math.ceil(TOTAL / batchSize) + (TOTAL % batchSize === 0 ? 1 : 0));
      assert.ok(got.every((e) => typeof e.hash === 'string' && typeof e.position === 'bigint'));
    }
  } finally {
    await store.close();
  }
});

// The thread is plain JavaScript: started with the parent's execArgv (`--import tsx` in tests and the
// dev CLI), it registered tsx for nothing at every large readAll (~0.4 s of CPU, ~10 MB).
test("the worker starts without the parent's execArgv (no tsx), and reads every page", async () => {
  const threads = createRequire(import.meta.url)(
    'node:worker_threads',
  ) as typeof import('node:worker_threads');
  const Original = threads.Worker;
  const execArgvs: unknown[] = [];
  threads.Worker = class extends Original {
    constructor(script: string | URL, options?: WorkerOptions) {
      execArgvs.push(options?.execArgv);
      super(script, options);
    }
  };
  syncBuiltinESMExports();
  const store = plain();
  try {
    assert.ok(process.execArgv.length > 0, 'this test runs with execArgv of its own (--import tsx)');
    const ahead = store.readAllAhead({ batchSize: 500 });
    assert.is((await all(ahead)).length, TOTAL);
    assert.ok(ahead.usedWorkerOnly, 'every page came from the worker');
    assert.equal(execArgvs, [[]]);
  } finally {
    threads.Worker = Original;
    syncBuiltinESMExports();
    await store.close();
  }
});

test('after and limit end the worker where the paged read ends', async () => {
  const store = plain();
  try {
    for (const [after, limit] of [
      [0n, 1],
      [5n, 100],
      [99n, 1000],
      [2000n, undefined],
      [BigInt(TOTAL - 1), undefined],
      [BigInt(TOTAL), undefined],
      [BigInt(TOTAL + 10), 3],
      [10n, 0],
    ] as const) {
      const expected = await all(store.readAll({ after, limit, batchSize: 100 }));
      const ahead = store.readAllAhead({ after, limit, batchSize: 100 });
      assert.equal(await all(ahead), expected, `after ${after}, limit ${limit}`);
      assert.ok(ahead.usedWorkerOnly);
    }
  } finally {
    await store.close();
  }
});

test('a worker that fails at start or dies half-way: the calling thread reads on, nothing lost or repeated', async () => {
  const store = plain();
  try {
    const expected = await all(store.readAll({ batchSize: 100 }));
    for (const dieAfterPages of [0, 1, 3, 10]) {
      const ahead = store.readAllAhead({ batchSize: 100, dieAfterPages });
      const got = await all(ahead);
      assert.equal(got, expected, `worker died after ${dieAfterPages} pages`);
      assert.not.ok(ahead.usedWorkerOnly);
      assert.is(ahead.workerPages, dieAfterPages);
    }
    // …with a limit: the fallback reads only what is still owed.
    const limited = store.readAllAhead({ after: 50n, limit: 777, batchSize: 100, dieAfterPages: 2 });
    assert.equal(await all(limited), expected.slice(50, 50 + 777));
    assert.is(limited.workerPages, 2);
  } finally {
    await store.close();
  }
});

test('readAll reads ahead from the size readAhead names, and never on a log in memory', async () => {
  const ahead = SqliteEventStore.open(file, { readAhead: 1000 });
  try {
    assert.instance(ahead.readAll({ batchSize: 100 }), ReadAheadEvents);
    assert.not.instance(ahead.readAll({ after: BigInt(TOTAL - 999) }), ReadAheadEvents);
    assert.not.instance(ahead.readAll({ limit: 999 }), ReadAheadEvents);
    assert.instance(ahead.readAll({ limit: 1000 }), ReadAheadEvents);
    const got = await all(ahead.readAll({ batchSize: 64 }));
    assert.equal(got, await all(plain().readAll({ batchSize: 64 })));
  } finally {
    await ahead.close();
  }
  const off = plain();
  assert.not.instance(off.readAll(), ReadAheadEvents);
  await off.close();
  const memory = SqliteEventStore.open(':memory:', { readAhead: 0 });
  assert.not.instance(memory.readAll(), ReadAheadEvents);
  assert.throws(() => memory.readAllAhead(), /in memory/);
  await memory.close();
});

test('a consumer that stops early stops the worker; the next read is unaffected', async () => {
  const store = plain();
  try {
    const ahead = store.readAllAhead({ batchSize: 50 });
    const first: RecordedEvent[] = [];
    for await (const e of ahead) {
      first.push(e);
      if (first.length === 120) break;
    }
    assert.is(first.length, 120);
    assert.equal(
      first.map((e) => e.position),
      Array.from({ length: 120 }, (_, i) => BigInt(i + 1)),
    );
    assert.is((await ahead.next()).done, true);
    assert.is((await all(store.readAllAhead({ batchSize: 500 }))).length, TOTAL);
  } finally {
    await store.close();
  }
});

test('events appended while the worker reads are seen, as the paged read sees them', async () => {
  const writerFile = join(dir, 'growing.sqlite');
  const store = SqliteEventStore.open(writerFile, { readAhead: false, synchronous: 'NORMAL' });
  try {
    for (let i = 0; i < 300; i++) await store.append(`s-${i % 7}`, [{ type: 'T', data: { i } }], ANY);
    const ahead = store.readAllAhead({ batchSize: 100 });
    const got: RecordedEvent[] = [];
    let appended = false;
    const run = async () => {
      for await (const e of ahead) {
        got.push(e);
        if (!appended && got.length === 10) {
          appended = true;
          await store.append('late', [{ type: 'T', data: { late: true } }], ANY);
        }
      }
    };
    await withTimeout(run(), HANG_MS, 'the events');
    // Read ahead or not, a page read after the append holds it: it is the last event either way,
    // or (read before it) not there at all; never out of order.
    const positions = got.map((e) => Number(e.position));
    assert.equal(
      positions,
      positions.map((_, i) => i + 1),
    );
    assert.ok(got.length === 300 || got.length === 301);
  } finally {
    await store.close();
  }
});

test('a sealed log (as the service writes it) read ahead: events opened on the calling thread, with its keys, as without the worker', async () => {
  const sealedFile = join(dir, 'sealed.sqlite');
  const keys = new MemoryKeyStore();
  const writer = new SealingEventStore(SqliteEventStore.open(sealedFile, { readAhead: false }), keys);
  for (let i = 0; i < 120; i++)
    await writer.append(
      `customer-cus_${i}`,
      [
        {
          type: 'CustomerCreated',
          data: {
            customer_id: `cus_${i}`,
            restaurant_id: 'r',
            at: 't',
            profile: { name: `Ada ${i} é`, email: `a${i}@x.test` },
          },
        },
      ],
      ANY,
    );
  await writer.close();
  const stored = SqliteEventStore.open(sealedFile, { readAhead: false });
  const raw = await all(stored.readAll());
  // (Not bare 'Ada': 120 boxes of base64 hold those three letters by chance in ~5 % of runs.)
  assert.not.match(JSON.stringify(raw.map((e) => e.data)), /Ada \d|@x\.test/, 'the log holds them sealed');
  const plainOpened = await all(new SealingEventStore(stored, keys).readAll({ batchSize: 16 }));
  const ahead = SqliteEventStore.open(sealedFile, { readAhead: 0 });
  try {
    assert.instance(ahead.readAll({ batchSize: 16 }), ReadAheadEvents);
    const opened = await all(new SealingEventStore(ahead, keys).readAll({ batchSize: 16 }));
    assert.equal(opened, plainOpened);
    assert.equal(opened[7]?.data.profile, { name: 'Ada 7 é', email: 'a7@x.test' });
  } finally {
    await ahead.close();
    await stored.close();
  }
});

async function contents(docs: EmbeddedDocumentStore): Promise<Record<string, Doc[]>> {
  const out: Record<string, Doc[]> = {};
  for (const name of docs.collectionNames()) out[name] = await docs.collection(name).find({});
  return out;
}

test('an embedded catch-up into every projection through the worker builds the same read models, worker dying or not', async () => {
  const log = join(dir, 'template.sqlite');
  await writeTemplate(log, 2, 40);
  const replay = async (events: EventStore) => {
    const docs = new EmbeddedDocumentStore();
    const runner = new ProjectionRunner(events, docs, allProjections(), { batchSize: 64 });
    const applied = await withTimeout(runner.catchUp(), HANG_MS, 'the catch-up');
    return { applied, models: await contents(docs) };
  };
  const plainStore = SqliteEventStore.open(log, { readAhead: false });
  const alwaysAhead = SqliteEventStore.open(log, { readAhead: 0 });
  try {
    const expected = await replay(plainStore);
    assert.ok(expected.applied > 300, 'the log holds the template restaurant');
    assert.ok((expected.models.reservations?.length ?? 0) >= 60);
    assert.instance(alwaysAhead.readAll({ batchSize: 64 }), ReadAheadEvents);
    assert.equal(await replay(alwaysAhead), expected, 'every page from the worker');
    // Every document in the store's order, field order included (JSON), as bench/replay-digest.ts sees it.
    assert.is(JSON.stringify((await replay(alwaysAhead)).models), JSON.stringify(expected.models));
    const dying: EventStore = Object.create(plainStore, {
      readAll: { value: (o: { batchSize?: number }) => plainStore.readAllAhead({ ...o, dieAfterPages: 3 }) },
    });
    assert.equal(await replay(dying), expected, 'the worker died after three pages');
  } finally {
    await plainStore.close();
    await alwaysAhead.close();
  }
});

test.run();
