// Payment rows of a reservation: the deposit a shift asks for, and the summary the API shows.
// Amounts are in the smallest currency unit. Recording an amount never charges anyone.
import type { Payment } from './events';

/** Payment statuses this service writes. `FREE` is the spec's sample for a zero-amount row. */
export const PAYMENT_STATUSES = [
  'PENDING',
  'AUTHORIZED',
  'PAID',
  'REFUNDED',
  'VOIDED',
  'FAILED',
  'FREE',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const PAYMENT_TYPES = ['DEPOSIT', 'PREPAYMENT', 'BILL', 'NO_SHOW_FEE', 'OTHER'] as const;

/** A shift's deposit rule (DESIGN.md §3). */
export interface DepositRule {
  amount_per_cover: number;
  min_party_size: number;
  payment_mode: string;
}

export const depositApplies = (
  rule: DepositRule | null | undefined,
  partySize: number,
): rule is DepositRule =>
  Boolean(rule) &&
  partySize >= (rule as DepositRule).min_party_size &&
  (rule as DepositRule).amount_per_cover > 0;

export function depositPayment(
  id: string,
  rule: DepositRule,
  partySize: number,
  currency: string,
  at: string,
): Payment {
  return {
    id,
    provider_id: null,
    payment_type: 'DEPOSIT',
    payment_mode: rule.payment_mode,
    provider: null,
    status: 'PENDING',
    amount: rule.amount_per_cover * partySize,
    quantity: partySize,
    unit_price: rule.amount_per_cover,
    percent_of_total: null,
    currency,
    is_refundable: true,
    expiration_date: null,
    max_cancellation_date: null,
    authorized_at: null,
    capture_deadline: null,
    captured_at: null,
    voided_at: null,
    linked_product: null,
    linked_variant: null,
    created_at: at,
    updated_at: at,
  };
}

/** True while a payment row still waits for the guest (a pending deposit). */
export const hasOutstandingPayment = (payments: readonly Payment[]): boolean =>
  payments.some((p) => p.status === 'PENDING');

export interface PaymentSummary {
  currency: string;
  total_amount: number;
  paid_amount: number;
  authorized_amount: number;
  pending_amount: number;
  refunded_amount: number;
  statuses: string[];
}

export function paymentSummary(payments: readonly Payment[], currency: string): PaymentSummary {
  const sum = (status: string) =>
    payments.filter((p) => p.status === status).reduce((total, p) => total + p.amount, 0);
  return {
    currency: payments[0]?.currency ?? currency,
    // Voided and failed rows were never owed.
    total_amount: payments
      .filter((p) => p.status !== 'VOIDED' && p.status !== 'FAILED')
      .reduce((total, p) => total + p.amount, 0),
    paid_amount: sum('PAID'),
    authorized_amount: sum('AUTHORIZED'),
    pending_amount: sum('PENDING'),
    refunded_amount: sum('REFUNDED'),
    statuses: [...new Set(payments.map((p) => p.status))],
  };
}
