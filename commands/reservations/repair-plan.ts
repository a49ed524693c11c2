// What to do when a reservation and the capacity or external_id claim streams disagree: a create, move
// or cancel writes several streams one after the other, and a process that dies in between leaves them
// apart. Pure; the streams were read just before (repair.ts), never a read model.
//
// The rules:
// - no reservation behind a seating or an external_id claim (the create died after claiming its
//   external_id or holding its table): fence the reservation stream so a late ReservationCreated can
//   never land, then release its seatings and its external_id claims — only once the fence is there
//   (repair.ts plans again on the fenced stream: a create that got there first is left alone);
// - canceled or rejected: release every seating it still holds;
// - a pending move (SeatingMoveHeld, never confirmed nor dropped): if the reservation shows exactly
//   its seating on its day, the update landed and only the confirmation is missing: confirm it; any
//   other pending move never became what the reservation shows: drop it. The reservation itself is
//   never changed: what it shows is what was acknowledged (or nothing was, and it is as it was);
// - a seating on another day than the reservation's (a move died before its update, or after it and
//   before releasing the old day): release it;
// - a seating on the reservation's day that differs from it: left by a same-day move of an older
//   version, which replaced the seating before its update and died in between (the old seating was
//   given up first). The reservation's seating is held again as it shows it (restore), without a
//   check: the reservation shows those tables, so they are taken whatever the stream says.
import type { SeatingHeldData, SeatingMoveHeldData } from '../availability/capacity-events';
import type { ReleaseReason } from './capacity-decide';
import type { ReservationSnapshot } from './events';
import { RELEASED_STATUSES } from './events';
import type { ReservationState } from './evolve';

export type RepairStep =
  | { kind: 'fence' }
  | { kind: 'release'; serviceDate: string; reason: ReleaseReason }
  | { kind: 'release_claim'; externalId: string }
  | { kind: 'confirm_move'; serviceDate: string; moveId: string }
  | { kind: 'drop_move'; serviceDate: string; moveId: string; reason: ReleaseReason }
  /** Hold the reservation's own seating on its day as it shows it (seatingOfReservation). */
  | { kind: 'restore'; serviceDate: string }
  /** An active reservation holds nothing on its own day: nothing safe to do automatically. */
  | { kind: 'report_missing_seating'; serviceDate: string };

/**
 * `seatings`: this reservation's active seating per day, for every day worth looking at.
 * `claims`: the external_ids whose claim stream shows this reservation as the current owner.
 * `moves`: this reservation's pending moves per day, by move id.
 */
export function planRepair(
  state: ReservationState,
  seatings: ReadonlyMap<string, SeatingHeldData>,
  claims: ReadonlySet<string> = new Set(),
  moves: ReadonlyMap<string, ReadonlyMap<string, SeatingMoveHeldData>> = new Map(),
): RepairStep[] {
  const steps: RepairStep[] = [];
  const r = state.exists ? state.r : null;
  const dropAll = (reason: ReleaseReason) => {
    for (const [day, byId] of moves)
      for (const moveId of byId.keys()) steps.push({ kind: 'drop_move', serviceDate: day, moveId, reason });
  };
  if (!r) {
    const anyMove = [...moves.values()].some((m) => m.size > 0);
    if (seatings.size === 0 && claims.size === 0 && !anyMove) return steps;
    if (!state.abandoned) steps.push({ kind: 'fence' });
    for (const day of seatings.keys())
      steps.push({ kind: 'release', serviceDate: day, reason: 'ABANDONED_HOLD' });
    dropAll('ABANDONED_HOLD');
    // The claims it holds, and the one its seatings name (releasing a claim it does not own is a no-op).
    const named = [...seatings.values()].map((s) => s.external_id).filter((x): x is string => !!x);
    for (const externalId of new Set([...named, ...claims]))
      steps.push({ kind: 'release_claim', externalId });
    return steps;
  }
  if (RELEASED_STATUSES.includes(r.status)) {
    const reason: ReleaseReason = r.status === 'REJECTED' ? 'REJECTED' : 'CANCELED';
    for (const day of seatings.keys()) steps.push({ kind: 'release', serviceDate: day, reason });
    dropAll(reason);
    return steps;
  }
  // The move the reservation shows, if one is pending on its day: its update landed.
  let confirmed: SeatingMoveHeldData | null = null;
  for (const [day, byId] of moves)
    for (const [moveId, seating] of byId) {
      if (!confirmed && day === r.service_date && matches(r, seating)) {
        confirmed = seating;
        steps.push({ kind: 'confirm_move', serviceDate: day, moveId });
      } else steps.push({ kind: 'drop_move', serviceDate: day, moveId, reason: 'MOVE_NOT_RECORDED' });
    }
  for (const day of seatings.keys())
    if (day !== r.service_date) steps.push({ kind: 'release', serviceDate: day, reason: 'MOVED' });
  const own = confirmed ?? seatings.get(r.service_date);
  if (!own) steps.push({ kind: 'report_missing_seating', serviceDate: r.service_date });
  else if (!matches(r, own)) steps.push({ kind: 'restore', serviceDate: r.service_date });
  return steps;
}

/** The seating a reservation shows, as its capacity stream holds it (the repair's restore). */
export function seatingOfReservation(r: ReservationSnapshot, at: string): SeatingHeldData {
  return {
    restaurant_id: r.restaurant_id,
    service_date: r.service_date,
    reservation_id: r.reservation_id,
    shift_id: r.shift_id,
    room_id: r.room_id,
    table_ids: r.table_ids,
    start_at: r.start_at,
    end_at: r.end_at,
    party_size: r.party_size,
    at,
    external_id: r.external_id,
    force_inserted: r.is_force_inserted,
  };
}

export function matches(r: ReservationSnapshot, s: SeatingHeldData): boolean {
  return (
    r.start_at === s.start_at &&
    r.end_at === s.end_at &&
    r.party_size === s.party_size &&
    r.shift_id === s.shift_id &&
    r.room_id === s.room_id &&
    JSON.stringify(r.table_ids) === JSON.stringify(s.table_ids)
  );
}
