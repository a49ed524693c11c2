// Wall-clock ↔ instant arithmetic in a restaurant's IANA time zone. Availability works on epoch
// milliseconds; these helpers are the only place that knows about offsets and DST.
import { IANAZone } from 'luxon';

const MINUTE = 60_000;
const DAY = 86_400_000;
const zones = new Map<string, IANAZone>();

function zoneOf(name: string): IANAZone {
  let z = zones.get(name);
  if (!z) {
    z = IANAZone.create(name);
    if (!z.isValid) throw new Error(`unknown time zone ${name}`);
    zones.set(name, z);
  }
  return z;
}

// Luxon reads offsets through Intl (~8 µs a call), too slow for hundreds of slots per request. An
// offset is constant over a UTC day unless a transition falls in it, so offsets are cached per day,
// and per hour on transition days: the same value at both ends of a span means no change inside it
// (real zones never change twice and back within an hour).
const HOUR = 3_600_000;
type Spans = Map<number, number | null>;
const daySpans = new Map<string, Spans>();
const hourSpans = new Map<string, Spans>();
const SPAN_LIMIT = 50_000;

function cachedSpan(cache: Map<string, Spans>, zone: string, size: number, ms: number): number | null {
  let spans = cache.get(zone);
  if (!spans) {
    spans = new Map();
    cache.set(zone, spans);
  }
  const index = Math.floor(ms / size);
  const known = spans.get(index);
  if (known !== undefined) return known;
  const z = zoneOf(zone);
  const start = z.offset(index * size);
  const constant = start === z.offset(index * size + size - 1) ? start : null;
  if (spans.size >= SPAN_LIMIT) spans.clear();
  spans.set(index, constant);
  return constant;
}

/** Offset from UTC in minutes at `ms` (e.g. 120 for Paris in summer). */
export function offsetAt(zone: string, ms: number): number {
  return (
    cachedSpan(daySpans, zone, DAY, ms) ?? cachedSpan(hourSpans, zone, HOUR, ms) ?? zoneOf(zone).offset(ms)
  );
}

/** "YYYY-MM-DD" → days since the epoch (a pure calendar number, no zone). */
export const dayNumber = (date: string): number => Date.parse(`${date}T00:00:00Z`) / DAY;
export const dateOfDayNumber = (n: number): string => new Date(n * DAY).toISOString().slice(0, 10);
export const addDays = (date: string, n: number): string => dateOfDayNumber(dayNumber(date) + n);

/** ISO weekday of a calendar date: 1 = Monday … 7 = Sunday. */
export function isoWeekday(date: string): number {
  const d = new Date(`${date}T00:00:00Z`).getUTCDay();
  return d === 0 ? 7 : d;
}

/** "HH:MM" → minutes after midnight. */
export function minutesOfDay(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

/**
 * The instant a wall-clock time happens in `zone`, or null when that time does not exist (the hour
 * skipped when DST starts). A time that happens twice (the hour repeated when DST ends) gives its
 * first occurrence, so slots keep increasing through the change.
 */
export function localToInstant(zone: string, date: string, minutes: number): number | null {
  const wall = dayNumber(date) * DAY + minutes * MINUTE;
  // Every reading of this wall time is an instant within 14 hours of it (offsets run from -12:00 to
  // +14:00), and a zone changes offset at most once within a day on either side, so the offsets a
  // whole day before and after cover them all. Half a day was too little for offsets above +12:00
  // (Auckland and Fiji in summer, Chatham's +13:45): their repeated hour got its second occurrence
  // and Chatham's last 45 minutes before it were refused as if they did not exist.
  const before = offsetAt(zone, wall - DAY);
  const after = offsetAt(zone, wall + DAY);
  let best: number | null = null;
  for (const o of before === after ? [before] : [before, after]) {
    const t = wall - o * MINUTE;
    if (offsetAt(zone, t) === o && (best === null || t < best)) best = t;
  }
  return best;
}

/** The calendar date (YYYY-MM-DD) of an instant in `zone`. */
export const localDateOf = (zone: string, ms: number): string =>
  new Date(ms + offsetAt(zone, ms) * MINUTE).toISOString().slice(0, 10);

// Answers repeat the same few thousand instants (the slots of the coming weeks): keep their text.
const formatted = new Map<string, Map<number, string>>();
const FORMATTED_LIMIT = 100_000;

/** RFC 3339 with the zone's offset at that instant and no fraction: 2026-05-01T19:00:00+02:00. */
export function formatInstant(zone: string, ms: number): string {
  let known = formatted.get(zone);
  if (!known) {
    known = new Map();
    formatted.set(zone, known);
  }
  const hit = known.get(ms);
  if (hit !== undefined) return hit;
  // RFC 3339 offsets are whole minutes; local mean times (Paris before 1911: +00:09:21, Monrovia
  // until 1972: -00:44:30) are not. Rounded, with the local time read at the rounded offset, the text
  // still names exactly this instant.
  const o = Math.round(offsetAt(zone, ms));
  const local = new Date(ms + o * MINUTE).toISOString().slice(0, 19);
  const abs = Math.abs(o);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  const text = `${local}${o < 0 ? '-' : '+'}${hh}:${mm}`;
  if (known.size >= FORMATTED_LIMIT) known.clear();
  known.set(ms, text);
  return text;
}

export const isValidZone = (zone: string): boolean => IANAZone.isValidZone(zone);
