// Appends to a capacity stream (`capacity-<restaurant>-<day>`) with its expected revision: runCommand
// reloads and decides again when another request got there first, so two bookings can never both take
// the last table. Requests for the same stream queue in-process first, so they rarely conflict at all.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import type { NewEvent } from '../../src/ports/event-store';
import { capacityStream } from '../availability/capacity-events';
import { decideRelease, type ReleaseReason } from './capacity-decide';
import { type CapacityState, evolveCapacity, initialCapacity } from './capacity-state';
import { KeyedQueue } from './keyed-queue';

const queue = new KeyedQueue();

export function appendToCapacity(
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  decide: (state: CapacityState) => NewEvent[],
  meta: CommandMeta,
) {
  const stream = capacityStream(restaurantId, serviceDate);
  return queue.run(stream, () =>
    runCommand<CapacityState>(deps.events, {
      stream,
      initial: initialCapacity,
      evolve: evolveCapacity,
      decide,
      metadata: { ...meta, restaurant_id: restaurantId },
      clock: deps.clock,
      // Every request of a busy day competes for this one stream; give conflicts room to settle.
      maxAttempts: 20,
    }),
  );
}

/** Frees the reservation's seating on that day; a no-op when it holds none there. */
export const releaseSeating = (
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  reason: ReleaseReason,
  meta: CommandMeta,
) =>
  appendToCapacity(
    deps,
    restaurantId,
    serviceDate,
    (s) => decideRelease(s, restaurantId, serviceDate, reservationId, reason, deps.clock.now().toISOString()),
    meta,
  );

export async function loadCapacity(deps: WriteDeps, restaurantId: string, serviceDate: string) {
  const events = await deps.events.readStream(capacityStream(restaurantId, serviceDate));
  return events.reduce(evolveCapacity, initialCapacity);
}
