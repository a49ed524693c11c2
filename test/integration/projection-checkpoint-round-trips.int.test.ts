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
    assert.is(((await inner.collection('p15').findOne({ _id: 'n' })) as { n: number }).n, i + 2);
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

test.run();
