// What the restaurant records on a reservation after the fact: the guest's feedback (and the
// restaurant's answer) and payments. Pure.
import { BusinessRuleError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { type ConfirmationReason, confirmationAfterPayment } from './decide-status';
import type { Feedback, Payment, ReservationSnapshot } from './events';
import { applyToSnapshot } from './evolve';
import { PAYMENT_STATUSES, type PaymentStatus } from './payments';

export interface FeedbackInput {
  rating?: number;
  comment?: string | null;
  answer?: string | null;
}

/** The first call needs a rating (1 to 5); later calls change what they name (an answer, typically). */
export function decideFeedback(r: ReservationSnapshot, input: FeedbackInput, at: string): NewEvent[] {
  if (input.rating !== undefined && (!Number.isInteger(input.rating) || input.rating < 1 || input.rating > 5))
    throw new BusinessRuleError('INVALID_RATING', 'rating must be an integer from 1 to 5');
  const before = r.feedback;
  if (!before && input.rating === undefined)
    throw new BusinessRuleError('RATING_REQUIRED', 'the first feedback of a reservation needs a rating');
  const answer = input.answer === undefined ? (before?.answer ?? null) : input.answer;
  const feedback: Feedback = {
    rating: input.rating ?? (before as Feedback).rating,
    comment: input.comment === undefined ? (before?.comment ?? null) : input.comment,
    answer,
    created_at: before?.created_at ?? at,
    answered_at: answer === (before?.answer ?? null) ? (before?.answered_at ?? null) : answer ? at : null,
  };
  if (JSON.stringify(feedback) === JSON.stringify(before)) return [];
  return [
    {
      type: 'ReservationFeedbackRecorded',
      data: { reservation_id: r.reservation_id, restaurant_id: r.restaurant_id, at, feedback },
    },
  ];
}

export interface PaymentInput {
  /** Changes the row with this id (a deposit being paid); a new row otherwise. */
  paymentId: string;
  status: PaymentStatus;
  amount?: number;
  paymentType?: string;
  paymentMode?: string;
  provider?: string | null;
  providerId?: string | null;
}

/**
 * Records a payment row (or a new status of one) and keeps total_amount_paid equal to what the rows
 * recorded as PAID add up to, on top of any amount the partner declared. A reservation that only
 * waited for this payment becomes CONFIRMED in the same append.
 */
export function decidePayment(
  r: ReservationSnapshot,
  input: PaymentInput,
  currency: string,
  at: string,
  /**
   * Why the reservation is confirmed when this payment was all it waited for; by default what this
   * row says happened: a voided row was waived, not received.
   */
  confirmation: ConfirmationReason = input.status === 'VOIDED' ? 'payment voided' : 'payment received',
): NewEvent[] {
  if (!PAYMENT_STATUSES.includes(input.status))
    throw new BusinessRuleError(
      'INVALID_PAYMENT_STATUS',
      `status must be one of ${PAYMENT_STATUSES.join(', ')}`,
    );
  const before = r.payments.find((p) => p.id === input.paymentId);
  const amount = input.amount ?? before?.amount;
  if (amount === undefined || !Number.isInteger(amount) || amount < 0)
    throw new BusinessRuleError(
      'INVALID_AMOUNT',
      'a new payment needs an amount: a non-negative integer in the smallest currency unit',
    );
  const payment: Payment = {
    id: input.paymentId,
    provider_id: input.providerId !== undefined ? input.providerId : (before?.provider_id ?? null),
    payment_type: input.paymentType ?? before?.payment_type ?? 'OTHER',
    payment_mode: input.paymentMode ?? before?.payment_mode ?? 'MANUAL',
    provider: input.provider !== undefined ? input.provider : (before?.provider ?? null),
    status: input.status,
    amount,
    quantity: before?.quantity ?? 1,
    unit_price: before && amount === before.amount ? before.unit_price : amount,
    percent_of_total: before?.percent_of_total ?? null,
    currency: before?.currency ?? currency,
    is_refundable: before?.is_refundable ?? true,
    expiration_date: before?.expiration_date ?? null,
    max_cancellation_date: before?.max_cancellation_date ?? null,
    authorized_at: input.status === 'AUTHORIZED' ? at : (before?.authorized_at ?? null),
    capture_deadline: before?.capture_deadline ?? null,
    captured_at: input.status === 'PAID' ? (before?.captured_at ?? at) : (before?.captured_at ?? null),
    voided_at: input.status === 'VOIDED' ? at : (before?.voided_at ?? null),
    linked_product: before?.linked_product ?? null,
    linked_variant: before?.linked_variant ?? null,
    created_at: before?.created_at ?? at,
    updated_at: at,
  };
  if (before && before.status === payment.status && before.amount === payment.amount) return [];
  const paidBefore = before?.status === 'PAID' ? before.amount : 0;
  const paidNow = payment.status === 'PAID' ? payment.amount : 0;
  const total_amount_paid = Math.max(0, r.total_amount_paid - paidBefore + paidNow);
  const recorded: NewEvent = {
    type: 'ReservationPaymentRecorded',
    data: {
      reservation_id: r.reservation_id,
      restaurant_id: r.restaurant_id,
      at,
      payment,
      total_amount_paid,
    },
  };
  const after = applyToSnapshot(r, recorded as RecordedEvent);
  return [recorded, ...confirmationAfterPayment(after, at, payment, confirmation)];
}
