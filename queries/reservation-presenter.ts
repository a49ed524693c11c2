// The partner representation of a reservation (spec §2.5), from the stored snapshot plus the names of
// what it refers to. Pure: the lookups are fetched by queries/reservations.ts, in batches.
import type { Feedback, Payment, ReservationSnapshot } from '../commands/reservations/events';
import { type PaymentSummary, paymentSummary } from '../commands/reservations/payments';
import { distinctInOrder } from '../src/core/text';

export interface CustomerRef {
  id: string;
  name: string;
  email: string | null;
  phone_number: string | null;
  lang: string;
}
export interface TableRef {
  id: string;
  name: string;
  min_pax: number;
  max_pax: number;
}
export interface ShiftRef {
  id: string;
  name: string;
  start_time: string;
  end_time: string;
}

/**
 * Everything a page of reservations refers to, by id. An item removed from the catalog since the
 * reservation was made shows as it was last configured (the catalog read model keeps it); only one the
 * read model never knew (a store still on the catalog's version 1, a log cut short) shows with its id
 * standing in for its name.
 */
export interface Lookups {
  customers: ReadonlyMap<string, CustomerRef>;
  rooms: ReadonlyMap<string, { id: string; name: string }>;
  tables: ReadonlyMap<string, TableRef>;
  shifts: ReadonlyMap<string, ShiftRef>;
  discounts: ReadonlyMap<string, { id: string; value: number; message: string }>;
  prescribers: ReadonlyMap<string, { id: string; name: string; phone_number: string | null }>;
}

export interface PresentOptions {
  /** The token holds RESERVATIONS_READ_SENSITIVE: customer contact fields are included. */
  sensitive: boolean;
  currency: string;
}

export interface ReservationView {
  id: string;
  external_id: string | null;
  status: string;
  start_at: string;
  end_at: string;
  duration_minutes: number;
  party_size: number;
  source: string;
  created_at: string;
  updated_at: string;
  customer: {
    id: string;
    name: string;
    lang: string;
    email?: string | null;
    phone_number?: string | null;
  } | null;
  room: { id: string; name: string } | null;
  tables: TableRef[];
  waiter: { id: string; name: string } | null;
  shift: ShiftRef | null;
  discount: { id: string; value: number; message: string } | null;
  prescriber: { id: string; name: string; phone_number: string | null } | null;
  custom_message: string | null;
  allergies: string | null;
  metadata: Record<string, unknown>;
  feedback: Feedback | null;
  cancellation_reason: string | null;
  attached_files: string[];
  tags: string[];
  send_followup_email: boolean;
  is_table_definitive: boolean;
  is_force_inserted: boolean;
  send_client_notifications: boolean;
  send_payment_link: boolean;
  total_amount_paid: number;
  payment_summary: PaymentSummary;
  payments: Payment[];
  seated_at: string | null;
  left_at: string | null;
  sensitive_data_included: boolean;
}

export function presentReservation(r: ReservationSnapshot, l: Lookups, o: PresentOptions): ReservationView {
  const customer = r.customer_id ? (l.customers.get(r.customer_id) ?? null) : null;
  return {
    id: r.reservation_id,
    external_id: r.external_id,
    status: r.status,
    start_at: r.start_at,
    end_at: r.end_at,
    duration_minutes: r.duration_minutes,
    party_size: r.party_size,
    source: r.source,
    created_at: r.created_at,
    updated_at: r.updated_at,
    customer: customer
      ? {
          id: customer.id,
          name: customer.name,
          lang: customer.lang,
          ...(o.sensitive ? { email: customer.email, phone_number: customer.phone_number } : {}),
        }
      : null,
    room: r.room_id ? (l.rooms.get(r.room_id) ?? { id: r.room_id, name: r.room_id }) : null,
    tables: r.table_ids.map((id) => l.tables.get(id) ?? { id, name: id, min_pax: 0, max_pax: 0 }),
    waiter: r.waiter_id ? { id: r.waiter_id, name: r.waiter_name ?? r.waiter_id } : null,
    shift: l.shifts.get(r.shift_id) ?? { id: r.shift_id, name: r.shift_id, start_time: '', end_time: '' },
    discount: r.discount_id ? (l.discounts.get(r.discount_id) ?? null) : null,
    prescriber: r.prescriber_id ? (l.prescribers.get(r.prescriber_id) ?? null) : null,
    custom_message: r.custom_message,
    allergies: r.allergies,
    metadata: r.metadata,
    feedback: r.feedback,
    cancellation_reason: r.cancellation_reason,
    // A reservation stored before repeats were dropped may hold some (commands/reservations/distinct-lists.ts).
    attached_files: distinctInOrder(r.attached_files),
    tags: distinctInOrder(r.tags),
    send_followup_email: r.send_followup_email,
    is_table_definitive: r.is_table_definitive,
    is_force_inserted: r.is_force_inserted,
    send_client_notifications: r.send_client_notifications,
    send_payment_link: r.send_payment_link,
    total_amount_paid: r.total_amount_paid,
    payment_summary: paymentSummary(r.payments, o.currency),
    payments: r.payments,
    seated_at: r.seated_at,
    left_at: r.left_at,
    // Says whether contact fields were included, even for an anonymous reservation.
    sensitive_data_included: o.sensitive,
  };
}
