// What every command on an existing reservation does: load its stream, find it (within the caller's
// restaurant), decide, append with the expected revision; afterwards free its seating if it no
// longer holds one.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { endSeating, holdAgain, releaseSeating } from './capacity-handler';
import { existing } from './decide-status';
import {
  FINISHED_STATUSES,
  isFinished,
  RELEASED_STATUSES,
  type ReservationSnapshot,
  reservationStream,
} from './events';
import { evolveReservation, initialReservation, type ReservationState, SEATED_STATUSES } from './evolve';

/** The caller's restaurant (partner routes), or null for an operator acting on any restaurant. */
export type Tenant = string | null;

export function runOnReservation(
  deps: WriteDeps,
  id: string,
  tenant: Tenant,
  meta: CommandMeta,
  decide: (r: ReservationSnapshot, now: Date) => NewEvent[],
) {
  return runCommand<ReservationState>(deps.events, {
    stream: reservationStream(id),
    initial: initialReservation,
    evolve: evolveReservation,
    decide: (s) => {
      const r = existing(s, id, tenant);
      return decide(r, deps.clock.now()).map((e) => ({
        ...e,
        metadata: { ...e.metadata, restaurant_id: r.restaurant_id },
      }));
    },
    metadata: meta,
    clock: deps.clock,
  });
}

export async function loadReservation(deps: WriteDeps, id: string): Promise<ReservationState> {
  const events = await deps.events.readStream(reservationStream(id));
  return events.reduce(evolveReservation, initialReservation);
}

/**
 * A canceled or rejected reservation frees its table. Runs after the status change (never before:
 * a table freed for a reservation that stays booked could be sold twice) and again on a repeated
 * cancel, which also repairs a release that a crash interrupted.
 */
export async function releaseIfEnded(deps: WriteDeps, r: ReservationSnapshot | null, meta: CommandMeta) {
  if (!r || !RELEASED_STATUSES.includes(r.status)) return null;
  const reason = r.status === 'REJECTED' ? 'REJECTED' : 'CANCELED';
  return releaseSeating(deps, r.restaurant_id, r.service_date, r.reservation_id, reason, meta);
}

export { FINISHED_STATUSES };

/**
 * When the reservation reached its current status: the event time of its last status change (null
 * when it never changed). Pure, on the reservation stream's events: a replay gives the same instant.
 */
export function statusChangedAt(events: readonly RecordedEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as RecordedEvent;
    if (e.type === 'ReservationStatusChanged') return (e.data as { at: string }).at;
  }
  return null;
}

/**
 * A DONE or NO_SHOW reservation frees its tables from the time of that status change (the event's
 * time, not the time this runs), keeping the part of its seating before it. Like releaseIfEnded it
 * runs after the status change and again on a repeated one (which repairs an end a crash skipped).
 *
 * A no-show may be seated while its end is being written (staff seat the guests as the no-show job
 * marks them: the seat decided on the status before the no-show, or landed just after it): the
 * status is read again from the stream here, and after an end is written the reservation is read
 * once more: guests seated by then get their seating back (holdIfSeated). The seat reads the
 * capacity after its own status lands (settleSeating), so one of the two always sees the other.
 */
export async function endIfFinished(
  deps: WriteDeps,
  r: Pick<ReservationSnapshot, 'reservation_id' | 'restaurant_id' | 'service_date' | 'status'> | null,
  meta: CommandMeta,
): Promise<{ position: bigint | null; endedAlready?: boolean } | null> {
  if (!r || !isFinished(r.status)) return null;
  const events = await deps.events.readStream(reservationStream(r.reservation_id));
  const latest = events.reduce(evolveReservation, initialReservation).r;
  const at = statusChangedAt(events);
  if (!latest || !isFinished(latest.status) || at === null) return null;
  const ended = await endSeating(
    deps,
    r.restaurant_id,
    r.service_date,
    r.reservation_id,
    at,
    latest.status,
    meta,
  );
  if (ended.appended.length === 0) return ended;
  const again = await holdIfSeated(deps, (await loadReservation(deps, r.reservation_id)).r, meta);
  return { position: later(ended.position, again?.position ?? null) };
}

const later = (a: bigint | null, b: bigint | null): bigint | null =>
  a === null ? b : b === null ? a : a > b ? a : b;

/**
 * Guests at the restaurant (a seated status) hold their whole seating: an end written around their
 * seat (endIfFinished) is undone, unchecked (they are at those tables). A no-op otherwise.
 */
export async function holdIfSeated(deps: WriteDeps, r: ReservationSnapshot | null, meta: CommandMeta) {
  if (!r || !SEATED_STATUSES.includes(r.status)) return null;
  return holdAgain(deps, r.restaurant_id, r.service_date, r.reservation_id, meta);
}

/**
 * The capacity side after a status change: released (canceled, rejected), ended (DONE, NO_SHOW),
 * held whole again (seated, when an end was written around the seat) or left as it is.
 */
export async function settleSeating(
  deps: WriteDeps,
  r: ReservationSnapshot | null,
  meta: CommandMeta,
): Promise<{ position: bigint | null } | null> {
  return (
    (await releaseIfEnded(deps, r, meta)) ??
    (await endIfFinished(deps, r, meta)) ??
    (await holdIfSeated(deps, r, meta))
  );
}
