// The runner contract on the embedded pairs: memory log + embedded read models, and the SQLite log +
// embedded read models (what `npm start` runs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { ANY } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';
import { projectionRunnerContract } from '../contracts/projection-runner.contract';

const memory = suite('projection runner: memory + embedded');
projectionRunnerContract(memory, async () => {
  const docs = new EmbeddedDocumentStore();
  const events = new MemoryEventStore();
  return { events, docs, reopenDocs: async () => docs, close: async () => events.close() };
});
memory.run();

const sqlite = suite('projection runner: sqlite + embedded');
projectionRunnerContract(sqlite, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-runner-'));
  const events = SqliteEventStore.open(join(dir, 'events.sqlite'));
  const docs = new EmbeddedDocumentStore();
  return {
    events,
    docs,
    reopenDocs: async () => docs,
    close: async () => {
      await events.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
sqlite.run();

// Time slicing (RunnerOptions.sliceMs): a catch-up that yields to the event loop between events comes
// to the very same read models and checkpoints, and lets a macrotask run before it ends.
const slicing = suite('projection runner: time-sliced catch-up');

const tally: Projection = {
  name: 'tally',
  eventTypes: ['Counted', 'Renamed'],
  async apply(event, docs) {
    const c = docs.collection<{ _id: string; n: number; name: string; seen: number[] }>('tally');
    const id = String((event.data as { key: string }).key);
    const was = (await c.findOne({ _id: id })) ?? { _id: id, n: 0, name: '', seen: [] };
    const doc = { ...was, seen: [...was.seen, Number(event.position)] };
    if (event.type === 'Counted') doc.n += (event.data as { by: number }).by;
    else doc.name = String((event.data as { name: string }).name);
    await c.replaceOne({ _id: id }, doc, { upsert: true });
  },
};
const total: Projection = {
  name: 'total',
  eventTypes: ['Counted'],
  async apply(event, docs) {
    const c = docs.collection<{ _id: string; sum: number }>('total');
    const doc = (await c.findOne({ _id: 'all' })) ?? { _id: 'all', sum: 0 };
    await c.replaceOne(
      { _id: 'all' },
      { _id: 'all', sum: doc.sum + (event.data as { by: number }).by },
      { upsert: true },
    );
  },
};

slicing('yields between events yet ends with the same read models and checkpoints as without', async () => {
  const events = new MemoryEventStore();
  for (let i = 0; i < 2500; i++)
    await events.append(
      `k-${i % 37}`,
      [
        i % 5 === 0
          ? { type: 'Renamed', data: { key: `k${i % 37}`, name: `n${i}` } }
          : { type: 'Counted', data: { key: `k${i % 37}`, by: (i * 7) % 11 } },
      ],
      ANY,
    );
  const run = async (sliceMs: number, batchSize: number) => {
    const docs = new EmbeddedDocumentStore();
    const runner = new ProjectionRunner(events, docs, [tally, total], { sliceMs, batchSize });
    await runner.start();
    let ticked = false;
    setImmediate(() => {
      ticked = true;
    });
    const applied = await runner.catchUp();
    const tallies = (await docs.collection('tally').find({})).sort((a, b) =>
      String(a._id).localeCompare(String(b._id)),
    );
    return {
      applied,
      ticked,
      yields: runner.slicesYielded,
      tallies,
      totals: await docs.collection('total').find({}),
      checkpoints: [await docs.getCheckpoint('tally'), await docs.getCheckpoint('total')],
    };
  };
  const whole = await run(0, 1000);
  // A slice of a microsecond: a yield after nearly every event.
  const sliced = await run(0.001, 1000);
  const smallBatches = await run(0.001, 7);
  assert.is(whole.yields, 0);
  assert.not.ok(whole.ticked, 'without slicing the catch-up holds the loop to its end');
  assert.ok(sliced.yields > 100, `yielded ${sliced.yields} times`);
  assert.ok(sliced.ticked, 'a macrotask ran before the catch-up ended');
  for (const other of [sliced, smallBatches]) {
    assert.is(other.applied, whole.applied);
    assert.equal(other.tallies, whole.tallies);
    assert.equal(other.totals, whole.totals);
    assert.equal(other.checkpoints, whole.checkpoints);
  }
  assert.equal(whole.checkpoints, [2500n, 2500n]);
  await events.close();
});

slicing('a catch-up asked for while a sliced one yields runs after it, in order', async () => {
  const events = new MemoryEventStore();
  for (let i = 0; i < 500; i++)
    await events.append('k', [{ type: 'Counted', data: { key: 'k', by: 1 } }], ANY);
  const docs = new EmbeddedDocumentStore();
  const runner = new ProjectionRunner(events, docs, [tally, total], { sliceMs: 0.001 });
  await runner.start();
  const first = runner.catchUp();
  await new Promise((r) => setImmediate(r));
  await events.append('k', [{ type: 'Counted', data: { key: 'k', by: 1 } }], ANY);
  const second = runner.catchUp();
  // The event appended mid-way is applied once, by whichever catch-up reads it first.
  assert.is((await first) + (await second), 501);
  assert.equal(await docs.collection('total').findOne({ _id: 'all' }), { _id: 'all', sum: 501 });
  await events.close();
});

slicing(
  'through the write-back cache a slice ends with a commit: a reader between slices sees every event up to the checkpoint, never a part of a batch',
  async () => {
    const events = new MemoryEventStore();
    for (let i = 0; i < 600; i++)
      await events.append('k', [{ type: 'Counted', data: { key: 'k', by: 1 } }], ANY);
    const docs = new EmbeddedDocumentStore();
    const runner = new ProjectionRunner(events, docs, [tally, total], {
      sliceMs: 0.001,
      batchSize: 1000,
      writeBack: true,
    });
    await runner.start();
    const seen: [bigint | null, number][] = [];
    let running = true;
    const look = async () => {
      const checkpoint = await docs.getCheckpoint('total');
      const doc = await docs.collection<{ _id: string; sum: number }>('total').findOne({ _id: 'all' });
      seen.push([checkpoint, doc?.sum ?? 0]);
      if (running) setImmediate(look);
    };
    setImmediate(look);
    await runner.catchUp();
    running = false;
    const during = seen.filter(([c]) => c !== null && c < 600n);
    // The batch (1,000 events) is larger than the log: before this rule nothing was visible until the end.
    assert.ok(during.length > 10, `saw ${during.length} commits before the end`);
    for (const [c, sum] of seen)
      assert.is(sum, Number(c ?? 0n), 'the read model is exactly as of its checkpoint');
    assert.equal(await docs.collection('total').findOne({ _id: 'all' }), { _id: 'all', sum: 600 });
    await events.close();
  },
);

slicing.run();

// Read-your-writes (catchUpTo): a caller waits for its own position, not for a catch-up that goes on
// past it (one chasing a CSV import's appends); catch-ups asked for while one waits share it.
const reaching = suite('projection runner: catchUpTo');

/** A projection whose event number `held` waits until `open()`; every event is recorded. */
function gated(held: number) {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const projection: Projection = {
    name: 'gated',
    eventTypes: ['Step'],
    async apply(event, docs) {
      const n = (event.data as { n: number }).n;
      if (n === held) await gate;
      await docs.collection('steps').replaceOne({ _id: `s${n}` }, { _id: `s${n}`, n }, { upsert: true });
    },
  };
  return { projection, open: () => open() };
}

async function steps(events: MemoryEventStore, count: number): Promise<bigint[]> {
  const positions: bigint[] = [];
  for (let n = 1; n <= count; n++)
    positions.push((await events.append('steps', [{ type: 'Step', data: { n } }], ANY)).position);
  return positions;
}

reaching('settles once its position is applied, while the catch-up is held further on', async () => {
  const events = new MemoryEventStore();
  const docs = new EmbeddedDocumentStore();
  const { projection, open } = gated(4);
  const runner = new ProjectionRunner(events, docs, [projection], { batchSize: 1 });
  const at = await steps(events, 6);
  let caughtUp = false;
  const all = runner.catchUp().then(() => {
    caughtUp = true;
  });
  await runner.catchUpTo(at[1] as bigint);
  assert.ok((runner.position as bigint) >= (at[1] as bigint));
  assert.ok(await docs.collection('steps').findOne({ _id: 's2' }));
  assert.is(caughtUp, false, 'the catch-up is still held at the fourth event');
  assert.is(await docs.collection('steps').findOne({ _id: 's4' }), null);
  open();
  await all;
  assert.is(runner.position, at[5]);
  // Already applied: settled at once, no catch-up asked for.
  await runner.catchUpTo(at[2] as bigint);
  await events.close();
});

reaching('a target past the log settles when the catch-up ends; an error reaches the caller', async () => {
  const events = new MemoryEventStore();
  const runner = new ProjectionRunner(events, new EmbeddedDocumentStore(), [gated(-1).projection]);
  const at = await steps(events, 3);
  await runner.catchUpTo((at[2] as bigint) + 100n);
  assert.is(runner.position, at[2]);
  const failing: Projection = {
    name: 'failing',
    eventTypes: ['Step'],
    async apply() {
      throw new Error('cannot apply');
    },
  };
  const broken = new ProjectionRunner(events, new EmbeddedDocumentStore(), [failing]);
  try {
    await broken.catchUpTo(at[0] as bigint);
    assert.unreachable('the projection failed');
  } catch (err) {
    assert.match((err as Error).message, 'cannot apply');
  }
  await events.close();
});

reaching('catch-ups asked for before one starts share it', async () => {
  const events = new MemoryEventStore();
  const { projection, open } = gated(2);
  const runner = new ProjectionRunner(events, new EmbeddedDocumentStore(), [projection], { batchSize: 1 });
  await steps(events, 3);
  const first = runner.catchUp();
  assert.is(runner.catchUp(), first, 'not started yet: shared');
  // Once it runs (held at the second event), a new call queues a catch-up of its own.
  await runner.catchUpTo(1n);
  const second = runner.catchUp();
  assert.is.not(second, first);
  assert.is(runner.catchUp(), second);
  open();
  assert.is(await first, 3);
  assert.is(await second, 0);
  await events.close();
});

reaching.run();
