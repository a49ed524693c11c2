// Slot generation: which start instants a shift offers on a service day. Pure; no bookings involved.
//
// Decisions (documented in the OpenAPI description of GET /availability too):
// - Starts run on the restaurant's wall clock from start_time to end_time inclusive, every
//   slot_interval_minutes. An end_time earlier than start_time means the shift runs past midnight;
//   those late starts still belong to the service day the shift began on (its days_of_week, its
//   max_covers, its capacity stream). end_time equal to start_time is a single start.
// - On the day DST starts, wall times that do not exist are skipped (no 02:30 in Paris); on the day it
//   ends, a repeated wall time is offered once, at its first occurrence.
// - Seating lengths are elapsed minutes: a 90-minute seating lasts 90 real minutes across a change.

import { trimOldest } from '../../src/core/bounded-map';
import type { Shift } from '../catalog/types';
import { addDays, isoWeekday, localDateOf, localToInstant, minutesOfDay } from './zone-time';

const MINUTE = 60_000;
const DAY_MINUTES = 1440;

/** Does the shift run on this service day (its ISO weekday in the restaurant's calendar)? */
export const shiftRunsOn = (shift: Shift, serviceDate: string): boolean =>
  shift.days_of_week.includes(isoWeekday(serviceDate));

/** The shift's last start, in minutes after the service day's midnight (may exceed 1440). */
export function lastStartMinutes(shift: Pick<Shift, 'start_time' | 'end_time'>): number {
  const start = minutesOfDay(shift.start_time);
  const end = minutesOfDay(shift.end_time);
  return end < start ? end + DAY_MINUTES : end;
}

/** True when some starts of the shift fall on the calendar day after its service day. */
export const crossesMidnight = (shift: Pick<Shift, 'start_time' | 'end_time'>): boolean =>
  lastStartMinutes(shift) >= DAY_MINUTES;

// Slot lists depend only on the configuration and the day, and the read side asks for the same days
// over and over with the same (cached) shift objects: keep them per shift object, then per
// configuration text for shift objects seen for the first time. Both bounded.
const byShift = new WeakMap<Shift, Map<string, readonly number[]>>();
const byConfig = new Map<string, readonly number[]>();
const CACHE_LIMIT = 20_000;

/**
 * Start instants (epoch ms, ascending) the shift offers on `serviceDate` in `zone`; empty when the
 * shift does not run that day. The array is shared: do not modify it.
 */
export function slotStarts(shift: Shift, serviceDate: string, zone: string): readonly number[] {
  let mine = byShift.get(shift);
  if (!mine) {
    mine = new Map();
    byShift.set(shift, mine);
  }
  const day = `${zone}|${serviceDate}`;
  const known = mine.get(day);
  if (known) return known;
  const out = computeStarts(shift, serviceDate, zone);
  if (mine.size >= CACHE_LIMIT) mine.clear();
  mine.set(day, out);
  return out;
}

const NONE: readonly number[] = Object.freeze([]);

function computeStarts(shift: Shift, serviceDate: string, zone: string): readonly number[] {
  if (!shiftRunsOn(shift, serviceDate)) return NONE;
  const key = `${zone}|${serviceDate}|${shift.start_time}|${shift.end_time}|${shift.slot_interval_minutes}`;
  const hit = byConfig.get(key);
  if (hit) return hit;
  const out: number[] = [];
  const last = lastStartMinutes(shift);
  for (let m = minutesOfDay(shift.start_time); m <= last; m += shift.slot_interval_minutes) {
    const t = localToInstant(zone, addDays(serviceDate, Math.floor(m / DAY_MINUTES)), m % DAY_MINUTES);
    if (t !== null) out.push(t);
  }
  Object.freeze(out);
  byConfig.set(key, out);
  trimOldest(byConfig, CACHE_LIMIT);
  return out;
}

/** Seating length for a party: the first duration rule that fits it, else the shift's duration. */
export function seatingMinutes(shift: Shift, partySize: number): number {
  for (const r of shift.durations_by_party_size) if (partySize <= r.max_party_size) return r.duration_minutes;
  return shift.duration_minutes;
}

export const seatingEnd = (shift: Shift, partySize: number, startMs: number): number =>
  startMs + seatingMinutes(shift, partySize) * MINUTE;

export interface SlotStart {
  shift: Shift;
  /** The shift's day in the restaurant's calendar (YYYY-MM-DD), even for a start after midnight. */
  serviceDate: string;
  startMs: number;
}

/**
 * The one rule for which service days' seatings can share a table with a seating of service days
 * `first` to `last`: a seating of service day X starts at the latest on X + 1 (a shift past
 * midnight) and lasts at most a day, so it spans the calendar days X to X + 2; two seatings can meet
 * only when their service days are at most two apart. Every day is read, whatever the current
 * catalog: a seating taken under an earlier one (a night shift shortened since) keeps its tables.
 * The availability query (queries/availability.ts) and a hold (commands/reservations/hold.ts, and
 * resumeSeating) both use it.
 */
export function serviceDaysMeeting(first: string, last: string = first): string[] {
  const out: string[] = [];
  for (let d = addDays(first, -2); d <= addDays(last, 2); d = addDays(d, 1)) out.push(d);
  return out;
}

/**
 * Service days whose starts can fall within [fromMs, toMs]: the local days of the window, plus the
 * day before the first (a shift running past midnight offers starts on the following calendar day).
 */
export function serviceDatesFor(zone: string, fromMs: number, toMs: number): string[] {
  const first = addDays(localDateOf(zone, fromMs), -1);
  const last = localDateOf(zone, toMs);
  const out: string[] = [];
  for (let d = first; d <= last; d = addDays(d, 1)) out.push(d);
  return out;
}

/**
 * Every start of `shifts` within [fromMs, toMs] (both inclusive), ordered by instant, then by the
 * shifts' configured order.
 */
export function startsBetween(
  shifts: readonly Shift[],
  zone: string,
  fromMs: number,
  toMs: number,
): SlotStart[] {
  const out: SlotStart[] = [];
  for (const serviceDate of serviceDatesFor(zone, fromMs, toMs))
    for (const shift of shifts)
      for (const startMs of slotStarts(shift, serviceDate, zone))
        if (startMs >= fromMs && startMs <= toMs) out.push({ shift, serviceDate, startMs });
  const order = new Map(shifts.map((s, i) => [s, i]));
  return out.sort((a, b) => a.startMs - b.startMs || (order.get(a.shift) ?? 0) - (order.get(b.shift) ?? 0));
}

/**
 * The (shift, service day) pairs for which `startMs` is exactly one of the offered starts: at most one
 * per shift (its own day, or the day before when it runs past midnight).
 */
export function startsAt(shifts: readonly Shift[], zone: string, startMs: number): SlotStart[] {
  const day = localDateOf(zone, startMs);
  const out: SlotStart[] = [];
  for (const shift of shifts)
    for (const serviceDate of crossesMidnight(shift) ? [addDays(day, -1), day] : [day])
      if (slotStarts(shift, serviceDate, zone).includes(startMs)) out.push({ shift, serviceDate, startMs });
  return out;
}
