// The parts of the EventStoreDB adapter that need no server: the resubscription loop (driven by a
// scripted fake client) and the mapping of revisions, errors and metadata.
import type { AllStreamResolvedEvent, EventStoreDBClient } from '@eventstore/db-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EsdbEventStore } from '../../src/adapters/event-store/eventstoredb';
import {
  toEsdbExpected,
  toEventData,
  toRecordedEvent,
  toWrongExpectedRevision,
} from '../../src/adapters/event-store/eventstoredb-mapping';
import { EsdbSubscription } from '../../src/adapters/event-store/eventstoredb-subscription';
import { validateSubscribe } from '../../src/adapters/event-store/validate';
import { FixedClock } from '../../src/core/clock';
import {
  ANY,
  EventStoreError,
  NO_STREAM,
  type RecordedEvent,
  STREAM_EXISTS,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store';
import { HANG_MS, take } from '../contracts/event-store.helpers';

function resolved(position: number, stream: string, type: string): AllStreamResolvedEvent {
  return {
    event: {
      streamId: stream,
      id: `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`,
      revision: 0n,
      type,
      data: { position },
      metadata: { restaurant_id: 'r1', $correlationId: 'c' },
      isJson: true,
      created: new Date('2026-01-01T00:00:00Z'),
      position: { commit: BigInt(position), prepare: BigInt(position) },
    },
  } as AllStreamResolvedEvent;
}

const failure = (type: string) => Object.assign(new Error(type), { type });

type Script = { events: AllStreamResolvedEvent[]; end: 'fail' | 'deny' | 'wait' };

/** Each subscribeToAll() plays the next script; records where it was asked to start. */
function fakeClient(scripts: Script[]) {
  const starts: string[] = [];
  const client = {
    subscribeToAll(options: { fromPosition: unknown }) {
      const from = options.fromPosition;
      starts.push(
        typeof from === 'object' && from ? String((from as { commit: bigint }).commit) : String(from),
      );
      const script = scripts.shift() ?? { events: [], end: 'wait' };
      let stop: () => void = () => undefined;
      const stopped = new Promise<void>((r) => {
        stop = r;
      });
      return {
        async *[Symbol.asyncIterator]() {
          for (const e of script.events) yield e;
          if (script.end === 'fail') throw failure('unavailable');
          if (script.end === 'deny') throw failure('access-denied');
          await stopped;
        },
        async unsubscribe() {
          stop();
        },
      };
    },
  };
  return { client: client as unknown as EventStoreDBClient, starts };
}

const policy = (errors: unknown[]) => ({
  initialDelayMs: 5,
  maxDelayMs: 20,
  onError: (e: unknown) => errors.push(e),
});

test('a dropped subscription resumes after the last position, skipping the replayed boundary and system events', async () => {
  const { client, starts } = fakeClient([
    {
      events: [resolved(10, 'a', 'A'), resolved(20, '$stats', '$statsCollected'), resolved(30, 'b', 'B')],
      end: 'fail',
    },
    { events: [resolved(30, 'b', 'B'), resolved(35, 'c', '$>'), resolved(40, 'a', 'A2')], end: 'wait' },
  ]);
  const errors: unknown[] = [];
  const sub = new EsdbSubscription(client, validateSubscribe({}), policy(errors), () => undefined);
  const iter = sub[Symbol.asyncIterator]();
  const got: RecordedEvent[] = await take(iter, 3, HANG_MS);
  assert.equal(
    got.map((e) => e.position),
    [10n, 30n, 40n],
  );
  assert.equal(starts, ['start', '30']);
  assert.is(errors.length, 1);
  const pending = iter.next();
  await sub.close();
  assert.equal(await pending, { done: true, value: undefined });
});

test('a subscription resumes after the position it was given and applies the whole filter itself', async () => {
  const { client, starts } = fakeClient([
    {
      events: [
        resolved(50, 'orders-1', 'Placed'),
        resolved(60, 'orders-1', 'Paid'),
        resolved(70, 'x', 'Paid'),
      ],
      end: 'wait',
    },
  ]);
  const sub = new EsdbSubscription(
    client,
    validateSubscribe({ after: 42n, streamPrefixes: ['orders-'], eventTypePrefixes: ['Pa'] }),
    policy([]),
    () => undefined,
  );
  const got = await take(sub[Symbol.asyncIterator](), 1, HANG_MS);
  assert.equal(
    got.map((e) => e.position),
    [60n],
  );
  assert.equal(starts, ['42']);
  await sub.close();
});

test('a permanent failure (access denied) ends the subscription with the error', async () => {
  const { client } = fakeClient([{ events: [], end: 'deny' }]);
  const sub = new EsdbSubscription(client, validateSubscribe({}), policy([]), () => undefined);
  try {
    await sub[Symbol.asyncIterator]().next();
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.is((err as { type?: string }).type, 'access-denied');
  }
});

test('an event the port cannot read fails the subscription instead of being skipped', async () => {
  const binary = resolved(80, 'a', 'Blob');
  (binary.event as { isJson: boolean }).isJson = false;
  const { client, starts } = fakeClient([{ events: [resolved(70, 'a', 'A'), binary], end: 'wait' }]);
  const sub = new EsdbSubscription(client, validateSubscribe({}), policy([]), () => undefined);
  const iter = sub[Symbol.asyncIterator]();
  assert.is((await iter.next()).value?.position, 70n);
  try {
    await iter.next();
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.match((err as Error).message, /not JSON/);
  }
  assert.equal(starts, ['start'], 'no resubscription past the unreadable event');
});

test('mapping: expected revisions, conflicts and metadata', () => {
  assert.is(toEsdbExpected(3), 3n);
  assert.is(toEsdbExpected(NO_STREAM), 'no_stream');
  assert.is(toWrongExpectedRevision({ actualVersion: 'no_stream' }, 's', 0).actual, NO_STREAM);
  assert.is(toWrongExpectedRevision({ actualVersion: 4n }, 's', 2).actual, 4);
  const data = toEventData({
    id: '00000000-0000-4000-8000-000000000001',
    type: 'A',
    data: { x: 1 },
    metadata: { correlation_id: 'c1', causation_id: 'k1', actor: 'u' },
    dataJson: '{"x":1}',
    metadataJson: '',
  });
  assert.equal(data.metadata, {
    correlation_id: 'c1',
    causation_id: 'k1',
    actor: 'u',
    $correlationId: 'c1',
    $causationId: 'k1',
  });
  const event = toRecordedEvent(resolved(9, 's', 'A').event!);
  assert.equal(event.metadata, { restaurant_id: 'r1' }, '$-keys written for the server are not returned');
  assert.is(event.created, '2026-01-01T00:00:00.000Z');
  assert.is(event.hash, undefined, 'an event written before the chain has no hash');
});

test('mapping: the chain hash travels in $hash and comes back as RecordedEvent.hash, not in metadata', () => {
  const hash = 'ab'.repeat(32);
  const data = toEventData(
    {
      id: '00000000-0000-4000-8000-000000000002',
      type: 'A',
      data: { x: 1 },
      metadata: { actor: 'u' },
      dataJson: '{"x":1}',
      metadataJson: '{"actor":"u"}',
    },
    hash,
  );
  assert.equal(data.metadata, { actor: 'u', $hash: hash });
  const raw = resolved(10, 's', 'A').event!;
  const event = toRecordedEvent({ ...raw, metadata: { actor: 'u', $hash: hash } } as typeof raw);
  assert.equal(event.metadata, { actor: 'u' });
  assert.is(event.hash, hash);
});

test("mapping: the service's time travels in $created and comes back as RecordedEvent.created, not in metadata", () => {
  const data = toEventData(
    {
      id: '00000000-0000-4000-8000-000000000003',
      type: 'A',
      data: { x: 1 },
      metadata: { actor: 'u' },
      dataJson: '{"x":1}',
      metadataJson: '{"actor":"u"}',
    },
    undefined,
    '2026-06-02T10:00:00.000Z',
  );
  assert.equal(data.metadata, { actor: 'u', $created: '2026-06-02T10:00:00.000Z' });
  const raw = resolved(11, 's', 'A').event!;
  const event = toRecordedEvent({ ...raw, metadata: data.metadata } as typeof raw);
  assert.equal(event.metadata, { actor: 'u' });
  assert.is(event.created, '2026-06-02T10:00:00.000Z', "the service's clock, not the server's");
  // Written before it (or unreadable): the server's time.
  assert.is(toRecordedEvent(raw).created, '2026-01-01T00:00:00.000Z');
  const odd = toRecordedEvent({ ...raw, metadata: { $created: 'not a time' } } as typeof raw);
  assert.is(odd.created, '2026-01-01T00:00:00.000Z');
});

test("append: an event's created is the service's clock (TEST_CLOCK), as on SQLite", async () => {
  const clock = new FixedClock('2026-06-02T10:00:00Z');
  const { store } = fakeServer(Number.POSITIVE_INFINITY, { clock });
  await store.append('calls-9', [one(90, 'Reported'), one(91, 'Noted')], NO_STREAM);
  const read = await store.readStream('calls-9');
  assert.equal(
    read.map((e) => e.created),
    ['2026-06-02T10:00:00.000Z', '2026-06-02T10:00:00.000Z'],
  );
  assert.equal(read[0]?.metadata, {});
  await store.close();
});

test("append: an event's created never goes before the one it follows (a clock behind, another process's)", async () => {
  const clock = new FixedClock('2026-06-02T10:00:00Z');
  const { store } = fakeServer(Number.POSITIVE_INFINITY, { clock });
  await store.append('calls-8', [one(80, 'Reported')], NO_STREAM);
  clock.set('2026-06-02T09:00:00Z');
  await store.append('calls-8', [one(81, 'Noted')], 0); // the tip this process remembers
  await store.append('calls-8', [one(82, 'Noted')], ANY); // the tip read from the stream
  clock.set('2026-06-02T11:00:00Z');
  await store.append('calls-8', [one(83, 'Noted')], 2);
  assert.equal(
    (await store.readStream('calls-8')).map((e) => e.created),
    [
      '2026-06-02T10:00:00.000Z',
      '2026-06-02T10:00:00.000Z',
      '2026-06-02T10:00:00.000Z',
      '2026-06-02T11:00:00.000Z',
    ],
  );
  await store.close();
});

/**
 * A one-node EventStoreDB in memory, as far as append and readStream go: an append with a revision
 * is idempotent only when its ids are already written right after that revision (the server's rule),
 * any / stream_exists by the ids of the stream's last append.
 */
function fakeServer(
  maxAppendSize = Number.POSITIVE_INFINITY,
  options: object = {},
  /** Called once a stream read has answered: another writer may append there and then. */
  afterRead: (stream: string) => Promise<void> = async () => undefined,
) {
  const streams = new Map<
    string,
    { id: string; type: string; data: unknown; metadata: unknown; position: bigint }[]
  >();
  let next = 100n;
  const typed = (type: string, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error(type), { type, ...extra });
  const client = {
    async appendToStream(
      stream: string,
      events: { id: string; type: string; data: unknown; metadata: unknown }[],
      options: { expectedRevision: bigint | string },
    ) {
      const size = events.reduce((n, e) => n + JSON.stringify([e.data, e.metadata]).length, 0);
      if (size > maxAppendSize) throw typed('maximum-append-size-exceeded', { maxAppendSize: maxAppendSize });
      const log = streams.get(stream) ?? [];
      const current = log.length - 1;
      const expected = options.expectedRevision;
      const at = typeof expected === 'bigint' ? Number(expected) + 1 : expected === 'no_stream' ? 0 : -1;
      if (at >= 0 && at <= current && events.every((e, i) => log[at + i]?.id === e.id))
        return { nextExpectedRevision: BigInt(at + events.length - 1), position: undefined };
      const holds =
        expected === 'any' ||
        (expected === 'no_stream' && current === -1) ||
        (expected === 'stream_exists' && current >= 0) ||
        (typeof expected === 'bigint' && Number(expected) === current);
      if (!holds)
        throw typed('wrong-expected-version', { actualVersion: current < 0 ? 'no_stream' : BigInt(current) });
      for (const e of events) log.push({ ...e, position: next++ });
      streams.set(stream, log);
      return {
        nextExpectedRevision: BigInt(log.length - 1),
        position: { commit: next - 1n, prepare: next - 1n },
      };
    },
    readStream(
      stream: string,
      options: { direction: string; fromRevision: bigint | string; maxCount?: number },
    ) {
      const log = streams.get(stream);
      return (async function* () {
        if (!log) {
          await afterRead(stream);
          throw typed('stream-not-found');
        }
        const backwards = options.direction === 'backwards';
        const from =
          typeof options.fromRevision === 'bigint'
            ? Number(options.fromRevision)
            : backwards
              ? log.length - 1
              : 0;
        const max = options.maxCount ?? Number.POSITIVE_INFINITY;
        for (let r = from, n = 0; r >= 0 && r < log.length && n < max; r += backwards ? -1 : 1, n++) {
          const e = log[r]!;
          yield {
            event: {
              streamId: stream,
              id: e.id,
              revision: BigInt(r),
              type: e.type,
              data: e.data,
              metadata: e.metadata,
              isJson: true,
              created: new Date('2026-01-01T00:00:00Z'),
              position: { commit: e.position, prepare: e.position },
            },
          };
        }
        await afterRead(stream);
      })();
    },
    async dispose() {},
  };
  const store = new (EsdbEventStore as unknown as new (c: unknown, o: object) => EsdbEventStore)(
    client,
    options,
  );
  return {
    store,
    client,
    types: (stream: string) => (streams.get(stream) ?? []).map((e) => e.type),
  };
}

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const one = (n: number, type: string) => ({ id: uuid(n), type, data: {} });

test('append any / stream_exists: a retry after others appended answers the original, as the embedded stores do', async () => {
  const { store, types } = fakeServer();
  await store.append('calls-1', [one(1, 'Reported')], NO_STREAM);
  const erased = await store.append('calls-1', [one(2, 'CallerErased')], ANY);
  await store.append('calls-1', [one(3, 'Noted')], ANY);
  assert.equal(await store.append('calls-1', [one(2, 'CallerErased')], ANY), erased, 'any');
  assert.equal(
    await store.append('calls-1', [one(2, 'CallerErased')], STREAM_EXISTS),
    erased,
    'stream_exists',
  );
  assert.equal(types('calls-1'), ['Reported', 'CallerErased', 'Noted'], 'nothing written twice');
  let refused: unknown;
  try {
    await store.append('calls-1', [one(2, 'CallerErased'), one(4, 'More')], ANY);
  } catch (err) {
    refused = err;
  }
  assert.instance(refused, WrongExpectedRevisionError, 'a partial retry conflicts');
  assert.equal(types('calls-1'), ['Reported', 'CallerErased', 'Noted']);
  const fresh = await store.append('calls-1', [one(5, 'Later')], ANY);
  assert.is(fresh.nextRevision, 3);
  await store.close();
});

// Between the adapter's read of where the stream ends and its append, another process may append. An
// append the server then takes must still go right after the event its chain hash was computed on:
// one sent with a revision that had no event yet (or as stream_exists on a stream with none) would be
// taken after the other writer's event, with a hash that skips it (audit verify: a broken chain).
test('append: an expectation the stream did not meet when read is refused, never taken after a writer that got in between', async () => {
  let other: (() => Promise<void>) | null = null;
  const { store, client, types } = fakeServer(Number.POSITIVE_INFINITY, {}, async () => {
    const write = other;
    other = null;
    await write?.();
  });
  const elsewhere = (stream: string, n: number, expected: bigint | 'no_stream') => async () => {
    await client.appendToStream(stream, [{ ...one(n, 'Elsewhere'), metadata: {} }], {
      expectedRevision: expected,
    });
  };
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => e,
    );

  other = elsewhere('race-1', 10, 'no_stream');
  const exists = await refusal(store.append('race-1', [one(11, 'Mine')], STREAM_EXISTS));
  assert.instance(exists, WrongExpectedRevisionError, 'stream_exists on a stream that had no event');
  assert.equal(types('race-1'), ['Elsewhere'], 'nothing taken after the other writer');

  await store.append('race-2', [one(20, 'First')], NO_STREAM);
  other = elsewhere('race-2', 21, 0n);
  const ahead = await refusal(store.append('race-2', [one(22, 'Mine')], 1));
  assert.instance(ahead, WrongExpectedRevisionError, 'a revision the stream had not reached');
  assert.is((ahead as WrongExpectedRevisionError).actual, 1, 'the last revision as read after');
  assert.equal(types('race-2'), ['First', 'Elsewhere']);
  await store.close();
});

test('append: the server refusing an append over its maximum size names the setting to raise', async () => {
  const { store, types } = fakeServer(1024);
  let refused: unknown;
  try {
    await store.append('big-1', [{ type: 'Big', data: { text: 'x'.repeat(2000) } }], NO_STREAM);
  } catch (err) {
    refused = err;
  }
  assert.instance(refused, EventStoreError);
  assert.match(
    (refused as Error).message,
    /big-1 is larger than EventStoreDB's maximum append size \(1024 bytes\)/,
  );
  assert.match((refused as Error).message, /EVENTSTORE_MAX_APPEND_SIZE/);
  assert.equal(types('big-1'), []);
  await store.close();
});

test.run();
