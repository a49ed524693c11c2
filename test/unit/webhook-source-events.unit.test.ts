// Which log events the webhook publisher builds a payload for, and what it reads to know. An event
// that publishes nothing must not make it read its stream: the merge slot's events
// (commands/customers/merge-slot.ts) are named Customer*, and each one read the restaurant's whole
// slot stream (two events a merge, never trimmed), so the cost of a merge grew with every merge made.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeSlotStream } from '../../commands/customers/merge-slot';
import type { DocumentStore } from '../../src/ports/document-store';
import type { EventStore, RecordedEvent } from '../../src/ports/event-store';
import { publishedEvent } from '../../src/webhooks/payloads';

const t = suite('webhook source events');

const event = (
  type: string,
  stream: string,
  data: Record<string, unknown>,
  revision: number,
): RecordedEvent =>
  ({
    id: `evt_${revision}`,
    stream,
    revision,
    position: BigInt(100 + revision),
    type,
    data,
    metadata: {},
  }) as unknown as RecordedEvent;

/** Records the streams read; holds nothing (a customer event then publishes nothing either). */
function recordingStore(): { events: EventStore; read: string[] } {
  const read: string[] = [];
  const events = {
    async readStream(stream: string) {
      read.push(stream);
      return [];
    },
  } as unknown as EventStore;
  return { events, read };
}

const noDocs = {
  collection: () => ({ findOne: async () => null, find: async () => [] }),
} as unknown as DocumentStore;

t("the merge slot's events publish nothing and read nothing", async () => {
  const stream = mergeSlotStream('rest_a');
  const data = {
    restaurant_id: 'rest_a',
    merge_id: 'mrg_1',
    customer_id: 'cus_1',
    into_customer_id: 'cus_2',
    at: '2026-11-27T18:00:00.000Z',
  };
  for (const [type, revision] of [
    ['CustomerMergeSlotTaken', 4000],
    ['CustomerMergeSlotFreed', 4001],
  ] as const) {
    const { events, read } = recordingStore();
    assert.is(await publishedEvent(events, noDocs, event(type, stream, data, revision)), null);
    assert.equal(read, [], `${type} read ${read.join(', ')}`);
  }
});

t('a customer event that publishes still reads its stream', async () => {
  const { events, read } = recordingStore();
  const updated = event(
    'CustomerUpdated',
    'customer-cus_1',
    { restaurant_id: 'rest_a', customer_id: 'cus_1', changes: {}, at: '2026-11-27T18:00:00.000Z' },
    3,
  );
  await publishedEvent(events, noDocs, updated);
  assert.equal(read, ['customer-cus_1']);
});

t.run();
