// What becomes of the deposit a guest still owes when their reservation is canceled or rejected. Pure.
//
// The spec says nothing of it. Left PENDING, a canceled reservation still showed the deposit as owed
// (`payment_summary.pending_amount`), and an integration collecting deposits from that figure would
// chase a guest for a booking that no longer exists. A pending deposit of guests still to come is
// money nobody moved for a booking that is gone: it is voided with the closing status. Everything else
// is the restaurant's to settle and is left as it is: rows that moved money (paid, authorized,
// refunded: a cancellation fee kept, a pre-authorization released), and any row of guests who came or
// did not (a NO_SHOW's no-show fee, a DONE's bill: canceling them afterwards says nothing of what
// they owe).
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { decidePayment } from './decide-records';
import type { Payment, ReservationSnapshot, ReservationStatus } from './events';
import { applyToSnapshot, CANCELED_STATUSES, GUESTS_TO_COME } from './evolve';

/** Statuses that end a booking before the guests came: nothing is owed for it any more. */
export const closesBooking = (status: ReservationStatus): boolean =>
  CANCELED_STATUSES.includes(status) || status === 'REJECTED';

/** What a guest is asked before coming (the spec's sample DEPOSIT, and a PREPAYMENT). */
const ASKED_BEFORE_COMING = ['DEPOSIT', 'PREPAYMENT'];

const owedForTheBooking = (p: Payment) =>
  p.status === 'PENDING' && ASKED_BEFORE_COMING.includes(p.payment_type);

/**
 * `closing` (the status event that cancels or rejects `r`), followed by a ReservationPaymentRecorded
 * voiding each pending deposit when `r`'s guests were still to come. Each void is the staff's
 * (`decidePayment`), decided on the closed reservation, so it confirms nothing.
 */
export function closeBooking(r: ReservationSnapshot, closing: NewEvent, at: string): NewEvent[] {
  if (!GUESTS_TO_COME.includes(r.status)) return [closing];
  const out = [closing];
  let state = applyToSnapshot(r, closing as RecordedEvent);
  for (const p of r.payments.filter(owedForTheBooking)) {
    const events = decidePayment(state, { paymentId: p.id, status: 'VOIDED' }, p.currency, at);
    for (const e of events) state = applyToSnapshot(state, e as RecordedEvent);
    out.push(...events);
  }
  return out;
}
