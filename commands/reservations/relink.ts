// Records, on each reservation showing a customer merged away or deleted, that it now shows another
// (or none): decide-relink.ts. Run by the merge and the deletion once their customer events are
// appended. Safe to run again: a change already recorded is not recorded twice, so running the merge
// or the deletion again after a crash finishes what it left (docs/customers.md).
import { RESERVATIONS, type ReservationDoc } from '../../projections/reservations';
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { giveWayToRequests } from '../../src/core/foreground';
import type { WriteDeps } from '../../src/core/write-deps';
import type { DocumentStore } from '../../src/ports/document-store';
import { decideRelink, type RelinkCommand } from './decide-relink';
import { reservationStream } from './events';
import { evolveReservation, initialReservation, type ReservationState } from './evolve';

/**
 * What finding the reservations takes: the read models, brought up to the log's head first, so every
 * reservation appended before the merge is found. Which ones change is decided on each reservation's
 * own stream (decide-relink.ts), never from the read model.
 */
export interface RelinkDeps extends WriteDeps {
  docs: DocumentStore;
  settle(position: bigint | null | undefined): Promise<unknown>;
}

/**
 * Reservations appended at once: their streams differ, so the log's writer groups their commits, and
 * between two batches requests served by this process go first (a customer with thousands of
 * reservations must not hold the event loop).
 */
export const RELINK_BATCH = 25;

export interface RelinkOutcome {
  /** Reservations that recorded the change now. */
  relinked: number;
  /** Last position appended, null when none. */
  position: bigint | null;
}

export async function relinkReservations(
  deps: RelinkDeps,
  change: Omit<RelinkCommand, 'at'>,
  meta: CommandMeta,
): Promise<RelinkOutcome> {
  await deps.settle(await deps.events.headPosition());
  const found = await deps.docs
    .collection<ReservationDoc>(RESERVATIONS)
    .find(
      { restaurant_id: change.restaurantId, customer_id: { $in: [...change.linked] } },
      { projection: { _id: 1 } },
    );
  const ids = found.map((d) => d._id).sort();
  let relinked = 0;
  let position: bigint | null = null;
  for (let i = 0; i < ids.length; i += RELINK_BATCH) {
    // A turn of the event loop at least (a log answering at once, in memory, would never give one),
    // and while this process serves requests, theirs first.
    if (i > 0) await (giveWayToRequests() ?? new Promise<void>((resolve) => setImmediate(resolve)));
    const cmd: RelinkCommand = { ...change, at: deps.clock.now().toISOString() };
    const outcomes = await Promise.all(
      ids.slice(i, i + RELINK_BATCH).map((id) =>
        runCommand<ReservationState>(deps.events, {
          stream: reservationStream(id),
          initial: initialReservation,
          evolve: evolveReservation,
          decide: (state, current) => decideRelink(state, current.events, cmd),
          metadata: meta,
          clock: deps.clock,
        }),
      ),
    );
    for (const o of outcomes)
      if (o.position !== null) {
        relinked++;
        if (position === null || o.position > position) position = o.position;
      }
  }
  return { relinked, position };
}
