// The one reader of dates and date-times that come from outside (bodies, query strings, custom
// fields). JavaScript's Date.parse is lenient in ways a partner cannot see: "2027-11-31" becomes
// 1 December, "T24:00:00" the next day, "2027-02-30" 2 March. A value is accepted here only when it
// names exactly one instant (or day) as written, so whatever is accepted formats back to itself.
//
// Accepted date-time (RFC 3339 §5.6, with these choices):
//   YYYY-MM-DD "T" HH:MM:SS [.fraction] offset
//   - seconds are required (RFC 3339 has no minute-only form); a fraction has 1 to 9 digits;
//   - offset is Z or ±HH:MM within ±23:59 (-00:00, "offset unknown", is still the UTC instant);
//   - "t" and "z" may be lowercase (RFC 3339 §5.6 note); a space instead of "T" is refused, since in
//     a query string it is what an unencoded "+" turns into;
//   - hours 00–23 (no 24:00), minutes and seconds 00–59: a leap second (:60) is refused, as neither
//     JavaScript nor our stores can represent it;
//   - years 0000–9999, proleptic Gregorian calendar, real days only (29 February in leap years).
// Accepted date: YYYY-MM-DD with the same calendar rules.

export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

export interface ParsedDateTime {
  /** Whole seconds since 1970-01-01T00:00:00Z (negative before). */
  epochSeconds: number;
  /** Nanoseconds within that second, 0–999 999 999. */
  nanos: number;
  /** Milliseconds since the epoch, the fraction truncated: what Date.parse gives for the same text. */
  epochMs: number;
  /** Minutes east of UTC, as written. */
  offsetMinutes: number;
  /** The offset as written, normalised: "Z" or "±HH:MM". */
  offset: string;
  /** Digits of the fraction as written (0 when none), so formatting gives the same text back. */
  fractionDigits: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export const DATE_TIME_FORMAT =
  'an RFC 3339 date-time with seconds and an explicit offset, e.g. 2026-05-01T19:00:00+02:00 or 2026-05-01T17:00:00Z';
export const DATE_FORMAT = 'a calendar date YYYY-MM-DD, e.g. 2026-05-01';

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);

const fail = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

function calendar(y: string, m: string, d: string): Parsed<CalendarDate> {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12) return fail(`has no month ${m} (months run 01 to 12)`);
  const last = daysInMonth(year, month);
  if (day < 1 || day > last) return fail(`has no day ${d} in ${y}-${m} (that month has ${last} days)`);
  return { ok: true, value: { year, month, day } };
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
export function daysFromCivil({ year, month, day }: CalendarDate): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The inverse of daysFromCivil. */
export function civilFromDays(days: number): CalendarDate {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** A calendar date YYYY-MM-DD that exists. */
export function parseDate(text: string): Parsed<CalendarDate> {
  const m = DATE.exec(text);
  if (!m) return fail(`must be ${DATE_FORMAT}`);
  return calendar(m[1] as string, m[2] as string, m[3] as string);
}

/** An RFC 3339 date-time with an explicit offset, naming exactly the instant written. */
export function parseDateTime(text: string): Parsed<ParsedDateTime> {
  const m = DATE_TIME.exec(text);
  if (!m) return fail(`must be ${DATE_TIME_FORMAT}`);
  const [, y, mo, d, hh, mi, ss, frac, z, sign, oh, om] = m as unknown as (string | undefined)[];
  const date = calendar(y as string, mo as string, d as string);
  if (!date.ok) return date as Parsed<never>;
  const hour = Number(hh);
  const minute = Number(mi);
  const second = Number(ss);
  if (hour > 23) return fail(`has hour ${hh}: hours run 00 to 23 (write 24:00 as 00:00 of the next day)`);
  if (minute > 59) return fail(`has minute ${mi}: minutes run 00 to 59`);
  if (second > 59) return fail(`has second ${ss}: seconds run 00 to 59 (leap seconds are not accepted)`);
  let offsetMinutes = 0;
  let offset = 'Z';
  if (!z) {
    const h = Number(oh);
    const mm = Number(om);
    if (h > 23 || mm > 59) return fail(`has offset ${sign}${oh}:${om}: offsets run -23:59 to +23:59`);
    offsetMinutes = (sign === '-' ? -1 : 1) * (h * 60 + mm);
    offset = `${sign}${oh}:${om}`;
  }
  const local = daysFromCivil(date.value) * 86_400 + hour * 3600 + minute * 60 + second;
  const epochSeconds = local - offsetMinutes * 60;
  const nanos = frac ? Number(frac.padEnd(9, '0')) : 0;
  return {
    ok: true,
    value: {
      epochSeconds,
      nanos,
      epochMs: epochSeconds * 1000 + Math.floor(nanos / 1e6),
      offsetMinutes,
      offset,
      fractionDigits: frac?.length ?? 0,
    },
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export const formatDate = (d: CalendarDate): string => `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;

/** Writes a parsed date-time back in its own offset: formatDateTime(parseDateTime(s)) is s, upper-cased. */
export function formatDateTime(p: ParsedDateTime): string {
  const local = p.epochSeconds + p.offsetMinutes * 60;
  const days = Math.floor(local / 86_400);
  const inDay = local - days * 86_400;
  const fraction = p.fractionDigits ? `.${pad(p.nanos, 9).slice(0, p.fractionDigits)}` : '';
  const time = `${pad(Math.floor(inDay / 3600))}:${pad(Math.floor((inDay % 3600) / 60))}:${pad(inDay % 60)}`;
  return `${formatDate(civilFromDays(days))}T${time}${fraction}${p.offset}`;
}

/**
 * The instant of a validated date-time as a bound on stored instants, which are `toISOString()` text
 * of years 0000 to 9999 and compare as text in time order. An offset carries an input of year 9999 past
 * it (9999-12-31T23:59:59-01:00), whose toISOString is "+010000-…": "+" sorts before every digit, so
 * a bound after every stored instant compared as one before them all (updated_since far ahead returned
 * everything). Past 9999 the bound is "~", after every stored value; an instant before year 0000
 * ("-000001-…") sorts before them all already, as it should.
 */
export function instantBound(text: string): string {
  const parsed = parseDateTime(text);
  if (!parsed.ok) throw new Error(`instantBound takes a validated date-time: ${parsed.reason}`);
  const iso = new Date(parsed.value.epochMs).toISOString();
  return iso.startsWith('+') ? '~' : iso;
}

/** True when `text` is accepted by parseDateTime. */
export const isDateTime = (text: string): boolean => parseDateTime(text).ok;
/** True when `text` is accepted by parseDate. */
export const isDate = (text: string): boolean => parseDate(text).ok;
