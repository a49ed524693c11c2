// Whether a discount may be attached to a reservation (spec §2.6: applicability comes from is_active,
// start_date, end_date, start_time, end_time, days_of_week). Pure. Every rule is judged against the
// reservation's start, not against now: a discount is for the meal it is attached to.
//   - start_date / end_date are instants, both inclusive (a start exactly at end_date still applies);
//   - start_time / end_time are the restaurant's wall clock at the start, read to the minute (HH:MM,
//     seconds dropped), both inclusive like a shift's first and last start: a "12:00–14:00"
//     discount covers a 14:00 start, not 14:01;
//   - days_of_week is ISO 8601 (1 = Monday … 7 = Sunday) of the restaurant's calendar date of the
//     start. That is not the service day: a 00:30 start of a shift that began the evening before is
//     on the next calendar day, and a discount's hours never cross midnight (end_time > start_time).
// max_covers_per_day is not enforced: counting a discount's covers soundly needs a write-side
// stream per discount and day (capacity streams do not know discounts), and a read model must not
// decide it.
import { BusinessRuleError } from '../../src/core/errors';
import { isoWeekday, minutesOfDay, offsetAt } from '../availability/zone-time';
import type { Discount } from '../catalog/types';

const MINUTE = 60_000;
const DAY = 86_400_000;

export const DISCOUNT_REFUSALS = [
  'DISCOUNT_INACTIVE',
  'DISCOUNT_NOT_STARTED',
  'DISCOUNT_ENDED',
  'DISCOUNT_WRONG_DAY',
  'DISCOUNT_OUTSIDE_HOURS',
] as const;
export type DiscountRefusal = (typeof DISCOUNT_REFUSALS)[number];

/** The restaurant's wall clock at an instant: its calendar date and the ms since its midnight. */
export function wallClock(zone: string, ms: number): { date: string; msOfDay: number } {
  const local = ms + offsetAt(zone, ms) * MINUTE;
  const msOfDay = ((local % DAY) + DAY) % DAY;
  return { date: new Date(local - msOfDay).toISOString().slice(0, 10), msOfDay };
}

/** The first rule (in DISCOUNT_REFUSALS order) the discount breaks for a start, or null when it applies. */
export function discountRefusal(d: Discount, startMs: number, zone: string): DiscountRefusal | null {
  if (!d.is_active) return 'DISCOUNT_INACTIVE';
  if (d.start_date !== null && startMs < Date.parse(d.start_date)) return 'DISCOUNT_NOT_STARTED';
  if (d.end_date !== null && startMs > Date.parse(d.end_date)) return 'DISCOUNT_ENDED';
  const { date, msOfDay } = wallClock(zone, startMs);
  if (!d.days_of_week.includes(isoWeekday(date))) return 'DISCOUNT_WRONG_DAY';
  const minute = Math.floor(msOfDay / MINUTE);
  if (minute < minutesOfDay(d.start_time) || minute > minutesOfDay(d.end_time))
    return 'DISCOUNT_OUTSIDE_HOURS';
  return null;
}

function explain(reason: DiscountRefusal, d: Discount): string {
  switch (reason) {
    case 'DISCOUNT_INACTIVE':
      return `Discount ${d.id} is not active`;
    case 'DISCOUNT_NOT_STARTED':
      return `Discount ${d.id} applies from ${d.start_date}; the reservation starts before`;
    case 'DISCOUNT_ENDED':
      return `Discount ${d.id} applied until ${d.end_date}; the reservation starts after`;
    case 'DISCOUNT_WRONG_DAY':
      return `Discount ${d.id} applies on ISO days ${d.days_of_week.join(',')} (1 = Monday) in the restaurant's time zone; the reservation starts on another day`;
    case 'DISCOUNT_OUTSIDE_HOURS':
      return `Discount ${d.id} applies to starts from ${d.start_time} to ${d.end_time} (inclusive, restaurant time); the reservation starts outside them`;
  }
}

/**
 * 422 with `details.reason` UNKNOWN_DISCOUNT or the broken rule (and the discount's values for it),
 * unless the discount may be attached to a reservation starting at `startMs`.
 */
export function assertDiscountApplies(
  discounts: readonly Discount[],
  discountId: string,
  startMs: number,
  zone: string,
): void {
  const d = discounts.find((x) => x.id === discountId);
  if (!d)
    throw new BusinessRuleError('UNKNOWN_DISCOUNT', 'No discount of this restaurant has this discount_id');
  const reason = discountRefusal(d, startMs, zone);
  if (reason === null) return;
  const { date, msOfDay } = wallClock(zone, startMs);
  const hh = String(Math.floor(msOfDay / 3_600_000)).padStart(2, '0');
  const mm = String(Math.floor((msOfDay % 3_600_000) / MINUTE)).padStart(2, '0');
  throw new BusinessRuleError(reason, explain(reason, d), {
    discount_id: d.id,
    is_active: d.is_active,
    start_date: d.start_date,
    end_date: d.end_date,
    start_time: d.start_time,
    end_time: d.end_time,
    days_of_week: d.days_of_week,
    local_date: date,
    local_time: `${hh}:${mm}`,
    day_of_week: isoWeekday(date),
  });
}
