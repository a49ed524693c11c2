// Brings a reservation, its seatings and its external_id claims back into agreement (see
// repair-plan.ts for the rules). The scheduler calls it for reservations the `seating_sync` read model
// shows out of sync for a while; everything here re-reads the streams and appends with expected
// revisions. Releases of a reservation that never came to be happen only after the fence: planned
// again on the fenced stream, so a create that wrote ReservationCreated first keeps what it holds.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import type { SeatingHeldData, SeatingMoveHeldData } from '../availability/capacity-events';
import { decideRestore } from './capacity-decide';
import { appendToCapacity, confirmMove, dropMove, loadCapacity, releaseSeating } from './capacity-handler';
import { externalIdClaimStream, reservationStream } from './events';
import { evolveReservation, initialReservation, type ReservationState } from './evolve';
import { legacyExternalIdOwner, releaseExternalId } from './external-id';
import { loadReservation } from './handler-common';
import { planRepair, type RepairStep, seatingOfReservation } from './repair-plan';

export interface RepairOutcome {
  steps: RepairStep[];
  position: bigint | null;
}

export async function repairSeating(
  deps: WriteDeps,
  restaurantId: string,
  reservationId: string,
  /** Days that may hold a seating or a pending move of this reservation (from the read model; re-read here). */
  days: readonly string[],
  meta: CommandMeta,
  /** External_ids this reservation may hold a claim on (from the read model; re-read here). */
  externalIds: readonly string[] = [],
): Promise<RepairOutcome> {
  let state = await loadReservation(deps, reservationId);
  const seatings = new Map<string, SeatingHeldData>();
  const moves = new Map<string, ReadonlyMap<string, SeatingMoveHeldData>>();
  for (const day of new Set([...days, ...(state.r ? [state.r.service_date] : [])])) {
    const capacity = await loadCapacity(deps, restaurantId, day);
    const held = capacity.held.get(reservationId);
    if (held) seatings.set(day, held);
    const pending = capacity.pending.get(reservationId);
    if (pending?.size) moves.set(day, pending);
  }
  const claims = new Set<string>();
  for (const externalId of new Set(externalIds))
    if (await holdsClaim(deps, restaurantId, externalId, reservationId)) claims.add(externalId);
  let position: bigint | null = null;
  const track = (p: bigint | null | undefined) => {
    if (p != null && (position === null || p > position)) position = p;
  };
  let steps = planRepair(state, seatings, claims, moves);
  if (steps[0]?.kind === 'fence') {
    state = await fence(deps, restaurantId, reservationId, meta, track);
    // The create finished after all: repair the reservation it made instead.
    steps = planRepair(state, seatings, claims, moves).filter((s) => s.kind !== 'fence');
  }
  for (const step of steps) {
    switch (step.kind) {
      case 'release':
        track(
          (await releaseSeating(deps, restaurantId, step.serviceDate, reservationId, step.reason, meta))
            .position,
        );
        break;
      case 'release_claim':
        track(await releaseExternalId(deps, restaurantId, step.externalId, reservationId, meta));
        break;
      case 'confirm_move':
        track(
          (await confirmMove(deps, restaurantId, step.serviceDate, reservationId, step.moveId, meta))
            .position,
        );
        break;
      case 'drop_move':
        track(
          (
            await dropMove(
              deps,
              restaurantId,
              step.serviceDate,
              reservationId,
              step.moveId,
              step.reason,
              meta,
            )
          ).position,
        );
        break;
      case 'restore': {
        const r = state.r;
        if (!r) break;
        const seating = seatingOfReservation(r, deps.clock.now().toISOString());
        track(
          (
            await appendToCapacity(deps, restaurantId, step.serviceDate, (s) => decideRestore(s, seating), {
              ...meta,
              restaurant_id: restaurantId,
            })
          ).position,
        );
        break;
      }
      default:
        break;
    }
  }
  return { steps, position };
}

/** The claim of `externalId` (under either name) names this reservation as its current owner. */
async function holdsClaim(
  deps: WriteDeps,
  restaurantId: string,
  externalId: string,
  reservationId: string,
): Promise<boolean> {
  const [last] = await deps.events.readStream(externalIdClaimStream(restaurantId, externalId), {
    direction: 'backwards',
    limit: 1,
  });
  if (last?.type === 'Claimed' && (last.data as { owner?: string }).owner === reservationId) return true;
  return (await legacyExternalIdOwner(deps, restaurantId, externalId)) === reservationId;
}

/** Writes ReservationCreationAbandoned as the stream's first event, unless the create got there first. */
async function fence(
  deps: WriteDeps,
  restaurantId: string,
  reservationId: string,
  meta: CommandMeta,
  track: (p: bigint | null) => void,
): Promise<ReservationState> {
  const at = deps.clock.now().toISOString();
  const outcome = await runCommand<ReservationState>(deps.events, {
    stream: reservationStream(reservationId),
    initial: initialReservation,
    evolve: evolveReservation,
    decide: (s) =>
      s.exists || s.abandoned
        ? []
        : [
            {
              type: 'ReservationCreationAbandoned',
              data: {
                reservation_id: reservationId,
                restaurant_id: restaurantId,
                at,
                reason: 'the request that claimed or held for this reservation never recorded it',
              },
            },
          ],
    metadata: { ...meta, restaurant_id: restaurantId },
    clock: deps.clock,
  });
  track(outcome.position);
  return outcome.state;
}
