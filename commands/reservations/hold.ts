// Holds a seating for a reservation on the capacity stream of its service day. Which day that is
// depends on the shift (a start after midnight may belong to the day before), so every (shift, day)
// the availability module says offers this start is tried in order, each rechecked on its own stream.
import type { CommandMeta } from '../../src/core/command-meta';
import { BusinessRuleError } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import { checkSlot } from '../availability/check';
import { FAILURE_MESSAGES, type FailureReason, laterFailure } from '../availability/rules';
import { type SlotStart, startsAt } from '../availability/slots';
import { addDays, localDateOf, minutesOfDay, offsetAt } from '../availability/zone-time';
import type { Catalog } from '../catalog/types';
import { decideDropMove, decideHold, decideRelease, type HoldRequest } from './capacity-decide';
import { appendChecked } from './capacity-handler';
import type { Seating } from './decide-create';

export interface SeatingRequest {
  restaurantId: string;
  timezone: string;
  catalog: Catalog;
  reservationId: string;
  externalId: string | null;
  startMs: number;
  partySize: number;
  shiftId: string | null;
  roomId: string | null;
  tableIds: readonly string[] | null;
  force: boolean;
  /** A move of an existing reservation: held as pending under this id (capacity-decide.ts). */
  moveId?: string;
  /** False: a move that chooses no start, held without the time limits (HoldRequest.timeLimits). */
  timeLimits?: boolean;
  /**
   * A move that keeps the reservation's start and shift: its service day. The start is held there
   * under that shift whatever the shift's grid offers now (its hours, interval or days changed since
   * the booking), as a seating taken under an earlier catalog keeps its tables; every other rule applies.
   */
  ownServiceDate?: string;
  purpose: string;
  now: Date;
}

export interface HeldSeating {
  seating: Seating;
  shift: Catalog['shifts'][number];
  /** Null when the reservation already held exactly this seating. */
  position: bigint | null;
  /** The pending move to confirm once the update lands; null when nothing is pending. */
  moveId: string | null;
}

export async function holdSeating(
  deps: WriteDeps,
  req: SeatingRequest,
  meta: CommandMeta,
): Promise<HeldSeating> {
  const starts = candidateStarts(req);
  let failure: BusinessRuleError | null = null;
  for (const start of starts) {
    const hold: HoldRequest = {
      restaurantId: req.restaurantId,
      reservationId: req.reservationId,
      externalId: req.externalId,
      serviceDate: start.serviceDate,
      shift: start.shift,
      startMs: req.startMs,
      partySize: req.partySize,
      roomId: req.roomId,
      tableIds: req.tableIds,
      force: req.force,
      moveId: req.moveId,
      ...(req.timeLimits === false ? { timeLimits: false } : {}),
      ...(req.ownServiceDate !== undefined ? { ownStart: true } : {}),
      purpose: req.purpose,
      timezone: req.timezone,
      catalog: req.catalog,
      now: req.now,
    };
    // The decision of the attempt that was appended (a retried decide overwrites an earlier one).
    const decided: { seating?: Seating; moveId?: string | null } = {};
    const reason = req.moveId ? 'UPDATE_REFUSED' : 'CREATE_REFUSED';
    // Each decision after the first gets ids of its own: an earlier attempt's seating, held and then
    // replaced when a race with another day made it decide again, may come back, and an event id seen
    // before would be taken for a retried append and not written again.
    let decisions = 0;
    try {
      // Checked against the neighbouring service days' seatings too (appendChecked reads them when
      // a seating of the restaurant may cross midnight: serviceDaysMeeting, whatever the catalog).
      const outcome = await appendChecked(
        deps,
        req.restaurantId,
        start.serviceDate,
        req.reservationId,
        (state, neighbours) => {
          decisions += 1;
          const purpose = decisions === 1 ? hold.purpose : `${hold.purpose}#${decisions}`;
          const decision = decideHold(state, { ...hold, neighbours, purpose });
          decided.seating = decision.seating;
          decided.moveId = decision.moveId;
          return {
            events: decision.events,
            seating: {
              service_date: decision.seating.service_date,
              end_at: decision.seating.end_at,
              ...(decision.moveId ? { move_id: decision.moveId } : {}),
            },
          };
        },
        // A later attempt refused what an earlier one held: let it go again.
        (state, now) =>
          req.moveId
            ? decideDropMove(state, req.reservationId, req.moveId, reason, now.toISOString())
            : decideRelease(
                state,
                req.restaurantId,
                start.serviceDate,
                req.reservationId,
                reason,
                now.toISOString(),
              ),
        meta,
      );
      return {
        seating: decided.seating as Seating,
        shift: start.shift,
        position: outcome.position,
        moveId: decided.moveId ?? null,
      };
    } catch (err) {
      if (!(err instanceof BusinessRuleError)) throw err;
      // Several shifts offering the start: report the most specific refusal (availability's order).
      if (
        !failure ||
        laterFailure(failure.reason as FailureReason, err.reason as FailureReason) !== failure.reason
      )
        failure = err;
    }
  }
  throw failure ?? whyNoStart(req);
}

/**
 * The refusal a hold would give whatever the day's other seatings, decided from the request and the
 * catalog alone, so a create answers it before it claims an external_id or holds anything. Without
 * bypass_availability it is the exact check on an empty day, up to room selection: each shift's
 * checks before covers and tables do not depend on other seatings, so a slot refused by them on an
 * empty day is refused with the same reason on any day. With bypass_availability: an unknown
 * room or table, and the room a shift requires (the room is the partner's choice, not a capacity
 * rule, so the bypass does not make it).
 */
export function catalogRefusal(req: SeatingRequest): BusinessRuleError | null {
  if (req.force) return forcedRefusal(req);
  const result = checkSlot(
    { timezone: req.timezone, suspended: false, catalog: req.catalog, bookings: [], now: req.now },
    {
      start_ms: req.startMs,
      party_size: req.partySize,
      shift_id: req.shiftId,
      room_id: req.roomId,
      table_ids: req.tableIds,
    },
  );
  // Covers and tables: refused on an empty day, refused on any, but other seatings may change which
  // of the two is reported; the hold says which.
  if (result.available || DEPENDS_ON_SEATINGS.includes(result.failure_reason)) return null;
  return new BusinessRuleError(result.failure_reason, result.message);
}

const DEPENDS_ON_SEATINGS: readonly FailureReason[] = ['MAX_COVERS_REACHED', 'NO_TABLE'];

function forcedRefusal(req: SeatingRequest): BusinessRuleError | null {
  const refuse = (reason: FailureReason) => new BusinessRuleError(reason, FAILURE_MESSAGES[reason]);
  const starts = candidateStarts(req);
  // No shift at all: the hold words it (whyNoStart).
  if (starts.length === 0) return null;
  if (req.roomId !== null && !req.catalog.rooms.some((r) => r.id === req.roomId))
    return refuse('UNKNOWN_ROOM');
  if (req.roomId === null && starts.every((s) => s.shift.requires_room_selection))
    return refuse('ROOM_SELECTION_REQUIRED');
  const known = new Set(req.catalog.tables.map((t) => t.id));
  const unknown = req.tableIds?.filter((id) => !known.has(id)) ?? [];
  if (unknown.length)
    return new BusinessRuleError('UNKNOWN_TABLE', FAILURE_MESSAGES.UNKNOWN_TABLE, { table_ids: unknown });
  return null;
}

/** The (shift, service day) pairs offering this start; with bypass_availability, any start of a shift. */
function candidateStarts(req: SeatingRequest): SlotStart[] {
  const shifts =
    req.shiftId === null ? req.catalog.shifts : req.catalog.shifts.filter((s) => s.id === req.shiftId);
  // The reservation's own start and shift, kept: on its own service day, on the grid or not (a shift
  // since removed offers nothing: whyNoStart says so).
  if (req.ownServiceDate !== undefined && req.shiftId !== null)
    return shifts.map((shift) => ({
      shift,
      serviceDate: req.ownServiceDate as string,
      startMs: req.startMs,
    }));
  const onGrid = startsAt(shifts, req.timezone, req.startMs);
  if (onGrid.length || !req.force) return onGrid;
  // A forced reservation may sit off the slot grid, but it still belongs to a shift and a service day.
  const shift = shifts.length === 1 ? shifts[0] : undefined;
  if (!shift) return [];
  const today = localDateOf(req.timezone, req.startMs);
  // The wall clock's minutes after midnight (an instant before 1970 is negative: keep them positive).
  const local = req.startMs + offsetAt(req.timezone, req.startMs) * 60_000;
  const minutes = Math.floor((((local % 86_400_000) + 86_400_000) % 86_400_000) / 60_000);
  // On a shift that runs past midnight, a time between its last start (end_time, after midnight) and
  // its first start (start_time, in the evening) belongs to the nearer of the two: the previous
  // night's until halfway, tonight's from then on. A walk-in shortly before a 22:00 shift opens is
  // tonight's, so it counts in tonight's covers and sits beside tonight's seatings (the capacity
  // stream of its service day is the only one its tables are picked against).
  const first = minutesOfDay(shift.start_time);
  const last = minutesOfDay(shift.end_time);
  const serviceDate =
    last < first && minutes < first && minutes <= (last + first) / 2 ? addDays(today, -1) : today;
  return [{ shift, serviceDate, startMs: req.startMs }];
}

/** No shift offers the start at all: the availability module says precisely why. */
function whyNoStart(req: SeatingRequest): BusinessRuleError {
  if (req.force && req.shiftId === null)
    return new BusinessRuleError(
      'OUTSIDE_SHIFT',
      'A forced reservation off the slot grid needs a shift_id: no shift offers a seating at this start_at',
    );
  const result = checkSlot(
    { timezone: req.timezone, suspended: false, catalog: req.catalog, bookings: [], now: req.now },
    {
      start_ms: req.startMs,
      party_size: req.partySize,
      shift_id: req.shiftId,
      room_id: req.roomId,
      table_ids: req.tableIds,
    },
  );
  return result.available
    ? new BusinessRuleError('OUTSIDE_SHIFT', 'No shift offers a seating at this start_at')
    : new BusinessRuleError(result.failure_reason, result.message);
}
