// What every command on an existing reservation does: load its stream, find it (within the caller's
// restaurant), decide, append with the expected revision; afterwards free its seating if it no
// longer holds one.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import type { NewEvent } from '../../src/ports/event-store';
import { releaseSeating } from './capacity-handler';
import { existing } from './decide-status';
import { RELEASED_STATUSES, type ReservationSnapshot, reservationStream } from './events';
import { evolveReservation, initialReservation, type ReservationState } from './evolve';

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
