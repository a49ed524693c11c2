// followMerges: the one walk from a customer merged away to the one it lives on in (inline matching,
// missed calls, the re-match after an upsert or import lost its customer), with one hop limit.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerStream } from '../../commands/customers/events';
import { followMerges, MAX_MERGE_HOPS } from '../../commands/customers/follow-merges';
import { vanishedAt } from '../../commands/customers/upsert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { ANY } from '../../src/ports/event-store';

const t = suite('customer followMerges');
const at = '2026-03-01T10:00:00.000Z';

async function created(events: MemoryEventStore, id: string) {
  const data = {
    customer_id: id,
    restaurant_id: 'rest_a',
    at,
    profile: { name: id, email: null, phone_number: null, country_code: null, external_id: null },
  };
  return events.append(customerStream(id), [{ type: 'CustomerCreated', data }], ANY);
}

async function mergedInto(events: MemoryEventStore, id: string, into: string) {
  const data = { customer_id: id, restaurant_id: 'rest_a', at, into_customer_id: into };
  return events.append(customerStream(id), [{ type: 'CustomerMergedInto', data }], ANY);
}

/** c0 → c1 → … → c{n}: n merges, c{n} never merged. */
async function chain(events: MemoryEventStore, n: number) {
  for (let i = 0; i <= n; i++) await created(events, `c${i}`);
  for (let i = 0; i < n; i++) await mergedInto(events, `c${i}`, `c${i + 1}`);
}

t('a customer never merged is its own survivor; an unknown id is a survivor with no event', async () => {
  const events = new MemoryEventStore();
  const r = await created(events, 'alone');
  const walk = await followMerges({ events }, 'alone');
  assert.is(walk.end, 'survivor');
  assert.is(walk.customerId, 'alone');
  assert.is(walk.state.status, 'active');
  assert.is(walk.lastPosition, r.position);
  const none = await followMerges({ events }, 'nobody');
  assert.is(none.end, 'survivor');
  assert.is(none.customerId, 'nobody');
  assert.is(none.lastPosition, undefined);
});

t('a chain of merges ends on the survivor, with the latest position walked', async () => {
  const events = new MemoryEventStore();
  await chain(events, 3);
  // The survivor's own write comes after the absorbed ones' closing events.
  const last = await events.append(
    customerStream('c3'),
    [
      {
        type: 'CustomerUpdated',
        data: { customer_id: 'c3', restaurant_id: 'rest_a', at, changes: {}, previous: {} },
      },
    ],
    ANY,
  );
  const walk = await followMerges({ events }, 'c0');
  assert.is(walk.end, 'survivor');
  assert.is(walk.customerId, 'c3');
  assert.is(walk.state.status, 'active');
  assert.is(walk.lastPosition, last.position);
  assert.is(await vanishedAt({ events }, 'c0'), last.position);
});

t('the hop limit is one: a chain of exactly MAX_MERGE_HOPS merges resolves, one more does not', async () => {
  // Before, inline matching gave up after 16 hops and missed calls after 20, while the re-match
  // followed any length: a chain of 17 merges resolved for a missed call and not for a reservation.
  const events = new MemoryEventStore();
  await chain(events, MAX_MERGE_HOPS + 1);
  const full = await followMerges({ events }, 'c0');
  assert.is(full.end, 'too_long');
  assert.is(full.customerId, `c${MAX_MERGE_HOPS}`);
  assert.is(full.state.status, 'merged');
  const within = await followMerges({ events }, 'c1');
  assert.is(within.end, 'survivor');
  assert.is(within.customerId, `c${MAX_MERGE_HOPS + 1}`);
  // Pinned: the 20-merge chains missed calls followed (and inline matching did not, at 16) must pass.
  assert.is(MAX_MERGE_HOPS, 32);
});

t('a cycle ends the walk (cycle), from any customer on it, without reading forever', async () => {
  const events = new MemoryEventStore();
  for (const id of ['a', 'b', 'c']) await created(events, id);
  await mergedInto(events, 'a', 'b');
  await mergedInto(events, 'b', 'c');
  const last = await mergedInto(events, 'c', 'a');
  let reads = 0;
  const counting = {
    readStream: (stream: string) => {
      reads++;
      return events.readStream(stream);
    },
  };
  for (const start of ['a', 'b', 'c']) {
    reads = 0;
    const walk = await followMerges({ events: counting as unknown as MemoryEventStore }, start);
    assert.is(walk.end, 'cycle', start);
    assert.is(walk.state.status, 'merged');
    assert.is(reads, 3, 'each customer on the cycle read once');
    assert.is(walk.lastPosition, last.position);
  }
  // A customer merged into itself (never written by a merge) is a cycle of one.
  await created(events, 'self');
  await mergedInto(events, 'self', 'self');
  assert.is((await followMerges({ events }, 'self')).end, 'cycle');
});

t.run();
