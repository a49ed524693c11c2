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

test('decided again over its own event (a merge or deletion run again): nothing; a change from what it now shows: recorded', () => {
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
        fc.pre(into !== linked && other !== into);
        const { state: s, events } = state(linked);
        const cmd = merge({ linked: [linked], customerId: linked, into, reason });
        const first = decideRelink(s, events, cmd);
        assert.is(first.length, 1);
        const history = [...events, recorded(first[0] as NewEvent, 1)];
        const next = evolveReservation(s, history[1] as RecordedEvent);
        assert.equal(decideRelink(next, history, cmd), []);
        // The same customer's change to another survivor: older than the one recorded, skipped.
        assert.equal(decideRelink(next, history, { ...cmd, into: other }), []);
        // Its survivor's own change: recorded unless the first said it shows nobody.
        const onward =
          into === null
            ? []
            : decideRelink(next, history, { ...cmd, customerId: into, linked: [into, linked], into: other });
        assert.is(onward.length, into === null ? 0 : 1);
        if (into !== null) assert.equal(onward[0]?.data.previous, { customer_id: into });
      },
    ),
  );
});

/** Applies relink commands in order, each decided over the stream as it then is. */
function apply(cmds: RelinkCommand[], linkedTo = 'cus_a') {
  const start = state(linkedTo);
  let s = start.state;
  const events = [...start.events];
  for (const cmd of cmds)
    for (const e of decideRelink(s, events, cmd)) {
      const r = recorded(e, events.length);
      events.push(r);
      s = evolveReservation(s, r);
    }
  return events
    .filter((e) => e.type === 'ReservationCustomerRelinked')
    .map(
      (e) =>
        `${(e.data.previous as { customer_id: string }).customer_id} -> ${
          (e.data.changes as { customer_id: string | null }).customer_id
        } ${e.data.reason}`,
    );
}

const mergeAB = merge({ customerId: 'cus_a', linked: ['cus_a'], into: 'cus_b' });
const mergeBC = merge({ customerId: 'cus_b', linked: ['cus_b', 'cus_a'], into: 'cus_c' });
const deleteB = merge({
  customerId: 'cus_b',
  linked: ['cus_b', 'cus_a'],
  into: null,
  reason: 'CUSTOMER_DELETED',
});

test("a merge's relink arriving after the survivor's deletion recorded its own: skipped", () => {
  assert.equal(apply([deleteB, mergeAB]), ['cus_b -> null CUSTOMER_DELETED']);
  assert.equal(apply([mergeAB, deleteB]), [
    'cus_a -> cus_b CUSTOMER_MERGED',
    'cus_b -> null CUSTOMER_DELETED',
  ]);
});

test('concurrent merges A -> B and B -> C recorded out of order: the reservation ends showing C', () => {
  assert.equal(apply([mergeBC, mergeAB]), ['cus_b -> cus_c CUSTOMER_MERGED']);
  assert.equal(apply([mergeAB, mergeBC]), [
    'cus_a -> cus_b CUSTOMER_MERGED',
    'cus_b -> cus_c CUSTOMER_MERGED',
  ]);
});

test("a PATCH to another customer since a relink: that customer's merge is recorded", () => {
  const start = state('cus_a');
  const relinked = recorded(decideRelink(start.state, start.events, mergeAB)[0] as NewEvent, 1);
  const patched = recorded(
    {
      type: 'ReservationUpdated',
      data: { at: LATER, changes: { customer_id: 'cus_d' }, previous: { customer_id: 'cus_a' } },
    },
    2,
  );
  const events = [...start.events, relinked, patched];
  let s = start.state;
  for (const e of events.slice(1)) s = evolveReservation(s, e);
  const out = decideRelink(s, events, merge({ customerId: 'cus_d', linked: ['cus_d'], into: 'cus_e' }));
  assert.equal(out[0]?.data.previous, { customer_id: 'cus_d' });
});

test('a chain of merges, maybe its last survivor deleted, relinked in any order and any number of times: every relink starts from what the previous one shows, the last shows the truth', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5 }),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 6 }),
      fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
      (n, deleted, repeats, keys) => {
        const c = Array.from({ length: n + 1 }, (_, i) => `cus_${i}`);
        const cmds: RelinkCommand[] = c
          .slice(0, n)
          .map((id, i) => merge({ customerId: id, linked: c.slice(0, i + 1), into: c[i + 1] as string }));
        if (deleted)
          cmds.push(merge({ customerId: c[n] as string, linked: c, into: null, reason: 'CUSTOMER_DELETED' }));
        // Each command at least once, some again, in the order the keys sort them.
        const all = [...cmds, ...repeats.map((p) => cmds[p % cmds.length] as RelinkCommand)];
        const shuffled = all
          .map((cmd, i) => ({ cmd, key: keys[i] ?? 0 }))
          .sort((x, y) => x.key - y.key)
          .map((x) => x.cmd);
        const start = state('cus_0');
        let s = start.state;
        const events = [...start.events];
        for (const cmd of shuffled)
          for (const e of decideRelink(s, events, cmd)) {
            const r = recorded(e, events.length);
            events.push(r);
            s = evolveReservation(s, r);
          }
        const relinks = events.filter((e) => e.type === 'ReservationCustomerRelinked');
        let shows: string | null = 'cus_0';
        for (const e of relinks) {
          assert.ok(shows !== null, 'nothing after a deletion');
          const prev = (e.data.previous as { customer_id: string }).customer_id;
          if (e !== relinks[0]) assert.is(prev, shows);
          shows = (e.data.changes as { customer_id: string | null }).customer_id;
        }
        assert.is(shows, deleted ? null : c[n]);
      },
    ),
  );
});

test.run();
