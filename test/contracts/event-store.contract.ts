// The behaviour every EventStore adapter must show. Each test-file registers it on its own suite:
//   eventStoreContract(test, { open: () => … }, options); test.run();
// Tests are written to pass on a shared, non-empty server too: every test writes under its own
// stream prefix and reads the log from the head it saw before writing.
import { randomUUID } from 'node:crypto';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ANY,
  type EventStore,
  InvalidEventStoreInputError,
  NO_STREAM,
  type RecordedEvent,
  STREAM_EXISTS,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store';
import { badAppends, badReads } from './event-store.bad-input';
import { chainContract } from './event-store.chain';
import {
  collect,
  ev,
  expectError,
  expectQuiet,
  HANG_MS,
  keys,
  namespace,
  positionsStrictlyIncrease,
  take,
} from './event-store.helpers';

export interface EventStoreHarness {
  /** A store for one test; the test closes it. */
  open(): Promise<EventStore> | EventStore;
}

export interface ContractOptions {
  /** Register every test as skipped (the reason is printed by the caller). */
  skip?: string;
  /** Each open() gives an empty log: headPosition is null and readAll() from the start sees only this test. */
  fresh?: boolean;
  /** Event ids are unique in the whole log and a partial retry is refused (the embedded stores). */
  strictIds?: boolean;
  /** Longest wait for one live event (a hang bound). Default HANG_MS. */
  liveTimeoutMs?: number;
}

type Body = (store: EventStore, ns: string) => Promise<void>;

export function eventStoreContract(
  test: Test,
  harness: EventStoreHarness,
  options: ContractOptions = {},
): void {
  const live = options.liveTimeoutMs ?? HANG_MS;
  const it = (name: string, body: Body, when = true) => {
    if (!when) return;
    if (options.skip) return test.skip(name, () => undefined);
    test(name, async () => {
      const store = await harness.open();
      try {
        await body(store, namespace());
      } finally {
        await store.close();
      }
    });
  };

  chainContract(it);

  /** The events this test wrote, read back from the log. */
  const logOf = async (store: EventStore, ns: string, after: bigint | null) =>
    (await collect(store.readAll({ after }))).filter((e) => e.stream.startsWith(ns));

  it('appends a batch and reads it back forwards', async (store, ns) => {
    const s = `${ns}order-1`;
    const meta = {
      restaurant_id: 'rest_1',
      actor: 'key_1',
      request_id: 'req_1',
      correlation_id: 'c1',
      causation_id: 'k1',
    };
    const upperId = randomUUID().toUpperCase();
    const result = await store.append(
      s,
      [ev('Placed', { n: 1 }, meta, upperId), ev('Paid', { n: 2 })],
      NO_STREAM,
    );
    assert.is(result.nextRevision, 1);
    const events = await store.readStream(s);
    assert.equal(
      events.map((e) => [e.stream, e.revision, e.type, e.data]),
      [
        [s, 0, 'Placed', { n: 1 }],
        [s, 1, 'Paid', { n: 2 }],
      ],
    );
    assert.equal(events[0]!.metadata, meta);
    assert.equal(events[1]!.metadata, {});
    assert.is(events[0]!.id, upperId.toLowerCase(), 'ids are stored in lower case');
    assert.match(events[1]!.id, /^[0-9a-f-]{36}$/);
    assert.is(typeof events[0]!.position, 'bigint');
    assert.ok(events[1]!.position > events[0]!.position);
    assert.is(result.position, events[1]!.position, 'the append answers the position of its last event');
    for (const e of events)
      assert.ok(!Number.isNaN(Date.parse(e.created)), `created ${e.created} is an instant`);
  });

  it('round-trips JSON data exactly', async (store, ns) => {
    const data = {
      text: 'Crème brûlée 🍮 "quoted" \\ \n',
      int: -42,
      float: 3.25,
      big: Number.MAX_SAFE_INTEGER,
      yes: true,
      nothing: null,
      list: [1, 'two', { three: [3] }, null],
      nested: { deeper: { deepest: {} } },
      empty: [],
    };
    await store.append(`${ns}a`, [ev('Typed', { ...data, dropped: undefined })], NO_STREAM);
    const [event] = await store.readStream(`${ns}a`);
    assert.equal(event!.data, data, 'undefined properties are dropped, everything else is kept');
  });

  it('reads backwards, from a revision, with a limit', async (store, ns) => {
    const s = `${ns}s`;
    await store.append(
      s,
      [0, 1, 2, 3, 4].map((n) => ev('E', { n })),
      NO_STREAM,
    );
    const revs = async (o?: Parameters<EventStore['readStream']>[1], stream = s) =>
      (await store.readStream(stream, o)).map((e) => e.revision);
    assert.equal(await revs(), [0, 1, 2, 3, 4]);
    assert.equal(await revs({ fromRevision: 2 }), [2, 3, 4]);
    assert.equal(await revs({ fromRevision: 1, limit: 2 }), [1, 2]);
    assert.equal(await revs({ limit: 0 }), []);
    assert.equal(await revs({ fromRevision: 10 }), []);
    assert.equal(await revs({ direction: 'backwards' }), [4, 3, 2, 1, 0]);
    assert.equal(await revs({ direction: 'backwards', fromRevision: 3, limit: 2 }), [3, 2]);
    assert.equal(await revs({ direction: 'backwards', fromRevision: 10, limit: 1 }), [4]);
    assert.equal(await revs({ direction: 'backwards', limit: 1 }), [4]);
    assert.equal(await revs(undefined, `${ns}unknown`), [], 'an unknown stream reads as empty');
    assert.equal(await revs({ direction: 'backwards' }, `${ns}unknown`), []);
  });

  it('expected revision: a number must equal the last revision', async (store, ns) => {
    const s = `${ns}s`;
    await store.append(s, [ev('A'), ev('B')], NO_STREAM);
    const err = await expectError(() => store.append(s, [ev('C')], 0), WrongExpectedRevisionError, 'stale');
    assert.equal([err.stream, err.expected, err.actual], [s, 0, 1]);
    const ahead = await expectError(() => store.append(s, [ev('C')], 5), WrongExpectedRevisionError, 'ahead');
    assert.is(ahead.actual, 1);
    assert.is((await store.append(s, [ev('C')], 1)).nextRevision, 2);
    const missing = await expectError(
      () => store.append(`${ns}missing`, [ev('A')], 0),
      WrongExpectedRevisionError,
      'number on a missing stream',
    );
    assert.is(missing.actual, NO_STREAM);
    assert.is(
      (await store.append(s, [ev('D')], 2n as unknown as number)).nextRevision,
      3,
      'a bigint is accepted',
    );
    assert.equal((await store.readStream(s)).length, 4);
  });

  it('expected revision: no_stream, stream_exists and any', async (store, ns) => {
    const s = `${ns}s`;
    const absent = await expectError(
      () => store.append(s, [ev('A')], STREAM_EXISTS),
      WrongExpectedRevisionError,
      'stream_exists on a missing stream',
    );
    assert.equal([absent.expected, absent.actual], [STREAM_EXISTS, NO_STREAM]);
    assert.is((await store.append(s, [ev('A')], NO_STREAM)).nextRevision, 0);
    const exists = await expectError(
      () => store.append(s, [ev('B')], NO_STREAM),
      WrongExpectedRevisionError,
      'no_stream on an existing stream',
    );
    assert.equal([exists.expected, exists.actual], [NO_STREAM, 0]);
    assert.is((await store.append(s, [ev('B')], STREAM_EXISTS)).nextRevision, 1);
    assert.is((await store.append(s, [ev('C')], ANY)).nextRevision, 2);
    assert.is((await store.append(`${ns}other`, [ev('A')], ANY)).nextRevision, 0, 'any on a new stream');
  });

  it('concurrent appends with the same expected revision: exactly one wins', async (store, ns) => {
    const s = `${ns}capacity`;
    await store.append(s, [ev('Opened')], NO_STREAM);
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => store.append(s, [ev('Booked', { i }), ev('Held', { i })], 0)),
    );
    const won = attempts.filter((a) => a.status === 'fulfilled');
    const lost = attempts.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    assert.is(won.length, 1);
    for (const l of lost) assert.instance(l.reason, WrongExpectedRevisionError);
    assert.equal(
      (await store.readStream(s)).map((e) => e.revision),
      [0, 1, 2],
    );

    const fresh = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => store.append(`${ns}claim`, [ev('Claimed', { i })], NO_STREAM)),
    );
    assert.is(fresh.filter((a) => a.status === 'fulfilled').length, 1, 'one claim of a new stream');
    assert.is((await store.readStream(`${ns}claim`)).length, 1);
  });

  it('a retried append (same ids, same expectation) is a no-op answering the original result', async (store, ns) => {
    const s = `${ns}s`;
    const [a, b, c, d, e] = Array.from({ length: 5 }, () => randomUUID());
    const first = await store.append(s, [ev('A', {}, undefined, a), ev('B', {}, undefined, b)], NO_STREAM);
    assert.equal(
      await store.append(s, [ev('A', {}, undefined, a), ev('B', {}, undefined, b)], NO_STREAM),
      first,
    );
    const second = await store.append(s, [ev('C', {}, undefined, c)], 1);
    assert.equal(await store.append(s, [ev('C', {}, undefined, c)], 1), second);
    await store.append(s, [ev('D', {}, undefined, d)], 2);
    assert.equal(
      await store.append(s, [ev('C', {}, undefined, c)], 1),
      second,
      'a retry still succeeds once the stream has moved on',
    );
    const anyResult = await store.append(s, [ev('E', {}, undefined, e)], ANY);
    assert.equal(await store.append(s, [ev('E', {}, undefined, e)], ANY), anyResult);
    assert.equal(
      (await store.readStream(s)).map((x) => x.type),
      ['A', 'B', 'C', 'D', 'E'],
      'nothing was written twice',
    );
  });

  // An erasure resumed after a crash appends its deterministic CallerErased again with `any`
  // (src/privacy/sealing-event-store.ts), possibly after others appended to the call's stream: the
  // retry must answer the append stored then, not write the event a second time. EventStoreDB only
  // recognises a retry written right where its expectation points, so the adapter looks for it itself.
  it('a retried any or stream_exists append answers its original result after others appended', async (store, ns) => {
    const s = `${ns}s`;
    const [a, b, c, d] = Array.from({ length: 4 }, () => randomUUID());
    const first = await store.append(s, [ev('A', {}, undefined, a)], ANY);
    const exists = await store.append(
      s,
      [ev('B', {}, undefined, b), ev('C', {}, undefined, c)],
      STREAM_EXISTS,
    );
    await store.append(s, [ev('D', {}, undefined, d)], ANY);
    await store.append(s, [ev('E'), ev('F')], 3);
    assert.equal(await store.append(s, [ev('A', {}, undefined, a)], ANY), first, 'any');
    assert.equal(
      await store.append(s, [ev('B', {}, undefined, b), ev('C', {}, undefined, c)], STREAM_EXISTS),
      exists,
      'stream_exists',
    );
    assert.equal(await store.append(s, [ev('D', {}, undefined, d)], ANY), {
      nextRevision: 3,
      position: (await store.readStream(s, { fromRevision: 3, limit: 1 }))[0]!.position,
    });
    assert.equal(
      (await store.readStream(s)).map((x) => x.type),
      ['A', 'B', 'C', 'D', 'E', 'F'],
      'nothing was written twice',
    );
  });

  it(
    'an id used by another stream, or a partial retry, is refused',
    async (store, ns) => {
      const [a, b, c] = Array.from({ length: 3 }, () => randomUUID());
      await store.append(`${ns}one`, [ev('A', {}, undefined, a), ev('B', {}, undefined, b)], NO_STREAM);
      await expectError(
        () => store.append(`${ns}two`, [ev('A', {}, undefined, a)], NO_STREAM),
        InvalidEventStoreInputError,
        'id of another stream',
      );
      await expectError(
        () => store.append(`${ns}one`, [ev('A', {}, undefined, a), ev('C', {}, undefined, c)], NO_STREAM),
        WrongExpectedRevisionError,
        'partial retry',
      );
      assert.equal((await store.readStream(`${ns}two`)).length, 0);
      assert.equal((await store.readStream(`${ns}one`)).length, 2);
    },
    options.strictIds,
  );

  it('readAll follows commit order; after is exclusive; limit and batchSize page correctly', async (store, ns) => {
    const head = await store.headPosition();
    const plan: [string, number][] = [
      ['s1', 1],
      ['s2', 2],
      ['s1', 1],
      ['s3', 3],
      ['s2', 1],
    ];
    const expected: string[] = [];
    const ends: bigint[] = [];
    const revisions = new Map<string, number>();
    for (const [name, count] of plan) {
      const start = revisions.get(name) ?? 0;
      const batch = Array.from({ length: count }, (_, i) => ev('E', { name, i }));
      const r = await store.append(`${ns}${name}`, batch, start === 0 ? NO_STREAM : start - 1);
      for (let i = 0; i < count; i++) expected.push(`${ns}${name}@${start + i}`);
      revisions.set(name, start + count);
      ends.push(r.position);
    }
    const all = await logOf(store, ns, head);
    assert.equal(keys(all), expected, 'readAll is in commit order');
    assert.ok(positionsStrictlyIncrease(all));
    let cursor = 0;
    plan.forEach(([, count], i) => {
      cursor += count;
      assert.is(all[cursor - 1]!.position, ends[i], `append ${i} answered the position of its last event`);
    });
    const afterSecond = await logOf(store, ns, all[1]!.position);
    assert.equal(keys(afterSecond), expected.slice(2), 'after is exclusive');
    const limited = await collect(store.readAll({ after: head, limit: 3 }));
    assert.equal(keys(limited), expected.slice(0, 3));
    const paged = (await collect(store.readAll({ after: head, batchSize: 2 }))).filter((e) =>
      e.stream.startsWith(ns),
    );
    assert.equal(keys(paged), expected, 'small pages give the same log');
    assert.equal(await logOf(store, ns, all[all.length - 1]!.position), []);
    if (options.fresh) assert.equal(keys(await collect(store.readAll())), expected, 'from the start');
  });

  it('headPosition is the position of the last event', async (store, ns) => {
    if (options.fresh) assert.is(await store.headPosition(), null, 'an empty log has no head');
    const r1 = await store.append(`${ns}a`, [ev('A'), ev('B')], NO_STREAM);
    assert.is(await store.headPosition(), r1.position);
    const r2 = await store.append(`${ns}b`, [ev('C')], NO_STREAM);
    assert.is(await store.headPosition(), r2.position);
    assert.ok(r2.position > r1.position);
  });

  it('a subscription catches up, then receives live events, with no gap and no duplicate', async (store, ns) => {
    const head = await store.headPosition();
    await store.append(`${ns}a`, [ev('A1'), ev('A2')], NO_STREAM);
    await store.append(`${ns}b`, [ev('B1')], NO_STREAM);
    const sub = store.subscribe({ after: head, streamPrefixes: [ns] });
    const iter = sub[Symbol.asyncIterator]();
    try {
      const caughtUp = await take(iter, 3, live, 'catch-up events');
      const pending = take(iter, 4, live, 'live events');
      await store.append(`${ns}a`, [ev('A3'), ev('A4')], 1);
      await store.append(`${ns}c`, [ev('C1')], NO_STREAM);
      await store.append(`${ns}b`, [ev('B2')], 0);
      const liveEvents = await pending;
      const seen = [...caughtUp, ...liveEvents];
      assert.equal(keys(seen), keys(await logOf(store, ns, head)));
      assert.ok(positionsStrictlyIncrease(seen));
      await expectQuiet(iter, 150);
    } finally {
      await sub.close();
    }
  });

  it('a subscription resumed from its last position after close has no gap and no duplicate', async (store, ns) => {
    const head = await store.headPosition();
    await store.append(
      `${ns}a`,
      [1, 2, 3, 4].map((n) => ev('E', { n })),
      NO_STREAM,
    );
    const first = store.subscribe({ after: head, streamPrefixes: [ns] });
    const seen = await take(first[Symbol.asyncIterator](), 2, live);
    await first.close();
    await store.append(`${ns}a`, [ev('E', { n: 5 }), ev('E', { n: 6 })], 3);
    const resumed = store.subscribe({ after: seen[1]!.position, streamPrefixes: [ns] });
    const iter = resumed[Symbol.asyncIterator]();
    try {
      seen.push(...(await take(iter, 4, live)));
      assert.equal(
        seen.map((e) => e.data.n),
        [1, 2, 3, 4, 5, 6],
      );
      await expectQuiet(iter, 150);
    } finally {
      await resumed.close();
    }
  });

  it('appends racing a catching-up subscriber are all delivered, in order', async (store, ns) => {
    const head = await store.headPosition();
    for (let i = 0; i < 20; i++) await store.append(`${ns}s${i % 3}`, [ev('E', { i })], ANY);
    const sub = store.subscribe({ after: head, streamPrefixes: [ns] });
    const iter = sub[Symbol.asyncIterator]();
    try {
      const consuming = take(iter, 60, live * 2, 'raced events');
      for (let i = 20; i < 60; i += 2) {
        await store.append(`${ns}s${i % 3}`, [ev('E', { i }), ev('E', { i: i + 1 })], ANY);
        if (i % 8 === 0) await new Promise((r) => setTimeout(r, 1));
      }
      const seen = await consuming;
      assert.equal(keys(seen), keys(await logOf(store, ns, head)));
      assert.equal(new Set(seen.map((e) => e.id)).size, 60);
    } finally {
      await sub.close();
    }
  });

  it('subscriptions filter by stream prefix and by event-type prefix', async (store, ns) => {
    const head = await store.headPosition();
    const t = `T${randomUUID().slice(0, 8)}.`;
    await store.append(`${ns}a-1`, [ev(`${t}Alpha`), ev(`${t}Beta`)], NO_STREAM);
    await store.append(`${ns}b-1`, [ev(`${t}Beta`), ev(`${t}Alpha`)], NO_STREAM);
    await store.append(`${ns}a-2`, [ev(`${t}Beta`)], NO_STREAM);
    const check = async (
      filter: { streamPrefixes?: string[]; eventTypePrefixes?: string[] },
      want: string[],
    ) => {
      const sub = store.subscribe({ after: head, ...filter });
      const iter = sub[Symbol.asyncIterator]();
      try {
        const got = await take(iter, want.length, live, JSON.stringify(filter));
        assert.equal(
          got.map((e) => `${e.stream.slice(ns.length)}:${e.type.slice(t.length)}`),
          want,
          JSON.stringify(filter),
        );
        await expectQuiet(iter, 150);
      } finally {
        await sub.close();
      }
    };
    await check({ streamPrefixes: [`${ns}a-`] }, ['a-1:Alpha', 'a-1:Beta', 'a-2:Beta']);
    await check({ eventTypePrefixes: [`${t}Be`] }, ['a-1:Beta', 'b-1:Beta', 'a-2:Beta']);
    await check({ streamPrefixes: [`${ns}a-`], eventTypePrefixes: [`${t}Alpha`] }, ['a-1:Alpha']);
    await check({ streamPrefixes: [`${ns}b-`, `${ns}a-2`] }, ['b-1:Beta', 'b-1:Alpha', 'a-2:Beta']);
  });

  it('closing a subscription or the store ends the iteration', async (store, ns) => {
    const sub = store.subscribe({ after: await store.headPosition(), streamPrefixes: [ns] });
    const iter = sub[Symbol.asyncIterator]();
    const pending = iter.next();
    await sub.close();
    assert.ok(await settlesDone(pending), 'closing the subscription settles a waiting next() as done');
    const other = store.subscribe({ after: await store.headPosition(), streamPrefixes: [ns] });
    const waiting = other[Symbol.asyncIterator]().next();
    await store.close();
    assert.ok(await settlesDone(waiting), 'closing the store ends its subscriptions');
  });

  it('bad input throws InvalidEventStoreInputError and writes nothing', async (store, ns) => {
    const s = `${ns}s`;
    await store.append(s, [ev('Seed')], NO_STREAM);
    const head = await store.headPosition();
    for (const [what, call] of badAppends(s)) {
      await expectError(() => call(store), InvalidEventStoreInputError, what);
    }
    for (const [what, call] of badReads(s)) {
      await expectError(() => call(store), InvalidEventStoreInputError, what);
    }
    assert.equal(
      (await store.readStream(s)).map((e) => e.type),
      ['Seed'],
      'no partial append',
    );
    assert.is(await store.headPosition(), head, 'nothing else was written');
  });
}

/** Whether a next() settles as done (within HANG_MS, a hang bound: not two seconds of a loaded machine). */
async function settlesDone(next: Promise<IteratorResult<RecordedEvent>>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    next,
    new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), HANG_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  return result !== 'timeout' && result.done === true;
}
