// Creation of a reservation (spec §4 POST /reservations, DESIGN.md §3): its first status, its deposit
// row and the ReservationCreated event. Pure; the handler has already held the seating and resolved
// the customer.
import { conflict } from '../../src/core/errors';
import { deterministicUuid } from '../../src/core/ids';
import type { NewEvent } from '../../src/ports/event-store';
import type { Payment, ReservationSnapshot, ReservationSource, ReservationStatus } from './events';
import { type ReservationState, SEATED_STATUSES } from './evolve';
import { type DepositRule, depositApplies, depositPayment } from './payments';

/** Where and when the reservation sits, as held on the capacity stream. */
export interface Seating {
  service_date: string;
  shift_id: string;
  room_id: string | null;
  table_ids: string[];
  /** With the restaurant's offset at that instant. */
  start_at: string;
  end_at: string;
  duration_minutes: number;
  party_size: number;
}

/** Statuses a privileged caller may create a reservation in (initial_status). */
export const INITIAL_STATUSES = [
  'PENDING',
  'PENDING_PAYMENT',
  'CONFIRMED',
  'CONFIRMED_PENDING_PAYMENT',
  'MANUALLY_CONFIRMED',
  'DOUBLE_CONFIRMED',
  'SHOWED_UP',
  'SEATED',
  'PARTIALLY_SEATED',
  'SEATED_FOR_DRINKS',
] as const satisfies readonly ReservationStatus[];
export type InitialStatus = (typeof INITIAL_STATUSES)[number];

export interface CreateInput {
  reservationId: string;
  restaurantId: string;
  externalId: string | null;
  seating: Seating;
  source: ReservationSource;
  customerId: string | null;
  currency: string;
  /** The shift asks for staff approval. */
  requiresApproval: boolean;
  /** The shift's deposit rule, if any. */
  deposit: DepositRule | null;
  initialStatus: InitialStatus | null;
  bypassApproval: boolean;
  bypassPayments: boolean;
  forceInserted: boolean;
  sendClientNotifications: boolean;
  sendPaymentLink: boolean;
  totalAmountPaid: number;
  customMessage: string | null;
  allergies: string | null;
  metadata: Record<string, unknown>;
  tags: string[];
  attachedFiles: string[];
  discountId: string | null;
  prescriberId: string | null;
  isTableDefinitive: boolean;
  sendFollowupEmail: boolean;
}

/**
 * The id of the deposit row a creation asks per cover of the party: the one row a later PATCH may
 * count again for a new party (deposit-follow.ts). A row staff record has an id of their own.
 */
export const creationDepositId = (reservationId: string): string =>
  `pay_${deterministicUuid(`deposit:${reservationId}`).replace(/-/g, '').slice(0, 20)}`;

/** The deposit rows the shift asks for (none when bypassed or when the party is below the rule). */
export function paymentsFor(input: CreateInput, at: string): Payment[] {
  if (input.bypassPayments || !depositApplies(input.deposit, input.seating.party_size)) return [];
  const id = creationDepositId(input.reservationId);
  return [depositPayment(id, input.deposit as DepositRule, input.seating.party_size, input.currency, at)];
}

/**
 * The first status. An explicit initial_status wins. Otherwise approval comes first (PENDING: the
 * deposit row waits beside it and approval turns it into CONFIRMED_PENDING_PAYMENT); then an unpaid
 * deposit (PENDING_PAYMENT: recording the payment confirms it); else CONFIRMED.
 */
export function firstStatus(input: CreateInput, payments: readonly Payment[]): ReservationStatus {
  if (input.initialStatus) return input.initialStatus;
  if (input.requiresApproval && !input.bypassApproval) return 'PENDING';
  if (payments.some((p) => p.status === 'PENDING')) return 'PENDING_PAYMENT';
  return 'CONFIRMED';
}

export function buildReservation(input: CreateInput, at: string): ReservationSnapshot {
  const payments = paymentsFor(input, at);
  const status = firstStatus(input, payments);
  const s = input.seating;
  return {
    reservation_id: input.reservationId,
    restaurant_id: input.restaurantId,
    external_id: input.externalId,
    status,
    start_at: s.start_at,
    end_at: s.end_at,
    duration_minutes: s.duration_minutes,
    party_size: s.party_size,
    service_date: s.service_date,
    shift_id: s.shift_id,
    room_id: s.room_id,
    table_ids: s.table_ids,
    source: input.source,
    customer_id: input.customerId,
    waiter_id: null,
    waiter_name: null,
    discount_id: input.discountId,
    prescriber_id: input.prescriberId,
    custom_message: input.customMessage,
    allergies: input.allergies,
    metadata: input.metadata,
    tags: input.tags,
    attached_files: input.attachedFiles,
    send_client_notifications: input.sendClientNotifications,
    send_payment_link: input.sendPaymentLink,
    send_followup_email: input.sendFollowupEmail,
    is_table_definitive: input.isTableDefinitive,
    is_force_inserted: input.forceInserted,
    total_amount_paid: input.totalAmountPaid,
    payments,
    feedback: null,
    cancellation_reason: null,
    locked_fields: [],
    // A walk-in created straight into a seated status was seated now.
    seated_at: SEATED_STATUSES.includes(status) && status !== 'SHOWED_UP' ? at : null,
    left_at: null,
    created_at: at,
    updated_at: at,
  };
}

/** The id a retried append reuses, so the store can recognise it (spec §7: a create may be retried). */
export const createdEventId = (reservationId: string) =>
  deterministicUuid(`ReservationCreated:${reservationId}`);

export function decideCreate(state: ReservationState, input: CreateInput, at: string): NewEvent[] {
  if (state.abandoned)
    throw conflict(
      'This request took too long: the table it held was released. Search by external_id, then retry.',
    );
  // Reservation ids are fresh per request: an existing stream can only be this request's own append.
  if (state.exists) return [];
  const reservation = buildReservation(input, at);
  return [
    {
      id: createdEventId(input.reservationId),
      type: 'ReservationCreated',
      data: { reservation_id: input.reservationId, restaurant_id: input.restaurantId, at, reservation },
    },
  ];
}
