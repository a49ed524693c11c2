// decideLinkCustomer: the last write of a PATCH that wrote a customer connects it, with the guest text
// the PATCH sets, whatever landed since (a cancel, a POS lock), except a change of customer, which is
// later than ours and stands (the text is still set), even one back to the customer we decided on.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decideCreate } from '../../commands/reservations/decide-create';
import {
  decideLinkCustomer,
  LOCKABLE_FIELDS,
  splitGuestText,
} from '../../commands/reservations/decide-update';
import { RESERVATION_STATUSES, type ReservationSnapshot } from '../../commands/reservations/events';
import { evolveReservation, initialReservation } from '../../commands/reservations/evolve';
import type { RecordedEvent } from '../../src/ports/event-store';
import { createInput } from '../helpers/reservation-input';

const AT = '2026-06-02T10:00:00.000Z';

// The reservation holds allergies the PATCH's text may set or leave (the property below).
const base = createInput({ allergies: 'peanuts' });

function snapshot(over: Partial<ReservationSnapshot>): ReservationSnapshot {
  const [e] = decideCreate(initialReservation, base, AT);
  const recorded = {
    ...e,
    id: 'e0',
    metadata: {},
    created: AT,
    stream: 'reservation-res_1',
    revision: 0,
    position: 1n,
  };
  const r = evolveReservation(initialReservation, recorded as RecordedEvent).r as ReservationSnapshot;
  return { ...r, ...over };
}

const CUSTOMERS = [null, 'cus_a', 'cus_b'] as const;

/** A ReservationUpdated landing after the PATCH's first event, as read back from the stream. */
const landed = (changes: Record<string, unknown>) => ({ type: 'ReservationUpdated', data: { changes } });

test('connects the customer unless it is already connected or another change of customer landed', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...RESERVATION_STATUSES),
      fc.subarray([...LOCKABLE_FIELDS]),
      fc.constantFrom(...CUSTOMERS),
      fc.array(fc.constantFrom(...CUSTOMERS), { maxLength: 3 }),
      fc.constantFrom('cus_a', 'cus_new'),
      fc.constantFrom({}, { allergies: 'sesame' }, { allergies: 'peanuts' }),
      (status, locked, decidedOn, changedTo, customerId, text) => {
        const shown = changedTo.at(-1) ?? decidedOn;
        const r = snapshot({ status, locked_fields: locked, customer_id: shown });
        const since = [landed({ tags: ['vip'] }), ...changedTo.map((c) => landed({ customer_id: c }))];
        const events = decideLinkCustomer(r, since, customerId, text, 'PARTNER', AT);
        const connects = changedTo.length === 0 && shown !== customerId;
        const setsText = text.allergies === 'sesame';
        assert.is(events.length, connects || setsText ? 1 : 0);
        if (events.length === 0) return;
        const data = events[0]?.data as {
          changes: Record<string, unknown>;
          previous: Record<string, unknown>;
        };
        assert.equal(data.changes.customer_id, connects ? customerId : undefined);
        assert.equal(data.previous.customer_id, connects ? shown : undefined);
        // The text the PATCH sets goes with the connection (sealed with the new customer's key), and
        // the text already there is restated under it, as with any change of customer.
        assert.is(data.changes.allergies, setsText ? 'sesame' : 'peanuts');
      },
    ),
  );
});

test('a cancel and a POS lock on the customer landing after the PATCH was decided do not refuse it', () => {
  const r = snapshot({ status: 'CANCELED_BY_RESTAURANT', locked_fields: ['customer'], customer_id: null });
  const since = [landed({ locked_fields: ['customer'] })];
  const [e] = decideLinkCustomer(r, since, 'cus_new', {}, 'PARTNER', AT);
  assert.is(e?.type, 'ReservationUpdated');
  assert.equal(
    decideLinkCustomer(
      { ...r, customer_id: 'cus_other' },
      [landed({ customer_id: 'cus_other' })],
      'cus_new',
      {},
      'PARTNER',
      AT,
    ),
    [],
  );
});

test('a change of customer then back to the one the PATCH was decided on still stands', () => {
  // Between our two events another process connected cus_x, then disconnected it: the reservation
  // shows nobody again, as when we decided, yet that disconnection is later than ours.
  const r = snapshot({ customer_id: null });
  const since = [landed({ customer_id: 'cus_x' }), landed({ customer_id: null })];
  assert.equal(decideLinkCustomer(r, since, 'cus_new', {}, 'PARTNER', AT), []);
  const [e] = decideLinkCustomer(r, since, 'cus_new', { allergies: 'sesame' }, 'PARTNER', AT);
  assert.equal((e?.data as { changes?: unknown } | undefined)?.changes, { allergies: 'sesame' });
});

test('splitGuestText: the text a patch sets apart from the rest', () => {
  const { text, rest } = splitGuestText({
    allergies: 'nuts',
    metadata: { a: 1 },
    tags: ['vip'],
    custom_message: null,
  });
  assert.equal(text, { allergies: 'nuts', metadata: { a: 1 }, custom_message: null });
  assert.equal(rest, { tags: ['vip'] });
});

test.run();
