// decideRelink: a reservation showing a customer merged away or deleted records that it shows the
// survivor (or nobody) once, moving updated_at and nothing else; not another restaurant's, not one
// given to another customer since, not twice for the same change.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decideCreate } from '../../commands/reservations/decide-create';
import { decideRelink, type RelinkCommand } from '../../commands/reservations/decide-relink';
import type { ReservationSnapshot } from '../../commands/reservations/events';
import {
  evolveReservation,
  initialReservation,
  type ReservationState,
} from '../../commands/reservations/evolve';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { createInput } from '../helpers/reservation-input';

const AT = '2026-06-02T10:00:00.000Z';
const LATER = '2026-06-03T08:00:00.000Z';

const recorded = (e: NewEvent, revision: number): RecordedEvent => ({
  ...e,
  id: `e${revision}`,
  metadata: {},
  created: AT,
  stream: 'reservation-res_1',
  revision,
  position: BigInt(revision + 1),
});

function state(customerId: string | null): { state: ReservationState; events: RecordedEvent[] } {
  const [e] = decideCreate(initialReservation, createInput({}), AT);
  const created = recorded(e as NewEvent, 0);
  const s = evolveReservation(initialReservation, created);
  const r = { ...(s.r as ReservationSnapshot), customer_id: customerId };
  return { state: { ...s, r }, events: [created] };
}

const merge = (over: Partial<RelinkCommand> = {}): RelinkCommand => ({
  restaurantId: state(null).state.r?.restaurant_id as string,
  customerId: 'cus_a',
  linked: ['cus_a', 'cus_z'],
  into: 'cus_s',
  reason: 'CUSTOMER_MERGED',
  at: LATER,
  ...over,
});

test('a reservation of the merged customer records the survivor, and only updated_at moves', () => {
  const { state: s, events } = state('cus_a');
  const out = decideRelink(s, events, merge());
  assert.is(out.length, 1);
  assert.equal(out[0]?.data, {
    reservation_id: s.r?.reservation_id,
    restaurant_id: s.r?.restaurant_id,
    at: LATER,
    changes: { customer_id: 'cus_s' },
    previous: { customer_id: 'cus_a' },
    reason: 'CUSTOMER_MERGED',
  });
  const after = evolveReservation(s, recorded(out[0] as NewEvent, 1));
  assert.equal(after.r, { ...s.r, updated_at: LATER });
});

test('one linking a customer merged into the merged one earlier is relinked too; a deletion says null', () => {
  const { state: s, events } = state('cus_z');
  assert.is(decideRelink(s, events, merge()).length, 1);
  const [deleted] = decideRelink(s, events, merge({ into: null, reason: 'CUSTOMER_DELETED' }));
  assert.equal(deleted?.data.changes, { customer_id: null });
  assert.is(deleted?.data.reason, 'CUSTOMER_DELETED');
});

test('nothing for another customer, no customer, another restaurant, or no reservation', () => {
  assert.equal(decideRelink(state('cus_b').state, [], merge()), []);
  assert.equal(decideRelink(state(null).state, [], merge()), []);
  assert.equal(decideRelink(state('cus_a').state, [], merge({ restaurantId: 'rest_other' })), []);
  assert.equal(decideRelink(initialReservation, [], merge()), []);
  assert.equal(decideRelink({ ...state('cus_a').state, abandoned: true }, [], merge()), []);
});

test('decided again over its own event (a merge or deletion run again): nothing; another change: recorded', () => {
  const ids = fc.constantFrom('cus_a', 'cus_z', 'cus_s', 'cus_t');
  fc.assert(
    fc.property(
      fc.record({
        linked: ids,
        into: fc.option(ids, { nil: null }),
        reason: fc.constantFrom('CUSTOMER_MERGED' as const, 'CUSTOMER_DELETED' as const),
        other: fc.option(ids, { nil: null }),
      }),
      ({ linked, into, reason, other }) => {
        const { state: s, events } = state(linked);
        const cmd = merge({ linked: [linked], into, reason });
        const first = decideRelink(s, events, cmd);
        assert.is(first.length, 1);
        const history = [...events, recorded(first[0] as NewEvent, 1)];
        const next = evolveReservation(s, history[1] as RecordedEvent);
        assert.equal(decideRelink(next, history, cmd), []);
        const again = decideRelink(next, history, { ...cmd, into: other });
        assert.is(again.length, other === into ? 0 : 1);
      },
    ),
  );
});

test.run();
