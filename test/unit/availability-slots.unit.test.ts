import fc from 'fast-check';
import { IANAZone } from 'luxon';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  crossesMidnight,
  seatingMinutes,
  serviceDatesFor,
  slotStarts,
  startsAt,
  startsBetween,
} from '../../commands/availability/slots';
import {
  dayNumber,
  formatInstant,
  localDateOf,
  localToInstant,
  minutesOfDay,
  offsetAt,
} from '../../commands/availability/zone-time';
import { shift } from '../helpers/catalog';

const PARIS = 'Europe/Paris';
const t = suite('availability slots');
const fmt = (zone: string, list: readonly number[]) => list.map((ms) => formatInstant(zone, ms));

t('starts run from start_time to end_time inclusive, every interval', () => {
  const starts = fmt(PARIS, slotStarts(shift(), '2026-05-01', PARIS));
  assert.is(starts.length, 13);
  assert.is(starts[0], '2026-05-01T19:00:00+02:00');
  assert.is(starts[1], '2026-05-01T19:15:00+02:00');
  assert.is(starts.at(-1), '2026-05-01T22:00:00+02:00');
});

t('an end_time off the interval grid is never passed', () => {
  const s = shift({ start_time: '19:00', end_time: '21:50', slot_interval_minutes: 20 });
  const starts = fmt(PARIS, slotStarts(s, '2026-05-01', PARIS));
  assert.is(starts.length, 9);
  assert.is(starts.at(-1), '2026-05-01T21:40:00+02:00');
});

t('end_time equal to start_time offers a single start', () => {
  const s = shift({ start_time: '12:00', end_time: '12:00' });
  assert.equal(fmt(PARIS, slotStarts(s, '2026-05-01', PARIS)), ['2026-05-01T12:00:00+02:00']);
});

t('days_of_week are ISO (1 = Monday … 7 = Sunday) of the service day', () => {
  const mondays = shift({ days_of_week: [1] });
  assert.is(slotStarts(mondays, '2026-05-04', PARIS).length, 13); // a Monday
  assert.is(slotStarts(mondays, '2026-05-05', PARIS).length, 0);
  const sundays = shift({ days_of_week: [7] });
  assert.is(slotStarts(sundays, '2026-05-03', PARIS).length, 13); // a Sunday
  assert.is(slotStarts(sundays, '2026-05-04', PARIS).length, 0);
});

t('the offset follows the instant: winter +01:00, summer +02:00', () => {
  assert.is(fmt(PARIS, slotStarts(shift(), '2026-03-28', PARIS))[0], '2026-03-28T19:00:00+01:00');
  assert.is(fmt(PARIS, slotStarts(shift(), '2026-03-29', PARIS))[0], '2026-03-29T19:00:00+02:00');
  assert.is(fmt(PARIS, slotStarts(shift(), '2026-10-25', PARIS))[0], '2026-10-25T19:00:00+01:00');
});

t('DST start (Paris, 29 March 2026): the skipped hour offers no start', () => {
  const night = shift({ start_time: '01:00', end_time: '04:00', slot_interval_minutes: 30 });
  assert.equal(fmt(PARIS, slotStarts(night, '2026-03-29', PARIS)), [
    '2026-03-29T01:00:00+01:00',
    '2026-03-29T01:30:00+01:00',
    '2026-03-29T03:00:00+02:00',
    '2026-03-29T03:30:00+02:00',
    '2026-03-29T04:00:00+02:00',
  ]);
});

t('DST end (Paris, 25 October 2026): the repeated hour is offered once, at its first occurrence', () => {
  const night = shift({ start_time: '01:00', end_time: '04:00', slot_interval_minutes: 30 });
  const starts = slotStarts(night, '2026-10-25', PARIS);
  assert.equal(fmt(PARIS, starts), [
    '2026-10-25T01:00:00+02:00',
    '2026-10-25T01:30:00+02:00',
    '2026-10-25T02:00:00+02:00',
    '2026-10-25T02:30:00+02:00',
    '2026-10-25T03:00:00+01:00',
    '2026-10-25T03:30:00+01:00',
    '2026-10-25T04:00:00+01:00',
  ]);
  for (let i = 1; i < starts.length; i++) assert.ok((starts[i] as number) > (starts[i - 1] as number));
});

t(
  'offsets above +12:00: Chatham keeps the times before its repeated hour, Auckland repeats at the first',
  () => {
    // Chatham's summer offset is +13:45; on 5 April 2026 its clocks go from 03:45 back to 02:45.
    const chatham = 'Pacific/Chatham';
    const night = shift({ start_time: '02:00', end_time: '04:00', slot_interval_minutes: 30 });
    assert.equal(fmt(chatham, slotStarts(night, '2026-04-05', chatham)), [
      '2026-04-05T02:00:00+13:45',
      '2026-04-05T02:30:00+13:45',
      '2026-04-05T03:00:00+13:45',
      '2026-04-05T03:30:00+13:45',
      '2026-04-05T04:00:00+12:45',
    ]);
    // Auckland (+13:00 in summer) goes from 03:00 back to 02:00 on 5 April 2026.
    const auckland = 'Pacific/Auckland';
    assert.equal(fmt(auckland, slotStarts(night, '2026-04-05', auckland)), [
      '2026-04-05T02:00:00+13:00',
      '2026-04-05T02:30:00+13:00',
      '2026-04-05T03:00:00+12:00',
      '2026-04-05T03:30:00+12:00',
      '2026-04-05T04:00:00+12:00',
    ]);
  },
);

t('a seating lasts its minutes in elapsed time across a DST change', () => {
  const start = localToInstant(PARIS, '2026-03-29', 90) as number; // 01:30+01:00
  assert.is(formatInstant(PARIS, start + 90 * 60_000), '2026-03-29T04:00:00+02:00');
});

t('a shift past midnight: late starts fall on the next day and belong to the service day', () => {
  const late = shift({
    start_time: '22:00',
    end_time: '00:30',
    slot_interval_minutes: 30,
    days_of_week: [5],
  });
  assert.ok(crossesMidnight(late));
  assert.equal(fmt(PARIS, slotStarts(late, '2026-05-01', PARIS)), [
    '2026-05-01T22:00:00+02:00',
    '2026-05-01T22:30:00+02:00',
    '2026-05-01T23:00:00+02:00',
    '2026-05-01T23:30:00+02:00',
    '2026-05-02T00:00:00+02:00',
    '2026-05-02T00:30:00+02:00',
  ]);
  // Saturday is not one of its days: nothing starts on Saturday evening, but Friday's 00:30 does.
  assert.is(slotStarts(late, '2026-05-02', PARIS).length, 0);
  const at = Date.parse('2026-05-02T00:30:00+02:00');
  assert.equal(
    startsAt([late], PARIS, at).map((s) => s.serviceDate),
    ['2026-05-01'],
  );
  const found = startsBetween([late], PARIS, Date.parse('2026-05-02T00:00:00+02:00'), at);
  assert.equal(
    found.map((s) => [formatInstant(PARIS, s.startMs), s.serviceDate]),
    [
      ['2026-05-02T00:00:00+02:00', '2026-05-01'],
      ['2026-05-02T00:30:00+02:00', '2026-05-01'],
    ],
  );
});

t('a shift ending at midnight offers 00:00 of the next day as its last start', () => {
  const s = shift({ start_time: '19:00', end_time: '00:00', slot_interval_minutes: 60 });
  assert.equal(fmt(PARIS, slotStarts(s, '2026-05-01', PARIS)).slice(-2), [
    '2026-05-01T23:00:00+02:00',
    '2026-05-02T00:00:00+02:00',
  ]);
});

t('window bounds are inclusive at both ends', () => {
  const from = Date.parse('2026-05-01T19:00:00+02:00');
  const to = Date.parse('2026-05-01T19:30:00+02:00');
  assert.equal(
    startsBetween([shift()], PARIS, from, to).map((s) => formatInstant(PARIS, s.startMs)),
    ['2026-05-01T19:00:00+02:00', '2026-05-01T19:15:00+02:00', '2026-05-01T19:30:00+02:00'],
  );
  assert.is(startsBetween([shift()], PARIS, from + 1, to - 1).length, 1);
});

t('starts of several shifts are ordered by instant, then by the shifts order', () => {
  const a = shift({ id: 'a', start_time: '19:00', end_time: '19:30' });
  const b = shift({ id: 'b', start_time: '19:15', end_time: '19:15' });
  const day = Date.parse('2026-05-01T00:00:00+02:00');
  const found = startsBetween([b, a], PARIS, day, day + 86_400_000);
  assert.equal(
    found.map((s) => s.shift.id),
    ['a', 'b', 'a', 'a'],
  );
});

t('the seating length follows the first duration rule that fits the party', () => {
  const s = shift({
    duration_minutes: 150,
    durations_by_party_size: [
      { max_party_size: 2, duration_minutes: 90 },
      { max_party_size: 6, duration_minutes: 120 },
    ],
  });
  assert.is(seatingMinutes(s, 1), 90);
  assert.is(seatingMinutes(s, 2), 90);
  assert.is(seatingMinutes(s, 3), 120);
  assert.is(seatingMinutes(s, 7), 150);
});

// ---- properties -------------------------------------------------------------------------------

const ZONES = [
  'Europe/Paris',
  'America/New_York',
  'Australia/Sydney',
  'Asia/Kolkata',
  'UTC',
  'America/Santiago',
];
const hhmm = (m: number) =>
  `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
const arbShift = fc
  .record({
    start: fc.integer({ min: 0, max: 1439 }),
    end: fc.integer({ min: 0, max: 1439 }),
    interval: fc.constantFrom(5, 10, 15, 20, 30, 45, 60, 90),
    days: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }),
  })
  .map((r) =>
    shift({
      start_time: hhmm(r.start),
      end_time: hhmm(r.end),
      slot_interval_minutes: r.interval,
      days_of_week: r.days,
    }),
  );
// Around both 2026 Paris DST changes and any day of 2020–2030.
const arbDate = fc.oneof(
  fc.constantFrom('2026-03-28', '2026-03-29', '2026-03-30', '2026-10-24', '2026-10-25', '2026-10-26'),
  fc
    .integer({ min: dayNumber('2020-01-01'), max: dayNumber('2030-12-31') })
    .map((n) => new Date(n * 86_400_000).toISOString().slice(0, 10)),
);

/** Minutes after the service day's midnight, read on the wall clock at instant ms. */
function wallMinutes(zone: string, serviceDate: string, ms: number): number {
  const local = formatInstant(zone, ms);
  return (
    (dayNumber(localDateOf(zone, ms)) - dayNumber(serviceDate)) * 1440 + minutesOfDay(local.slice(11, 16))
  );
}

t('property: every start is on the shift grid, within its bounds, strictly increasing', () => {
  fc.assert(
    fc.property(fc.constantFrom(...ZONES), arbShift, arbDate, (zone, s, date) => {
      const starts = slotStarts(s, date, zone);
      const first = minutesOfDay(s.start_time);
      const last = first + ((minutesOfDay(s.end_time) - first + 1440) % 1440);
      let prev = Number.NEGATIVE_INFINITY;
      for (const ms of starts) {
        const m = wallMinutes(zone, date, ms);
        if (m < first || m > last || (m - first) % s.slot_interval_minutes !== 0) return false;
        if (ms <= prev) return false;
        prev = ms;
      }
      return true;
    }),
    { numRuns: 500 },
  );
});

t('property: on a day without an offset change, the count is the grid size', () => {
  fc.assert(
    fc.property(fc.constantFrom(...ZONES), arbShift, arbDate, (zone, s, date) => {
      const first = minutesOfDay(s.start_time);
      const span = (minutesOfDay(s.end_time) - first + 1440) % 1440;
      const midnight = Date.parse(`${date}T00:00:00Z`);
      const steady =
        formatInstant(zone, midnight - 86_400_000).slice(19) ===
        formatInstant(zone, midnight + 2 * 86_400_000).slice(19);
      fc.pre(steady);
      const expected = s.days_of_week.includes(((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7) + 1)
        ? Math.floor(span / s.slot_interval_minutes) + 1
        : 0;
      return slotStarts(s, date, zone).length === expected;
    }),
    { numRuns: 500 },
  );
});

t('property: startsBetween returns exactly the starts inside the inclusive window', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...ZONES),
      fc.array(arbShift, { minLength: 1, maxLength: 3 }),
      arbDate,
      fc.integer({ min: -36 * 60, max: 60 * 60 }),
      fc.integer({ min: 0, max: 72 * 60 }),
      (zone, shifts, date, fromOffset, length) => {
        const distinct = shifts.map((s, i) => ({ ...s, id: `s${i}` }));
        const base = Date.parse(`${date}T00:00:00Z`);
        const from = base + fromOffset * 60_000;
        const to = from + length * 60_000;
        const got = startsBetween(distinct, zone, from, to).map((x) => `${x.shift.id}@${x.startMs}`);
        // Brute force: every start of every service day around the window.
        const want: string[] = [];
        for (let d = -3; d <= 5; d++) {
          const day = new Date(base + d * 86_400_000).toISOString().slice(0, 10);
          for (const s of distinct)
            for (const ms of slotStarts(s, day, zone)) if (ms >= from && ms <= to) want.push(`${s.id}@${ms}`);
        }
        return got.length === want.length && want.every((w) => got.includes(w));
      },
    ),
    { numRuns: 300 },
  );
});

t('property: every generated start is recognised by startsAt with its service day', () => {
  fc.assert(
    fc.property(fc.constantFrom(...ZONES), arbShift, arbDate, (zone, s, date) => {
      for (const ms of slotStarts(s, date, zone))
        if (!startsAt([s], zone, ms).some((x) => x.serviceDate === date)) return false;
      return true;
    }),
    { numRuns: 300 },
  );
});

t('property: the cached offset equals the zone database at any instant, transitions included', () => {
  const transition = Date.parse('2026-03-29T01:00:00Z');
  const ms = fc.oneof(
    fc.integer({ min: Date.parse('2020-01-01T00:00:00Z'), max: Date.parse('2031-01-01T00:00:00Z') }),
    fc.integer({ min: transition - 7_200_000, max: transition + 7_200_000 }),
  );
  fc.assert(
    fc.property(
      fc.constantFrom(...ZONES),
      ms,
      (zone, at) => offsetAt(zone, at) === IANAZone.create(zone).offset(at),
    ),
    { numRuns: 2000 },
  );
});

t('property: a wall time reads as its first instant, or null when it does not exist, in any zone', () => {
  // Offsets from -12:00 to +14:00, with 30- and 45-minute ones and DST shifts of 30 minutes and 2 hours.
  const zones = [
    ...ZONES,
    'Pacific/Auckland',
    'Pacific/Chatham',
    'Pacific/Apia',
    'Pacific/Tongatapu',
    'Pacific/Fiji',
    'Pacific/Kiritimati',
    'Australia/Lord_Howe',
    'Australia/Adelaide',
    'America/St_Johns',
    'Antarctica/Troll',
    'Etc/GMT+12',
  ];
  const reference = (zone: string, date: string, minutes: number): number | null => {
    const z = IANAZone.create(zone);
    const wall = dayNumber(date) * 86_400_000 + minutes * 60_000;
    // Every offset in force within 15 hours of the wall time: a reading of it is among them.
    const offsets = new Set<number>();
    for (let h = -15; h <= 15; h++) offsets.add(z.offset(wall + h * 3_600_000));
    let first: number | null = null;
    for (const o of offsets) {
      const at = wall - o * 60_000;
      if (z.offset(at) === o && (first === null || at < first)) first = at;
    }
    return first;
  };
  // Days around each zone's offset changes of 2010–2030, and any day.
  const changeDays = (zone: string): string[] => {
    const z = IANAZone.create(zone);
    const out: string[] = [];
    const at = (d: number) => z.offset(d * 86_400_000);
    for (let w = dayNumber('2010-01-01'); w < dayNumber('2031-01-01'); w += 7) {
      if (at(w) === at(w + 7)) continue;
      for (let d = w; d < w + 7; d++)
        if (at(d) !== at(d + 1))
          for (const n of [d - 1, d, d + 1]) out.push(new Date(n * 86_400_000).toISOString().slice(0, 10));
    }
    return out.length ? out : ['2026-01-01'];
  };
  const days = new Map(zones.map((z) => [z, changeDays(z)]));
  const arbCase = fc.constantFrom(...zones).chain((zone) =>
    fc.tuple(
      fc.constant(zone),
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...(days.get(zone) as string[])) },
        fc
          .integer({ min: dayNumber('2010-01-01'), max: dayNumber('2030-12-31') })
          .map((n) => new Date(n * 86_400_000).toISOString().slice(0, 10)),
      ),
      fc.integer({ min: 0, max: 1439 }),
    ),
  );
  fc.assert(
    fc.property(arbCase, ([zone, date, minutes]) => {
      assert.is(
        localToInstant(zone, date, minutes),
        reference(zone, date, minutes),
        `${zone} ${date} ${minutes}`,
      );
    }),
    { numRuns: 3000 },
  );
});

t('property: an instant is written in RFC 3339 that reads back as it, local mean times included', () => {
  // Paris kept +00:09:21 until 1911, Monrovia -00:44:30 until 1972: RFC 3339 offsets are whole minutes.
  assert.is(formatInstant(PARIS, Date.parse('1900-01-01T18:00:00Z')), '1900-01-01T18:09:00+00:09');
  assert.is(
    formatInstant('Africa/Monrovia', Date.parse('1960-06-01T12:00:00Z')),
    '1960-06-01T11:16:00-00:44',
  );
  const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;
  fc.assert(
    fc.property(
      fc.constantFrom(...ZONES, 'Africa/Monrovia', 'Europe/Amsterdam', 'Asia/Kolkata', 'Pacific/Chatham'),
      fc.integer({
        min: Date.parse('1800-01-01T00:00:00Z') / 60_000,
        max: Date.parse('2100-01-01T00:00:00Z') / 60_000,
      }),
      (zone, minute) => {
        const text = formatInstant(zone, minute * 60_000);
        return RFC3339.test(text) && Date.parse(text) === minute * 60_000;
      },
    ),
    { numRuns: 3000 },
  );
});

t('serviceDatesFor includes the day before the window for shifts past midnight', () => {
  assert.equal(
    serviceDatesFor(PARIS, Date.parse('2026-05-02T10:00:00+02:00'), Date.parse('2026-05-03T10:00:00+02:00')),
    ['2026-05-01', '2026-05-02', '2026-05-03'],
  );
});

t.run();
