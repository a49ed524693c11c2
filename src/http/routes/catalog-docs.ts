// JSON Schemas and examples of the catalog records the API returns (spec §2.6, §2.8 leaves most of
// them open: these are the shapes a POS integrator needs to map its own floor plan and services).
import { STORED_EMAIL_DESCRIPTION } from '../../core/email';
import type { JsonSchema } from '../schema';

const id: JsonSchema = { type: 'string', description: 'Stable identifier within the restaurant' };
const localTime = (description: string): JsonSchema => ({
  type: 'string',
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  description: `${description} (HH:MM, restaurant wall clock)`,
});
const isoDays: JsonSchema = {
  type: 'array',
  items: { type: 'integer', minimum: 1, maximum: 7 },
  description: 'ISO 8601 days of week: 1 = Monday … 7 = Sunday, in the restaurant time zone',
};

export const roomSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name'],
  additionalProperties: false,
  properties: { id, name: { type: 'string' } },
};

export const tableSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'room_id', 'min_pax', 'max_pax'],
  additionalProperties: false,
  properties: {
    id,
    name: { type: 'string', description: 'The label staff use ("12", "Bar 3")' },
    room_id: { type: 'string', nullable: true, description: 'The room the table stands in (GET /rooms)' },
    min_pax: { type: 'integer', minimum: 1, description: 'Smallest party seated at this table alone' },
    max_pax: { type: 'integer', minimum: 1, description: 'Largest party seated at this table alone' },
  },
};

export const shiftSchema: JsonSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'start_time',
    'end_time',
    'days_of_week',
    'slot_interval_minutes',
    'duration_minutes',
    'durations_by_party_size',
    'max_covers',
    'min_party_size',
    'max_party_size',
    'requires_room_selection',
    'requires_approval',
    'deposit',
    'booking_window_days',
    'minimum_notice_minutes',
  ],
  additionalProperties: false,
  properties: {
    id,
    name: { type: 'string' },
    start_time: localTime('First bookable start, inclusive'),
    end_time: localTime(
      'Last bookable start, inclusive. Earlier than start_time: the shift runs past midnight and its late starts belong to the day it began',
    ),
    days_of_week: isoDays,
    slot_interval_minutes: {
      type: 'integer',
      minimum: 5,
      description: 'Minutes between two bookable starts',
    },
    duration_minutes: {
      type: 'integer',
      minimum: 5,
      description: 'Seating length when no rule of durations_by_party_size matches',
    },
    durations_by_party_size: {
      type: 'array',
      description:
        'Seating length by party size, ascending: the first rule whose max_party_size ≥ the party applies',
      items: {
        type: 'object',
        required: ['max_party_size', 'duration_minutes'],
        additionalProperties: false,
        properties: {
          max_party_size: { type: 'integer', minimum: 1 },
          duration_minutes: { type: 'integer', minimum: 5 },
        },
      },
    },
    max_covers: {
      type: 'integer',
      nullable: true,
      description: 'Guests the shift takes per service day; null when only tables limit it',
    },
    min_party_size: { type: 'integer', minimum: 1 },
    max_party_size: {
      type: 'integer',
      nullable: true,
      description: 'null: the largest table decides',
    },
    requires_room_selection: {
      type: 'boolean',
      description: 'Availability answers one slot per room; pass the slot room_id when booking',
    },
    requires_approval: {
      type: 'boolean',
      description: 'New reservations start PENDING until staff approve them',
    },
    deposit: {
      type: 'object',
      nullable: true,
      description: 'A DEPOSIT payment is added to reservations of at least min_party_size guests',
      required: ['amount_per_cover', 'min_party_size', 'payment_mode'],
      additionalProperties: false,
      properties: {
        amount_per_cover: { type: 'integer', minimum: 0, description: 'Smallest currency unit per guest' },
        min_party_size: { type: 'integer', minimum: 1 },
        payment_mode: { type: 'string', example: 'SOFT_PREAUTH' },
      },
    },
    booking_window_days: {
      type: 'integer',
      nullable: true,
      description: 'Bookable up to this many calendar days ahead (restaurant calendar); null: no limit',
    },
    minimum_notice_minutes: {
      type: 'integer',
      minimum: 0,
      description: 'A seating must start at least this long after the request',
    },
  },
};

export const prescriberSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'phone_number', 'email'],
  additionalProperties: false,
  properties: {
    id,
    name: { type: 'string', description: 'A concierge, hotel or agency that sends guests' },
    phone_number: { type: 'string', nullable: true },
    email: { type: 'string', nullable: true, description: STORED_EMAIL_DESCRIPTION },
  },
};

export const discountSchema: JsonSchema = {
  type: 'object',
  required: [
    'id',
    'is_active',
    'value',
    'message',
    'start_date',
    'end_date',
    'start_time',
    'end_time',
    'days_of_week',
    'max_covers_per_day',
  ],
  additionalProperties: false,
  properties: {
    id,
    is_active: { type: 'boolean' },
    value: { type: 'number', description: 'The discount value (the demo uses percentages: 20 = -20%)' },
    message: { type: 'string', description: 'What guests are shown' },
    start_date: {
      type: 'string',
      format: 'date-time',
      nullable: true,
      description:
        "Earliest reservation start_at it applies to (an instant, inclusive; compared with the reservation's start, not with now); null: no limit",
    },
    end_date: {
      type: 'string',
      format: 'date-time',
      nullable: true,
      description:
        "Latest reservation start_at it applies to (an instant, inclusive; compared with the reservation's start, not with now); null: no limit",
    },
    start_time: localTime(
      'Earliest local start time of a reservation it applies to, inclusive, to the minute',
    ),
    end_time: localTime('Latest local start time of a reservation it applies to, inclusive, to the minute'),
    days_of_week: {
      ...isoDays,
      description: `${isoDays.description}: the calendar day of the reservation's start (a 00:30 start counts on its own day, not on the day its shift began)`,
    },
    max_covers_per_day: {
      type: 'integer',
      minimum: 0,
      description:
        "The restaurant's intended daily limit; not enforced: POST /reservations does not count covers per discount",
    },
  },
};

export const customerFieldSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'type', 'options', 'min', 'max', 'max_items'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The key of customer.custom_fields' },
    name: { type: 'string' },
    type: {
      type: 'string',
      enum: ['TEXT', 'NUMBER', 'DATE', 'BOOLEAN', 'SELECT', 'MULTI_SELECT'],
      description:
        'TEXT: string; NUMBER: number within min/max; DATE: YYYY-MM-DD; BOOLEAN; SELECT: one option; MULTI_SELECT: distinct options, at most max_items',
    },
    options: {
      type: 'array',
      nullable: true,
      items: { type: 'string' },
      description: 'Allowed values of SELECT and MULTI_SELECT; null for other types',
    },
    min: { type: 'number', nullable: true, description: 'NUMBER lower bound (inclusive)' },
    max: { type: 'number', nullable: true, description: 'NUMBER upper bound (inclusive)' },
    max_items: { type: 'integer', nullable: true, description: 'MULTI_SELECT: most values allowed' },
  },
};

export const messageTemplateSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'type', 'channel', 'status', 'body', 'name', 'language'],
  additionalProperties: false,
  properties: {
    id,
    name: { type: 'string', description: "The provider's template name (default: the id)" },
    language: {
      type: 'string',
      nullable: true,
      description: "The provider's language code (fr, en_US…); null: from the restaurant's country",
    },
    type: { type: 'string', enum: ['MISSED_CALL', 'MISSED_CALL_WITH_RESERVATION'] },
    channel: { type: 'string', enum: ['WHATSAPP', 'SMS'] },
    status: {
      type: 'string',
      enum: ['APPROVED', 'PENDING', 'REJECTED'],
      description: 'Only APPROVED templates are sent',
    },
    body: { type: 'string' },
  },
};

export const listOf = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['data'],
  additionalProperties: false,
  properties: { data: { type: 'array', items: item } },
});

export const EXAMPLES = {
  rooms: [
    { id: 'room_main', name: 'Main room' },
    { id: 'room_terrace', name: 'Terrace' },
  ],
  tables: [
    { id: 'tbl_1', name: '1', room_id: 'room_main', min_pax: 1, max_pax: 2 },
    { id: 'tbl_7', name: '7', room_id: 'room_terrace', min_pax: 3, max_pax: 6 },
  ],
  shifts: [
    {
      id: 'shift_dinner',
      name: 'Dinner',
      start_time: '19:00',
      end_time: '22:00',
      days_of_week: [1, 2, 3, 4, 5, 6, 7],
      slot_interval_minutes: 15,
      duration_minutes: 120,
      durations_by_party_size: [{ max_party_size: 2, duration_minutes: 90 }],
      max_covers: 60,
      min_party_size: 1,
      max_party_size: 8,
      requires_room_selection: false,
      requires_approval: false,
      deposit: { amount_per_cover: 1500, min_party_size: 6, payment_mode: 'SOFT_PREAUTH' },
      booking_window_days: 60,
      minimum_notice_minutes: 30,
    },
  ],
  prescribers: [{ id: 'pre_1', name: 'Hotel Concierge', phone_number: '+33612345678', email: null }],
  discounts: [
    {
      id: 'disc_1',
      is_active: true,
      value: 20,
      message: '-20% lunch',
      start_date: null,
      end_date: null,
      start_time: '12:00',
      end_time: '14:00',
      days_of_week: [1, 2, 3, 4, 5],
      max_covers_per_day: 20,
    },
  ],
  customer_fields: [
    {
      id: 'cf_vip',
      name: 'VIP level',
      type: 'SELECT',
      options: ['gold', 'silver'],
      min: null,
      max: null,
      max_items: null,
    },
    { id: 'cf_visits', name: 'Visits', type: 'NUMBER', options: null, min: 0, max: 1000, max_items: null },
  ],
  message_templates: [
    {
      id: 'tpl_missed',
      type: 'MISSED_CALL',
      channel: 'WHATSAPP',
      status: 'APPROVED',
      body: 'Sorry we missed your call, {{guest_name}}! Book a table at {{restaurant_name}}: {{booking_link}}',
      name: 'missed_call_v2',
      language: 'fr',
    },
  ],
};
