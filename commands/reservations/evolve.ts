// The one fold of a reservation stream. The write side decides on its result and the `reservations`
// projection stores it, so both sides can never disagree on what an event means.
import type { RecordedEvent } from '../../src/ports/event-store';
import type { Feedback, Payment, ReservationSnapshot, ReservationStatus } from './events';

export interface ReservationState {
  /** ReservationCreated was seen. */
  exists: boolean;
  /** The stream was fenced by ReservationCreationAbandoned: this reservation never came to be. */
  abandoned: boolean;
  r: ReservationSnapshot | null;
}

export const initialReservation: ReservationState = { exists: false, abandoned: false, r: null };

/** Statuses in which the guests are at (or have reached) the restaurant. */
export const SEATED_STATUSES: readonly ReservationStatus[] = [
  'SHOWED_UP',
  'SEATED',
  'PARTIALLY_SEATED',
  'SEATED_FOR_DRINKS',
];

export const CANCELED_STATUSES: readonly ReservationStatus[] = [
  'CANCELED_BY_CUSTOMER',
  'CANCELED_BY_RESTAURANT',
];

/** Booked and not arrived yet: these become NO_SHOW when the guests never come. */
export const AWAITING_ARRIVAL: readonly ReservationStatus[] = [
  'PENDING_PAYMENT',
  'CONFIRMED',
  'CONFIRMED_PENDING_PAYMENT',
  'MANUALLY_CONFIRMED',
  'DOUBLE_CONFIRMED',
];

/**
 * Guests still to come (pending approval or booked): the only ones whose deposit is still a condition
 * of the booking (a PATCH carries it along, a cancellation voids it).
 */
export const GUESTS_TO_COME: readonly ReservationStatus[] = ['PENDING', ...AWAITING_ARRIVAL];

export function evolveReservation(state: ReservationState, event: RecordedEvent): ReservationState {
  if (event.type === 'ReservationCreationAbandoned') return { ...state, abandoned: true };
  if (event.type === 'ReservationCreated') {
    const created = (event.data as { reservation: ReservationSnapshot }).reservation;
    return { exists: true, abandoned: false, r: { ...created } };
  }
  if (!state.r) return state;
  const r = applyToSnapshot(state.r, event);
  return r === state.r ? state : { ...state, r };
}

/** Applies one event to a snapshot; returns the same object for events that change nothing. */
export function applyToSnapshot(r: ReservationSnapshot, event: RecordedEvent): ReservationSnapshot {
  const d = event.data as Record<string, unknown>;
  const at = d.at as string;
  switch (event.type) {
    case 'ReservationUpdated':
      return { ...r, ...(d.changes as Partial<ReservationSnapshot>), updated_at: at };
    case 'ReservationStatusChanged': {
      const to = d.to as ReservationStatus;
      const reason = (d.reason as string | null) ?? null;
      const next: ReservationSnapshot = { ...r, status: to, updated_at: at };
      if (SEATED_STATUSES.includes(to) && to !== 'SHOWED_UP' && !r.seated_at) next.seated_at = at;
      if (to === 'DONE' && !r.left_at) next.left_at = at;
      if (CANCELED_STATUSES.includes(to) || to === 'REJECTED') next.cancellation_reason = reason;
      return next;
    }
    case 'ReservationFeedbackRecorded':
      return { ...r, feedback: d.feedback as Feedback, updated_at: at };
    // The customer it showed was merged away or deleted: it keeps the id it links (see events.ts).
    case 'ReservationCustomerRelinked':
      return { ...r, updated_at: at };
    case 'ReservationPaymentRecorded': {
      const payment = d.payment as Payment;
      const others = r.payments.filter((p) => p.id !== payment.id);
      const payments =
        others.length === r.payments.length
          ? [...r.payments, payment]
          : r.payments.map((p) => (p.id === payment.id ? payment : p));
      return { ...r, payments, total_amount_paid: d.total_amount_paid as number, updated_at: at };
    }
    default:
      return r;
  }
}
