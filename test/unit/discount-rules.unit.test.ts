// A discount's validity for a reservation's start (spec §2.6): pure rules, examples at the
// boundaries and properties over any start, zone and discount.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isoWeekday, minutesOfDay } from '../../commands/availability/zone-time';
import type { Discount } from '../../commands/catalog/types';
import {
  assertDiscountApplies,
  type DISCOUNT_REFUSALS,
  discountRefusal,
  wallClock,
} from '../../commands/reservations/discount-rules';
import { BusinessRuleError } from '../../src/core/errors';

const PARIS = 'Europe/Paris';
const ZONES = [PARIS, 'America/New_York', 'Asia/Kolkata', 'Pacific/Auckland', 'UTC', 'Pacific/Kiritimati'];

const discount = (o: Partial<Discount> = {}): Discount => ({
  id: 'disc',
  is_active: true,
  value: 10,
  message: 'm',
  start_date: null,
  end_date: null,
  start_time: '00:00',
  end_time: '23:59',
  days_of_week: [1, 2, 3, 4, 5, 6, 7],
  max_covers_per_day: 10,
  ...o,
});
const paris = (local: string) => Date.parse(`${local}+02:00`);
const lunch = discount({ start_time: '12:00', end_time: '14:00', days_of_week: [1, 2, 3, 4, 5] });

const t = suite('discount rules');

t('hours are the restaurant wall clock at the start, read to the minute, both ends inclusive', () => {
  // Wednesday 3 June 2026.
  assert.is(discountRefusal(lunch, paris('2026-06-03T12:00:00'), PARIS), null);
  assert.is(discountRefusal(lunch, paris('2026-06-03T14:00:00'), PARIS), null);
  assert.is(discountRefusal(lunch, paris('2026-06-03T14:00:30'), PARIS), null);
  assert.is(discountRefusal(lunch, paris('2026-06-03T14:01:00'), PARIS), 'DISCOUNT_OUTSIDE_HOURS');
  assert.is(discountRefusal(lunch, paris('2026-06-03T11:59:00'), PARIS), 'DISCOUNT_OUTSIDE_HOURS');
  assert.is(discountRefusal(lunch, paris('2026-06-03T21:00:00'), PARIS), 'DISCOUNT_OUTSIDE_HOURS');
  // The same instant is 06:00 in New York: the restaurant's zone decides.
  assert.is(
    discountRefusal(lunch, paris('2026-06-03T12:00:00'), 'America/New_York'),
    'DISCOUNT_OUTSIDE_HOURS',
  );
});

t("days of week: ISO, of the restaurant's calendar date of the start (not the service day)", () => {
  // Saturday 6 June.
  assert.is(discountRefusal(lunch, paris('2026-06-06T12:30:00'), PARIS), 'DISCOUNT_WRONG_DAY');
  // 00:30 on Saturday is Saturday, even when the shift began on Friday evening.
  const friday = discount({ days_of_week: [5] });
  assert.is(discountRefusal(friday, paris('2026-06-05T23:30:00'), PARIS), null);
  assert.is(discountRefusal(friday, paris('2026-06-06T00:30:00'), PARIS), 'DISCOUNT_WRONG_DAY');
  // Sunday is 7.
  assert.is(discountRefusal(discount({ days_of_week: [7] }), paris('2026-06-07T10:00:00'), PARIS), null);
});

t('dates are instants, both inclusive; inactive comes first', () => {
  const june = discount({ start_date: '2026-06-10T00:00:00+02:00', end_date: '2026-06-20T23:59:59+02:00' });
  assert.is(discountRefusal(june, paris('2026-06-09T23:59:59'), PARIS), 'DISCOUNT_NOT_STARTED');
  assert.is(discountRefusal(june, paris('2026-06-10T00:00:00'), PARIS), null);
  assert.is(discountRefusal(june, paris('2026-06-20T23:59:59'), PARIS), null);
  assert.is(discountRefusal(june, paris('2026-06-21T00:00:00'), PARIS), 'DISCOUNT_ENDED');
  const off = { ...june, is_active: false, days_of_week: [1] };
  assert.is(discountRefusal(off, paris('2026-06-01T03:00:00'), PARIS), 'DISCOUNT_INACTIVE');
});

t('DST: the wall clock follows the offset of the day', () => {
  // Paris, 29 March 2026: 02:00 → 03:00. 12:00 local is 10:00Z that day, 11:00Z the day before.
  assert.is(discountRefusal(lunch, Date.parse('2026-03-30T10:00:00Z'), PARIS), null);
  assert.is(discountRefusal(lunch, Date.parse('2026-03-27T11:00:00Z'), PARIS), null);
  assert.is(discountRefusal(lunch, Date.parse('2026-03-30T09:59:00Z'), PARIS), 'DISCOUNT_OUTSIDE_HOURS');
});

t('the 422 names the rule, the discount and the start as read', () => {
  try {
    assertDiscountApplies([lunch], 'disc', paris('2026-06-06T15:10:00'), PARIS);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, BusinessRuleError);
    const e = err as BusinessRuleError;
    assert.is(e.status, 422);
    assert.equal(
      [
        e.reason,
        e.details?.discount_id,
        e.details?.local_date,
        e.details?.local_time,
        e.details?.day_of_week,
      ],
      ['DISCOUNT_WRONG_DAY', 'disc', '2026-06-06', '15:10', 6],
    );
  }
  assert.throws(
    () => assertDiscountApplies([lunch], 'nope', paris('2026-06-03T12:00:00'), PARIS),
    (e: unknown) => e instanceof BusinessRuleError && e.reason === 'UNKNOWN_DISCOUNT',
  );
  assertDiscountApplies([lunch], 'disc', paris('2026-06-03T12:00:00'), PARIS);
});

// ---- properties -------------------------------------------------------------------------------

const arbInstant = fc.integer({
  min: Date.parse('2000-01-01T00:00:00Z'),
  max: Date.parse('2060-01-01T00:00:00Z'),
});
const arbZone = fc.constantFrom(...ZONES);
const arbTime = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
  .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
const arbDiscount = fc
  .record({
    is_active: fc.boolean(),
    start: fc.option(arbInstant, { nil: null }),
    end: fc.option(arbInstant, { nil: null }),
    times: fc.tuple(arbTime, arbTime).filter(([a, b]) => a < b),
    days: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }),
  })
  .map((x) =>
    discount({
      is_active: x.is_active,
      start_date: x.start === null ? null : new Date(x.start).toISOString(),
      end_date: x.end === null ? null : new Date(x.end).toISOString(),
      start_time: x.times[0],
      end_time: x.times[1],
      days_of_week: x.days,
    }),
  );

t('property: active, every day, all day, no dates: always accepted; inactive: never', () => {
  fc.assert(
    fc.property(arbInstant, arbZone, (ms, zone) => {
      return (
        discountRefusal(discount(), ms, zone) === null &&
        discountRefusal(discount({ is_active: false }), ms, zone) === 'DISCOUNT_INACTIVE'
      );
    }),
    { numRuns: 2000 },
  );
});

t('property: the verdict is exactly the conjunction of the rules, the first broken one reported', () => {
  fc.assert(
    fc.property(arbDiscount, arbInstant, arbZone, (d, ms, zone) => {
      const { date, msOfDay } = wallClock(zone, ms);
      const broken: (typeof DISCOUNT_REFUSALS)[number][] = [];
      if (!d.is_active) broken.push('DISCOUNT_INACTIVE');
      if (d.start_date && ms < Date.parse(d.start_date)) broken.push('DISCOUNT_NOT_STARTED');
      if (d.end_date && ms > Date.parse(d.end_date)) broken.push('DISCOUNT_ENDED');
      if (!d.days_of_week.includes(isoWeekday(date))) broken.push('DISCOUNT_WRONG_DAY');
      const minute = Math.floor(msOfDay / 60_000);
      if (minute < minutesOfDay(d.start_time) || minute > minutesOfDay(d.end_time))
        broken.push('DISCOUNT_OUTSIDE_HOURS');
      return discountRefusal(d, ms, zone) === (broken[0] ?? null);
    }),
    { numRuns: 3000 },
  );
});

t("property: the wall clock is the restaurant's (same as Intl's reading of the zone)", () => {
  fc.assert(
    fc.property(arbInstant, arbZone, (ms, zone) => {
      const parts = Object.fromEntries(
        new Intl.DateTimeFormat('en-CA', {
          timeZone: zone,
          year: 'numeric',
          month: '2-digit',
          day: '2-digit',
          hour: '2-digit',
          minute: '2-digit',
          hourCycle: 'h23',
        })
          .formatToParts(ms)
          .map((p) => [p.type, p.value]),
      );
      const { date, msOfDay } = wallClock(zone, ms);
      const hhmm = `${String(Math.floor(msOfDay / 3_600_000)).padStart(2, '0')}:${String(Math.floor((msOfDay % 3_600_000) / 60_000)).padStart(2, '0')}`;
      return date === `${parts.year}-${parts.month}-${parts.day}` && hhmm === `${parts.hour}:${parts.minute}`;
    }),
    { numRuns: 2000 },
  );
});

t.run();
