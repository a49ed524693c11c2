// Moves on the capacity stream: the new seating pending beside the old (decideHold with a move id),
// confirmed or dropped; and the repair plan, which settles pending moves and seatings without ever
// changing the reservation.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SeatingHeldData, SeatingMoveHeldData } from '../../commands/availability/capacity-events';
import type { Catalog, Shift } from '../../commands/catalog/types';
import {
  decideConfirmMove,
  decideDropMove,
  decideHold,
  type HoldRequest,
} from '../../commands/reservations/capacity-decide';
import {
  type CapacityState,
  evolveCapacity,
  initialCapacity,
} from '../../commands/reservations/capacity-state';
import type { ReservationSnapshot, ReservationStatus } from '../../commands/reservations/events';
import type { ReservationState } from '../../commands/reservations/evolve';
import {
  matches,
  planRepair,
  type RepairStep,
  seatingOfReservation,
} from '../../commands/reservations/repair-plan';
import { inSync } from '../../projections/seating-sync';
import { BusinessRuleError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { catalogOf, shift as dinnerShift } from '../helpers/catalog';

const DAY = '2026-06-03';
const shift: Shift = dinnerShift({ max_covers: 20 });
const catalog: Catalog = catalogOf(
  [
    { id: 't2a', name: '2A', room_id: 'room_main', min_pax: 1, max_pax: 2 },
    { id: 't2b', name: '2B', room_id: 'room_main', min_pax: 1, max_pax: 2 },
  ],
  [shift],
);
const at = (hhmm: string) => `${DAY}T${hhmm}:00+02:00`;

const request = (over: Partial<HoldRequest>): HoldRequest => ({
  restaurantId: 'rest_1',
  reservationId: 'res_1',
  externalId: null,
  serviceDate: DAY,
  shift,
  startMs: Date.parse(at('19:00')),
  partySize: 2,
  roomId: null,
  tableIds: ['t2a'],
  force: false,
  purpose: 'create',
  timezone: 'Europe/Paris',
  catalog,
  now: new Date('2026-06-02T10:00:00Z'),
  ...over,
});

let position = 0n;
const apply = (state: CapacityState, events: NewEvent[]) =>
  events
    .map(
      (e): RecordedEvent => ({
        id: String(++position),
        type: e.type,
        data: e.data,
        metadata: {},
        created: '',
        stream: 'capacity',
        revision: 0,
        position,
      }),
    )
    .reduce(evolveCapacity, state);

const reason = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof BusinessRuleError ? err.reason : String(err);
  }
};

test('a move is held beside the old seating: both are taken for others until it is confirmed', () => {
  let state = apply(initialCapacity, decideHold(initialCapacity, request({})).events);
  const move = decideHold(state, request({ startMs: Date.parse(at('21:00')), moveId: 'm1', purpose: 'u' }));
  assert.is(move.moveId, 'm1');
  assert.equal(
    move.events.map((e) => e.type),
    ['SeatingMoveHeld'],
  );
  state = apply(state, move.events);
  // The reservation still holds its own seating; the move is pending.
  assert.is(state.held.get('res_1')?.start_at, at('19:00'));
  assert.is(state.pending.get('res_1')?.get('m1')?.start_at, at('21:00'));
  // Another reservation cannot take either.
  for (const hhmm of ['19:00', '21:00'])
    assert.is(
      reason(() => decideHold(state, request({ reservationId: 'res_2', startMs: Date.parse(at(hhmm)) }))),
      'NO_TABLE',
    );
  // The reservation's own seatings are not in its own way (a second move, or a retry).
  const again = decideHold(state, request({ startMs: Date.parse(at('20:00')), moveId: 'm2', purpose: 'u2' }));
  assert.is(again.seating.table_ids[0], 't2a');
  // The same move decided again (a retried append) appends nothing.
  assert.equal(
    decideHold(state, request({ startMs: Date.parse(at('21:00')), moveId: 'm1', purpose: 'u' })).events,
    [],
  );
  // Confirmed: the move's seating is the reservation's; the old one is free.
  state = apply(state, decideConfirmMove(state, 'res_1', 'm1', 'now'));
  assert.is(state.held.get('res_1')?.start_at, at('21:00'));
  assert.is(state.pending.size, 0);
  assert.is(state.held.size, 1);
  assert.is(decideHold(state, request({ reservationId: 'res_2' })).seating.table_ids[0], 't2a');
  // Confirming or dropping a move that is gone is a no-op.
  assert.equal(decideConfirmMove(state, 'res_1', 'm1', 'now'), []);
  assert.equal(decideDropMove(state, 'res_1', 'm1', 'UPDATE_REFUSED', 'now'), []);
});

test('a dropped move gives nothing back by force: the old seating was never given up', () => {
  let state = apply(initialCapacity, decideHold(initialCapacity, request({})).events);
  state = apply(state, decideHold(state, request({ tableIds: ['t2b'], moveId: 'm1', purpose: 'u' })).events);
  // The old table stays taken while the move runs: nobody can take it meanwhile.
  assert.is(
    reason(() => decideHold(state, request({ reservationId: 'res_2' }))),
    'NO_TABLE',
  );
  state = apply(state, decideDropMove(state, 'res_1', 'm1', 'UPDATE_REFUSED', 'now'));
  assert.equal(state.held.get('res_1')?.table_ids, ['t2a']);
  assert.is(state.pending.size, 0);
  assert.is(
    decideHold(state, request({ reservationId: 'res_2', tableIds: null })).seating.table_ids[0],
    't2b',
  );
  assert.is(
    reason(() => decideHold(state, request({ reservationId: 'res_2' }))),
    'NO_TABLE',
  );
});

// ---- the repair plan ----

const DAYS = ['2026-06-03', '2026-06-04'];
const END: Record<string, string> = { '19:00': '20:30', '20:00': '21:30', '21:00': '22:30' };
const seatingArb = (reservationId: string) =>
  fc
    .record({
      day: fc.constantFrom(...DAYS),
      start: fc.constantFrom('19:00', '20:00', '21:00'),
      table: fc.constantFrom('t2a', 't2b'),
      party: fc.constantFrom(2, 3),
    })
    .map(
      ({ day, start, table, party }): SeatingHeldData => ({
        restaurant_id: 'rest_1',
        service_date: day,
        reservation_id: reservationId,
        shift_id: 'shift_dinner',
        room_id: 'room_main',
        table_ids: [table],
        start_at: `${day}T${start}:00+02:00`,
        end_at: `${day}T${END[start]}:00+02:00`,
        party_size: party,
        at: 'then',
        external_id: null,
      }),
    );

const stateArb: fc.Arbitrary<ReservationState> = fc.oneof(
  fc.record({ exists: fc.constant(false), abandoned: fc.boolean(), r: fc.constant(null) }),
  fc
    .tuple(
      seatingArb('res_1'),
      fc.constantFrom<ReservationStatus>('CONFIRMED', 'SEATED', 'CANCELED_BY_CUSTOMER', 'REJECTED'),
    )
    .map(([s, status]) => ({
      exists: true,
      abandoned: false,
      r: { ...(s as unknown as ReservationSnapshot), status, is_force_inserted: false },
    })),
) as fc.Arbitrary<ReservationState>;

/** The capacity streams as the repair leaves them: the plan applied to a model of them. */
function applyPlan(
  r: ReservationSnapshot | null,
  seatings: Map<string, SeatingHeldData>,
  moves: Map<string, Map<string, SeatingMoveHeldData>>,
  steps: RepairStep[],
) {
  const held = new Map(seatings);
  const pending = new Map([...moves].map(([d, m]) => [d, new Map(m)]));
  for (const step of steps)
    switch (step.kind) {
      case 'release':
        held.delete(step.serviceDate);
        break;
      case 'confirm_move': {
        const m = pending.get(step.serviceDate)?.get(step.moveId);
        assert.ok(m, 'confirms a move that is pending');
        held.set(step.serviceDate, m as SeatingHeldData);
        pending.get(step.serviceDate)?.delete(step.moveId);
        break;
      }
      case 'drop_move':
        assert.ok(pending.get(step.serviceDate)?.delete(step.moveId), 'drops a move that is pending');
        break;
      case 'restore':
        held.set(step.serviceDate, seatingOfReservation(r as ReservationSnapshot, 'now'));
        break;
    }
  for (const [d, m] of pending) if (!m.size) pending.delete(d);
  return { held, pending };
}

test('repair plan: every pending move is settled, the reservation is never changed, and what it shows ends up held', () => {
  fc.assert(
    fc.property(
      stateArb,
      fc.array(seatingArb('res_1'), { maxLength: 3 }),
      fc.array(fc.tuple(fc.constantFrom<string>('m1', 'm2', 'm3'), seatingArb('res_1')), { maxLength: 4 }),
      fc.boolean(),
      (state, held, pendingList, pendingEqualsShown) => {
        const r = state.exists ? (state.r as ReservationSnapshot) : null;
        const seatings = new Map(held.map((s) => [s.service_date, s]));
        const moves = new Map<string, Map<string, SeatingMoveHeldData>>();
        const list = [...pendingList];
        // Often the case that matters: the update landed and only the confirmation is missing.
        if (pendingEqualsShown && r) list.push(['m9', seatingOfReservation(r, 'then')]);
        for (const [id, s] of list) {
          const byId = moves.get(s.service_date) ?? new Map();
          byId.set(id, { ...s, move_id: id });
          moves.set(s.service_date, byId);
        }
        const steps = planRepair(state, seatings, new Set(), moves);
        // No step writes to the reservation (a fence only marks a reservation that never existed).
        for (const s of steps)
          assert.ok(
            [
              'fence',
              'release',
              'release_claim',
              'confirm_move',
              'drop_move',
              'restore',
              'report_missing_seating',
            ].includes(s.kind),
          );
        if (r) assert.not.ok(steps.some((s) => s.kind === 'fence'));
        const after = applyPlan(r, seatings, moves, steps);
        assert.is(after.pending.size, 0, 'no move is left pending');
        const live = r && !['CANCELED_BY_CUSTOMER', 'REJECTED'].includes(r.status);
        if (!live) assert.is(after.held.size, 0, 'nothing held for a released or absent reservation');
        else {
          const rr = r as ReservationSnapshot;
          assert.equal(
            [...after.held.keys()].filter((d) => d !== rr.service_date),
            [],
            'nothing on other days',
          );
          const own = after.held.get(rr.service_date);
          const missing = steps.some((s) => s.kind === 'report_missing_seating');
          if (own) assert.ok(matches(rr, own), 'what the reservation shows is held');
          else assert.ok(missing, 'a reservation left without a seating is reported');
          // A move is confirmed only when it is exactly what the reservation shows.
          for (const s of steps)
            if (s.kind === 'confirm_move')
              assert.ok(matches(rr, moves.get(s.serviceDate)?.get(s.moveId) as SeatingHeldData));
        }
        // Settled: planning again finds nothing more to do (beyond the report).
        const again = planRepair(
          state.exists ? state : { ...state, abandoned: true },
          after.held,
          new Set(),
          after.pending,
        ).filter((s) => s.kind !== 'report_missing_seating');
        assert.equal(again, []);
      },
    ),
    { numRuns: 500 },
  );
});

test('repair plan: the move the reservation shows is confirmed, any other dropped, before the old day is released', () => {
  const r = { is_force_inserted: false, external_id: null } as unknown as ReservationSnapshot;
  const old: SeatingHeldData = {
    restaurant_id: 'rest_1',
    service_date: '2026-06-03',
    reservation_id: 'res_1',
    shift_id: 'shift_dinner',
    room_id: 'room_main',
    table_ids: ['t2a'],
    start_at: '2026-06-03T19:00:00+02:00',
    end_at: '2026-06-03T20:30:00+02:00',
    party_size: 2,
    at: 'then',
  };
  const moved = {
    ...old,
    service_date: '2026-06-04',
    start_at: '2026-06-04T19:00:00+02:00',
    end_at: '2026-06-04T20:30:00+02:00',
  };
  const shows = {
    exists: true,
    abandoned: false,
    r: { ...r, ...moved, status: 'CONFIRMED' },
  } as ReservationState;
  const moves = new Map([
    [
      '2026-06-04',
      new Map([
        ['m1', { ...moved, move_id: 'm1' }],
        ['m2', { ...moved, table_ids: ['t2b'], move_id: 'm2' }],
      ]),
    ],
  ]);
  assert.equal(planRepair(shows, new Map([['2026-06-03', old]]), new Set(), moves), [
    { kind: 'confirm_move', serviceDate: '2026-06-04', moveId: 'm1' },
    { kind: 'drop_move', serviceDate: '2026-06-04', moveId: 'm2', reason: 'MOVE_NOT_RECORDED' },
    { kind: 'release', serviceDate: '2026-06-03', reason: 'MOVED' },
  ]);
  // The update never landed: the reservation is still on its old day, the move is dropped.
  const stayed = {
    exists: true,
    abandoned: false,
    r: { ...r, ...old, status: 'CONFIRMED' },
  } as ReservationState;
  assert.equal(planRepair(stayed, new Map([['2026-06-03', old]]), new Set(), moves), [
    { kind: 'drop_move', serviceDate: '2026-06-04', moveId: 'm1', reason: 'MOVE_NOT_RECORDED' },
    { kind: 'drop_move', serviceDate: '2026-06-04', moveId: 'm2', reason: 'MOVE_NOT_RECORDED' },
  ]);
});

test('seating_sync: a pending move is out of sync until it is confirmed or dropped', () => {
  const held = {
    service_date: DAY,
    shift_id: 'shift_dinner',
    room_id: 'room_main',
    table_ids: ['t2a'],
    start_at: at('19:00'),
    end_at: at('20:30'),
    party_size: 2,
    at: 'then',
  };
  const r = { ...held, status: 'CONFIRMED' as const };
  assert.is(inSync({ reservation: r, holds: { [DAY]: held }, moves: {} }), true);
  assert.is(
    inSync({ reservation: r, holds: { [DAY]: held }, moves: { m1: { ...held, start_at: at('21:00') } } }),
    false,
  );
});

test.run();
