// The strict date and date-time parser (src/core/datetime.ts), property-tested: what it accepts names
// exactly the instant written and formats back to it; what does not exist on the calendar or the
// clock is refused, never rolled over.
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  formatDate,
  formatDateTime,
  instantBound,
  parseDate,
  parseDateTime,
} from '../../src/core/datetime';

const t = suite('datetime');
const RUNS = { numRuns: 2000 };

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

const year = fc.integer({ min: 0, max: 9999 });
const realDate = year.chain((y) =>
  fc
    .integer({ min: 1, max: 12 })
    .chain((m) => fc.integer({ min: 1, max: daysInMonth(y, m) }).map((d) => ({ y, m, d }))),
);
const offset = fc.oneof(
  fc.constant('Z'),
  fc
    .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
    .map(([s, h, m]) => `${s}${pad(h)}:${pad(m)}`),
);
const fraction = fc.oneof(
  fc.constant(''),
  fc.stringMatching(/^[0-9]{1,9}$/).map((digits) => `.${digits}`),
);
/** Canonical accepted date-times: uppercase T and Z, every field in range. */
const validDateTime = fc
  .tuple(
    realDate,
    fc.integer({ min: 0, max: 23 }),
    fc.integer({ min: 0, max: 59 }),
    fc.integer({ min: 0, max: 59 }),
    fraction,
    offset,
  )
  .map(
    ([{ y, m, d }, hh, mi, ss, f, o]) =>
      `${pad(y, 4)}-${pad(m)}-${pad(d)}T${pad(hh)}:${pad(mi)}:${pad(ss)}${f}${o}`,
  );

t('any accepted date-time formats back to the same text, hence the same instant', () => {
  fc.assert(
    fc.property(validDateTime, (text) => {
      const parsed = parseDateTime(text);
      assert.ok(parsed.ok, text);
      if (!parsed.ok) return;
      assert.is(formatDateTime(parsed.value), text);
      const again = parseDateTime(formatDateTime(parsed.value));
      assert.ok(again.ok);
      if (again.ok) {
        assert.is(again.value.epochSeconds, parsed.value.epochSeconds);
        assert.is(again.value.nanos, parsed.value.nanos);
      }
    }),
    RUNS,
  );
});

t('the instant agrees with Date.parse (what code past validation uses) and with luxon', () => {
  fc.assert(
    fc.property(validDateTime, (text) => {
      const parsed = parseDateTime(text);
      assert.ok(parsed.ok, text);
      if (!parsed.ok) return;
      assert.is(parsed.value.epochMs, Date.parse(text), text);
      // luxon's ISO reader keeps milliseconds only: compare on the truncated fraction.
      const ms = text.replace(/\.(\d{1,3})\d*/, '.$1');
      const oracle = DateTime.fromISO(ms, { setZone: true });
      assert.ok(oracle.isValid, text);
      assert.is(oracle.toMillis(), parsed.value.epochMs, text);
      assert.is(oracle.offset, parsed.value.offsetMinutes, text);
    }),
    RUNS,
  );
});

t('lowercase t and z (RFC 3339 §5.6) name the same instant as uppercase', () => {
  fc.assert(
    fc.property(validDateTime, (text) => {
      const lower = text.replace('T', 't').replace(/Z$/, 'z');
      const a = parseDateTime(text);
      const b = parseDateTime(lower);
      assert.ok(a.ok && b.ok);
      if (a.ok && b.ok) assert.is(formatDateTime(b.value), text);
    }),
    { numRuns: 200 },
  );
});

t(
  'a day that does not exist in its month is refused (2027-11-31, 2027-02-30, 29 Feb of common years)',
  () => {
    const badDay = year.chain((y) =>
      fc
        .integer({ min: 1, max: 12 })
        .chain((m) => fc.integer({ min: daysInMonth(y, m) + 1, max: 99 }).map((d) => ({ y, m, d }))),
    );
    fc.assert(
      fc.property(badDay, offset, ({ y, m, d }, o) => {
        const date = `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
        assert.not.ok(parseDate(date).ok, date);
        assert.not.ok(parseDateTime(`${date}T12:00:00${o}`).ok, date);
        assert.not.ok(DateTime.fromISO(date).isValid, `luxon agrees on ${date}`);
      }),
      RUNS,
    );
    for (const text of ['2027-11-31T19:45:00+01:00', '2027-02-30T19:00:00Z', '2027-02-29T00:00:00Z'])
      assert.not.ok(parseDateTime(text).ok, text);
    assert.ok(parseDateTime('2028-02-29T00:00:00Z').ok);
    assert.ok(parseDate('2000-02-29').ok);
    assert.not.ok(parseDate('1900-02-29').ok);
  },
);

t('months outside 01–12, hours past 23, minutes and seconds past 59, offsets past 23:59 are refused', () => {
  const field = fc.constantFrom('month', 'hour', 'minute', 'second', 'offset_h', 'offset_m');
  fc.assert(
    fc.property(field, fc.integer({ min: 0, max: 99 }), (which, n) => {
      const v = {
        month: '05',
        hour: '19',
        minute: '45',
        second: '00',
        offset_h: '01',
        offset_m: '00',
      };
      v[which] = pad(n);
      const text = `2027-${v.month}-01T${v.hour}:${v.minute}:${v.second}+${v.offset_h}:${v.offset_m}`;
      const limit = { month: 12, hour: 23, minute: 59, second: 59, offset_h: 23, offset_m: 59 }[which];
      const inRange = n <= limit && !(which === 'month' && n === 0);
      assert.is(parseDateTime(text).ok, inRange, text);
    }),
    RUNS,
  );
  assert.not.ok(parseDateTime('2027-01-01T24:00:00Z').ok, '24:00 is refused');
  assert.not.ok(parseDateTime('2016-12-31T23:59:60Z').ok, 'leap seconds are refused');
});

t('the form is strict: seconds, an offset, T (not a space), 1 to 9 fraction digits', () => {
  for (const text of [
    '2026-05-01T19:00+02:00',
    '2026-05-01T19:00:00',
    '2026-05-01 19:00:00Z',
    '2026-05-01T19:00:00 02:00',
    '2026-05-01T19:00:00.Z',
    '2026-05-01T19:00:00.1234567890Z',
    '2026-05-01T19:00:00+0200',
    '2026-05-01T19:00:00+02',
    '+002026-05-01T19:00:00Z',
    '26-05-01T19:00:00Z',
    '2026-5-1T19:00:00Z',
    ' 2026-05-01T19:00:00Z',
    '2026-05-01T19:00:00Z\n',
    '２０２６-05-01T19:00:00Z',
    '',
  ])
    assert.not.ok(parseDateTime(text).ok, JSON.stringify(text));
  const p = parseDateTime('2026-05-01T19:00:00.123456789+02:00');
  assert.ok(p.ok);
  if (p.ok) {
    assert.is(p.value.epochMs, Date.UTC(2026, 4, 1, 17, 0, 0, 123));
    assert.is(p.value.nanos, 123_456_789);
    assert.is(p.value.offset, '+02:00');
  }
  const unknown = parseDateTime('2026-05-01T19:00:00-00:00');
  assert.ok(unknown.ok && unknown.value.epochMs === Date.UTC(2026, 4, 1, 19));
});

t('refusals say what is wrong', () => {
  const reason = (text: string) => {
    const p = parseDateTime(text);
    return p.ok ? '' : p.reason;
  };
  assert.match(reason('2027-11-31T19:45:00+01:00'), 'no day 31 in 2027-11');
  assert.match(reason('2027-01-01T24:00:00Z'), 'hours run 00 to 23');
  assert.match(reason('2027-01-01T19:00'), 'RFC 3339');
});

t('calendar dates: accepted ones format back to themselves and agree with Date.UTC', () => {
  fc.assert(
    fc.property(realDate, ({ y, m, d }) => {
      const text = `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
      const p = parseDate(text);
      assert.ok(p.ok, text);
      if (!p.ok) return;
      assert.is(formatDate(p.value), text);
      assert.is(daysFromCivil(p.value) * 86_400_000, Date.parse(`${text}T00:00:00Z`), text);
      assert.equal(civilFromDays(daysFromCivil(p.value)), p.value);
    }),
    RUNS,
  );
  assert.is(isLeap(2024) && daysInMonth(2024, 2), 29);
});

t(
  'instantBound compares with stored toISOString instants in time order, whatever the year the offset reaches',
  () => {
    assert.is(instantBound('2026-05-01T19:00:00+02:00'), '2026-05-01T17:00:00.000Z');
    // Past 9999 in UTC: after every stored instant (toISOString would write "+010000-…", which sorts first).
    assert.is(instantBound('9999-12-31T23:59:59-14:00'), '~');
    assert.ok(instantBound('9999-12-31T23:59:59-14:00') > '9999-12-31T23:59:59.999Z');
    assert.is(instantBound('9999-12-31T23:59:59Z'), '9999-12-31T23:59:59.000Z');
    // Before 0000 in UTC: before every stored instant.
    assert.ok(instantBound('0000-01-01T00:00:00+14:00') < '0000-01-01T00:00:00.000Z');
    assert.throws(() => instantBound('2026-05-01T19:00:00'));
  },
);

t.run();
