// seating_sync version 3's end rule (projections/seating-sync-v3.ts, evolveEnds): which reservations
// wait for their SeatingEnded, since when, and under which key the repair finds them. Folded over
// event sequences with version 2's document step, no store.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nextSeatingSyncV2 } from '../../projections/seating-sync-v2';
import {
  END_REPAIR_LATER,
  endRepairKeys,
  evolveEnds,
  type SeatingSyncDocV3,
} from '../../projections/seating-sync-v3';

const ID = 'res_1';
const R = 'rest_1';
// Service day 2026-06-10 in Paris: 19:00-20:30 local, 17:00-18:30 UTC.
const seating = {
  service_date: '2026-06-10',
  shift_id: 'shift_dinner',
  room_id: 'room_main',
  table_ids: ['t1'],
  start_at: '2026-06-10T19:00:00+02:00',
  end_at: '2026-06-10T20:30:00+02:00',
  party_size: 2,
};
const z = (hhmm: string, day = '10') => `2026-06-${day}T${hhmm}:00.000Z`;

type Step = [type: string, data: Record<string, unknown>];
const held = (at: string, s: Record<string, unknown> = seating): Step => [
  'SeatingHeld',
  { ...s, reservation_id: ID, restaurant_id: R, at },
];
const created = (at: string, s: Record<string, unknown> = seating): Step => [
  'ReservationCreated',
  {
    reservation_id: ID,
    restaurant_id: R,
    at,
    reservation: { ...s, reservation_id: ID, restaurant_id: R, status: 'CONFIRMED' },
  },
];
const status = (to: string, at: string): Step => [
  'ReservationStatusChanged',
  { reservation_id: ID, restaurant_id: R, to, at },
];
const ended = (endedAt: string, at: string, day = seating.service_date): Step => [
  'SeatingEnded',
  { reservation_id: ID, restaurant_id: R, service_date: day, ended_at: endedAt, reason: 'NO_SHOW', at },
];
const released = (at: string): Step => [
  'SeatingReleased',
  { reservation_id: ID, restaurant_id: R, service_date: seating.service_date, reason: 'CANCELED', at },
];

/** The document after each step, as the projection writes it. */
function fold(steps: Step[]): SeatingSyncDocV3[] {
  let current: SeatingSyncDocV3 | null = null;
  const out: SeatingSyncDocV3[] = [];
  steps.forEach(([type, d], i) => {
    const target = {
      isClaim: false,
      d,
      id: ID,
      pos: String(i + 1).padStart(20, '0'),
      current,
      restaurantId: R,
      externalId: null,
    };
    const next = nextSeatingSyncV2(type, target);
    current = { ...next, ...evolveEnds(current ?? {}, next, type, d) };
    out.push(current);
  });
  return out;
}
const due = (doc: SeatingSyncDocV3 | undefined) => [
  doc?.end_repair_day ?? null,
  doc?.end_repair_since ?? null,
];
const last = <T>(list: T[]) => list[list.length - 1];

test('a no-show waits for its end from the status change until the SeatingEnded', () => {
  const docs = fold([held(z('08:00', '02')), created(z('08:00', '02')), status('NO_SHOW', z('17:30'))]);
  assert.equal(due(docs[1]), [null, null], 'booked: nothing to end');
  // Keyed by the UTC day of the planned end (18:30Z on the 10th).
  assert.equal(due(docs[2]), ['2026-06-10', z('17:30')]);
  assert.is(docs[2]?.finished_at, z('17:30'));
  const after = fold([
    held(z('08:00', '02')),
    created(z('08:00', '02')),
    status('NO_SHOW', z('17:30')),
    ended(z('17:30'), z('17:30')),
  ]);
  assert.equal(due(last(after)), [null, null]);
  assert.equal(last(after)?.ended, { '2026-06-10': z('17:30') });
});

test('a DONE at or after the planned end (the scheduler finishing it) has nothing to end', () => {
  for (const at of [z('18:30'), z('18:31')]) {
    const docs = fold([
      held(z('08:00', '02')),
      created(z('08:00', '02')),
      status('SEATED', z('17:00')),
      status('DONE', at),
    ]);
    assert.equal(due(last(docs)), [null, null], at);
    assert.is(last(docs)?.finished_at, undefined);
  }
});

test('a no-show held again (a seat): waits again from that hold; seated, nothing to end; DONE, from the leave', () => {
  const base = [
    held(z('08:00', '02')),
    created(z('08:00', '02')),
    status('NO_SHOW', z('17:30')),
    ended(z('17:30'), z('17:30')),
  ];
  const reheld = fold([...base, held(z('17:40'))]);
  // The seat's status has not landed: the repair must give it SEATING_REPAIR_AFTER_MINUTES from the hold.
  assert.equal(due(last(reheld)), ['2026-06-10', z('17:40')]);
  assert.is(last(reheld)?.ended, undefined, 'the new hold is not ended');
  const seated = fold([...base, held(z('17:40')), status('SEATED', z('17:40'))]);
  assert.equal(due(last(seated)), [null, null]);
  const left = fold([...base, held(z('17:40')), status('SEATED', z('17:40')), status('DONE', z('18:00'))]);
  assert.equal(due(last(left)), ['2026-06-10', z('18:00')]);
  // An end of another day, or of a seating not held, ends nothing.
  const other = fold([...base, held(z('17:40')), ended(z('17:30'), z('17:45'), '2026-06-11')]);
  assert.equal(due(last(other)), ['2026-06-10', z('17:40')]);
});

test("guests seated before the no-show's end is written: due from that end until the seating is held again", () => {
  const docs = fold([
    held(z('08:00', '02')),
    created(z('08:00', '02')),
    status('NO_SHOW', z('17:30')),
    status('SEATED', z('17:30')),
    ended(z('17:30'), z('17:31')),
    held(z('17:32')),
  ]);
  assert.equal(due(docs[3]), [null, null], 'seated, the seating held: nothing to do');
  assert.equal(due(docs[4]), ['2026-06-10', z('17:31')]);
  assert.equal(due(docs[5]), [null, null]);
  // Ended, then the guests seated (the end written first): due from the status change.
  const later = fold([
    held(z('08:00', '02')),
    created(z('08:00', '02')),
    status('NO_SHOW', z('17:30')),
    ended(z('17:30'), z('17:30')),
    status('SEATED', z('17:35')),
  ]);
  assert.equal(due(last(later)), ['2026-06-10', z('17:35')]);
});

test('waiting: a later event that does not change the seating keeps the time it started waiting', () => {
  const docs = fold([
    held(z('08:00', '02')),
    created(z('08:00', '02')),
    status('NO_SHOW', z('17:30')),
    ['ReservationUpdated', { reservation_id: ID, restaurant_id: R, changes: { notes: 'x' }, at: z('17:50') }],
  ]);
  assert.equal(due(last(docs)), ['2026-06-10', z('17:30')]);
});

test('canceled after the status change: released, nothing to end', () => {
  const docs = fold([
    held(z('08:00', '02')),
    created(z('08:00', '02')),
    status('NO_SHOW', z('17:30')),
    status('CANCELED_BY_RESTAURANT', z('17:35')),
    released(z('17:35')),
  ]);
  assert.equal(due(docs[3]), [null, null]);
  assert.equal(due(docs[4]), [null, null]);
});

test('guests seated days early and gone: keyed `later`, found whatever the day', () => {
  const future = {
    ...seating,
    service_date: '2026-07-10',
    start_at: '2026-07-10T19:00:00+02:00',
    end_at: '2026-07-10T20:30:00+02:00',
  };
  const docs = fold([
    held(z('08:00', '02'), future),
    created(z('08:00', '02'), future),
    status('SEATED', z('17:00')),
    status('DONE', z('17:30')),
  ]);
  assert.equal(due(last(docs)), [END_REPAIR_LATER, z('17:30')]);
});

test('no hold on its day (a read model of a log from before seatings): nothing keyed', () => {
  const docs = fold([created(z('08:00', '02')), status('NO_SHOW', z('17:30'))]);
  assert.equal(due(last(docs)), [null, null]);
});

test('the keys asked for: today and the next two UTC days, and later, whatever the restaurant zone', () => {
  assert.equal(endRepairKeys(Date.parse('2026-06-10T23:59:00Z')), [
    '2026-06-10',
    '2026-06-11',
    '2026-06-12',
    END_REPAIR_LATER,
  ]);
  // A seating in Pago Pago (UTC-11) ending 23:30 local on its service day the 10th: 10:30Z on the 11th.
  const pago = {
    ...seating,
    start_at: '2026-06-10T22:00:00-11:00',
    end_at: '2026-06-10T23:30:00-11:00',
  };
  const docs = fold([
    held(z('08:00', '02'), pago),
    created(z('08:00', '02'), pago),
    status('NO_SHOW', '2026-06-11T09:30:00.000Z'),
  ]);
  assert.equal(due(last(docs)), ['2026-06-11', '2026-06-11T09:30:00.000Z']);
  assert.ok(endRepairKeys(Date.parse('2026-06-11T09:40:00Z')).includes('2026-06-11'));
});

test.run();
