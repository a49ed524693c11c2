// audit history of a restaurant's customer merge slot or import slot (streams `customer-merge-slot-…`,
// `customer-import-slot-…`): before, the customer kind read them as a customer (`customer-<id>`) and
// as-of folded slot events into a customer. They are now looked for in the log; a merged customer's
// and the restaurant's history are unchanged.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { importSlotStream } from '../../commands/customer-import/slot';
import { mergeSlotStream } from '../../commands/customers/merge-slot';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { foldSubject, loadSubject } from '../../src/audit/history';
import { ANY } from '../../src/ports/event-store';
import { ev } from '../contracts/event-store.helpers';

const test = suite('audit: slot streams are no customers');
const meta = { actor: 'cli:ops', restaurant_id: 'rest_1' };
const LAST = { position: 1_000_000n };

async function world() {
  const events = new MemoryEventStore();
  await events.append('restaurant-rest_1', [ev('RestaurantCreated', { restaurant_id: 'rest_1' }, meta)], ANY);
  await events.append(
    'customer-cus_1',
    [ev('CustomerCreated', { restaurant_id: 'rest_1', customer_id: 'cus_1' }, meta)],
    ANY,
  );
  const slot = {
    restaurant_id: 'rest_1',
    merge_id: 'mrg_1',
    customer_id: 'cus_1',
    into_customer_id: 'cus_2',
  };
  await events.append(
    mergeSlotStream('rest_1'),
    [
      ev('CustomerMergeSlotTaken', { ...slot, at: 'x' }, meta),
      ev('CustomerMergeSlotFreed', { ...slot, at: 'y' }, meta),
    ],
    ANY,
  );
  await events.append(
    importSlotStream('rest_1'),
    [ev('CustomerImportSlotTaken', { restaurant_id: 'rest_1', job_id: 'imp_1' }, meta)],
    ANY,
  );
  return events;
}

test('a merge slot and an import slot are not read as customers', async () => {
  const events = await world();
  for (const id of ['merge-slot-rest_1', 'import-slot-rest_1']) {
    const loaded = await loadSubject(events, id);
    assert.is.not(loaded.kind, 'customer', id);
    assert.is(loaded.kind, 'log', id);
    assert.ok(loaded.events.length > 0, `${id}: the log still lists the slot's events`);
    assert.is((await loadSubject(events, id, { kind: 'customer' })).events.length, 0, id);
  }
});

test("a customer's and the restaurant's history are unchanged", async () => {
  const events = await world();
  const customer = await loadSubject(events, 'cus_1');
  assert.is(customer.kind, 'customer');
  assert.equal(
    customer.events.map((e) => e.stream),
    ['customer-cus_1'],
  );
  assert.is((foldSubject(customer, LAST).state as { customerId: string | null }).customerId, 'cus_1');
  const restaurant = await loadSubject(events, 'rest_1');
  assert.is(restaurant.kind, 'restaurant');
  assert.equal(
    restaurant.events.map((e) => e.stream),
    ['restaurant-rest_1'],
  );
});

test.run();
