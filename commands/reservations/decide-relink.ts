// A customer merged into another, or deleted, changes the customer its reservations show (reads
// resolve a merged-away id to its survivor; a deleted one to nothing). Each such reservation records
// that change on its own stream (ReservationCustomerRelinked), so its updated_at moves, its history
// and the sync feed (updated_since) show it and a reservation.updated is published. Pure: the
// handler (relink.ts) finds the reservations and appends.
import type { NewEvent } from '../../src/ports/event-store';
import { CUSTOMER_RELINKED, type RelinkReason } from './events';
import type { ReservationState } from './evolve';

export interface RelinkCommand {
  restaurantId: string;
  /** The customer merged away or deleted: the one the reservation showed. */
  customerId: string;
  /** The ids a reservation showing `customerId` may link: it and the customers merged into it. */
  linked: readonly string[];
  /** The survivor of a merge; null for a deletion. */
  into: string | null;
  reason: RelinkReason;
  at: string;
}

/**
 * The customer the reservation shows per the relinks recorded since its link was last set (created,
 * or a PATCH of its customer): the last one's survivor, null once deleted; undefined when none was
 * recorded (it shows what its link resolves to).
 */
export function shownPerRelinks(
  earlier: readonly { type: string; data: Record<string, unknown> }[],
): string | null | undefined {
  let shows: string | null | undefined;
  for (const e of earlier) {
    const changes = e.data.changes as { customer_id?: unknown } | undefined;
    if (e.type === CUSTOMER_RELINKED) shows = (changes?.customer_id as string | null | undefined) ?? null;
    else if (
      e.type === 'ReservationCreated' ||
      (e.type === 'ReservationUpdated' && changes !== undefined && 'customer_id' in changes)
    )
      shows = undefined;
  }
  return shows;
}

/**
 * The event recording that the reservation now shows `cmd.into` instead of `cmd.customerId`, or
 * nothing: not a reservation (never created, abandoned), another restaurant's, linked to a customer
 * the change does not concern (given to another since), or showing per its recorded relinks a
 * customer the change does not move. Relinks run concurrently and after a crash, so they arrive in
 * any order: one recorded later (the survivor merged on or deleted: B -> C, B -> null) makes an
 * earlier one (A -> B) stale, and that one is skipped, never recorded after it; a later one arriving
 * first moves the reservation from what it shows (A) to its survivor, so `previous` is always what
 * the reservation showed per its stream, and the last relink what it shows now. The same change run
 * again (a crash, twice) is skipped the same way. A POS lock
 * on `customer` is not consulted: it stops partner writes, and this records what the reservation
 * already shows, the platform's consequence of the merge or deletion.
 */
export function decideRelink(
  state: ReservationState,
  earlier: readonly { type: string; data: Record<string, unknown> }[],
  cmd: RelinkCommand,
): NewEvent[] {
  const r = state.r;
  if (!state.exists || state.abandoned || !r) return [];
  if (r.restaurant_id !== cmd.restaurantId) return [];
  if (r.customer_id === null || !cmd.linked.includes(r.customer_id)) return [];
  const shows = shownPerRelinks(earlier);
  // Shown per its relinks: the customer merged away or deleted, or one merged into it (at any depth)
  // whose own relink it has not recorded yet. Anything else (its survivor, one past it, or none) is
  // a change this one is older than.
  if (shows !== undefined && shows !== cmd.customerId && (shows === null || !cmd.linked.includes(shows)))
    return [];
  return [
    {
      type: CUSTOMER_RELINKED,
      data: {
        reservation_id: r.reservation_id,
        restaurant_id: r.restaurant_id,
        at: cmd.at,
        changes: { customer_id: cmd.into },
        previous: { customer_id: shows ?? cmd.customerId },
        reason: cmd.reason,
      },
    },
  ];
}
