// Reservation events (stream `reservation-<id>`). The customer stats projection and the webhook
// publisher read these; every event carries restaurant_id and reservation_id, and enough to update a
// read model without loading anything else.

export const RESERVATION_STATUSES = [
  'PENDING',
  'PENDING_PAYMENT',
  'CONFIRMED',
  'CONFIRMED_PENDING_PAYMENT',
  'MANUALLY_CONFIRMED',
  'DOUBLE_CONFIRMED',
  'REJECTED',
  'SHOWED_UP',
  'SEATED',
  'PARTIALLY_SEATED',
  'SEATED_FOR_DRINKS',
  'DONE',
  'NO_SHOW',
  'CANCELED_BY_CUSTOMER',
  'CANCELED_BY_RESTAURANT',
] as const;
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];

export const RESERVATION_SOURCES = [
  'WALK_IN',
  'WEBSITE',
  'PHONE',
  'EMAIL',
  'RESERVE_WITH_GOOGLE',
  'TRAVEL_AGENCIES',
  'OTHER',
  'INSTAGRAM',
  'FACEBOOK',
  'TIKTOK',
  'SNAPCHAT',
  'WHATSAPP',
  'TRIPADVISOR',
  'PRIVATIZATION',
  'MISSED_CALL',
] as const;
export type ReservationSource = (typeof RESERVATION_SOURCES)[number];

/** Statuses whose guests are gone (left, or never came): the seating keeps its tables only until then. */
export const FINISHED_STATUSES = ['DONE', 'NO_SHOW'] as const;

/** Whether a status is one of FINISHED_STATUSES (null, no reservation yet: not finished). */
export const isFinished = (status: string | null | undefined): status is (typeof FINISHED_STATUSES)[number] =>
  (FINISHED_STATUSES as readonly (string | null | undefined)[]).includes(status);

/** Statuses that no longer hold capacity and do not count in customer stats. */
export const RELEASED_STATUSES: readonly ReservationStatus[] = [
  'REJECTED',
  'CANCELED_BY_CUSTOMER',
  'CANCELED_BY_RESTAURANT',
];

export interface Payment {
  id: string;
  provider_id: string | null;
  payment_type: string;
  payment_mode: string;
  provider: string | null;
  status: string;
  amount: number;
  quantity: number;
  unit_price: number;
  percent_of_total: number | null;
  currency: string;
  is_refundable: boolean;
  expiration_date: string | null;
  max_cancellation_date: string | null;
  authorized_at: string | null;
  capture_deadline: string | null;
  captured_at: string | null;
  voided_at: string | null;
  linked_product: { id: string; name: string } | null;
  linked_variant: { id: string; name: string } | null;
  created_at: string;
  updated_at: string;
}

export interface Feedback {
  rating: number;
  comment: string | null;
  answer: string | null;
  created_at: string;
  answered_at: string | null;
}

/** Everything a reservation is, as written by ReservationCreated and kept current by later events. */
export interface ReservationSnapshot {
  reservation_id: string;
  restaurant_id: string;
  external_id: string | null;
  status: ReservationStatus;
  /** ISO instants with the restaurant's offset at that instant. */
  start_at: string;
  end_at: string;
  duration_minutes: number;
  party_size: number;
  /** The service day in the restaurant's calendar (YYYY-MM-DD): keys capacity and stats. */
  service_date: string;
  shift_id: string;
  room_id: string | null;
  table_ids: string[];
  source: ReservationSource;
  customer_id: string | null;
  waiter_id: string | null;
  /** Added after the first contract: the waiter's display name (waiters are staff, not catalog). */
  waiter_name?: string | null;
  discount_id: string | null;
  prescriber_id: string | null;
  custom_message: string | null;
  allergies: string | null;
  metadata: Record<string, unknown>;
  tags: string[];
  attached_files: string[];
  send_client_notifications: boolean;
  send_payment_link: boolean;
  send_followup_email: boolean;
  is_table_definitive: boolean;
  is_force_inserted: boolean;
  total_amount_paid: number;
  payments: Payment[];
  feedback: Feedback | null;
  cancellation_reason: string | null;
  /** POS service lock: these fields may not change through the partner API (409 locked_fields). */
  locked_fields: string[];
  seated_at: string | null;
  left_at: string | null;
  created_at: string;
  updated_at: string;
}

interface Base {
  reservation_id: string;
  restaurant_id: string;
  at: string;
}

export type ReservationEvent =
  | { type: 'ReservationCreated'; data: Base & { reservation: ReservationSnapshot } }
  /** Changed fields only, with their previous values (feeds webhooks' previous_attributes). */
  | {
      type: 'ReservationUpdated';
      data: Base & {
        changes: Partial<ReservationSnapshot>;
        previous: Partial<ReservationSnapshot>;
        /** Added after the first contract: who changed it (POS for lock changes, SYSTEM for repairs). */
        actor_kind?: ActorKind;
        /**
         * On a change of customer (since 2026-11-28): the guest text fields restated as they were,
         * taken along to the new customer (commands/reservations/decide-update.ts), not changed.
         */
        restated?: string[];
      };
    }
  | {
      type: 'ReservationStatusChanged';
      data: Base & {
        from: ReservationStatus;
        to: ReservationStatus;
        reason: string | null;
        actor_kind: ActorKind;
      };
    }
  | { type: 'ReservationFeedbackRecorded'; data: Base & { feedback: Feedback } }
  /** `payment` replaces the row with the same id, or is added; total_amount_paid is the new total. */
  | { type: 'ReservationPaymentRecorded'; data: Base & { payment: Payment; total_amount_paid: number } }
  /**
   * Added after the first contract. Written as the first event of a reservation stream that never got
   * its ReservationCreated (the request died after holding capacity): it fences a late
   * ReservationCreated out (that append expects no stream) before the hold is released. The
   * reservation never existed for readers; read models ignore it.
   */
  | { type: 'ReservationCreationAbandoned'; data: Base & { reason: string } }
  /**
   * Added 2026-11-28 (commands/reservations/decide-relink.ts). The customer the reservation shows
   * changed because that customer was merged into another or deleted: `changes.customer_id` is the
   * one it shows now (the survivor, or null), `previous.customer_id` the one it showed. Ids only,
   * never sealed. The snapshot's `customer_id` keeps the id the reservation links (read paths resolve
   * merges, and every read model counting a merge does so from CustomerMerged): only `updated_at` moves.
   */
  | {
      type: typeof CUSTOMER_RELINKED;
      data: Base & {
        changes: { customer_id: string | null };
        previous: { customer_id: string };
        reason: RelinkReason;
      };
    };

export const CUSTOMER_RELINKED = 'ReservationCustomerRelinked';
export type RelinkReason = 'CUSTOMER_MERGED' | 'CUSTOMER_DELETED';

export type ActorKind = 'PARTNER' | 'STAFF' | 'CUSTOMER' | 'SYSTEM' | 'POS';

export const reservationStream = (id: string) => `reservation-${id}`;

/**
 * A restaurant id as the first part of a stream name: its own `-` and `%` escaped, so the first `-`
 * after it ends it (restaurant ids are free text: `rest` with external_id `a-1` and `rest-a` with `1`
 * must be two claims). An id without either (`rest_demo`, a generated one) is unchanged.
 */
export const restaurantStreamPart = (restaurantId: string) =>
  restaurantId.replace(/%/g, '%25').replace(/-/g, '%2D');

/** Claim stream that keeps a reservation external_id unique within its restaurant. */
export const externalIdClaimStream = (restaurantId: string, externalId: string) =>
  `${EXTERNAL_ID_CLAIM_PREFIX}${restaurantStreamPart(restaurantId)}-${encodeURIComponent(externalId)}`;
export const EXTERNAL_ID_CLAIM_PREFIX = 'reservation-external-id-';

/**
 * The name a claim had before restaurant ids were escaped in it, when that differs (the id holds a
 * `-` or `%`), else null. Such a name can also be another restaurant's claim: it counts only when
 * its claim's metadata names this restaurant (external-id.ts). Nothing is written there any more.
 */
export function legacyExternalIdClaimStream(restaurantId: string, externalId: string): string | null {
  if (restaurantStreamPart(restaurantId) === restaurantId) return null;
  return `${EXTERNAL_ID_CLAIM_PREFIX}${restaurantId}-${encodeURIComponent(externalId)}`;
}

/** The external_id a claim stream of this restaurant is named after (either name), or null for any other stream. */
export function externalIdOfClaimStream(restaurantId: string, stream: string): string | null {
  const escaped = `${EXTERNAL_ID_CLAIM_PREFIX}${restaurantStreamPart(restaurantId)}-`;
  const legacy = `${EXTERNAL_ID_CLAIM_PREFIX}${restaurantId}-`;
  const prefix = stream.startsWith(escaped) ? escaped : stream.startsWith(legacy) ? legacy : null;
  if (prefix === null) return null;
  try {
    return decodeURIComponent(stream.slice(prefix.length));
  } catch {
    return null;
  }
}
