// Tamper evidence, part of the EventStore contract: every adapter computes the per-stream hash chain
// (src/adapters/event-store/chain.ts) on append, whatever the expectation, and hands the hash back on
// every read path.
import { randomUUID } from 'node:crypto';
import * as assert from 'uvu/assert';
import { GENESIS, hashOfRecorded } from '../../src/adapters/event-store/chain';
import {
  ANY,
  type EventStore,
  NO_STREAM,
  type RecordedEvent,
  STREAM_EXISTS,
} from '../../src/ports/event-store';
import { collect, ev, HANG_MS, take } from './event-store.helpers';

type It = (name: string, body: (store: EventStore, ns: string) => Promise<void>) => void;

/** Every event's hash is the chain hash of its content over the previous event's hash. */
export function assertChained(events: RecordedEvent[], what: string): void {
  let prev = GENESIS;
  events.forEach((e, i) => {
    assert.is(e.revision, i, `${what}: revisions from 0`);
    assert.type(e.hash, 'string', `${what}: revision ${e.revision} carries a hash`);
    assert.match(e.hash!, /^[0-9a-f]{64}$/);
    assert.is(e.hash, hashOfRecorded(prev, e), `${what}: revision ${e.revision} chains to the one before`);
    prev = e.hash!;
  });
}

export function chainContract(it: It): void {
  it('chain: every append, whatever its expectation, extends the stream hash chain', async (store, ns) => {
    const s = `${ns}chained`;
    await store.append(s, [ev('A', { n: 1 }, { restaurant_id: 'r1', actor: 'key_1' }), ev('B')], NO_STREAM);
    await store.append(s, [ev('C', { text: 'é\n"quoted"', list: [1, 2.5, null] })], 1);
    await store.append(s, [ev('D')], STREAM_EXISTS);
    await store.append(s, [ev('E'), ev('F', { nested: { deep: { x: true } } })], ANY);
    await store.append(`${ns}fresh-any`, [ev('G')], ANY);
    const events = await store.readStream(s);
    assertChained(events, s);
    assertChained(await store.readStream(`${ns}fresh-any`), 'a new stream through any');
    assert.is.not(
      events[0]!.hash,
      (await store.readStream(`${ns}fresh-any`))[0]!.hash,
      'the stream name is part of the hash',
    );
    const backwards = await store.readStream(s, { direction: 'backwards' });
    assert.equal(
      backwards.map((e) => e.hash),
      events.map((e) => e.hash).reverse(),
      'backwards reads carry the same hashes',
    );
    const logged = (await collect(store.readAll())).filter((e) => e.stream === s);
    assert.equal(
      logged.map((e) => e.hash),
      events.map((e) => e.hash),
      'readAll carries the same hashes',
    );
  });

  it('chain: subscriptions deliver the hash', async (store, ns) => {
    const s = `${ns}live`;
    const sub = store.subscribe({ after: await store.headPosition(), streamPrefixes: [ns] });
    try {
      const pending = take(sub[Symbol.asyncIterator](), 2, HANG_MS, 'two live events');
      await store.append(s, [ev('A'), ev('B')], NO_STREAM);
      const live = await pending;
      assert.equal(
        live.map((e) => e.hash),
        (await store.readStream(s)).map((e) => e.hash),
      );
      assertChained(live, 'live');
    } finally {
      await sub.close();
    }
  });

  it('chain: concurrent any appends to one stream never fork the chain', async (store, ns) => {
    const s = `${ns}busy`;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => store.append(s, [ev('E', { i }), ev('F', { i })], ANY)),
    );
    const events = await store.readStream(s);
    assert.is(events.length, 24);
    assertChained(events, 'after concurrent any appends');
  });

  it('chain: a retried append changes no hash; the chain continues after it', async (store, ns) => {
    const s = `${ns}retry`;
    const [a, b] = [randomUUID(), randomUUID()];
    await store.append(s, [ev('A', {}, undefined, a)], NO_STREAM);
    const before = await store.readStream(s);
    await store.append(s, [ev('A', {}, undefined, a)], NO_STREAM);
    await store.append(s, [ev('B', {}, undefined, b)], ANY);
    await store.append(s, [ev('B', {}, undefined, b)], ANY);
    await store.append(s, [ev('C')], 1);
    const events = await store.readStream(s);
    assert.is(events[0]!.hash, before[0]!.hash);
    assert.equal(
      events.map((e) => e.type),
      ['A', 'B', 'C'],
    );
    assertChained(events, 'after retries');
  });

  it('chain: equal content at another revision or with other metadata hashes differently', async (store, ns) => {
    const id1 = randomUUID();
    const id2 = randomUUID();
    await store.append(`${ns}x`, [ev('Same', { v: 1 }, { actor: 'a' }, id1)], NO_STREAM);
    await store.append(`${ns}y`, [ev('Same', { v: 1 }, { actor: 'b' }, id2)], NO_STREAM);
    const [x] = await store.readStream(`${ns}x`);
    const [y] = await store.readStream(`${ns}y`);
    assert.is.not(x!.hash, y!.hash);
    const moved = { ...x!, revision: 1 };
    assert.is.not(hashOfRecorded(GENESIS, moved), x!.hash, 'the revision is covered');
    const edited = { ...x!, data: { v: 2 } };
    assert.is.not(hashOfRecorded(GENESIS, edited), x!.hash, 'the data is covered');
    const reattributed = { ...x!, metadata: { actor: 'b' } };
    assert.is.not(hashOfRecorded(GENESIS, reattributed), x!.hash, 'the metadata (actor) is covered');
  });
}
