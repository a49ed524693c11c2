// A pending deposit follows the seating a PATCH gives the reservation (docs/RESERVATIONS.md, "Status
// and payments after a PATCH"). Pure.
//
// The spec infers deposit requirements from the shift (POST /reservations) and says nothing of a
// PATCH. Left as it was created, a deposit still asked 6 covers of a party of 8, or kept a party cut
// below the shift's threshold waiting in PENDING_PAYMENT for money the restaurant no longer asks. What
// the guest still owes (PENDING) is therefore recomputed from the new party and shift; what they paid
// or authorized is money already moved, the restaurant's to settle, and is never touched here.
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { creationDepositId } from './decide-create';
import { decidePayment } from './decide-records';
import type { Payment, ReservationSnapshot } from './events';
import { applyToSnapshot, GUESTS_TO_COME } from './evolve';
import { type DepositRule, depositApplies } from './payments';

const pendingDeposits = (payments: readonly Payment[]) =>
  payments.filter((p) => p.payment_type === 'DEPOSIT' && p.status === 'PENDING');

/**
 * The payment (and status) events that follow a PATCH which took the reservation from `before` to
 * `after`, given the current catalog's deposit rule of `after`'s shift:
 * - party and shift unchanged: nothing;
 * - the deposit is no longer asked (fewer guests than its threshold, a shift without deposit): every
 *   pending DEPOSIT row is voided, and a reservation that only waited for it is CONFIRMED (the rule of
 *   a payment voided by staff, `decidePayment`), with the reason "deposit no longer required". On the same shift a larger party is still asked it,
 *   whatever the catalog says now: the rule the guest booked under was met by fewer guests, and a
 *   restaurant changing (or dropping) the shift's deposit since does not undo a booking's deposit.
 *   Its threshold is not recorded, so a smaller party on the same shift is judged by `rule`;
 * - the rule still applies and one DEPOSIT row is pending: its quantity becomes the party, at the
 *   row's own unit price on the same shift (the price the guest was asked when booking) or the new
 *   shift's (and its payment mode) after a change of shift;
 * - anything else (no pending row, several, a row other than the creation's per-cover deposit):
 *   nothing. A deposit the new seating newly brings is not added by a PATCH (`assertNoNewRequirement`
 *   refuses that move instead).
 */
export function followDeposit(
  before: ReservationSnapshot,
  after: ReservationSnapshot,
  rule: DepositRule | null | undefined,
  currency: string,
  at: string,
): NewEvent[] {
  if (before.party_size === after.party_size && before.shift_id === after.shift_id) return [];
  if (!GUESTS_TO_COME.includes(after.status)) return [];
  const pending = pendingDeposits(after.payments);
  if (pending.length === 0) return [];
  const sameShift = before.shift_id === after.shift_id;
  const grownHere = sameShift && after.party_size > before.party_size;
  if (!grownHere && !depositApplies(rule, after.party_size)) {
    const out: NewEvent[] = [];
    let r = after;
    for (const p of pending) {
      const events = decidePayment(
        r,
        { paymentId: p.id, status: 'VOIDED' },
        currency,
        at,
        'deposit no longer required',
      );
      for (const e of events) r = applyToSnapshot(r, e as RecordedEvent);
      out.push(...events);
    }
    return out;
  }
  if (pending.length !== 1) return [];
  const row = pending[0] as Payment;
  // Only the row the creation counted per cover of the party, known by its id: a row the restaurant
  // recorded is a lump sum (quantity 1, unit price its amount) that says nothing of covers, and on a
  // party of one it reads like a per-cover deposit; scaling it would invent an amount. The creation's
  // row with an amount staff changed since no longer adds up (unit price × quantity) and is left too.
  if (
    row.id !== creationDepositId(after.reservation_id) ||
    row.quantity !== before.party_size ||
    row.unit_price * row.quantity !== row.amount
  )
    return [];
  // The booking's price on its own shift; a new shift's rule applies here (checked above).
  const asked = sameShift ? null : (rule as DepositRule);
  const unitPrice = asked ? asked.amount_per_cover : row.unit_price;
  const payment: Payment = {
    ...row,
    payment_mode: asked ? asked.payment_mode : row.payment_mode,
    quantity: after.party_size,
    unit_price: unitPrice,
    amount: unitPrice * after.party_size,
    updated_at: at,
  };
  if (
    payment.amount === row.amount &&
    payment.quantity === row.quantity &&
    payment.payment_mode === row.payment_mode
  )
    return [];
  return [
    {
      type: 'ReservationPaymentRecorded',
      data: {
        reservation_id: after.reservation_id,
        restaurant_id: after.restaurant_id,
        at,
        payment,
        // A pending row adds nothing to what was paid.
        total_amount_paid: after.total_amount_paid,
      },
    },
  ];
}
