// Holds a seating for a reservation on the capacity stream of its service day. Which day that is
// depends on the shift (a start after midnight may belong to the day before), so every (shift, day)
// the availability module says offers this start is tried in order, each rechecked on its own stream.
import type { CommandMeta } from '../../src/core/command-meta';
import { BusinessRuleError } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import { checkSlot } from '../availability/check';
import { type FailureReason, laterFailure } from '../availability/rules';
import { type SlotStart, startsAt } from '../availability/slots';
import { addDays, localDateOf, minutesOfDay, offsetAt } from '../availability/zone-time';
import type { Catalog } from '../catalog/types';
import { decideHold, type HoldRequest } from './capacity-decide';
import { appendToCapacity } from './capacity-handler';
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
  purpose: string;
  now: Date;
}

export interface HeldSeating {
  seating: Seating;
  shift: Catalog['shifts'][number];
  /** Null when the reservation already held exactly this seating. */
  position: bigint | null;
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
      purpose: req.purpose,
      timezone: req.timezone,
      catalog: req.catalog,
      now: req.now,
    };
    // The decision of the attempt that was appended (a retried decide overwrites an earlier one).
    const decided: { seating?: Seating } = {};
    try {
      const outcome = await appendToCapacity(
        deps,
        req.restaurantId,
        start.serviceDate,
        (state) => {
          const decision = decideHold(state, hold);
          decided.seating = decision.seating;
          return decision.events;
        },
        meta,
      );
      return { seating: decided.seating as Seating, shift: start.shift, position: outcome.position };
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

/** The (shift, service day) pairs offering this start; with bypass_availability, any start of a shift. */
function candidateStarts(req: SeatingRequest): SlotStart[] {
  const shifts =
    req.shiftId === null ? req.catalog.shifts : req.catalog.shifts.filter((s) => s.id === req.shiftId);
  const onGrid = startsAt(shifts, req.timezone, req.startMs);
  if (onGrid.length || !req.force) return onGrid;
  // A forced reservation may sit off the slot grid, but it still belongs to a shift and a service day.
  const shift = shifts.length === 1 ? shifts[0] : undefined;
  if (!shift) return [];
  const local = localDateOf(req.timezone, req.startMs);
  const minutes = Math.floor(
    ((req.startMs + offsetAt(req.timezone, req.startMs) * 60_000) % 86_400_000) / 60_000,
  );
  // A time before the shift's first start, on a shift that runs past midnight, is the previous night's.
  const serviceDate =
    minutesOfDay(shift.end_time) < minutesOfDay(shift.start_time) && minutes < minutesOfDay(shift.start_time)
      ? addDays(local, -1)
      : local;
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
