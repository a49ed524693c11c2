// What becomes of the deposit a guest still owes when their reservation is canceled or rejected. Pure.
//
// The spec says nothing of it. Left PENDING, a canceled reservation still showed the deposit as owed
// (`payment_summary.pending_amount`), and an integration collecting deposits from that figure would
// chase a guest for a booking that no longer exists. A pending row is money nobody moved: it is voided
// with the closing status. Rows that moved money (paid, authorized, refunded) are the restaurant's to
// settle (a cancellation fee kept, a pre-authorization released) and are left as they are.
import type { NewEvent } from '../../src/ports/event-store';
import type { Payment, ReservationSnapshot, ReservationStatus } from './events';
import { CANCELED_STATUSES } from './evolve';

/** Statuses that end a booking before the guests came: nothing is owed for it any more. */
export const closesBooking = (status: ReservationStatus): boolean =>
  CANCELED_STATUSES.includes(status) || status === 'REJECTED';

/** A ReservationPaymentRecorded voiding each pending row of `r` (after the status that closed it). */
export function voidPendingPayments(r: ReservationSnapshot, at: string): NewEvent[] {
  return r.payments
    .filter((p) => p.status === 'PENDING')
    .map((p) => {
      const payment: Payment = { ...p, status: 'VOIDED', voided_at: at, updated_at: at };
      return {
        type: 'ReservationPaymentRecorded',
        // A pending row was never part of what was paid.
        data: {
          reservation_id: r.reservation_id,
          restaurant_id: r.restaurant_id,
          at,
          payment,
          total_amount_paid: r.total_amount_paid,
        },
      };
    });
}
