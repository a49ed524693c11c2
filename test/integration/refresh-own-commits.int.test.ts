// What a request waits for before it reads (src/runtime.ts refresh, SqliteEventStore.unsettled()):
// commits of another process (the CLI) and this process's appends that nobody settles are applied
// before the next read; appends settled by their own writer (a CSV import's, `settledByCaller`) are
// not waited for. Read your writes stays whole: another process's commit is seen by the next
// request even when this process's settled appends came after it in the log.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { loadConfig } from '../../src/config';
import { SettledByCallerEvents } from '../../src/core/settled-by-caller';
import { createLogger } from '../../src/logger';
import { ANY, NO_STREAM } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { createRuntime, type Runtime } from '../../src/runtime';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const writer = join(root, 'test/fixtures/event-store-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'couvert-refresh-'));
let files = 0;
const freshFile = () => join(dir, `events-${files++}.sqlite`);
const one = (n: number) => [{ type: 'Appended', data: { n } }];
const settled = { settledByCaller: true };
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A commit by another process (a CLI-like writer that exits). */
function otherProcessAppends(file: string, stream: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, 'append-one', file, stream], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the other process did not finish in 30 s'));
    }, 30_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`the other process exited with ${code}`));
    });
  });
}

const store = suite('SqliteEventStore.unsettled');

store('the first look reports a log with events; then only what is new', async () => {
  const file = freshFile();
  const log = SqliteEventStore.open(file);
  try {
    assert.not.ok(log.unsettled(), 'an empty log');
    await log.append('s', one(1), NO_STREAM);
    assert.ok(log.unsettled());
    assert.not.ok(log.unsettled());
    const other = SqliteEventStore.open(file);
    await other.append('s', one(2), ANY);
    await other.close();
    const fresh = SqliteEventStore.open(file);
    assert.ok(fresh.unsettled(), 'a fresh instance has applied nothing yet');
    await fresh.close();
  } finally {
    await log.close();
  }
});

store('appends settled by their caller are not reported; any other append is, alone or mixed', async () => {
  const log = SqliteEventStore.open(freshFile());
  try {
    log.unsettled();
    await Promise.all([1, 2, 3].map((n) => log.append(`s-${n}`, one(n), NO_STREAM, settled)));
    assert.not.ok(log.unsettled(), 'three settled appends, one group commit');
    await log.append('plain', one(4), NO_STREAM);
    assert.ok(log.unsettled(), 'an append nobody settles');
    assert.not.ok(log.unsettled());
    // One group: settled, plain, settled. The plain one in the middle must not be covered.
    await Promise.all([
      log.append('m-1', [...one(5), ...one(6)], NO_STREAM, settled),
      log.append('m-2', one(7), NO_STREAM),
      log.append('m-3', one(8), NO_STREAM, settled),
    ]);
    assert.ok(log.unsettled(), 'a plain append between settled ones');
    // Without group commit too.
    const single = SqliteEventStore.open(freshFile(), { groupCommit: false });
    try {
      single.unsettled();
      await single.append('a', one(1), NO_STREAM, settled);
      assert.not.ok(single.unsettled());
      await single.append('b', one(2), NO_STREAM);
      assert.ok(single.unsettled());
    } finally {
      await single.close();
    }
  } finally {
    await log.close();
  }
});

store('a retry answered from the log is not taken for this instance’s write', async () => {
  const file = freshFile();
  const log = SqliteEventStore.open(file);
  const other = SqliteEventStore.open(file);
  try {
    log.unsettled();
    const id = '0b0f9bd8-7f7e-4c43-9a4a-8cde7a0e2f01';
    await other.append('r', [{ id, type: 'Appended', data: { n: 1 } }], NO_STREAM);
    // The same append again from this instance: answered as a retry, nothing written here.
    await log.append('r', [{ id, type: 'Appended', data: { n: 1 } }], NO_STREAM, settled);
    assert.ok(log.unsettled(), 'the event was written by the other writer');
  } finally {
    await other.close();
    await log.close();
  }
});

store(
  'another writer’s commit is reported even when settled appends of this instance follow it',
  async () => {
    const file = freshFile();
    const log = SqliteEventStore.open(file);
    try {
      log.unsettled();
      await otherProcessAppends(file, 'cli');
      await log.append('mine', one(1), NO_STREAM, settled);
      assert.ok(log.unsettled(), 'the other process’s event lies below ours');
      await log.append('mine', one(2), 0, settled);
      assert.not.ok(log.unsettled());
    } finally {
      await log.close();
    }
  },
);

store('through the writer thread: known as soon as the thread commits, before its answer', async () => {
  const file = freshFile();
  const log = SqliteEventStore.open(file, { writerThread: 'always' });
  const reader = new Database(file, { readonly: true });
  const head = reader.prepare('SELECT max(position) FROM events').pluck();
  /** Holds this thread (so the thread's answer cannot be taken in) until the log has `n` events. */
  const spinUntil = (n: number) => {
    const deadline = Date.now() + 30_000;
    while (((head.get() as number | null) ?? 0) < n)
      if (Date.now() > deadline) throw new Error('the writer thread did not commit in 30 s');
  };
  try {
    log.unsettled();
    await Promise.all([1, 2].map((n) => log.append(`t-${n}`, one(n), NO_STREAM, settled)));
    assert.is(log.threadTransactions, 1);
    assert.not.ok(log.unsettled());
    // Committed by the thread, its answer not yet taken in by this thread's event loop.
    const answered = log.append('t-3', one(3), NO_STREAM, settled);
    await turn();
    spinUntil(3);
    // The thread publishes right after its COMMIT: wait out that window, still holding this thread.
    const deadline = Date.now() + 30_000;
    while (!log.threadPublished)
      if (Date.now() > deadline) throw new Error('the writer thread did not publish in 30 s');
    assert.not.ok(log.unsettled(), 'a settled group, from shared memory');
    await answered;
    assert.not.ok(log.unsettled());
    const plain = log.append('t-4', one(4), NO_STREAM);
    await turn();
    spinUntil(4);
    assert.ok(log.unsettled(), 'a plain append through the thread');
    await plain;
    assert.not.ok(log.unsettled());
  } finally {
    reader.close();
    await log.close();
  }
});

// ---------------------------------------------------------------------------------------------------

/** Counts the events of type Appended (a read model the test can look at). */
const counting: Projection = {
  name: 'appended-count',
  eventTypes: ['Appended'],
  async apply(event, docs) {
    const c = docs.collection<{ _id: string; n: number; streams: string[] }>('appended');
    const doc = (await c.findOne({ _id: 'count' })) ?? { _id: 'count', n: 0, streams: [] };
    await c.replaceOne(
      { _id: 'count' },
      { ...doc, n: doc.n + 1, streams: [...doc.streams, event.stream] },
      {
        upsert: true,
      },
    );
  },
};

async function runtime(): Promise<{ rt: Runtime; catchUps: () => number; file: string; dataDir: string }> {
  const dataDir = mkdtempSync(join(dir, 'rt-'));
  const rt = await createRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
    projections: [counting],
  });
  let n = 0;
  const catchUp = rt.projections.catchUp.bind(rt.projections);
  rt.projections.catchUp = () => {
    n++;
    return catchUp();
  };
  return { rt, catchUps: () => n, file: join(dataDir, 'events.sqlite'), dataDir };
}

const count = async (rt: Runtime) =>
  (
    await rt.docs
      .collection<{ _id: string; n: number; streams: string[] }>('appended')
      .findOne({ _id: 'count' })
  )?.streams ?? [];

const rtSuite = suite('runtime refresh');
rtSuite.after(() => rmSync(dir, { recursive: true, force: true }));

rtSuite('a request waits for nothing the import settles itself, and sees what it does not', async () => {
  const { rt, catchUps } = await runtime();
  try {
    await rt.refresh();
    const base = catchUps();
    const imported = new SettledByCallerEvents(rt.events);
    await imported.append('imported-1', one(1), NO_STREAM);
    await rt.refresh();
    assert.is(catchUps(), base, 'no catch-up for the settled append');
    assert.equal(await count(rt), [], 'not applied by the request');
    await rt.settle(await rt.events.headPosition());
    assert.equal(await count(rt), ['imported-1'], 'applied by its writer');
    // A background write of this process that nobody settles (a webhook attempt's record): the next
    // request applies it, as before.
    await rt.events.append('background', one(2), NO_STREAM);
    await rt.refresh();
    assert.equal(await count(rt), ['imported-1', 'background']);
  } finally {
    await rt.close();
  }
});

rtSuite(
  'an append of this process asked for before a request looks is seen by it, though not yet committed',
  async () => {
    const { rt } = await runtime();
    try {
      await rt.refresh();
      // Not awaited: queued for the next group commit when the request looks (a background write
      // issued just before, in the same turn).
      const queued = rt.events.append('background-queued', one(3), NO_STREAM);
      await rt.refresh();
      assert.ok((await count(rt)).includes('background-queued'), 'the look waited for the group commit');
      await queued;
    } finally {
      await rt.close();
    }
  },
);

rtSuite(
  'a POST then GET in this process sees the write (settle), with an import writing meanwhile',
  async () => {
    const { rt } = await runtime();
    try {
      const imported = new SettledByCallerEvents(rt.events);
      const importing = imported.append('imported-1', one(1), NO_STREAM);
      const { position } = await rt.events.append('posted', one(2), NO_STREAM);
      await rt.settle(position);
      await importing;
      await rt.refresh();
      assert.ok((await count(rt)).includes('posted'));
    } finally {
      await rt.close();
    }
  },
);

rtSuite(
  'another process’s commit is seen by the next request, amid this process’s settled appends',
  async () => {
    const { rt, file } = await runtime();
    try {
      const imported = new SettledByCallerEvents(rt.events);
      await imported.append('imported-1', one(1), NO_STREAM);
      await rt.refresh();
      await otherProcessAppends(file, 'cli-1');
      await imported.append('imported-2', one(2), NO_STREAM);
      await rt.refresh();
      assert.ok((await count(rt)).includes('cli-1'), 'the CLI’s event before the next read');
      // Requests of the next turns wait for that catch-up too, not only the one that saw the change.
      await otherProcessAppends(file, 'cli-2');
      const first = rt.refresh();
      await turn();
      const second = rt.refresh();
      await second;
      assert.ok((await count(rt)).includes('cli-2'));
      await first;
    } finally {
      await rt.close();
    }
  },
);

store.run();
rtSuite.run();
