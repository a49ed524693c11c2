// Examples of the reservation routes' answers in openapi.json, consistent with the catalog examples
// (rooms, tables, the dinner shift) and the customer examples. A test validates each against its schema.

const created = '2026-06-02T10:00:00.000Z';

/** A party of 6 at dinner with the shift's deposit pending, read with RESERVATIONS_READ_SENSITIVE. */
export const reservationExample = {
  id: 'res_8k2m4q6s9u1w3y5a',
  external_id: 'partner-res-1042',
  status: 'PENDING_PAYMENT',
  start_at: '2026-06-12T20:00:00+02:00',
  end_at: '2026-06-12T22:00:00+02:00',
  duration_minutes: 120,
  party_size: 6,
  source: 'WEBSITE',
  created_at: created,
  updated_at: created,
  customer: {
    id: 'cus_h3k9q2m7x4w8z1p5',
    name: 'Camille Martin',
    lang: 'FR',
    email: 'camille.martin@example.com',
    phone_number: '+33612345678',
  },
  room: { id: 'room_terrace', name: 'Terrace' },
  tables: [{ id: 'tbl_7', name: '7', min_pax: 3, max_pax: 6 }],
  waiter: null,
  shift: { id: 'shift_dinner', name: 'Dinner', start_time: '19:00', end_time: '22:00' },
  discount: null,
  prescriber: null,
  custom_message: 'Birthday: a candle on the dessert, please',
  allergies: 'Peanuts',
  metadata: { partner_booking_ref: 'BK-20260612-0042' },
  feedback: null,
  cancellation_reason: null,
  attached_files: [],
  tags: ['birthday'],
  send_followup_email: true,
  is_table_definitive: false,
  is_force_inserted: false,
  send_client_notifications: true,
  send_payment_link: true,
  total_amount_paid: 0,
  payment_summary: {
    currency: 'EUR',
    total_amount: 9000,
    paid_amount: 0,
    authorized_amount: 0,
    pending_amount: 9000,
    refunded_amount: 0,
    statuses: ['PENDING'],
  },
  payments: [
    {
      id: 'pay_e6cfa0675cc8514ca2e1',
      provider_id: null,
      payment_type: 'DEPOSIT',
      payment_mode: 'SOFT_PREAUTH',
      provider: null,
      status: 'PENDING',
      amount: 9000,
      quantity: 6,
      unit_price: 1500,
      percent_of_total: null,
      currency: 'EUR',
      is_refundable: true,
      expiration_date: null,
      max_cancellation_date: null,
      authorized_at: null,
      capture_deadline: null,
      captured_at: null,
      voided_at: null,
      linked_product: null,
      linked_variant: null,
      created_at: created,
      updated_at: created,
    },
  ],
  seated_at: null,
  left_at: null,
  sensitive_data_included: true,
};

/** A confirmed table for two, read without RESERVATIONS_READ_SENSITIVE: no customer contact fields. */
const confirmedForTwo = {
  ...reservationExample,
  id: 'res_2b4d6f8h1j3l5n7p',
  external_id: null,
  status: 'CONFIRMED',
  start_at: '2026-06-12T19:30:00+02:00',
  end_at: '2026-06-12T21:00:00+02:00',
  duration_minutes: 90,
  party_size: 2,
  customer: { id: 'cus_t6v2b8n4c1d9f3g7', name: 'Léa Dubois', lang: 'FR' },
  room: { id: 'room_main', name: 'Main room' },
  tables: [{ id: 'tbl_1', name: '1', min_pax: 1, max_pax: 2 }],
  custom_message: null,
  allergies: null,
  metadata: {},
  tags: [],
  payment_summary: {
    ...reservationExample.payment_summary,
    total_amount: 0,
    pending_amount: 0,
    statuses: [],
  },
  payments: [],
  sensitive_data_included: false,
};

const updated = '2026-06-05T16:12:40.000Z';

export const reservationExamples = {
  created: { data: reservationExample },
  one: { data: reservationExample },
  updated: {
    data: {
      ...reservationExample,
      start_at: '2026-06-12T20:30:00+02:00',
      end_at: '2026-06-12T22:30:00+02:00',
      updated_at: updated,
    },
  },
  canceled: {
    data: {
      ...confirmedForTwo,
      status: 'CANCELED_BY_RESTAURANT',
      cancellation_reason: 'The guest called to cancel',
      customer: {
        ...confirmedForTwo.customer,
        email: 'lea.dubois@example.com',
        phone_number: '+33698765432',
      },
      sensitive_data_included: true,
      updated_at: updated,
    },
  },
  page: {
    data: [
      confirmedForTwo,
      {
        ...reservationExample,
        customer: { id: 'cus_h3k9q2m7x4w8z1p5', name: 'Camille Martin', lang: 'FR' },
        sensitive_data_included: false,
      },
    ],
    pagination: { page: 1, per_page: 25, total: 2, total_pages: 1, has_more: false },
  },
};

/** Request bodies that succeed, shown beside the body schemas (and validated against them). */
export const reservationRequestExamples = {
  /** The seating of an availability slot, and the guest inline (matched on phone, then email). */
  create: {
    party_size: 6,
    start_at: '2026-06-12T20:00:00+02:00',
    shift_id: 'shift_dinner',
    room_id: 'room_terrace',
    external_id: 'partner-res-1042',
    source: 'WEBSITE',
    customer: {
      name: 'Camille Martin',
      email: 'camille.martin@example.com',
      phone_number: '+33612345678',
      lang: 'FR',
    },
    custom_message: 'Birthday: a candle on the dessert, please',
    allergies: 'Peanuts',
    metadata: { partner_booking_ref: 'BK-20260612-0042' },
    tags: ['birthday'],
  },
  update: { party_size: 4, custom_message: 'Two guests fewer; still the birthday candle' },
  cancel: { reason: 'The guest called to cancel' },
};
