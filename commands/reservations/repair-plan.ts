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
// - a seating on another day than the reservation's (a move died before its update): release it — the
//   reservation kept its own day's seating;
// - a seating on the reservation's day that differs from it (a move within the day replaced the
//   seating, then died before the update): the capacity check granted that seating and the old one is
//   gone, possibly to another guest, so the reservation is brought to the seating (roll forward).
import type { SeatingHeldData } from '../availability/capacity-events';
import type { ReleaseReason } from './capacity-decide';
import type { Seating } from './decide-create';
import type { ReservationSnapshot } from './events';
import { RELEASED_STATUSES } from './events';
import type { ReservationState } from './evolve';

export type RepairStep =
  | { kind: 'fence' }
  | { kind: 'release'; serviceDate: string; reason: ReleaseReason }
  | { kind: 'release_claim'; externalId: string }
  | { kind: 'roll_forward'; seating: SeatingHeldData }
  /** An active reservation holds nothing on its own day: nothing safe to do automatically. */
  | { kind: 'report_missing_seating'; serviceDate: string };

/**
 * `seatings`: this reservation's active seating per day, for every day worth looking at.
 * `claims`: the external_ids whose claim stream shows this reservation as the current owner.
 */
export function planRepair(
  state: ReservationState,
  seatings: ReadonlyMap<string, SeatingHeldData>,
  claims: ReadonlySet<string> = new Set(),
): RepairStep[] {
  const steps: RepairStep[] = [];
  const r = state.exists ? state.r : null;
  if (!r) {
    if (seatings.size === 0 && claims.size === 0) return steps;
    if (!state.abandoned) steps.push({ kind: 'fence' });
    for (const day of seatings.keys())
      steps.push({ kind: 'release', serviceDate: day, reason: 'ABANDONED_HOLD' });
    // The claims it holds, and the one its seatings name (releasing a claim it does not own is a no-op).
    const named = [...seatings.values()].map((s) => s.external_id).filter((x): x is string => !!x);
    for (const externalId of new Set([...named, ...claims]))
      steps.push({ kind: 'release_claim', externalId });
    return steps;
  }
  if (RELEASED_STATUSES.includes(r.status)) {
    const reason: ReleaseReason = r.status === 'REJECTED' ? 'REJECTED' : 'CANCELED';
    for (const day of seatings.keys()) steps.push({ kind: 'release', serviceDate: day, reason });
    return steps;
  }
  for (const day of seatings.keys())
    if (day !== r.service_date) steps.push({ kind: 'release', serviceDate: day, reason: 'MOVED' });
  const own = seatings.get(r.service_date);
  if (!own) steps.push({ kind: 'report_missing_seating', serviceDate: r.service_date });
  else if (!matches(r, own)) steps.push({ kind: 'roll_forward', seating: own });
  return steps;
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

/** The reservation fields a roll forward writes: exactly what the seating holds. */
export function seatingChanges(s: SeatingHeldData): Seating {
  return {
    service_date: s.service_date,
    shift_id: s.shift_id,
    room_id: s.room_id,
    table_ids: s.table_ids,
    start_at: s.start_at,
    end_at: s.end_at,
    duration_minutes: Math.round((Date.parse(s.end_at) - Date.parse(s.start_at)) / 60_000),
    party_size: s.party_size,
  };
}
