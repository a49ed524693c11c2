// Round trips to the document store's checkpoints, counted (scaled out each is a MongoDB round trip):
// the projector writes all 16 projections' checkpoints for an event in one, an API process reads them
// in one a poll of waitFor, a start loads them in one; and the projector commits once for events that
// arrive while a commit is in flight, never later than right after a lone event.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import type { DocumentStore } from '../../src/ports/document-store';
import { ANY } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';

const test = suite('projection runner: checkpoint round trips');

const CHECKPOINT_CALLS = ['getCheckpoint', 'getCheckpoints', 'setCheckpoint', 'setCheckpoints'];

/**
 * The embedded store as the projector sees MongoDB (kind 'mongodb': no write-back cache), counting
 * every call to a checkpoint method (each one round trip on MongoDB). `gate`, while set, holds every
 * setCheckpoints call (a round trip in flight) until it resolves.
 */
function counting(inner: EmbeddedDocumentStore) {
  const calls: string[] = [];
  const held: { gate: Promise<void> | null } = { gate: null };
  const store = new Proxy(inner, {
    get(target, key) {
      if (key === 'kind') return 'mongodb';
      const v = Reflect.get(target, key);
      if (typeof v !== 'function') return v;
      if (!CHECKPOINT_CALLS.includes(String(key))) return v.bind(target);
      return async (...args: unknown[]) => {
        calls.push(String(key));
        if (key === 'setCheckpoints' && held.gate !== null) await held.gate;
        return v.apply(target, args);
      };
    },
  }) as unknown as DocumentStore;
  return { store, calls, held };
}

/** 16 projections, as the scaled-out runtime has; each keeps its own count of the events. */
const sixteen: Projection[] = Array.from({ length: 16 }, (_, i) => ({
  name: `p${i}`,
  eventTypes: ['Counted'],
  async apply(event, docs) {
    await docs
      .collection(`p${i}`)
      .updateOne({ _id: 'n' }, { $inc: { n: 1 }, $max: { last: Number(event.position) } }, { upsert: true });
  },
}));

/** Lets the event loop run until `done()` holds (a bounded number of turns, no clock). */
async function until(done: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (await done()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.unreachable(`never: ${what}`);
}

const allAt = (inner: EmbeddedDocumentStore, position: bigint) => async () => {
  const stored = await inner.getCheckpoints(sixteen.map((p) => p.name));
  return [...stored.values()].every((c) => c === position);
};

const count = () => ({ type: 'Counted', data: {} });

type Counter = { _id: string; n: number };
const counted = async (inner: EmbeddedDocumentStore) =>
  (await inner.collection<Counter>('p15').findOne({ _id: 'n' }))?.n ?? 0;

test('a followed event: one checkpoint round trip for 16 projections (was 16); a start loads them in one', async () => {
  const events = new MemoryEventStore();
  await events.append('s', [count()], ANY);
  const inner = new EmbeddedDocumentStore();
  const { store, calls } = counting(inner);
  const runner = new ProjectionRunner(events, store, sixteen);
  await runner.start();
  assert.equal(calls, ['getCheckpoints'], 'a start reads the 16 checkpoints in one round trip');
  const following = runner.follow();
  await until(allAt(inner, 1n), 'the catch-up committed');
  for (let i = 0; i < 3; i++) {
    calls.length = 0;
    const { position } = await events.append('s', [count()], ANY);
    await until(allAt(inner, position), `event ${position} committed`);
    assert.equal(calls, ['setCheckpoints'], `event ${position}: one round trip`);
    assert.is((await inner.collection<Counter>('p15').findOne({ _id: 'n' }))?.n, i + 2);
  }
  await runner.stop();
  await following;
  await events.close();
});

test('waitFor: one checkpoint round trip a poll for 16 projections (was 16 when caught up)', async () => {
  const events = new MemoryEventStore();
  const { position } = await events.append('s', [count(), count()], ANY);
  const inner = new EmbeddedDocumentStore();
  await new ProjectionRunner(events, inner, sixteen).catchUp();
  // An API process: its own runner on the same store, waiting for the projector's checkpoints.
  const { store, calls } = counting(inner);
  const api = new ProjectionRunner(events, store, sixteen);
  assert.ok(await api.waitFor(position, 0));
  assert.equal(calls, ['getCheckpoints'], 'caught up: one poll, one round trip');
  assert.is(api.position, position);
  calls.length = 0;
  assert.not.ok(await api.waitFor(position + 1n, 0));
  assert.equal(calls, ['getCheckpoints'], 'behind: one poll (the deadline passed), one round trip');
  await events.close();
});

test('follow: the events applied while a commit is in flight share the next commit; a lone one is committed at once', async () => {
  const events = new MemoryEventStore();
  const inner = new EmbeddedDocumentStore();
  const { store, calls, held } = counting(inner);
  const runner = new ProjectionRunner(events, store, sixteen);
  await runner.start();
  calls.length = 0;
  const following = runner.follow();
  await new Promise((r) => setImmediate(r));
  // A lone event: its commit starts right after its writes, with nothing after it in the log.
  let release = () => {};
  held.gate = new Promise<void>((r) => {
    release = r;
  });
  await events.append('s', [count()], ANY);
  await until(() => calls.length === 1, 'the lone event’s commit started');
  assert.equal(calls, ['setCheckpoints']);
  // While that round trip is in flight, nine more events: five in one append (the subscription
  // reads them in one page), then four one by one. All applied, none committed yet.
  await events.append('s', [count(), count(), count(), count(), count()], ANY);
  for (let i = 0; i < 4; i++) await events.append('s', [count()], ANY);
  await until(async () => (await counted(inner)) === 10, 'the nine applied');
  assert.equal(calls, ['setCheckpoints'], 'no commit queued behind the one in flight');
  assert.is(await inner.getCheckpoint('p0'), null, 'no checkpoint before its round trip ends');
  held.gate = null;
  release();
  await until(allAt(inner, 10n), 'all ten committed');
  assert.equal(calls, ['setCheckpoints', 'setCheckpoints'], 'the nine in one commit (was nine)');
  // Quiet again: the next lone event gets its own commit.
  await events.append('s', [count()], ANY);
  await until(allAt(inner, 11n), 'the eleventh committed');
  assert.equal(calls, ['setCheckpoints', 'setCheckpoints', 'setCheckpoints']);
  await runner.stop();
  await following;
  await events.close();
});

test('stop() waits for the commit in flight: the store is closed only after the last checkpoint is written', async () => {
  const events = new MemoryEventStore();
  const inner = new EmbeddedDocumentStore();
  const { store, calls, held } = counting(inner);
  const runner = new ProjectionRunner(events, store, sixteen);
  await runner.start();
  calls.length = 0;
  const following = runner.follow();
  await new Promise((r) => setImmediate(r));
  let release = () => {};
  held.gate = new Promise<void>((r) => {
    release = r;
  });
  await events.append('s', [count()], ANY);
  await until(() => calls.length === 1, 'the commit started');
  let stopped = false;
  const stopping = runner.stop().then(() => {
    stopped = true;
  });
  // Many turns of the event loop (no clock): a stop that did not wait for the commit would be done.
  for (let i = 0; i < 200; i++) await new Promise((r) => setImmediate(r));
  assert.not.ok(stopped, 'the stop waits while the commit is in flight');
  held.gate = null;
  release();
  await stopping;
  assert.ok(await allAt(inner, 1n)(), 'the last checkpoint is written when stop() resolves');
  await following;
  await events.close();
});

test('follow: a failed commit ends follow() with its error, even with the log quiet after it', async () => {
  const events = new MemoryEventStore();
  const inner = new EmbeddedDocumentStore();
  const lost = new Error('connection lost');
  const failing = Object.assign(Object.create(inner) as EmbeddedDocumentStore, {
    kind: 'mongodb',
    setCheckpoints: async () => {
      throw lost;
    },
  });
  const runner = new ProjectionRunner(events, failing, sixteen);
  const following = runner.follow();
  await new Promise((r) => setImmediate(r));
  await events.append('s', [count()], ANY);
  const outcome = await following.then(
    () => 'resolved',
    (err: unknown) => err,
  );
  assert.is(outcome, lost);
  assert.is(runner.position, null, 'the checkpoints stay where they were');
  assert.is(await counted(inner), 1);
  await runner.stop();
  await events.close();
});

test.run();
