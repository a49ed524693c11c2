// Status changes of an existing reservation: the partner's cancel (spec §3), the restaurant-side
// operations (staff dashboard, POS) and the automatic ones (finished, no-show). Pure.
import { BusinessRuleError, conflict, notFound } from '../../src/core/errors';
import type { NewEvent } from '../../src/ports/event-store';
import { closeBooking, closesBooking } from './closed-payments';
import type { ActorKind, ReservationSnapshot, ReservationStatus } from './events';
import {
  AWAITING_ARRIVAL,
  CANCELED_STATUSES,
  GUESTS_TO_COME,
  type ReservationState,
  SEATED_STATUSES,
} from './evolve';
import { hasOutstandingPayment } from './payments';
import { assertTiming, type TimedChange } from './status-timing';

export type StatusOperation =
  | { kind: 'approve' }
  | { kind: 'reject'; reason: string | null }
  | { kind: 'seat' }
  | { kind: 'partially_seat' }
  | { kind: 'leave' }
  | { kind: 'cancel_by_staff'; reason: string | null }
  | { kind: 'cancel_by_customer'; reason: string | null }
  /** Automatic: the seating's end has passed. */
  | { kind: 'finish' }
  /** Automatic: nobody came within the grace period after start. */
  | { kind: 'no_show'; graceMinutes: number };

/** A creation in an arrived status (`initial_status`) says the guests are there now: the same rule. */
export function assertArrivalNotTooEarly(startAt: string, status: ReservationStatus, now: Date): void {
  if (SEATED_STATUSES.includes(status))
    assertTiming({ kind: 'arrive', to: status }, { start_at: startAt }, now);
}

/** Where each operation may start from. Pending guests who turn up can be seated (that approves them). */
const FROM: Record<Exclude<StatusOperation['kind'], 'cancel_by_staff'>, readonly ReservationStatus[]> = {
  approve: ['PENDING'],
  reject: ['PENDING'],
  seat: ['PENDING', ...AWAITING_ARRIVAL, 'SHOWED_UP', 'PARTIALLY_SEATED', 'SEATED_FOR_DRINKS', 'NO_SHOW'],
  partially_seat: ['PENDING', ...AWAITING_ARRIVAL, 'SHOWED_UP', 'SEATED_FOR_DRINKS', 'NO_SHOW'],
  leave: SEATED_STATUSES,
  cancel_by_customer: GUESTS_TO_COME,
  finish: SEATED_STATUSES,
  no_show: AWAITING_ARRIVAL,
};

const TARGET: Record<StatusOperation['kind'], ReservationStatus> = {
  approve: 'CONFIRMED',
  reject: 'REJECTED',
  seat: 'SEATED',
  partially_seat: 'PARTIALLY_SEATED',
  leave: 'DONE',
  cancel_by_staff: 'CANCELED_BY_RESTAURANT',
  cancel_by_customer: 'CANCELED_BY_CUSTOMER',
  finish: 'DONE',
  no_show: 'NO_SHOW',
};

/** The reservation, within `restaurantId` (null: an operator, any restaurant). */
export function existing(
  state: ReservationState,
  id: string,
  restaurantId: string | null,
): ReservationSnapshot {
  // Another restaurant's reservation answers exactly like a missing one (DESIGN.md §1.5).
  if (!state.exists || !state.r || (restaurantId !== null && state.r.restaurant_id !== restaurantId))
    throw notFound(`reservation ${id}`);
  return state.r;
}

export const statusEvent = (
  r: ReservationSnapshot,
  to: ReservationStatus,
  reason: string | null,
  actor: ActorKind,
  at: string,
): NewEvent => ({
  type: 'ReservationStatusChanged',
  data: {
    reservation_id: r.reservation_id,
    restaurant_id: r.restaurant_id,
    at,
    from: r.status,
    to,
    reason,
    actor_kind: actor,
  },
});

/**
 * The partner's POST /reservations/{id}/cancel: from any state but a canceled one. A repeat changes
 * nothing and keeps the first reason; a POS lock on `status` refuses it.
 */
export function decidePartnerCancel(r: ReservationSnapshot, reason: string | null, at: string): NewEvent[] {
  if (CANCELED_STATUSES.includes(r.status)) return [];
  if (r.locked_fields.includes('status'))
    throw conflict('The point of sale has locked this reservation: it cannot be canceled through the API', {
      locked_fields: ['status'],
    });
  return closeBooking(r, statusEvent(r, 'CANCELED_BY_RESTAURANT', reason, 'PARTNER', at), at);
}

/**
 * Restaurant-side and automatic transitions. Asking for the state the reservation is already in is a
 * no-op (so retries and overlapping scheduler runs are harmless); any other illegal move is a 422.
 */
export function decideStatusOperation(r: ReservationSnapshot, op: StatusOperation, now: Date): NewEvent[] {
  const at = now.toISOString();
  let to = TARGET[op.kind];
  if (op.kind === 'approve' && hasOutstandingPayment(r.payments)) to = 'CONFIRMED_PENDING_PAYMENT';
  if (r.status === to) return [];
  if (op.kind === 'cancel_by_staff') {
    if (CANCELED_STATUSES.includes(r.status)) return [];
    return closeBooking(r, statusEvent(r, to, op.reason, 'STAFF', at), at);
  }
  if (!FROM[op.kind].includes(r.status))
    throw new BusinessRuleError(
      'INVALID_STATUS_TRANSITION',
      `a ${r.status} reservation cannot be ${describe(op.kind)}`,
      { status: r.status },
    );
  const change = timedChange(r, op, to);
  if (change) assertTiming(change, r, now);
  const reason = op.kind === 'reject' || op.kind === 'cancel_by_customer' ? op.reason : null;
  const actor: ActorKind =
    op.kind === 'finish' || op.kind === 'no_show'
      ? 'SYSTEM'
      : op.kind === 'cancel_by_customer'
        ? 'CUSTOMER'
        : 'STAFF';
  const event = statusEvent(r, to, reason, actor, at);
  return closesBooking(to) ? closeBooking(r, event, at) : [event];
}

/** What the operation says about the guests (status-timing.ts); approvals and cancellations: nothing. */
function timedChange(r: ReservationSnapshot, op: StatusOperation, to: ReservationStatus): TimedChange | null {
  switch (op.kind) {
    case 'seat':
    case 'partially_seat':
      return { kind: 'arrive', to };
    case 'leave':
      return { kind: 'leave' };
    case 'finish':
      return { kind: 'finish', endAt: r.end_at };
    case 'no_show':
      return { kind: 'no_show', graceMinutes: op.graceMinutes };
    default:
      return null;
  }
}

function describe(kind: StatusOperation['kind']): string {
  switch (kind) {
    case 'partially_seat':
      return 'partially seated';
    case 'cancel_by_customer':
      return 'canceled by the customer';
    case 'no_show':
      return 'marked as a no-show';
    case 'leave':
    case 'finish':
      return 'finished';
    default:
      return `${kind.replace(/e$/, '')}ed`;
  }
}

/** Why a reservation that waited for a payment is confirmed (the status change's `reason`). */
export type ConfirmationReason = 'payment received' | 'payment voided' | 'deposit no longer required';

/**
 * After a payment: a reservation that only waited for it becomes confirmed. A payment recorded as
 * FAILED (a declined card) leaves nothing pending but paid nothing either: the reservation keeps
 * waiting until a row is paid, authorized or voided (the restaurant waiving it). `reason`: a payment
 * staff voided, or a deposit a PATCH voided (the new seating does not ask it), was not received, and
 * the history says so.
 */
export function confirmationAfterPayment(
  r: ReservationSnapshot,
  at: string,
  recorded?: { status: string },
  reason: ConfirmationReason = 'payment received',
): NewEvent[] {
  if (recorded?.status === 'FAILED') return [];
  if (hasOutstandingPayment(r.payments)) return [];
  if (r.status !== 'PENDING_PAYMENT' && r.status !== 'CONFIRMED_PENDING_PAYMENT') return [];
  return [statusEvent(r, 'CONFIRMED', reason, 'SYSTEM', at)];
}
