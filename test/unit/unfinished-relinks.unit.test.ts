// UnfinishedRelinks: from one pass over the log, the deleted customers a reservation still shows
// (its link resolving to one, no relink to none since), for audit erase --pending.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UnfinishedRelinks } from '../../commands/reservations/unfinished-relinks';

const created = (stream: string, customer_id: string | null) => ({
  stream,
  type: 'ReservationCreated',
  data: { reservation: { customer_id } },
});
const relinked = (stream: string, from: string, to: string | null) => ({
  stream,
  type: 'ReservationCustomerRelinked',
  data: { changes: { customer_id: to }, previous: { customer_id: from } },
});
const deletedBy = (customer_id: string, relinks: boolean) => ({
  stream: `customer-${customer_id}`,
  type: 'CustomerDeleted',
  data: relinks ? { customer_id, relinks } : { customer_id },
});
const patched = (stream: string, customer_id: string | null) => ({
  stream,
  type: 'ReservationUpdated',
  data: { changes: { customer_id } },
});

test('deleted directly, merged into a deleted one, relinked to none, given to another since', () => {
  const u = new UnfinishedRelinks();
  for (const e of [
    created('reservation-1', 'cus_a'), // cus_a deleted, never relinked
    created('reservation-2', 'cus_m'), // merged into cus_b, deleted; relinked to cus_b only
    relinked('reservation-2', 'cus_m', 'cus_b'),
    created('reservation-3', 'cus_c'), // deleted and recorded
    relinked('reservation-3', 'cus_c', null),
    created('reservation-4', 'cus_d'), // given to a live customer since
    patched('reservation-4', 'cus_live'),
    created('reservation-5', null),
    ...['cus_a', 'cus_b', 'cus_c', 'cus_d', 'cus_m'].map((id) => deletedBy(id, true)),
  ])
    u.see(e);
  assert.equal([...u.customers(new Map([['cus_m', 'cus_b']]))].sort(), ['cus_a', 'cus_b']);
});

test('a deletion made before relinks were recorded (no relinks mark) owes none', () => {
  const u = new UnfinishedRelinks();
  for (const e of [
    created('reservation-1', 'cus_old'),
    created('reservation-2', 'cus_m'), // merged into cus_old
    deletedBy('cus_old', false),
    created('reservation-3', 'cus_new'),
    deletedBy('cus_new', true),
  ])
    u.see(e);
  assert.equal([...u.customers(new Map([['cus_m', 'cus_old']]))], ['cus_new']);
});

test('a customer merged into one deleted: owed a relink only as that deletion is marked', () => {
  const u = new UnfinishedRelinks();
  for (const e of [deletedBy('cus_old', false), deletedBy('cus_new', true)]) u.see(e);
  const mergedInto = new Map([
    ['cus_m1', 'cus_old'],
    ['cus_m2', 'cus_m1'],
    ['cus_n1', 'cus_new'],
    ['cus_n2', 'cus_n1'],
  ]);
  assert.equal(
    ['cus_old', 'cus_m1', 'cus_new', 'cus_n1'].map((into) => u.owes(into, mergedInto)),
    [false, false, true, true],
  );
});

test.run();
