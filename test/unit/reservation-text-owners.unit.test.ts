// The one rule of whose sealed box holds each of a reservation's text fields
// (src/privacy/reservation-text-owners.ts), read directly: the sealing layer folds it over stored
// (sealed) events, the reservations projection over opened ones (test/integration/
// reservation-text-owners.int.test.ts checks, over generated logs, that both agree).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  fieldsWritten,
  foldTextOwners,
  NO_TEXT_OWNERS,
  otherOwnerIds,
  ownerOf,
  type TextOwnerState,
} from '../../src/privacy/reservation-text-owners';

const t = suite('privacy: whose box holds a reservation text field');

const fold = (events: [string, unknown][]): TextOwnerState =>
  events.reduce((s, [type, data]) => foldTextOwners(s, type, data), NO_TEXT_OWNERS);

const created = (customer: string | null): [string, unknown] => [
  'ReservationCreated',
  { reservation: { customer_id: customer, allergies: 'celery' } },
];

t('a creation writes every field, in its customer’s box', () => {
  const s = fold([created('cus_a')]);
  assert.equal(s, { customer: 'cus_a', owners: {} });
  assert.is(ownerOf(s, 'allergies'), 'cus_a');
  assert.is(ownerOf(s, 'feedback'), 'cus_a');
});

t('a move keeps the fields it does not write in the previous customer’s box', () => {
  const s = fold([
    created('cus_a'),
    ['ReservationUpdated', { changes: { customer_id: 'cus_b', custom_message: 'hi' } }],
  ]);
  assert.is(s.customer, 'cus_b');
  assert.is(ownerOf(s, 'custom_message'), 'cus_b');
  assert.is(ownerOf(s, 'allergies'), 'cus_a');
  assert.is(ownerOf(s, 'feedback'), 'cus_a');
  assert.equal(otherOwnerIds(s), ['cus_a']);
});

t('losing the customer: new text is nobody’s (null), old text stays the customer’s', () => {
  const s = fold([
    created('cus_a'),
    ['ReservationUpdated', { changes: { customer_id: null } }],
    ['ReservationStatusChanged', { to: 'CANCELED_BY_CUSTOMER', reason: 'ill' }],
  ]);
  assert.is(s.customer, null);
  assert.is(ownerOf(s, 'cancellation_reason'), null);
  assert.is(ownerOf(s, 'allergies'), 'cus_a');
  assert.equal(otherOwnerIds(s), ['cus_a']);
});

t('a field written again goes back to the current customer’s box', () => {
  const s = fold([
    created('cus_a'),
    ['ReservationUpdated', { changes: { customer_id: 'cus_b' } }],
    ['ReservationUpdated', { changes: { allergies: null, metadata: {}, custom_message: '' } }],
    ['ReservationStatusChanged', { to: 'REJECTED', reason: null }],
    ['ReservationFeedbackRecorded', { feedback: { rating: 5, comment: 'ok' } }],
  ]);
  assert.equal(s, { customer: 'cus_b', owners: {} });
});

t('the fields a stored (sealed) update writes are read from its boxes’ paths', () => {
  const stored = {
    changes: { metadata: {} },
    sealed: {
      v: 2,
      kid: 'k',
      paths: ['changes.allergies'],
      box: '',
      more: [{ paths: ['previous.allergies'] }],
    },
  };
  assert.equal(fieldsWritten('ReservationUpdated', stored), ['allergies', 'metadata']);
  // The same update opened: its fields back in `changes`.
  assert.equal(fieldsWritten('ReservationUpdated', { changes: { allergies: 'x', metadata: {} } }), [
    'allergies',
    'metadata',
  ]);
  // A box on an event in clear is not read (`sealed` absent), nor a `previous` path.
  assert.equal(fieldsWritten('ReservationUpdated', { changes: {}, previous: { allergies: 'x' } }), []);
});

t('statuses other than a cancellation or a rejection write no reason; other events nothing', () => {
  for (const to of ['SEATED', 'DONE', 'NO_SHOW', 'CONFIRMED'])
    assert.equal(fieldsWritten('ReservationStatusChanged', { to, reason: 'x' }), [], to);
  for (const to of ['CANCELED_BY_CUSTOMER', 'CANCELED_BY_RESTAURANT', 'REJECTED'])
    assert.equal(fieldsWritten('ReservationStatusChanged', { to }), ['cancellation_reason'], to);
  assert.equal(fieldsWritten('ReservationPaymentRecorded', { payment: {} }), []);
  assert.equal(fieldsWritten('ReservationUpdated', null), []);
  const s = fold([created('cus_a')]);
  assert.is(foldTextOwners(s, 'ReservationPaymentRecorded', {}), s);
});

t.run();
