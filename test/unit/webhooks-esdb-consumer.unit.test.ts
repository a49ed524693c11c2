// The scaled-out webhook worker's handling of one event of the EventStoreDB persistent subscription
// (src/webhooks/esdb-consumer.ts handleDelivered), against a fake subscription: no server needed.

import { type EventStoreDBClient, START } from '@eventstore/db-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type Acknowledger,
  consumeInTurn,
  consumePersistent,
  type DeliveredEvent,
  handleDelivered,
  MAX_RETRY_COUNT,
  newGroupStart,
  retryDelayMs,
  WEBHOOK_GROUP,
  webhookGroup,
} from '../../src/webhooks/esdb-consumer';
import { PUBLISHER_EVENT_PREFIXES } from '../../src/webhooks/publisher';

type Delivered = DeliveredEvent & { n: number };

const delivered = (
  retryCount: number,
  type = 'ReservationCreated',
  streamId = 'reservation-r1',
): Delivered => ({
  n: retryCount,
  retryCount,
  event: {
    streamId,
    id: '00000000-0000-4000-8000-000000000001',
    revision: 0n,
    type,
    data: { restaurant_id: 'rest_1' },
    metadata: {},
    isJson: true,
    created: new Date('2026-05-01T12:00:00Z'),
    position: { commit: 10n, prepare: 10n },
  } as DeliveredEvent['event'],
});

/** Records, in order, what the worker did: waits, acks, nacks. */
function world() {
  const steps: string[] = [];
  const sub: Acknowledger<Delivered> = {
    ack: async (r) => {
      steps.push(`ack ${r.n}`);
    },
    nack: async (action, _reason, r) => {
      steps.push(`nack ${action} ${r.n}`);
    },
  };
  const wait = async (ms: number) => {
    steps.push(`wait ${ms}`);
  };
  return { steps, sub, wait };
}

test('a failed event is handed back only after a wait that grows with its retries', async () => {
  const { steps, sub, wait } = world();
  const errors: unknown[] = [];
  const failing = async () => {
    throw new Error('no writable primary');
  };
  for (const retries of [0, 1, 5])
    await handleDelivered(delivered(retries), sub, failing, (e) => errors.push(e), wait);
  assert.equal(steps, ['wait 250', 'nack retry 0', 'wait 500', 'nack retry 1', 'wait 8000', 'nack retry 5']);
  assert.is(errors.length, 3, 'each failure reported');
});

test('the waits before the server parks an event add up to about a minute, none over 10 s', () => {
  const waits = Array.from({ length: MAX_RETRY_COUNT }, (_, i) => retryDelayMs(i));
  assert.ok(
    waits.every((ms, i) => ms > 0 && ms <= 10_000 && (i === 0 || ms >= (waits[i - 1] as number))),
    String(waits),
  );
  const total = waits.reduce((a, b) => a + b, 0);
  assert.ok(total >= 45_000, `${total} ms: a MongoDB election or a dropped connection outlasts no more`);
  assert.is(retryDelayMs(1_000), 10_000);
});

test('a handled event is acknowledged at once; a system event without handling', async () => {
  const { steps, sub, wait } = world();
  const handled: string[] = [];
  const handle = async (e: { type: string }) => {
    handled.push(e.type);
  };
  await handleDelivered(delivered(0), sub, handle, () => undefined, wait);
  await handleDelivered(delivered(1, '$>', '$ce-reservation'), sub, handle, () => undefined, wait);
  assert.equal(handled, ['ReservationCreated']);
  assert.equal(steps, ['ack 0', 'ack 1']);
});

test('the events after a failed one are handled while it waits to be handed back', async () => {
  const { steps, sub } = world();
  // The failed event's wait lasts until the test lets it end: the second event must not need it to.
  let endWait = () => {};
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      steps.push(`wait ${ms}`);
      endWait = resolve;
    });
  let secondHandled = () => {};
  const second = new Promise<void>((resolve) => {
    secondHandled = resolve;
  });
  async function* events() {
    yield { ...delivered(0, 'ReservationCreated', 'reservation-bad'), n: 1 };
    yield { ...delivered(0, 'CustomerDeleted', 'customer-c1'), n: 2 };
    // The server hands out nothing more until the second event is settled (as a held buffer would).
    await second;
  }
  const handled: string[] = [];
  const handle = async (e: { type: string }) => {
    handled.push(e.type);
    if (e.type === 'ReservationCreated') throw new Error('endpoint store unavailable');
  };
  const pending = new Set<Promise<void>>();
  const onError = () => undefined;
  const loop = consumeInTurn(events(), sub, handle, onError, wait, pending);
  // The second event is acked within a few turns of the event loop (no clock); a loop that waited out
  // the first event's hand-back would never get there, since that wait ends only below.
  for (let turn = 0; turn < 1_000 && !steps.includes('ack 2'); turn++)
    await new Promise((r) => setImmediate(r));
  assert.equal(handled, ['ReservationCreated', 'CustomerDeleted']);
  assert.equal(steps, ['wait 250', 'ack 2'], 'the first event still waits, the second is acknowledged');
  assert.is(pending.size, 1, 'one hand-back pending');
  endWait();
  await Promise.all(pending);
  assert.equal(steps, ['wait 250', 'ack 2', 'nack retry 1']);
  assert.is(pending.size, 0);
  secondHandled();
  await loop;
});

// A persistent subscription's filter is fixed when its group is created: the group the workers join
// is named after the filter, so a publisher following other event types gets a group that hands
// them out, not the one created with the older list.
test('the workers join the group of the event types they follow: another list, another group', async () => {
  const created: { group: string; prefixes: unknown; startFrom: unknown }[] = [];
  const joined: string[] = [];
  const errors: unknown[] = [];
  // The groups the server holds, the nth checkpointed at position 100 × n.
  const fakeClient = () =>
    ({
      async listPersistentSubscriptionsToAll() {
        return created.map((c, i) => ({
          groupName: c.group,
          stats: {
            lastCheckpointedEventPosition: { commit: BigInt(100 * (i + 1)), prepare: BigInt(100 * (i + 1)) },
          },
        }));
      },
      async createPersistentSubscriptionToAll(
        group: string,
        settings: { startFrom: unknown },
        options: { filter: unknown },
      ) {
        if (created.some((c) => c.group === group)) throw new Error(`${group} created twice`);
        created.push({
          group,
          prefixes: (options.filter as { prefixes?: unknown }).prefixes,
          startFrom: settings.startFrom,
        });
      },
      subscribeToPersistentSubscriptionToAll(group: string) {
        joined.push(group);
        let end = () => {};
        const ended = new Promise<void>((r) => {
          end = r;
        });
        return {
          [Symbol.asyncIterator]: () => ({
            next: async () => {
              await ended;
              return { done: true, value: undefined };
            },
          }),
          async unsubscribe() {
            end();
          },
          ack: async () => undefined,
          nack: async () => undefined,
        };
      },
      async dispose() {},
    }) as unknown as EventStoreDBClient;
  const follow = async (prefixes: string[]) => {
    const joinedBefore = joined.length;
    const createdBefore = created.length;
    const consumer = consumePersistent(
      fakeClient(),
      prefixes,
      async () => undefined,
      (err) => errors.push(err),
    );
    // Until it has joined a group (the create and the join run in the consumer's loop), or failed.
    while (joined.length === joinedBefore && errors.length === 0) await new Promise((r) => setImmediate(r));
    await consumer.stop();
    assert.equal(errors, []);
    return {
      group: joined.at(-1) as string,
      made: created.length > createdBefore ? created.at(-1) : undefined,
    };
  };
  const before = await follow(PUBLISHER_EVENT_PREFIXES.filter((p) => p !== 'MarketingOptOut'));
  assert.is(before.made?.startFrom, START, 'the first group starts at the log’s start');
  const now = await follow([...PUBLISHER_EVENT_PREFIXES]);
  assert.equal(
    now.made?.prefixes,
    [...PUBLISHER_EVENT_PREFIXES],
    'the server filters on the publisher’s types',
  );
  assert.is.not(now.group, before.group, 'a list that gained MarketingOptOut has a group of its own');
  assert.is(now.made?.group, now.group, 'and joins the group it created');
  assert.equal(now.made?.startFrom, { commit: 100n, prepare: 100n }, 'where the older group stood');
  assert.ok(now.group.startsWith(`${WEBHOOK_GROUP}-`), now.group);
  const again = await follow([...PUBLISHER_EVENT_PREFIXES].reverse().concat('Reservation'));
  assert.is(again.group, now.group, 'the same types, in any order, are the same group');
  assert.is(again.made, undefined, 'an existing group is joined, not created again');
  const third = await follow(['Reservation']);
  assert.equal(third.made?.startFrom, { commit: 200n, prepare: 200n }, 'the older group furthest on');
});

// An older group that has not checkpointed yet says only how far it read, not what its workers
// acknowledged: the new group reads the log again from its start, and the operator is told why.
test('older groups none of which has checkpointed: the new group starts at the log’s start, with a warning', async () => {
  const position = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });
  const server = (groups: { groupName: string; stats: Record<string, unknown> }[]) =>
    ({ listPersistentSubscriptionsToAll: async () => groups }) as unknown as Pick<
      EventStoreDBClient,
      'listPersistentSubscriptionsToAll'
    >;
  const warnings: { message: string; detail: Record<string, unknown> }[] = [];
  const warn = (message: string, detail: Record<string, unknown>) => warnings.push({ message, detail });
  const group = webhookGroup([...PUBLISHER_EVENT_PREFIXES]);

  assert.is(await newGroupStart(server([]), group, warn), START, 'the very first group');
  assert.equal(warnings, [], 'nothing to say about the very first group');

  const unchecked = server([
    { groupName: `${WEBHOOK_GROUP}-aaaaaaaaaaaa`, stats: { lastKnownEventPosition: position(5000) } },
    { groupName: 'someone-elses-group', stats: { lastCheckpointedEventPosition: position(9000) } },
  ]);
  assert.is(await newGroupStart(unchecked, group, warn), START, 'not where the older group read to');
  assert.is(warnings.length, 1, 'the rescan is said');
  assert.match(warnings[0]?.message ?? '', group);
  assert.equal(warnings[0]?.detail.olderGroupsLastKnownCommit, { [`${WEBHOOK_GROUP}-aaaaaaaaaaaa`]: '5000' });

  const oneChecked = server([
    { groupName: `${WEBHOOK_GROUP}-aaaaaaaaaaaa`, stats: { lastKnownEventPosition: position(5000) } },
    { groupName: WEBHOOK_GROUP, stats: { lastCheckpointedEventPosition: position(300) } },
  ]);
  assert.equal(await newGroupStart(oneChecked, group, warn), position(300), 'a checkpoint is enough');
  assert.is(warnings.length, 1, 'and nothing more is said');
});

test.run();
