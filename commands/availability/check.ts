// The availability engine's two entry points, both pure functions of plain data:
// - searchSlots: every bookable slot in a window (GET /availability);
// - checkSlot: one exact slot, with the assigned table(s) or the reason it is not bookable
//   (POST /availability/check, and the write-side recheck of reservation commands).
//
// A slot is bookable when: the restaurant is not suspended; the shift runs on the service day and
// offers that start (slots.ts); the party size is within the shift's limits; the start is at least
// the minimum notice after now and the service day within the booking window; a room is named when
// the shift requires room selection; the shift's max_covers for that day still fits the party; and
// one table able to seat the party (in the chosen room when there is one) is free for the whole
// seating [start, start + duration).
//
// Write side (reservation create/move): fold the capacity stream of the service day, map its other
// seatings with bookingFromSeating (force-inserted ones too: they hold tables like any other), load the
// catalog with loadCatalog (commands/catalog/handler.ts) and call checkSlot; on `available: false`
// refuse with BusinessRuleError(failure_reason, message). The slot's service_date names the stream to
// append to. A seating past midnight may meet the next day's early seatings on the same table; those
// live in the next day's stream, so pass them too when a shift crosses midnight.
import type { CatalogLists, Room, Shift, Table } from '../catalog/types';
import { type Booking, firstFreeTable, Occupancy, tablesFor } from './capacity';
import {
  coversExceeded,
  FAILURE_MESSAGES,
  type FailureReason,
  laterFailure,
  limitFailure,
  partySizeAllowed,
  type TimeLimits,
  timeFailure,
  timeLimits,
} from './rules';
import { seatingMinutes, serviceDatesFor, slotStarts, startsAt } from './slots';
import { formatInstant, localDateOf } from './zone-time';

const MINUTE = 60_000;

export interface AvailabilityInput {
  /** The restaurant's IANA time zone. */
  timezone: string;
  suspended: boolean;
  catalog: Pick<CatalogLists, 'rooms' | 'tables' | 'shifts'>;
  /**
   * Every seating that holds capacity and may share a table with the slots concerned: those of the
   * slots' service days, and of the days around them when shifts run past midnight (a seating spans
   * at most its service day and the next two). Covers count only seatings of the slot's own service
   * day and shift. The write side passes the capacity stream's other seatings; the read side passes
   * an Occupancy it combined from per-day indexes it keeps.
   */
  bookings: readonly Booking[] | Occupancy;
  now: Date;
}

const occupancyOf = (b: AvailabilityInput['bookings']): Occupancy =>
  b instanceof Occupancy ? b : new Occupancy(b);

export interface BookableSlot {
  shift_id: string;
  service_date: string;
  start_ms: number;
  end_ms: number;
  duration_minutes: number;
  /** Spec §2.7: the room when the shift requires room selection, else null. */
  room_id: string | null;
  /** The table(s) the seating would take, best fit first. */
  table_ids: string[];
  /** The room of the assigned table(s), whatever the shift's room selection. */
  seated_room_id: string | null;
}

/** Spec §2.7's slot as the API returns it, with the restaurant's offset at each instant. */
export interface ApiSlot {
  start_at: string;
  end_at: string;
  duration_minutes: number;
  shift_id: string;
  room_id: string | null;
}

export const slotToApi = (zone: string, s: BookableSlot): ApiSlot => ({
  start_at: formatInstant(zone, s.start_ms),
  end_at: formatInstant(zone, s.end_ms),
  duration_minutes: s.duration_minutes,
  shift_id: s.shift_id,
  room_id: s.room_id,
});

export interface SearchQuery {
  /** Both inclusive, epoch ms. */
  from_ms: number;
  to_ms: number;
  party_size: number;
  shift_id?: string | null;
  room_id?: string | null;
}

interface PerShift {
  placements: Placement[];
  minutes: number;
  limits: TimeLimits;
}

/** One way to seat the party in a shift: a room (or any room) and its candidate tables, best fit first. */
interface Placement {
  room_id: string | null;
  candidates: Table[];
}

// Candidate lists depend on the tables and rooms only; the read side hands in the same (cached)
// catalog arrays request after request, so keep them per tables array.
const placementsMemo = new WeakMap<readonly Table[], Map<string, Placement[]>>();

function placements(
  shift: Shift,
  catalog: AvailabilityInput['catalog'],
  party: number,
  roomId?: string | null,
): Placement[] {
  let memo = placementsMemo.get(catalog.tables);
  if (!memo) {
    memo = new Map();
    placementsMemo.set(catalog.tables, memo);
  }
  const key = `${shift.requires_room_selection}|${party}|${roomId ?? ''}|${catalog.rooms.map((r) => r.id).join(',')}`;
  let ways = memo.get(key);
  if (!ways) {
    if (!shift.requires_room_selection)
      ways = [{ room_id: null, candidates: tablesFor(catalog.tables, party, roomId) }];
    else {
      const rooms: Room[] = roomId == null ? catalog.rooms : catalog.rooms.filter((r) => r.id === roomId);
      ways = rooms.map((r) => ({ room_id: r.id, candidates: tablesFor(catalog.tables, party, r.id) }));
    }
    // Frozen: the occupancy memo may then name these lists by identity.
    for (const w of ways) Object.freeze(w.candidates);
    if (memo.size >= 1000) memo.clear();
    memo.set(key, ways);
  }
  return ways;
}

/**
 * Every bookable slot whose start lies in [from_ms, to_ms], ordered by start, then shift order, then
 * room order. An unknown shift_id or room_id matches nothing (the HTTP layer answers 404 first).
 * With room selection, one slot per room able to seat the party; the same start may repeat.
 */
export function searchSlots(input: AvailabilityInput, q: SearchQuery): BookableSlot[] {
  if (input.suspended || q.party_size < 1 || q.to_ms < q.from_ms) return [];
  const { catalog, timezone } = input;
  const nowMs = input.now.getTime();
  const today = localDateOf(timezone, nowMs);
  const shifts = catalog.shifts.filter(
    (s) => (q.shift_id == null || s.id === q.shift_id) && partySizeAllowed(s, catalog.tables, q.party_size),
  );
  const perShift = new Map(
    shifts.map((s) => [
      s,
      {
        placements: placements(s, catalog, q.party_size, q.room_id),
        minutes: seatingMinutes(s, q.party_size),
        limits: timeLimits(s, nowMs, today),
      },
    ]),
  );
  const occupancy = occupancyOf(input.bookings);
  const out: BookableSlot[] = [];
  // Day by day and shift by shift, so covers are read once per (day, shift); sorted at the end.
  for (const serviceDate of serviceDatesFor(timezone, q.from_ms, q.to_ms))
    for (const shift of shifts) {
      const starts = slotStarts(shift, serviceDate, timezone);
      if (starts.length === 0 || coversExceeded(shift, occupancy, serviceDate, q.party_size)) continue;
      const { placements: ways, minutes, limits } = perShift.get(shift) as PerShift;
      const wanted = starts.map(
        (t) => t >= q.from_ms && t <= q.to_ms && limitFailure(limits, serviceDate, t) === null,
      );
      if (!wanted.includes(true)) continue;
      for (const way of ways) {
        // Every start of the day, not only the wanted ones: each start's table does not depend on
        // the others, and the whole day's answer is what the occupancy index remembers.
        const tables = occupancy.firstFreeForEach(way.candidates, starts, minutes * MINUTE);
        starts.forEach((startMs, i) => {
          const table = tables[i];
          if (!table || !wanted[i]) return;
          out.push({
            shift_id: shift.id,
            service_date: serviceDate,
            start_ms: startMs,
            end_ms: startMs + minutes * MINUTE,
            duration_minutes: minutes,
            room_id: way.room_id,
            table_ids: [table.id],
            seated_room_id: table.room_id,
          });
        });
      }
    }
  // Stable: rooms keep their order within a start and shift.
  const order = new Map(shifts.map((s, i) => [s.id, i]));
  return out.sort(
    (a, b) => a.start_ms - b.start_ms || (order.get(a.shift_id) ?? 0) - (order.get(b.shift_id) ?? 0),
  );
}

export interface CheckRequest {
  /** The exact start instant, epoch ms. */
  start_ms: number;
  party_size: number;
  /** Omitted: any shift offering this start. */
  shift_id?: string | null;
  /**
   * Omitted: any room for a shift without room selection; a shift that requires room selection is
   * then not bookable (ROOM_SELECTION_REQUIRED).
   */
  room_id?: string | null;
  /**
   * The caller's own choice of tables (write side). They must exist, be in the room when one is
   * given, be free for the whole seating and together seat the party (Σ min_pax ≤ party ≤ Σ max_pax).
   */
  table_ids?: readonly string[] | null;
  /**
   * False for a change of guests already at the restaurant (write side): their seating changes at its
   * own start, which is past or near by then, so the minimum notice and the booking window, rules for
   * choosing a start, do not apply. Every other rule does. Default true.
   */
  time_limits?: boolean;
  /**
   * The reservation's own start, on this service day (write side: a change that keeps its start and
   * shift): taken under `shift_id` as it is, even where the shift's grid (hours, interval, days) no
   * longer offers it since the catalog changed. Every other rule applies. Needs `shift_id`.
   */
  service_date?: string | null;
}

export type CheckResult =
  | { available: true; slot: BookableSlot; shift: Shift }
  | { available: false; failure_reason: FailureReason; message: string };

const refuse = (reason: FailureReason): CheckResult => ({
  available: false,
  failure_reason: reason,
  message: FAILURE_MESSAGES[reason],
});

/**
 * Checks one exact slot. When several shifts offer the start, the first (configured order) that can
 * seat the party wins; when none can, the reported reason is the most specific one reached (the later
 * in FAILURE_REASONS), so "the shift is full" beats "a shift that does not take parties of 8".
 */
export function checkSlot(input: AvailabilityInput, req: CheckRequest): CheckResult {
  const { catalog, timezone } = input;
  if (input.suspended) return refuse('RESTAURANT_SUSPENDED');
  const shifts = req.shift_id == null ? catalog.shifts : catalog.shifts.filter((s) => s.id === req.shift_id);
  if (shifts.length === 0) return refuse(req.shift_id == null ? 'OUTSIDE_SHIFT' : 'UNKNOWN_SHIFT');
  if (req.room_id != null && !catalog.rooms.some((r) => r.id === req.room_id)) return refuse('UNKNOWN_ROOM');
  let chosen: Table[] | null = null;
  if (req.table_ids?.length) {
    const byId = new Map(catalog.tables.map((t) => [t.id, t]));
    chosen = [];
    for (const id of new Set(req.table_ids)) {
      const t = byId.get(id);
      if (!t) return refuse('UNKNOWN_TABLE');
      chosen.push(t);
    }
  }
  const ownDay = req.shift_id == null ? null : (req.service_date ?? null);
  const starts =
    ownDay === null
      ? startsAt(shifts, timezone, req.start_ms)
      : shifts.map((shift) => ({ shift, serviceDate: ownDay, startMs: req.start_ms }));
  if (starts.length === 0) return refuse('OUTSIDE_SHIFT');
  const nowMs = input.now.getTime();
  const today = localDateOf(timezone, nowMs);
  const occupancy = occupancyOf(input.bookings);
  const chosenSeats = chosen?.reduce((n, t) => n + t.max_pax, 0) ?? 0;
  let failure: FailureReason | null = null;
  for (const { shift, serviceDate, startMs } of starts) {
    if (!partySizeAllowed(shift, catalog.tables, req.party_size, chosenSeats)) {
      failure = laterFailure(failure, 'PARTY_SIZE_OUT_OF_RANGE');
      continue;
    }
    const late = req.time_limits === false ? null : timeFailure(shift, serviceDate, startMs, nowMs, today);
    if (late) {
      failure = laterFailure(failure, late);
      continue;
    }
    // The partner must choose the room; decided before anything that depends on other bookings, so
    // the write side can refuse it before it claims or holds anything (commands/reservations/hold.ts).
    if (shift.requires_room_selection && req.room_id == null) {
      failure = laterFailure(failure, 'ROOM_SELECTION_REQUIRED');
      continue;
    }
    if (coversExceeded(shift, occupancy, serviceDate, req.party_size)) {
      failure = laterFailure(failure, 'MAX_COVERS_REACHED');
      continue;
    }
    const minutes = seatingMinutes(shift, req.party_size);
    const endMs = startMs + minutes * MINUTE;
    const tables = chosen
      ? seatChosen(chosen, occupancy, req, startMs, endMs)
      : seatBest(catalog, occupancy, req, startMs, endMs);
    if (!tables) {
      failure = laterFailure(failure, 'NO_TABLE');
      continue;
    }
    const seatedRoom = tables[0]?.room_id ?? null;
    return {
      available: true,
      shift,
      slot: {
        shift_id: shift.id,
        service_date: serviceDate,
        start_ms: startMs,
        end_ms: endMs,
        duration_minutes: minutes,
        room_id: shift.requires_room_selection ? (req.room_id ?? null) : null,
        table_ids: tables.map((t) => t.id),
        seated_room_id: seatedRoom,
      },
    };
  }
  return refuse(failure ?? 'OUTSIDE_SHIFT');
}

function seatBest(
  catalog: AvailabilityInput['catalog'],
  occupancy: Occupancy,
  req: CheckRequest,
  startMs: number,
  endMs: number,
): Table[] | null {
  const table = firstFreeTable(
    tablesFor(catalog.tables, req.party_size, req.room_id),
    occupancy,
    startMs,
    endMs,
  );
  return table ? [table] : null;
}

function seatChosen(
  chosen: readonly Table[],
  occupancy: Occupancy,
  req: CheckRequest,
  startMs: number,
  endMs: number,
): Table[] | null {
  if (req.room_id != null && chosen.some((t) => t.room_id !== req.room_id)) return null;
  const min = chosen.reduce((n, t) => n + t.min_pax, 0);
  const max = chosen.reduce((n, t) => n + t.max_pax, 0);
  if (req.party_size < min || req.party_size > max) return null;
  return chosen.every((t) => occupancy.isFree(t.id, startMs, endMs)) ? [...chosen] : null;
}
