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

/** Whether `e` recorded this very change (the command run again after a crash, or twice). */
const sameChange = (e: { type: string; data: Record<string, unknown> }, cmd: RelinkCommand): boolean => {
  if (e.type !== CUSTOMER_RELINKED) return false;
  const d = e.data as {
    reason?: unknown;
    changes?: { customer_id?: unknown };
    previous?: { customer_id?: unknown };
  };
  return (
    d.reason === cmd.reason &&
    d.previous?.customer_id === cmd.customerId &&
    d.changes?.customer_id === cmd.into
  );
};

/**
 * The event recording that the reservation now shows `cmd.into` instead of `cmd.customerId`, or
 * nothing: not a reservation (never created, abandoned), another restaurant's, linked to a customer
 * the change does not concern (given to another since), or the change already recorded. A POS lock
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
  if (earlier.some((e) => sameChange(e, cmd))) return [];
  return [
    {
      type: CUSTOMER_RELINKED,
      data: {
        reservation_id: r.reservation_id,
        restaurant_id: r.restaurant_id,
        at: cmd.at,
        changes: { customer_id: cmd.into },
        previous: { customer_id: cmd.customerId },
        reason: cmd.reason,
      },
    },
  ];
}
