// A PATCH that keeps a reservation's start and shift (docs/RESERVATIONS.md, "Which reservations can
// move"): the minimum notice, the booking window and the shift's grid are rules for choosing a start,
// so such a change is held to none of them unless it grows the party; every other rule applies.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { slotStarts } from '../../commands/availability/slots';
import { localToInstant } from '../../commands/availability/zone-time';
import type { Shift } from '../../commands/catalog/types';
import { decideHold, type HoldRequest } from '../../commands/reservations/capacity-decide';
import { initialCapacity } from '../../commands/reservations/capacity-state';
import { moveTimeLimits } from '../../commands/reservations/decide-update';
import type { ReservationSnapshot } from '../../commands/reservations/events';
import { BusinessRuleError } from '../../src/core/errors';
import { catalogOf, shift } from '../helpers/catalog';

const t = suite('reservations: a change that keeps the start');
const MINUTE = 60_000;

const reservation = (o: Partial<ReservationSnapshot>) =>
  ({
    status: 'CONFIRMED',
    start_at: '2027-04-03T23:30:00+11:00',
    shift_id: 's1',
    party_size: 4,
    ...o,
  }) as ReservationSnapshot;

t('moveTimeLimits: a new start or shift, or more guests; never for guests already there', () => {
  const r = reservation({});
  const at = Date.parse(r.start_at);
  assert.is(moveTimeLimits(r, { startMs: at, shiftId: 's1', partySize: 4 }), false);
  assert.is(moveTimeLimits(r, { startMs: at, shiftId: 's1', partySize: 2 }), false);
  assert.is(moveTimeLimits(r, { startMs: at, shiftId: 's1', partySize: 5 }), true);
  assert.is(moveTimeLimits(r, { startMs: at + 15 * MINUTE, shiftId: 's1', partySize: 4 }), true);
  assert.is(moveTimeLimits(r, { startMs: at, shiftId: 's2', partySize: 4 }), true);
  // The same instant written with another offset is the same start.
  assert.is(
    moveTimeLimits(r, { startMs: Date.parse('2027-04-03T12:30:00Z'), shiftId: 's1', partySize: 3 }),
    false,
  );
  for (const status of ['SEATED', 'SHOWED_UP', 'PARTIALLY_SEATED', 'SEATED_FOR_DRINKS'] as const)
    assert.is(
      moveTimeLimits(reservation({ status }), { startMs: at + 60 * MINUTE, shiftId: 's2', partySize: 9 }),
      false,
    );
});

const ZONES = [
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'Europe/Paris',
  'America/New_York',
  'Pacific/Chatham',
];
const tables = [
  { id: 't2', name: '2', room_id: 'room_main', min_pax: 1, max_pax: 2 },
  { id: 't4', name: '4', room_id: 'room_main', min_pax: 2, max_pax: 4 },
];

t(
  'property: held at its own start and day, a kept start meets no time or grid rule; a chosen one does',
  () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        // The booking's start, minutes after the service day's local 18:00 (past midnight included):
        // often on a quarter hour, which a grid may offer.
        fc.oneof(
          fc.integer({ min: 0, max: 600 }),
          fc.integer({ min: 0, max: 15 }).map((q) => q * 15),
        ),
        // The shift as the catalog now draws it: its grid may no longer offer that start.
        fc.constantFrom(15, 30, 45, 60, 90),
        // Its first start's hour: often the evening's, whose grid holds most of these starts.
        fc.oneof(fc.integer({ min: 0, max: 23 }), fc.constantFrom(17, 18)),
        // Now, minutes from the start (before or after it), and the rules of time.
        fc.integer({ min: -600, max: 3 * 1440 }),
        fc.constantFrom(0, 60, 1440),
        fc.constantFrom(null, 0, 1),
        fc.integer({ min: 1, max: 4 }),
        // Saturday 3 April 2027 (6) is still a day of the shift, or no longer.
        fc.constantFrom([6], [1, 2, 3, 4, 5, 7], [1, 2, 3, 4, 5, 6, 7]),
        (zone, offset, interval, firstHour, nowBefore, notice, window, party, days) => {
          const s = shift({
            id: 's1',
            start_time: `${String(firstHour).padStart(2, '0')}:00`,
            end_time: '22:00',
            slot_interval_minutes: interval,
            minimum_notice_minutes: notice,
            booking_window_days: window,
            days_of_week: [...days],
          });
          const serviceDate = '2027-04-03';
          const startMs = (localToInstant(zone, serviceDate, 18 * 60) as number) + offset * MINUTE;
          const request: HoldRequest = {
            restaurantId: 'rest_1',
            reservationId: 'res_1',
            externalId: null,
            serviceDate,
            shift: s,
            startMs,
            partySize: party,
            roomId: null,
            tableIds: null,
            force: false,
            purpose: 'update@1',
            moveId: 'move_1',
            ownStart: true,
            timeLimits: false,
            timezone: zone,
            catalog: catalogOf(tables, [s]),
            now: new Date(startMs - nowBefore * MINUTE),
          };
          const kept = decideHold(initialCapacity, request);
          if (kept.seating.service_date !== serviceDate || Date.parse(kept.seating.start_at) !== startMs)
            return false;
          // The same start chosen (no ownStart, limits on) is refused exactly when a booking would be:
          // the verdict computed here, from the shift's grid (the service day whose starts hold it)
          // and the time rules (notice, window in the restaurant's calendar).
          const now = startMs - nowBefore * MINUTE;
          const gridDay =
            ['2027-04-02', serviceDate, '2027-04-04'].find((day) =>
              slotStarts(s, day, zone).includes(startMs),
            ) ?? null;
          const today = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date(now));
          const lastDay =
            window === null
              ? null
              : new Date(Date.parse(`${today}T00:00:00Z`) + window * 86_400_000).toISOString().slice(0, 10);
          const expected =
            gridDay === null
              ? 'OUTSIDE_SHIFT'
              : startMs < now + notice * MINUTE
                ? 'TOO_LATE'
                : lastDay !== null && gridDay > lastDay
                  ? 'TOO_FAR'
                  : gridDay === serviceDate
                    ? 'accepted'
                    : 'OUTSIDE_SHIFT';
          let verdict: string;
          try {
            decideHold(initialCapacity, { ...request, ownStart: false, timeLimits: true });
            verdict = 'accepted';
          } catch (err) {
            if (!(err instanceof BusinessRuleError)) throw err;
            verdict = err.reason as string;
          }
          if (verdict !== expected)
            throw new Error(`chosen: ${verdict}, expected ${expected} (grid day ${gridDay}, today ${today})`);
          return true;
        },
      ),
      { numRuns: 500 },
    );
  },
);

/** The verdict on `iso` in shift `s` on `serviceDate`: chosen (the grid applies) or kept (it does not). */
function verdictOn(s: Shift, zone: string, serviceDate: string, iso: string, kept = false): string {
  const startMs = Date.parse(iso);
  try {
    decideHold(initialCapacity, {
      restaurantId: 'rest_1',
      reservationId: 'res_1',
      externalId: null,
      serviceDate,
      shift: s,
      startMs,
      partySize: 2,
      roomId: null,
      tableIds: null,
      force: false,
      purpose: 'update@1',
      moveId: 'move_1',
      ownStart: kept,
      timeLimits: !kept,
      timezone: zone,
      catalog: catalogOf(tables, [s]),
      now: new Date(startMs - 60 * MINUTE),
    });
    return 'accepted';
  } catch (err) {
    if (!(err instanceof BusinessRuleError)) throw err;
    return err.reason as string;
  }
}

const isoList = (starts: readonly number[]) => starts.map((ms) => new Date(ms).toISOString());

// The property above takes its expected grid from slotStarts itself: these grids are written by hand,
// so a fault of slotStarts fails here.
t('hand-written grids: an evening shift (Paris, summer time)', () => {
  const s = shift({ id: 's1', start_time: '18:00', end_time: '19:30', slot_interval_minutes: 30 });
  assert.equal(isoList(slotStarts(s, '2027-04-03', 'Europe/Paris')), [
    '2027-04-03T16:00:00.000Z',
    '2027-04-03T16:30:00.000Z',
    '2027-04-03T17:00:00.000Z',
    '2027-04-03T17:30:00.000Z',
  ]);
  assert.is(verdictOn(s, 'Europe/Paris', '2027-04-03', '2027-04-03T19:30:00+02:00'), 'accepted');
  assert.is(verdictOn(s, 'Europe/Paris', '2027-04-03', '2027-04-03T18:15:00+02:00'), 'OUTSIDE_SHIFT');
  assert.is(verdictOn(s, 'Europe/Paris', '2027-04-03', '2027-04-03T19:45:00+02:00'), 'OUTSIDE_SHIFT');
  assert.is(verdictOn(s, 'Europe/Paris', '2027-04-03', '2027-04-03T18:15:00+02:00', true), 'accepted');
});

t('hand-written grids: a shift past midnight on Saturdays only (Kathmandu, +05:45)', () => {
  const zone = 'Asia/Kathmandu';
  const s = shift({
    id: 's1',
    start_time: '23:00',
    end_time: '01:00',
    slot_interval_minutes: 60,
    days_of_week: [6],
  });
  // Its starts after midnight are on Sunday's calendar day, of Saturday's service day.
  assert.equal(isoList(slotStarts(s, '2027-04-03', zone)), [
    '2027-04-03T17:15:00.000Z',
    '2027-04-03T18:15:00.000Z',
    '2027-04-03T19:15:00.000Z',
  ]);
  assert.equal(slotStarts(s, '2027-04-02', zone), []);
  assert.equal(slotStarts(s, '2027-04-04', zone), []);
  assert.is(verdictOn(s, zone, '2027-04-03', '2027-04-04T00:00:00+05:45'), 'accepted');
  assert.is(verdictOn(s, zone, '2027-04-04', '2027-04-04T00:00:00+05:45'), 'OUTSIDE_SHIFT');
  assert.is(verdictOn(s, zone, '2027-04-03', '2027-04-04T00:30:00+05:45'), 'OUTSIDE_SHIFT');
});

t('hand-written grids: the night summer time starts (Paris, 28 March 2027: 02:00 does not exist)', () => {
  const s = shift({ id: 's1', start_time: '01:00', end_time: '04:00', slot_interval_minutes: 60 });
  assert.equal(isoList(slotStarts(s, '2027-03-28', 'Europe/Paris')), [
    '2027-03-28T00:00:00.000Z',
    '2027-03-28T01:00:00.000Z',
    '2027-03-28T02:00:00.000Z',
  ]);
});

t('a kept start still meets every other rule: the party the tables seat', () => {
  const s = shift({ id: 's1', slot_interval_minutes: 60 });
  const startMs = Date.parse('2027-04-03T19:15:00+11:00');
  const base = {
    restaurantId: 'rest_1',
    reservationId: 'res_1',
    externalId: null,
    serviceDate: '2027-04-03',
    shift: s,
    startMs,
    roomId: null,
    tableIds: null,
    force: false,
    purpose: 'update@1',
    moveId: 'move_1',
    ownStart: true,
    timeLimits: false,
    timezone: 'Australia/Lord_Howe',
    catalog: catalogOf(tables, [s]),
    now: new Date(startMs + 10 * MINUTE),
  };
  assert.equal(decideHold(initialCapacity, { ...base, partySize: 3 }).seating.table_ids, ['t4']);
  assert.throws(
    () => decideHold(initialCapacity, { ...base, partySize: 5 }),
    (err: unknown) => err instanceof BusinessRuleError && err.reason === 'PARTY_SIZE_OUT_OF_RANGE',
  );
});

t.run();
