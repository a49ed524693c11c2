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

const errorMessage = (err: unknown): string =>
  err instanceof Error ? `${err.name}: ${err.message}` : String(err);

/**
 * What finding the reservations takes: the read models, brought up to the log's head first, so every
 * reservation appended before the merge is found. Which ones change is decided on each reservation's
 * own stream (decide-relink.ts), never from the read model.
 */
export interface RelinkDeps extends WriteDeps {
  docs: DocumentStore;
  /** `false` when the read models were not brought to `position` (scaled out, the wait gave up). */
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
  /**
   * Reservations whose relink failed (a revision conflict with another process past the retries, the
   * log unavailable): the others went on; running the same command again records them.
   */
  failed: number;
  /**
   * The read models were not brought up to the log's head (scaled out, the bounded wait gave up): a
   * reservation they did not yet hold was not looked at; running the same command again finds it.
   */
  behind: boolean;
}

/** Whether a relink left reservations to record, and what to tell the operator then. */
export function relinkLeftover(o: RelinkOutcome | null | undefined): string | null {
  if (!o || (o.failed === 0 && !o.behind)) return null;
  const parts = [
    ...(o.failed > 0 ? [`${o.failed} reservation(s) not recorded`] : []),
    ...(o.behind ? ['the read models were behind the log, so some may not have been found'] : []),
  ];
  return `${parts.join('; ')}: run the same command again`;
}

/** Two relinks' outcomes as one (a command that relinks several customers). */
export const addRelinks = (a: RelinkOutcome, b: RelinkOutcome): RelinkOutcome => ({
  relinked: a.relinked + b.relinked,
  position: a.position === null || (b.position !== null && b.position > a.position) ? b.position : a.position,
  failed: a.failed + b.failed,
  behind: a.behind || b.behind,
});

export async function relinkReservations(
  deps: RelinkDeps,
  change: Omit<RelinkCommand, 'at'>,
  meta: CommandMeta,
): Promise<RelinkOutcome> {
  const behind = (await deps.settle(await deps.events.headPosition())) === false;
  if (behind)
    deps.logger?.warn(
      {
        restaurant_id: change.restaurantId,
        customer_id: change.customerId,
        request_id: meta.request_id ?? null,
      },
      'relink: the read models are behind the log; reservations they do not hold yet are not relinked (run the command again)',
    );
  const found = await deps.docs
    .collection<ReservationDoc>(RESERVATIONS)
    .find(
      { restaurant_id: change.restaurantId, customer_id: { $in: [...change.linked] } },
      { projection: { _id: 1 } },
    );
  const ids = found.map((d) => d._id).sort();
  let relinked = 0;
  let position: bigint | null = null;
  let failed = 0;
  for (let i = 0; i < ids.length; i += RELINK_BATCH) {
    // A turn of the event loop at least (a log answering at once, in memory, would never give one),
    // and while this process serves requests, theirs first.
    if (i > 0) await (giveWayToRequests() ?? new Promise<void>((resolve) => setImmediate(resolve)));
    const cmd: RelinkCommand = { ...change, at: deps.clock.now().toISOString() };
    // One reservation failing (another process's writes past the retries) must not leave the rest of
    // a merge or deletion already committed unrecorded: they go on, and it is counted.
    const batch = ids.slice(i, i + RELINK_BATCH);
    const outcomes = await Promise.allSettled(
      batch.map((id) =>
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
    outcomes.forEach((settled, k) => {
      if (settled.status === 'rejected') {
        failed++;
        deps.logger?.warn(
          {
            reservation_id: batch[k],
            request_id: meta.request_id ?? null,
            error: errorMessage(settled.reason),
          },
          'relink: a reservation did not record the change (run the command again)',
        );
        return;
      }
      const o = settled.value;
      if (o.position !== null) {
        relinked++;
        if (position === null || o.position > position) position = o.position;
      }
    });
  }
  return { relinked, position, failed, behind };
}
