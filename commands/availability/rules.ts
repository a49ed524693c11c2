// The bookability rules shared by the search (GET /availability), the exact check
// (POST /availability/check) and the write-side recheck of reservation commands.
import type { Shift, Table } from '../catalog/types';
import type { Occupancy } from './capacity';
import { addDays } from './zone-time';

const MINUTE = 60_000;

/** Why a slot is not bookable, in the order the check reports them (the first that applies wins). */
export const FAILURE_REASONS = [
  'RESTAURANT_SUSPENDED',
  'UNKNOWN_SHIFT',
  'UNKNOWN_ROOM',
  'UNKNOWN_TABLE',
  'OUTSIDE_SHIFT',
  'PARTY_SIZE_OUT_OF_RANGE',
  'TOO_LATE',
  'TOO_FAR',
  'ROOM_SELECTION_REQUIRED',
  'MAX_COVERS_REACHED',
  'NO_TABLE',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export const FAILURE_MESSAGES: Record<FailureReason, string> = {
  RESTAURANT_SUSPENDED: 'The restaurant is suspended and takes no reservations',
  UNKNOWN_SHIFT: 'No shift of this restaurant has this shift_id',
  UNKNOWN_ROOM: 'No room of this restaurant has this room_id',
  UNKNOWN_TABLE: 'A table_id is not a table of this restaurant',
  OUTSIDE_SHIFT:
    'No shift offers a seating at this start_at (wrong day, time or interval): take start_at and shift_id from a slot of GET /availability',
  PARTY_SIZE_OUT_OF_RANGE: "The party size is outside the shift's limits",
  TOO_LATE: "The start is too close to now (the shift's minimum notice) or already past",
  TOO_FAR: "The start is beyond the shift's booking window",
  ROOM_SELECTION_REQUIRED:
    'The shift requires room selection: pass a room_id (GET /availability answers one slot per room)',
  MAX_COVERS_REACHED:
    'The shift has no covers left that day for this party: GET /availability lists the slots still bookable',
  NO_TABLE:
    'No table able to seat the party is free for the whole seating: GET /availability lists the slots still bookable',
};

/** The later (more specific) of two failures: the one a partner can act on most precisely. */
export const laterFailure = (a: FailureReason | null, b: FailureReason): FailureReason =>
  a === null || FAILURE_REASONS.indexOf(b) > FAILURE_REASONS.indexOf(a) ? b : a;

/**
 * Party limits of a shift: its own min/max, and without a max, the largest table (or, when the
 * caller names tables, their combined seats if larger).
 */
export function partySizeAllowed(
  shift: Shift,
  tables: readonly Table[],
  partySize: number,
  chosenSeats = 0,
): boolean {
  if (partySize < Math.max(1, shift.min_party_size)) return false;
  const max = shift.max_party_size ?? Math.max(chosenSeats, ...tables.map((t) => t.max_pax), 0);
  return partySize <= max;
}

export interface TimeLimits {
  /** now + minimum notice: an earlier start is TOO_LATE (exactly this instant is allowed). */
  earliestMs: number;
  /** today + booking_window_days (restaurant calendar): a later service day is TOO_FAR; null: no limit. */
  lastServiceDate: string | null;
}

/** A shift's time limits as of now; compute once per query, not per slot. */
export const timeLimits = (shift: Shift, nowMs: number, today: string): TimeLimits => ({
  earliestMs: nowMs + shift.minimum_notice_minutes * MINUTE,
  lastServiceDate: shift.booking_window_days === null ? null : addDays(today, shift.booking_window_days),
});

export function limitFailure(
  limits: TimeLimits,
  serviceDate: string,
  startMs: number,
): 'TOO_LATE' | 'TOO_FAR' | null {
  if (startMs < limits.earliestMs) return 'TOO_LATE';
  if (limits.lastServiceDate !== null && serviceDate > limits.lastServiceDate) return 'TOO_FAR';
  return null;
}

/**
 * Minimum notice (a start at exactly now + notice is allowed) and booking window (the service day
 * at most booking_window_days calendar days after today, in the restaurant's calendar).
 */
export const timeFailure = (
  shift: Shift,
  serviceDate: string,
  startMs: number,
  nowMs: number,
  /** localDateOf(zone, nowMs), computed once per query. */
  today: string,
): 'TOO_LATE' | 'TOO_FAR' | null => limitFailure(timeLimits(shift, nowMs, today), serviceDate, startMs);

/** Would this party exceed the shift's covers for its service day? */
export const coversExceeded = (
  shift: Shift,
  occupancy: Occupancy,
  serviceDate: string,
  partySize: number,
): boolean =>
  shift.max_covers !== null && occupancy.coversHeld(serviceDate, shift.id) + partySize > shift.max_covers;
