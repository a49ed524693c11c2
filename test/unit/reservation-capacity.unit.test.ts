import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SeatingHeldData } from '../../commands/availability/capacity-events';
import type { Catalog, Shift } from '../../commands/catalog/types';
import { decideHold, decideRelease, type HoldRequest } from '../../commands/reservations/capacity-decide';
import {
  type CapacityState,
  evolveCapacity,
  initialCapacity,
} from '../../commands/reservations/capacity-state';
import {
  externalIdClaimStream,
  externalIdOfClaimStream,
  type ReservationSnapshot,
} from '../../commands/reservations/events';
import type { ReservationState } from '../../commands/reservations/evolve';
import { planRepair } from '../../commands/reservations/repair-plan';
import { inSync } from '../../projections/seating-sync';
import { BusinessRuleError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { catalogOf, shift as dinnerShift } from '../helpers/catalog';

const shift: Shift = dinnerShift({ max_covers: 20 });

const catalog: Catalog = catalogOf(
  [
    { id: 't2a', name: '2A', room_id: 'room_main', min_pax: 1, max_pax: 2 },
    { id: 't2b', name: '2B', room_id: 'room_main', min_pax: 1, max_pax: 2 },
    { id: 't4', name: '4', room_id: 'room_main', min_pax: 2, max_pax: 4 },
    { id: 't6', name: '6', room_id: 'room_main', min_pax: 3, max_pax: 6 },
  ],
  [shift],
);

const DAY = '2026-06-03';
const slot = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00+02:00`);

function request(over: Partial<HoldRequest>): HoldRequest {
  return {
    restaurantId: 'rest_1',
    reservationId: 'res_1',
    externalId: null,
    serviceDate: DAY,
    shift,
    startMs: slot('19:00'),
    partySize: 2,
    roomId: null,
    tableIds: null,
    force: false,
    purpose: 'create',
    timezone: 'Europe/Paris',
    catalog,
    now: new Date('2026-06-02T10:00:00Z'),
    ...over,
  };
}

let pos = 0n;
const apply = (state: CapacityState, events: NewEvent[]) =>
  events
    .map(
      (e): RecordedEvent => ({
        id: e.id ?? String(pos),
        type: e.type,
        data: e.data,
        metadata: {},
        created: '',
        stream: 'capacity',
        revision: Number(pos),
        position: ++pos,
      }),
    )
    .reduce(evolveCapacity, state);

test('a hold takes the best-fitting free table and records the seating', () => {
  const { events, seating } = decideHold(initialCapacity, request({}));
  assert.equal(seating.table_ids, ['t2a']);
  assert.is(seating.start_at, '2026-06-03T19:00:00+02:00');
  assert.is(seating.end_at, '2026-06-03T20:30:00+02:00');
  assert.is(seating.room_id, 'room_main');
  assert.is(events[0]?.type, 'SeatingHeld');
  assert.is(events[0]?.data.reservation_id, 'res_1');
});

test('the last table goes to one reservation only; the next gets NO_TABLE', () => {
  let state = initialCapacity;
  // Parties of 2 fit t2a, t2b and t4 (t6 seats 3 to 6).
  for (const id of ['a', 'b', 'c'])
    state = apply(state, decideHold(state, request({ reservationId: id })).events);
  assert.equal(
    [...state.held.values()].map((s) => s.table_ids[0]),
    ['t2a', 't2b', 't4'],
  );
  try {
    decideHold(state, request({ reservationId: 'e' }));
    assert.unreachable();
  } catch (err) {
    assert.instance(err, BusinessRuleError);
    assert.is((err as BusinessRuleError).reason, 'NO_TABLE');
  }
  // A seating touching the end of another does not overlap it.
  const after = decideHold(state, request({ reservationId: 'e', startMs: slot('20:30') }));
  assert.equal(after.seating.table_ids, ['t2a']);
});

test("a reservation's own seating is not in its way: a move within the day replaces it in one event", () => {
  let state = apply(initialCapacity, decideHold(initialCapacity, request({})).events);
  const moved = decideHold(state, request({ startMs: slot('19:30'), purpose: 'update@0' }));
  assert.equal(moved.seating.table_ids, ['t2a']);
  state = apply(state, moved.events);
  assert.is(state.held.size, 1);
  assert.is(state.held.get('res_1')?.start_at, '2026-06-03T19:30:00+02:00');
  // Asking for exactly what it holds appends nothing.
  assert.equal(decideHold(state, request({ startMs: slot('19:30'), purpose: 'update@1' })).events, []);
});

test('bypass_availability holds even when full, on the named tables or none', () => {
  let state = initialCapacity;
  for (const id of ['a', 'b', 'c'])
    state = apply(state, decideHold(state, request({ reservationId: id })).events);
  const forced = decideHold(state, request({ reservationId: 'f', force: true }));
  assert.equal(forced.seating.table_ids, []);
  assert.is(forced.events[0]?.data.force_inserted, true);
  const named = decideHold(state, request({ reservationId: 'g', force: true, tableIds: ['t4'] }));
  assert.equal(named.seating.table_ids, ['t4']);
});

test('release frees only an active seating', () => {
  const state = apply(initialCapacity, decideHold(initialCapacity, request({})).events);
  const events = decideRelease(state, 'rest_1', DAY, 'res_1', 'CANCELED', 'now');
  assert.is(events.length, 1);
  assert.equal(decideRelease(apply(state, events), 'rest_1', DAY, 'res_1', 'CANCELED', 'now'), []);
});

test('property: whatever holds, moves and releases happen, no table is ever held twice at once and covers stay within max_covers', () => {
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('hold' as const),
      id: fc.integer({ min: 0, max: 12 }),
      start: fc.constantFrom('19:00', '19:15', '19:45', '20:30', '21:00', '22:00'),
      party: fc.integer({ min: 1, max: 7 }),
      tables: fc.option(fc.subarray(['t2a', 't2b', 't4', 't6'], { minLength: 1, maxLength: 2 }), {
        nil: null,
      }),
    }),
    fc.record({ kind: fc.constant('release' as const), id: fc.integer({ min: 0, max: 12 }) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      let state = initialCapacity;
      for (const o of ops) {
        const id = `r${o.id}`;
        if (o.kind === 'release') {
          state = apply(state, decideRelease(state, 'rest_1', DAY, id, 'CANCELED', 'now'));
          continue;
        }
        try {
          const req = request({
            reservationId: id,
            startMs: slot(o.start),
            partySize: o.party,
            tableIds: o.tables,
          });
          state = apply(state, decideHold(state, req).events);
        } catch (err) {
          if (!(err instanceof BusinessRuleError)) throw err;
        }
      }
      const seatings = [...state.held.values()];
      for (const [i, a] of seatings.entries())
        for (const b of seatings.slice(i + 1)) {
          const overlap =
            Date.parse(a.start_at) < Date.parse(b.end_at) && Date.parse(b.start_at) < Date.parse(a.end_at);
          if (overlap)
            assert.equal(
              a.table_ids.filter((t) => b.table_ids.includes(t)),
              [],
              `${a.reservation_id} and ${b.reservation_id}`,
            );
        }
      assert.ok(seatings.reduce((n, s) => n + s.party_size, 0) <= (shift.max_covers as number));
    }),
    { numRuns: 300 },
  );
});

const seating = (over: Partial<SeatingHeldData> = {}): SeatingHeldData => ({
  restaurant_id: 'rest_1',
  service_date: DAY,
  reservation_id: 'res_1',
  shift_id: 'shift_dinner',
  room_id: 'room_main',
  table_ids: ['t2a'],
  start_at: '2026-06-03T19:00:00+02:00',
  end_at: '2026-06-03T20:30:00+02:00',
  party_size: 2,
  at: 'then',
  external_id: 'ext-1',
  ...over,
});
const reservation = (over: Partial<ReservationSnapshot> = {}): ReservationState => ({
  exists: true,
  abandoned: false,
  r: {
    ...(seating() as unknown as ReservationSnapshot),
    status: 'CONFIRMED',
    ...over,
  },
});

test('repair: a hold whose reservation never appeared is fenced, released, and its external_id freed', () => {
  const steps = planRepair({ exists: false, abandoned: false, r: null }, new Map([[DAY, seating()]]));
  assert.equal(steps, [
    { kind: 'fence' },
    { kind: 'release', serviceDate: DAY, reason: 'ABANDONED_HOLD' },
    { kind: 'release_claim', externalId: 'ext-1' },
  ]);
  // Already fenced (a repair interrupted after its first step): no second fence.
  assert.is(
    planRepair({ exists: false, abandoned: true, r: null }, new Map([[DAY, seating()]]))[0]?.kind,
    'release',
  );
});

test('repair: an external_id claim whose reservation never appeared (no seating) is fenced, then released', () => {
  const none: ReservationState = { exists: false, abandoned: false, r: null };
  assert.equal(planRepair(none, new Map(), new Set(['ext-9'])), [
    { kind: 'fence' },
    { kind: 'release_claim', externalId: 'ext-9' },
  ]);
  // The fence is already there: only the release is left.
  assert.equal(planRepair({ ...none, abandoned: true }, new Map(), new Set(['ext-9'])), [
    { kind: 'release_claim', externalId: 'ext-9' },
  ]);
  // Nothing held and nothing claimed: nothing to do (and no fence).
  assert.equal(planRepair(none, new Map(), new Set()), []);
  // A seating naming the claim it holds: released once.
  assert.equal(planRepair(none, new Map([[DAY, seating()]]), new Set(['ext-1', 'ext-2'])), [
    { kind: 'fence' },
    { kind: 'release', serviceDate: DAY, reason: 'ABANDONED_HOLD' },
    { kind: 'release_claim', externalId: 'ext-1' },
    { kind: 'release_claim', externalId: 'ext-2' },
  ]);
});

test('repair: the create won the race with the fence: its claim and seating are its own, nothing is released', () => {
  // repair.ts plans again on the state the fence attempt read: ReservationCreated was there first.
  assert.equal(planRepair(reservation(), new Map([[DAY, seating()]]), new Set(['ext-1'])), []);
  assert.equal(planRepair(reservation(), new Map(), new Set(['ext-1'])), [
    { kind: 'report_missing_seating', serviceDate: DAY },
  ]);
});

test('seating_sync: a claim with no reservation is out of sync; with its reservation, claims do not matter', () => {
  const held = { ...seating(), at: 'then' };
  const claims = [{ external_id: 'ext-1', at: 'then' }];
  assert.is(inSync({ reservation: null, holds: {}, claims }), false);
  assert.is(inSync({ reservation: null, holds: {}, claims: [] }), true);
  // Documents written before claims were followed.
  assert.is(inSync({ reservation: null, holds: {} }), true);
  const r = { ...held, status: 'CONFIRMED' as const };
  assert.is(inSync({ reservation: r, holds: { [DAY]: held }, claims }), true);
  assert.is(inSync({ reservation: { ...r, status: 'CANCELED_BY_CUSTOMER' }, holds: {}, claims }), true);
});

test('external_id claim streams: named after the restaurant and the encoded value, read back', () => {
  const stream = externalIdClaimStream('rest_1', 'a b/ç-1');
  assert.is(externalIdOfClaimStream('rest_1', stream), 'a b/ç-1');
  assert.is(externalIdOfClaimStream('rest_2', stream), null);
  assert.is(externalIdOfClaimStream('rest_1', 'restaurant-slug-x'), null);
  assert.is(externalIdOfClaimStream('rest_1', 'reservation-external-id-rest_1-%E0%A4%A'), null);
  // A restaurant id with "-" is escaped in the name, so it cannot run into another restaurant's value.
  const dashed = externalIdClaimStream('rest-a', '1');
  assert.is(dashed, 'reservation-external-id-rest%2Da-1');
  assert.is(externalIdOfClaimStream('rest-a', dashed), '1');
  assert.is(externalIdOfClaimStream('rest', dashed), null);
  // Claims written before the escaping are read back for their own restaurant (its metadata's).
  assert.is(externalIdOfClaimStream('rest-a', 'reservation-external-id-rest-a-1'), '1');
  assert.is(externalIdOfClaimStream('rest', 'reservation-external-id-rest-a-1'), 'a-1');
});

test('external_id claim streams: two different (restaurant, value) pairs never share a stream; each reads back', () => {
  // Restaurant ids are free text: "-", "%" and the escapes themselves are the hard cases.
  const part = fc.stringMatching(/^[a-z%\-2D5_]{1,8}$/);
  fc.assert(
    fc.property(
      part,
      fc.string({ minLength: 1, maxLength: 8 }),
      part,
      fc.string({ minLength: 1, maxLength: 8 }),
      (r1, e1, r2, e2) => {
        const s1 = externalIdClaimStream(r1, e1);
        if (r1 !== r2 || e1 !== e2) assert.is.not(s1, externalIdClaimStream(r2, e2));
        assert.is(externalIdOfClaimStream(r1, s1), e1);
      },
    ),
    { numRuns: 2000 },
  );
});

test('repair: canceled releases; a move to another day releases that day; a replaced seating is restored, the reservation untouched', () => {
  assert.equal(planRepair(reservation({ status: 'CANCELED_BY_RESTAURANT' }), new Map([[DAY, seating()]])), [
    { kind: 'release', serviceDate: DAY, reason: 'CANCELED' },
  ]);
  const nextDay = seating({ service_date: '2026-06-04', start_at: '2026-06-04T19:00:00+02:00' });
  assert.equal(
    planRepair(
      reservation(),
      new Map([
        [DAY, seating()],
        ['2026-06-04', nextDay],
      ]),
    ),
    [{ kind: 'release', serviceDate: '2026-06-04', reason: 'MOVED' }],
  );
  const replaced = seating({ table_ids: ['t4'] });
  // Left by an older version's same-day move (seating replaced, update lost): what the reservation
  // shows was acknowledged, so that is what is held again.
  assert.equal(planRepair(reservation(), new Map([[DAY, replaced]])), [
    { kind: 'restore', serviceDate: DAY },
  ]);
  assert.equal(planRepair(reservation(), new Map([[DAY, seating()]])), []);
});

test.run();
