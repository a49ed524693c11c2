// Input and output schemas of the reservation routes: one declaration each, validated at run time and
// documented in openapi.json.
import { BOUNDS, PHONE_DESCRIPTION } from '../../../commands/customers/bounds';
import { INITIAL_STATUSES } from '../../../commands/reservations/decide-create';
import { RESERVATION_SOURCES, RESERVATION_STATUSES } from '../../../commands/reservations/events';
import { MAX_PAGE, PARTY_SIZE } from '../../core/limits';
import {
  anyJson,
  arr,
  bool,
  clearableText,
  dateTime,
  described,
  email,
  enumList,
  enums,
  int,
  intQuery,
  nullable,
  obj,
  optional,
  record,
  str,
  union,
} from '../schema';
import { inlineContactFields } from './customer-schemas';

export const LANGS = ['FR', 'EN', 'IT', 'ES', 'DE', 'PT'] as const;
export const ON_MATCH = ['return_existing', 'update', 'create_new'] as const;

const customerFields = {
  name: optional(str({ ...BOUNDS.name, notBlank: true })),
  email: optional(nullable(email())),
  phone_number: optional(
    nullable(
      str({
        ...BOUNDS.phone_number,
        description: PHONE_DESCRIPTION,
      }),
    ),
  ),
  lang: optional(enums(LANGS)),
  external_id: optional(nullable(str({ ...BOUNDS.external_id, notBlank: true }))),
  tags: optional(arr(str({ ...BOUNDS.tag, notBlank: true }), { max: BOUNDS.tags.max })),
  note: optional(clearableText({ max: BOUNDS.note.max })),
  custom_fields: optional(record(anyJson())),
  newsletter_consent: optional(bool()),
};

const customerLink = obj(
  { id: str({ min: 1, max: 64, description: 'An existing customer of this restaurant' }) },
  { description: '{id} alone links an existing customer of this restaurant; inline details go without id' },
);

/** An object with an `id` means the link member; anything else is read as inline details. */
const hasId = (v: unknown) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, 'id') ? 0 : 1;

/** `{id}` links an existing customer; inline details (name required) find or create one. */
export const createCustomer = union(
  [
    customerLink,
    obj(
      {
        ...customerFields,
        // A booking form's blank email or phone is "not given", never a value that clears one.
        ...inlineContactFields,
        name: str({ ...BOUNDS.name, notBlank: true }),
        on_match: optional(
          enums(ON_MATCH, {
            description: "Omitted: the restaurant's own setting (match unless automatic matching is off)",
          }),
        ),
      },
      { description: 'Inline details, name required: matched on phone, then email (never on external_id)' },
    ),
  ],
  {
    pick: hasId,
    description:
      'Either {id} (an existing customer of this restaurant) or inline details with a name (matched on phone, then email; never on external_id)',
  },
);

/** PATCH: {id} connects; fields without id update the linked customer, or create one (with a name). */
export const patchCustomer = union(
  [
    customerLink,
    obj(customerFields, {
      description:
        'Fields without id: update the linked customer (all its reservations show it); when none is linked, a name creates and connects one',
    }),
  ],
  { pick: hasId, description: '{id} connects an existing customer; fields without id update or create one' },
);

const seatingFields = {
  party_size: int({
    ...PARTY_SIZE.booking,
    description: `Guests, ${PARTY_SIZE.booking.min} to ${PARTY_SIZE.booking.max} (a shift's own limits apply on top)`,
  }),
  start_at: dateTime({
    service: true,
    description: 'Taken from an availability slot',
    example: '2026-05-01T19:00:00+02:00',
  }),
  shift_id: optional(str({ min: 1, max: 64, description: 'Derived from start_at when omitted' })),
  room_id: optional(nullable(str({ min: 1, max: 64 }))),
  table_ids: optional(arr(str({ min: 1, max: 64 }), { min: 1, max: 20, unique: true })),
};

const detailFields = {
  external_id: optional(
    str({ min: 1, max: 255, notBlank: true, description: 'Unique within the restaurant' }),
  ),
  source: optional(enums(RESERVATION_SOURCES)),
  custom_message: optional(clearableText({ max: 5000 })),
  allergies: optional(clearableText({ max: 5000 })),
  metadata: optional(
    record(anyJson(), {
      description:
        'Your own keys and JSON values, returned as given. A PATCH replaces the whole object (keys are not merged): send every key to keep; {} empties it',
    }),
  ),
  tags: optional(
    arr(str({ min: 1, max: 100, notBlank: true }), {
      max: 100,
      description:
        'One of each, in the order first given (a repeat is dropped). A PATCH replaces the whole list; [] empties it',
    }),
  ),
  attached_files: optional(
    arr(str({ min: 1, max: 2048, notBlank: true }), {
      max: 50,
      description:
        'One of each, in the order first given (a repeat, compared exactly, is dropped). A PATCH replaces the whole list; [] empties it',
    }),
  ),
  discount_id: optional(nullable(str({ min: 1, max: 64 }))),
  prescriber_id: optional(nullable(str({ min: 1, max: 64 }))),
  is_table_definitive: optional(bool()),
  send_followup_email: optional(bool()),
  total_amount_paid: optional(
    int({ min: 0, description: 'Smallest currency unit; records an amount, charges nothing' }),
  ),
};

export const createBody = obj({
  ...seatingFields,
  ...detailFields,
  customer: optional(nullable(createCustomer)),
  send_client_notifications: optional(
    bool({ description: 'Default true; false suppresses customer notifications' }),
  ),
  send_payment_link: optional(bool({ description: 'Default true; false suppresses payment-link sending' })),
  initial_status: optional(enums(INITIAL_STATUSES, { description: 'Needs RESERVATIONS_FORCE_INSERT' })),
  bypass_availability: optional(
    bool({ description: 'Needs RESERVATIONS_FORCE_INSERT: no capacity check; sets is_force_inserted' }),
  ),
  bypass_approval: optional(
    bool({ description: 'Needs RESERVATIONS_FORCE_CONFIRM: no staff approval on shifts that ask for it' }),
  ),
  bypass_payments: optional(
    bool({ description: "Needs RESERVATIONS_FORCE_INSERT: no deposit from the shift's rule" }),
  ),
});

export const patchBody = obj({
  party_size: optional(seatingFields.party_size),
  start_at: optional(seatingFields.start_at),
  shift_id: seatingFields.shift_id,
  room_id: seatingFields.room_id,
  table_ids: seatingFields.table_ids,
  ...detailFields,
  external_id: optional(
    nullable(str({ min: 1, max: 255, notBlank: true, description: 'Unique within the restaurant' })),
  ),
  customer: optional(nullable(patchCustomer)),
});

export const cancelBody = obj({
  reason: optional(
    str({
      min: 1,
      max: 2000,
      notBlank: true,
      description: 'Stored as cancellation_reason; omit it to give none',
    }),
  ),
});

export const idParams = obj({ id: str({ min: 1, max: 64 }) });

const statusList = enumList(RESERVATION_STATUSES, {
  what: 'status',
  description: `One status or several, comma-separated: ${RESERVATION_STATUSES.join(', ')}`,
});

export const listQuery = obj({
  page: optional(intQuery({ min: 1, max: MAX_PAGE, default: 1, description: 'From 1' })),
  per_page: optional(intQuery({ min: 1, max: 100, default: 25, description: 'Default 25, max 100' })),
  external_id: optional(str({ min: 1, max: 255 })),
  customer_id: optional(str({ min: 1, max: 64 })),
  status: optional(statusList),
  start_at_from: optional(dateTime({ description: 'Inclusive', query: true })),
  start_at_to: optional(dateTime({ description: 'Inclusive', query: true })),
  updated_since: optional(dateTime({ description: 'Inclusive', query: true })),
});

const nullableObject = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  nullable: true,
  required,
  properties,
});
const S = { type: 'string' };
const NS = { type: 'string', nullable: true };
const DT = { type: 'string', format: 'date-time' };
const NDT = { type: 'string', format: 'date-time', nullable: true };
const INT = { type: 'integer' };

const paymentProperties = {
  id: S,
  provider_id: NS,
  payment_type: { type: 'string', example: 'DEPOSIT' },
  payment_mode: { type: 'string', example: 'SOFT_PREAUTH' },
  provider: NS,
  status: { type: 'string', description: 'PENDING, AUTHORIZED, PAID, REFUNDED, VOIDED, FAILED or FREE' },
  amount: INT,
  quantity: { type: 'number' },
  unit_price: { type: 'number' },
  percent_of_total: { type: 'number', nullable: true },
  currency: S,
  is_refundable: { type: 'boolean' },
  expiration_date: NDT,
  max_cancellation_date: NDT,
  authorized_at: NDT,
  capture_deadline: NDT,
  captured_at: NDT,
  voided_at: NDT,
  linked_product: nullableObject({ id: S, name: S }, ['id', 'name']),
  linked_variant: nullableObject({ id: S, name: S }, ['id', 'name']),
  created_at: DT,
  updated_at: DT,
};

const paymentSchema = {
  type: 'object',
  required: Object.keys(paymentProperties),
  properties: paymentProperties,
};

const paymentSummarySchema = {
  type: 'object',
  required: [
    'currency',
    'total_amount',
    'paid_amount',
    'authorized_amount',
    'pending_amount',
    'refunded_amount',
    'statuses',
  ],
  properties: {
    currency: S,
    total_amount: INT,
    paid_amount: INT,
    authorized_amount: INT,
    pending_amount: INT,
    refunded_amount: INT,
    statuses: { type: 'array', items: S },
  },
};

const tableRef = { id: S, name: S, min_pax: INT, max_pax: INT };

const reservationProperties = {
  id: S,
  external_id: NS,
  status: { type: 'string', enum: [...RESERVATION_STATUSES] },
  start_at: { ...DT, description: "With the restaurant's offset" },
  end_at: DT,
  duration_minutes: INT,
  party_size: INT,
  source: { type: 'string', enum: [...RESERVATION_SOURCES] },
  created_at: DT,
  updated_at: DT,
  customer: nullableObject(
    {
      id: S,
      name: S,
      // As the customer record's: never null (every customer has one of these).
      lang: { type: 'string', enum: [...LANGS] },
      email: { ...NS, description: 'Only with RESERVATIONS_READ_SENSITIVE' },
      phone_number: { ...NS, description: 'Only with RESERVATIONS_READ_SENSITIVE' },
    },
    ['id', 'name', 'lang'],
  ),
  room: nullableObject({ id: S, name: S }, ['id', 'name']),
  tables: {
    type: 'array',
    items: { type: 'object', required: Object.keys(tableRef), properties: tableRef },
  },
  waiter: nullableObject({ id: S, name: S }, ['id', 'name']),
  shift: nullableObject({ id: S, name: S, start_time: S, end_time: S }, [
    'id',
    'name',
    'start_time',
    'end_time',
  ]),
  discount: nullableObject({ id: S, value: { type: 'number' }, message: S }, ['id', 'value', 'message']),
  prescriber: nullableObject({ id: S, name: S, phone_number: NS }, ['id', 'name', 'phone_number']),
  custom_message: NS,
  allergies: NS,
  metadata: { type: 'object', additionalProperties: true },
  feedback: nullableObject({ rating: INT, comment: NS, answer: NS, created_at: DT, answered_at: NDT }, [
    'rating',
    'comment',
    'answer',
    'created_at',
    'answered_at',
  ]),
  cancellation_reason: NS,
  attached_files: { type: 'array', items: S },
  tags: { type: 'array', items: S },
  send_followup_email: { type: 'boolean' },
  is_table_definitive: { type: 'boolean' },
  is_force_inserted: { type: 'boolean' },
  send_client_notifications: { type: 'boolean' },
  send_payment_link: { type: 'boolean' },
  total_amount_paid: INT,
  payment_summary: paymentSummarySchema,
  payments: { type: 'array', items: paymentSchema },
  seated_at: NDT,
  left_at: NDT,
  sensitive_data_included: {
    type: 'boolean',
    description: 'True when the customer contact fields (email, phone_number) are included',
  },
};

/** Every field is always sent (null when empty); only the customer's contact fields depend on the scope. */
export const reservationSchema = {
  type: 'object',
  required: Object.keys(reservationProperties),
  properties: reservationProperties,
};

export const oneReservation = described({
  type: 'object',
  required: ['data'],
  properties: { data: reservationSchema },
});

export const reservationPage = described({
  type: 'object',
  required: ['data', 'pagination'],
  properties: {
    data: { type: 'array', items: reservationSchema },
    pagination: {
      type: 'object',
      required: ['page', 'per_page', 'total', 'total_pages', 'has_more'],
      properties: {
        page: INT,
        per_page: INT,
        total: INT,
        total_pages: INT,
        has_more: { type: 'boolean' },
      },
    },
  },
});
