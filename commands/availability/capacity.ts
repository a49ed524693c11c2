// Capacity: which tables are free for a seating, and how many covers a shift already holds on a day.
// Pure; the caller passes every booking that holds capacity (read side: the `bookings` projection;
// write side: the fold of the capacity stream, see capacity-events.ts).
import type { Table } from '../catalog/types';
import type { SeatingHeldData } from './capacity-events';

/** A seating that holds capacity: its tables for [startMs, endMs) and its covers for its shift and day. */
export interface Booking {
  reservation_id: string;
  /** The shift's day in the restaurant's calendar (YYYY-MM-DD). */
  service_date: string;
  shift_id: string;
  room_id: string | null;
  /** May be empty (a force-inserted reservation without a table holds covers only). */
  table_ids: readonly string[];
  /** Epoch ms; the seating occupies [start_ms, end_ms): touching seatings do not overlap. */
  start_ms: number;
  end_ms: number;
  party_size: number;
}

/** A capacity-stream seating as a Booking. */
export const bookingFromSeating = (s: SeatingHeldData): Booking => ({
  reservation_id: s.reservation_id,
  service_date: s.service_date,
  shift_id: s.shift_id,
  room_id: s.room_id,
  table_ids: s.table_ids,
  start_ms: Date.parse(s.start_at),
  end_ms: Date.parse(s.end_at),
  party_size: s.party_size,
});

/** Half-open intervals overlap when each starts before the other ends. */
export const overlaps = (aStart: number, aEnd: number, bStart: number, bEnd: number): boolean =>
  aStart < bEnd && bStart < aEnd;

/**
 * Bookings indexed once per query: busy intervals per table and covers per (service day, shift), so
 * each slot costs a few comparisons per candidate table instead of a scan of every booking.
 */
export class Occupancy {
  private readonly busy = new Map<string, { start: number; end: number }[]>();
  private readonly covers = new Map<string, number>();

  constructor(bookings: readonly Booking[]) {
    for (const b of bookings) {
      for (const t of b.table_ids) {
        const list = this.busy.get(t);
        if (list) list.push({ start: b.start_ms, end: b.end_ms });
        else this.busy.set(t, [{ start: b.start_ms, end: b.end_ms }]);
      }
      const key = `${b.service_date}|${b.shift_id}`;
      this.covers.set(key, (this.covers.get(key) ?? 0) + b.party_size);
    }
  }

  /** No booking holds the table during any part of [startMs, endMs). */
  isFree(tableId: string, startMs: number, endMs: number): boolean {
    const list = this.busy.get(tableId);
    if (!list) return true;
    for (const i of list) if (overlaps(i.start, i.end, startMs, endMs)) return false;
    return true;
  }

  /** Covers already held by the shift on its service day. */
  coversHeld(serviceDate: string, shiftId: string): number {
    return this.covers.get(`${serviceDate}|${shiftId}`) ?? 0;
  }
}

export const tableSeats = (t: Table, partySize: number): boolean =>
  t.min_pax <= partySize && partySize <= t.max_pax;

/**
 * The tables able to seat the party, best fit first: smallest max_pax (keep big tables for big
 * parties), then smallest min_pax, then configured order. Compute once per party size and room.
 */
export function tablesFor(tables: readonly Table[], partySize: number, roomId?: string | null): Table[] {
  return tables
    .map((t, i) => ({ t, i }))
    .filter(({ t }) => tableSeats(t, partySize) && (roomId == null || t.room_id === roomId))
    .sort((a, b) => a.t.max_pax - b.t.max_pax || a.t.min_pax - b.t.min_pax || a.i - b.i)
    .map(({ t }) => t);
}

/** The first free table of `candidates` (already ordered best fit first) for [startMs, endMs), or null. */
export function firstFreeTable(
  candidates: readonly Table[],
  occupancy: Occupancy,
  startMs: number,
  endMs: number,
): Table | null {
  for (const t of candidates) if (occupancy.isFree(t.id, startMs, endMs)) return t;
  return null;
}
