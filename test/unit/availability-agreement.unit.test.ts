// GET /availability (searchSlots) and POST /availability/check (checkSlot), which the write side's
// recheck also is, must give one verdict for every start: a partner takes a slot from the search and
// books it. Checked over time zones with DST changes (Lord Howe's half hour among them), offsets of
// 30 and 45 minutes, shifts past midnight, several shifts, minimum notice and booking window at their
// exact bounds (now on and off the grid), max_covers and other seatings.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Booking } from '../../commands/availability/capacity';
import { type AvailabilityInput, checkSlot, searchSlots } from '../../commands/availability/check';
import { startsBetween } from '../../commands/availability/slots';
import { addDays, localDateOf, localToInstant } from '../../commands/availability/zone-time';
import type { Shift } from '../../commands/catalog/types';
import { booking, room, shift, table } from '../helpers/catalog';

const MINUTE = 60_000;
const ZONES = [
  'Europe/Paris',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Pacific/Chatham',
  'Pacific/Kiritimati',
  'Pacific/Pago_Pago',
];
// Days around DST changes (2027: Paris 28 Mar / 31 Oct, New York 14 Mar / 7 Nov, Lord Howe 4 Apr /
// 3 Oct, Chatham 4 Apr / 26 Sep), month and year ends, a 29 February.
const DAYS = [
  '2027-03-13',
  '2027-03-14',
  '2027-03-27',
  '2027-03-28',
  '2027-04-03',
  '2027-04-04',
  '2027-09-25',
  '2027-10-02',
  '2027-10-03',
  '2027-10-30',
  '2027-10-31',
  '2027-11-06',
  '2027-11-07',
  '2027-12-31',
  '2028-02-28',
  '2028-02-29',
];
const hhmm = (m: number) =>
  `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

const arbShift = (id: string) =>
  fc
    .record({
      start: fc.integer({ min: 0, max: 95 }).map((q) => q * 15),
      // Up to 10 hours of starts: past midnight for a late start.
      length: fc.integer({ min: 0, max: 40 }).map((q) => q * 15),
      interval: fc.constantFrom(15, 30, 45, 60),
      duration: fc.constantFrom(30, 60, 90, 150),
      notice: fc.constantFrom(0, 30, 45, 120, 1440),
      window: fc.constantFrom(null, 0, 1, 2),
      covers: fc.constantFrom(null, 2, 4, 8),
      days: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }),
    })
    .map(
      (r): Shift =>
        shift({
          id,
          start_time: hhmm(r.start),
          end_time: hhmm((r.start + r.length) % 1440),
          slot_interval_minutes: r.interval,
          duration_minutes: r.duration,
          minimum_notice_minutes: r.notice,
          booking_window_days: r.window,
          max_covers: r.covers,
          days_of_week: r.days,
        }),
    );

const TABLES = [table('t1', 1, 2), table('t2', 2, 4), table('t3', 4, 8)];

const arbCase = fc.record({
  zone: fc.constantFrom(...ZONES),
  day: fc.constantFrom(...DAYS),
  shifts: fc.tuple(arbShift('s1'), fc.option(arbShift('s2'), { nil: null })),
  // Now: some minutes from the first day's midnight, on the 15-minute grid or a second off it.
  nowMinutes: fc.integer({ min: -1440, max: 2880 }),
  nowOffGrid: fc.constantFrom(0, 1000, -1000),
  party: fc.integer({ min: 1, max: 9 }),
  seatings: fc.array(
    fc.record({
      table: fc.constantFrom('t1', 't2', 't3'),
      startMinutes: fc.integer({ min: 0, max: 200 }).map((q) => q * 15),
      minutes: fc.constantFrom(30, 60, 90, 150),
      party: fc.integer({ min: 1, max: 4 }),
      shift: fc.constantFrom('s1', 's2'),
    }),
    { maxLength: 6 },
  ),
});

type Case = typeof arbCase extends fc.Arbitrary<infer T> ? T : never;

function world(c: Case) {
  const shifts = c.shifts.filter((s): s is Shift => s !== null);
  const midnight = localToInstant(c.zone, c.day, 0) ?? Date.parse(`${c.day}T00:00:00Z`);
  const now = midnight + c.nowMinutes * MINUTE + c.nowOffGrid;
  const bookings: Booking[] = c.seatings.map((s, i) => {
    const startMs = midnight + s.startMinutes * MINUTE;
    return booking({
      reservation_id: `b${i}`,
      start_at: new Date(startMs).toISOString(),
      // Its service day as the restaurant reads it, so it counts in that day's covers.
      service_date: localDateOf(c.zone, startMs),
      shift_id: s.shift,
      tables: [s.table],
      minutes: s.minutes,
      party_size: s.party,
    });
  });
  const input: AvailabilityInput = {
    timezone: c.zone,
    suspended: false,
    catalog: { rooms: [room('room_main')], tables: TABLES, shifts },
    bookings,
    now: new Date(now),
  };
  // Two days of starts, from the first day's midnight.
  return { input, shifts, now, from: midnight, to: midnight + 2 * 1440 * MINUTE };
}

const t = suite('availability: the search and the check agree');

t(
  'property: a start the search offers is available by the check, with the same seating; any other is refused',
  () => {
    fc.assert(
      fc.property(arbCase, (c) => {
        const { input, shifts, from, to } = world(c);
        const slots = searchSlots(input, { from_ms: from, to_ms: to, party_size: c.party });
        const offered = new Map(slots.map((s) => [`${s.shift_id}|${s.start_ms}`, s]));
        for (const { shift: sh, startMs } of startsBetween(shifts, c.zone, from, to)) {
          const check = checkSlot(input, { start_ms: startMs, party_size: c.party, shift_id: sh.id });
          const slot = offered.get(`${sh.id}|${startMs}`);
          if (check.available !== (slot !== undefined)) return false;
          if (check.available && slot) {
            const s = check.slot;
            if (
              s.service_date !== slot.service_date ||
              s.end_ms !== slot.end_ms ||
              s.table_ids.join() !== slot.table_ids.join()
            )
              return false;
          }
        }
        return slots.every((s) => s.start_ms >= from && s.start_ms <= to);
      }),
      { numRuns: 400 },
    );
  },
);

t(
  "property: TOO_LATE is exactly a start before now + notice; TOO_FAR a service day past today + window (the restaurant's today)",
  () => {
    fc.assert(
      fc.property(arbCase, (c) => {
        const { input, shifts, now, from, to } = world({ ...c, seatings: [] });
        const today = localDateOf(c.zone, now);
        for (const { shift: sh, serviceDate, startMs } of startsBetween(shifts, c.zone, from, to)) {
          if (c.party < sh.min_party_size || c.party > 8) continue;
          const check = checkSlot(input, { start_ms: startMs, party_size: c.party, shift_id: sh.id });
          const late = startMs < now + sh.minimum_notice_minutes * MINUTE;
          const far = sh.booking_window_days !== null && serviceDate > addDays(today, sh.booking_window_days);
          const expected = late ? 'TOO_LATE' : far ? 'TOO_FAR' : null;
          const got = check.available ? null : check.failure_reason;
          // On an empty day only the time limits and the covers (a party above max_covers) refuse.
          const coversRefuse = sh.max_covers !== null && c.party > sh.max_covers;
          if (expected !== null ? got !== expected : got !== (coversRefuse ? 'MAX_COVERS_REACHED' : null))
            return false;
        }
        return true;
      }),
      { numRuns: 400 },
    );
  },
);

t(
  'the exact bounds: a start at now + notice is taken, a millisecond earlier is not; the last day of the window is taken',
  () => {
    const zone = 'Australia/Lord_Howe';
    // The night DST ends there (02:00 +11:00 back to 01:30 +10:30): a shift across it.
    const s = shift({
      id: 's1',
      start_time: '23:00',
      end_time: '03:00',
      slot_interval_minutes: 15,
      minimum_notice_minutes: 45,
      booking_window_days: 1,
    });
    const start = Date.parse('2027-04-04T02:15:00+10:30');
    const input = (nowMs: number): AvailabilityInput => ({
      timezone: zone,
      suspended: false,
      catalog: { rooms: [room('room_main')], tables: TABLES, shifts: [s] },
      bookings: [],
      now: new Date(nowMs),
    });
    const verdict = (nowMs: number) => {
      const r = checkSlot(input(nowMs), { start_ms: start, party_size: 2 });
      return r.available ? r.slot.service_date : r.failure_reason;
    };
    assert.is(verdict(start - 45 * MINUTE), '2027-04-03');
    assert.is(verdict(start - 45 * MINUTE + 1), 'TOO_LATE');
    // Service day 3 April: bookable from 2 April (today + 1), not from 1 April, in Lord Howe's calendar.
    assert.is(verdict(Date.parse('2027-04-02T00:00:00+11:00')), '2027-04-03');
    assert.is(verdict(Date.parse('2027-04-01T23:59:59+11:00')), 'TOO_FAR');
  },
);

t.run();
