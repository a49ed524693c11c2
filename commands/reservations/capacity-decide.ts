// Capacity decisions on one capacity stream. Pure: the recheck runs the availability module on the
// seatings folded from the stream itself, never on a read model.
import { BusinessRuleError } from '../../src/core/errors';
import { deterministicUuid } from '../../src/core/ids';
import type { NewEvent } from '../../src/ports/event-store';
import { bookingFromSeating, firstFreeTable, heldEnd, Occupancy, tablesFor } from '../availability/capacity';
import type {
  EndReason,
  SeatingEndedData,
  SeatingHeldData,
  SeatingMoveHeldData,
} from '../availability/capacity-events';
import { type AvailabilityInput, checkSlot } from '../availability/check';
import { FAILURE_MESSAGES } from '../availability/rules';
import { seatingMinutes } from '../availability/slots';
import { formatInstant } from '../availability/zone-time';
import type { Shift } from '../catalog/types';
import { type CapacityState, occupancyExcept } from './capacity-state';
import type { Seating } from './decide-create';

/** Why a seating stops holding capacity (SeatingReleased.reason). */
export type ReleaseReason =
  | 'CANCELED'
  | 'REJECTED'
  | 'MOVED'
  | 'ABANDONED_HOLD'
  /** Held by a create or a move that was then refused (duplicate external_id, customer…). */
  | 'CREATE_REFUSED'
  | 'UPDATE_REFUSED'
  /** The repair: a move's update never landed (the reservation shows another seating). */
  | 'MOVE_NOT_RECORDED';

export interface HoldRequest {
  restaurantId: string;
  reservationId: string;
  externalId: string | null;
  /** The capacity stream's day: the seating must belong to it. */
  serviceDate: string;
  /** The shift that offers this start on `serviceDate` (from the availability module's slot math). */
  shift: Shift;
  startMs: number;
  partySize: number;
  roomId: string | null;
  tableIds: readonly string[] | null;
  /** bypass_availability: no capacity or timing rule applies; the seating still takes its tables. */
  force: boolean;
  /** What distinguishes this hold from the reservation's earlier ones (its event id derives from it). */
  purpose: string;
  /**
   * A move of an existing reservation: the seating is held as a pending move under this id, beside
   * the reservation's own seating, until the move is confirmed or dropped.
   */
  moveId?: string;
  /**
   * False: the shift's minimum notice and booking window do not apply (CheckRequest.time_limits), for
   * a move that chooses no start (moveTimeLimits in decide-update.ts). Default true.
   */
  timeLimits?: boolean;
  /**
   * The start is the reservation's own, on `serviceDate` (a move that keeps its start and shift): held
   * there under `shift` whatever the shift's grid now offers (CheckRequest.service_date).
   */
  ownStart?: boolean;
  timezone: string;
  catalog: AvailabilityInput['catalog'];
  now: Date;
  /**
   * The other service days' seatings that may share a table with this one (a shift past midnight
   * meets the next day's first seatings), this reservation's own left out (appendChecked in
   * capacity-handler.ts, which also closes the race with a concurrent booking of another day).
   */
  neighbours?: Occupancy;
}

export interface HoldDecision {
  events: NewEvent[];
  seating: Seating;
  /** A move held as pending under this id, to confirm once the update lands (null: nothing to confirm). */
  moveId: string | null;
}

/**
 * Every seating a seating of this reservation must not meet: the day's others (indexed, kept up to
 * date by the fold: O(tables), not O(day)) and the neighbouring days' (hold.ts, resumeSeating).
 */
function othersThan(state: CapacityState, reservationId: string, neighbours?: Occupancy): Occupancy {
  const day = occupancyExcept(state, reservationId);
  return neighbours ? new Occupancy({ combine: [day, neighbours] }) : day;
}

/**
 * Rechecks the slot against every other seating of the day and holds it, or throws a 422 whose
 * `details.reason` is the availability module's failure reason. The reservation's own seatings that
 * day (its own, its pending moves) are not in its way. A move (`moveId`) holds the new seating as
 * pending beside the old one, which keeps its tables until the move is recorded and confirmed.
 */
export function decideHold(state: CapacityState, req: HoldRequest): HoldDecision {
  // The other seatings it must not meet, this day's and the neighbouring days'.
  const others = othersThan(state, req.reservationId, req.neighbours);
  const seating = req.force ? forcedSeating(req, others) : checkedSeating(req, others);
  const current = state.held.get(req.reservationId);
  if (current && sameHold(current, seating)) {
    // Nothing to move. A move decided again (appendChecked, after a race with another day) may have
    // held a pending seating under its id in an earlier decision: let it go, or it would hold its
    // tables with nothing ever to confirm or drop it.
    const events = req.moveId
      ? decideDropMove(state, req.reservationId, req.moveId, 'UPDATE_REFUSED', req.now.toISOString())
      : [];
    return { events, seating, moveId: null };
  }
  const data: SeatingHeldData = {
    restaurant_id: req.restaurantId,
    service_date: seating.service_date,
    reservation_id: req.reservationId,
    shift_id: seating.shift_id,
    room_id: seating.room_id,
    table_ids: seating.table_ids,
    start_at: seating.start_at,
    end_at: seating.end_at,
    party_size: seating.party_size,
    at: req.now.toISOString(),
    external_id: req.externalId,
    force_inserted: req.force,
  };
  const type = req.moveId ? 'SeatingMoveHeld' : 'SeatingHeld';
  // Derived from the content: a retried append is recognised, a different hold never mistaken for it.
  const id = deterministicUuid(
    JSON.stringify([
      type,
      req.purpose,
      req.restaurantId,
      req.serviceDate,
      req.reservationId,
      seating,
      ...(req.moveId ? [req.moveId] : []),
    ]),
  );
  if (!req.moveId)
    return {
      events: [{ id, type, data: data as unknown as Record<string, unknown> }],
      seating,
      moveId: null,
    };
  const pending = state.pending.get(req.reservationId)?.get(req.moveId);
  if (pending && sameHold(pending, seating)) return { events: [], seating, moveId: req.moveId };
  const moveData: SeatingMoveHeldData = { ...data, move_id: req.moveId };
  return {
    events: [{ id, type, data: moveData as unknown as Record<string, unknown> }],
    seating,
    moveId: req.moveId,
  };
}

/** The move's update landed: its seating becomes the reservation's own that day (a no-op when gone). */
export function decideConfirmMove(
  state: CapacityState,
  reservationId: string,
  moveId: string,
  at: string,
): NewEvent[] {
  const pending = state.pending.get(reservationId)?.get(moveId);
  if (!pending) return [];
  const data: SeatingMoveHeldData = { ...pending, at };
  return [{ type: 'SeatingMoveConfirmed', data: data as unknown as Record<string, unknown> }];
}

/** The move will not be recorded: its seating is let go (the reservation's own stays as it is). */
export function decideDropMove(
  state: CapacityState,
  reservationId: string,
  moveId: string,
  reason: ReleaseReason,
  at: string,
): NewEvent[] {
  const pending = state.pending.get(reservationId)?.get(moveId);
  if (!pending) return [];
  return [
    {
      type: 'SeatingMoveDropped',
      data: {
        restaurant_id: pending.restaurant_id,
        service_date: pending.service_date,
        reservation_id: reservationId,
        move_id: moveId,
        reason,
        at,
      },
    },
  ];
}

/**
 * Holds exactly `seating` for its reservation (no check): the repair giving a reservation back the
 * seating it shows, when its capacity stream holds another (left by a same-day move of an older
 * version, which replaced the seating before the update and died in between).
 */
export function decideRestore(state: CapacityState, seating: SeatingHeldData): NewEvent[] {
  const current = state.held.get(seating.reservation_id);
  if (current && sameHold(current, seating)) return [];
  return [{ type: 'SeatingHeld', data: seating as unknown as Record<string, unknown> }];
}

function checkedSeating(req: HoldRequest, others: Occupancy): Seating {
  const result = checkSlot(
    {
      timezone: req.timezone,
      suspended: false,
      catalog: req.catalog,
      bookings: others,
      now: req.now,
    },
    {
      start_ms: req.startMs,
      party_size: req.partySize,
      shift_id: req.shift.id,
      room_id: req.roomId,
      table_ids: req.tableIds,
      time_limits: req.timeLimits !== false,
      ...(req.ownStart ? { service_date: req.serviceDate } : {}),
    },
  );
  if (!result.available) throw new BusinessRuleError(result.failure_reason, result.message);
  const slot = result.slot;
  if (slot.service_date !== req.serviceDate)
    throw new BusinessRuleError('OUTSIDE_SHIFT', 'No shift offers a seating at this start_at');
  return {
    service_date: slot.service_date,
    shift_id: slot.shift_id,
    room_id: slot.room_id ?? slot.seated_room_id,
    table_ids: slot.table_ids,
    start_at: formatInstant(req.timezone, slot.start_ms),
    end_at: formatInstant(req.timezone, slot.end_ms),
    duration_minutes: slot.duration_minutes,
    party_size: req.partySize,
  };
}

/**
 * bypass_availability: the named tables (which must exist), else the best free table if one is
 * free, else none at all (the seating then holds covers only).
 */
function forcedSeating(req: HoldRequest, others: Occupancy): Seating {
  if (req.roomId !== null && !req.catalog.rooms.some((r) => r.id === req.roomId))
    throw new BusinessRuleError('UNKNOWN_ROOM', 'No room of this restaurant has this room_id');
  // The room is the partner's choice, not a capacity rule: bypass_availability does not make it.
  if (req.shift.requires_room_selection && req.roomId === null)
    throw new BusinessRuleError('ROOM_SELECTION_REQUIRED', FAILURE_MESSAGES.ROOM_SELECTION_REQUIRED);
  const minutes = seatingMinutes(req.shift, req.partySize);
  const endMs = req.startMs + minutes * 60_000;
  let tableIds: string[];
  if (req.tableIds?.length) {
    const known = new Set(req.catalog.tables.map((t) => t.id));
    const unknown = req.tableIds.filter((id) => !known.has(id));
    if (unknown.length)
      throw new BusinessRuleError('UNKNOWN_TABLE', 'A table_id is not a table of this restaurant', {
        table_ids: unknown,
      });
    tableIds = [...new Set(req.tableIds)];
  } else {
    const free = firstFreeTable(
      tablesFor(req.catalog.tables, req.partySize, req.roomId),
      others,
      req.startMs,
      endMs,
    );
    tableIds = free ? [free.id] : [];
  }
  const seatedRoom = req.catalog.tables.find((t) => t.id === tableIds[0])?.room_id ?? null;
  return {
    service_date: req.serviceDate,
    shift_id: req.shift.id,
    room_id: req.roomId ?? seatedRoom,
    table_ids: tableIds,
    start_at: formatInstant(req.timezone, req.startMs),
    end_at: formatInstant(req.timezone, endMs),
    duration_minutes: minutes,
    party_size: req.partySize,
  };
}

type HeldFields = Pick<Seating, 'start_at' | 'end_at' | 'party_size' | 'shift_id' | 'room_id' | 'table_ids'>;
const sameHold = (h: SeatingHeldData, s: HeldFields) =>
  h.start_at === s.start_at &&
  h.end_at === s.end_at &&
  h.party_size === s.party_size &&
  h.shift_id === s.shift_id &&
  h.room_id === s.room_id &&
  JSON.stringify(h.table_ids) === JSON.stringify(s.table_ids);

export function decideRelease(
  state: CapacityState,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  reason: ReleaseReason,
  at: string,
): NewEvent[] {
  if (!state.held.has(reservationId)) return [];
  return [
    {
      type: 'SeatingReleased',
      data: {
        restaurant_id: restaurantId,
        service_date: serviceDate,
        reservation_id: reservationId,
        reason,
        at,
      },
    },
  ];
}

/**
 * The guests left (DONE) or never came (NO_SHOW) at `endedAt` (the status change's event time): the
 * seating's tables are free from then on, what came before stays held. Nothing to write when the
 * reservation holds no seating that day, when it already ended then, or when `endedAt` is at or past
 * the seating's end (the scheduler's DONE after the end frees nothing earlier). An end already
 * recorded stands against a later one (the later would hold its tables again for the gap, sold
 * meanwhile perhaps): a seating held again since (decideHoldAgain, a resumed no-show) has no
 * `ended_at` in the fold, so its next end is written.
 */
export function decideEnd(
  state: CapacityState,
  reservationId: string,
  endedAt: string,
  reason: EndReason,
  at: string,
): NewEvent[] {
  const held = state.held.get(reservationId);
  if (!held || held.ended_at === endedAt) return [];
  if (held.ended_at === undefined && Date.parse(endedAt) >= Date.parse(held.end_at)) return [];
  if (held.ended_at !== undefined && Date.parse(endedAt) > Date.parse(held.ended_at)) return [];
  const data: SeatingEndedData = {
    restaurant_id: held.restaurant_id,
    service_date: held.service_date,
    reservation_id: reservationId,
    ended_at: endedAt,
    reason,
    at,
  };
  return [{ type: 'SeatingEnded', data: data as unknown as Record<string, unknown> }];
}

/**
 * A no-show seated after all: its seating holds its tables to its end again (a SeatingHeld of the
 * same seating, without `ended_at`). Refused with 422 NO_TABLE when another seating took one of its
 * tables in the part given up (from when it ended, or from now when later, to its end): the table was
 * sold meanwhile. Nothing to write when the seating was never ended (or the reservation holds none
 * that day: the status change goes on, as for any reservation).
 */
export function decideResume(
  state: CapacityState,
  reservationId: string,
  now: Date,
  /** The neighbouring service days' seatings (HoldRequest.neighbours), when a seating may meet them. */
  neighbours?: Occupancy,
  /**
   * When the seating had ended, for a seating this resume already held again (an earlier attempt
   * whose note on a later day lost its race: appendChecked): checked again from then, nothing new
   * written when it still fits.
   */
  endedBefore?: string,
): NewEvent[] {
  const current = state.held.get(reservationId);
  const again = current?.ended_at === undefined && endedBefore !== undefined;
  const held = current && again ? { ...current, ended_at: endedBefore } : current;
  if (!held || held.ended_at === undefined) return [];
  const booking = bookingFromSeating(held);
  const from = Math.max(heldEnd(booking), now.getTime());
  if (from < booking.end_ms) {
    const others = othersThan(state, reservationId, neighbours);
    const taken = held.table_ids.filter((t) => !others.isFree(t, from, booking.end_ms));
    if (taken.length)
      throw new BusinessRuleError(
        'NO_TABLE',
        'The table was given to another booking after the no-show: book the guests again',
        { table_ids: taken },
      );
  }
  return again ? [] : decideHoldAgain(state, reservationId, now);
}

/**
 * An ended seating held to its end again (a SeatingHeld of the same seating, without `ended_at`),
 * unchecked: decideResume after its check, and guests seated on a seating a status change ended
 * around their seat (the reservation shows them at those tables, so they are taken). Nothing to
 * write when the seating was never ended (or the reservation holds none that day).
 */
export function decideHoldAgain(state: CapacityState, reservationId: string, now: Date): NewEvent[] {
  const held = state.held.get(reservationId);
  if (!held || held.ended_at === undefined) return [];
  const { ended_at: _, ...seating } = held;
  return [
    {
      type: 'SeatingHeld',
      data: { ...seating, at: now.toISOString() } as unknown as Record<string, unknown>,
    },
  ];
}
