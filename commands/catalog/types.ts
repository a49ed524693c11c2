// A restaurant's configuration as the write side keeps it (normalised: every optional setting has its
// default filled in, so two equal configurations compare equal and re-applying one appends nothing).
// The read models and the HTTP answers are built from these same shapes.

/** Local wall-clock time "HH:MM" (00:00–23:59) in the restaurant's time zone. */
export type LocalTime = string;

export interface Room {
  id: string;
  name: string;
}

export interface Table {
  id: string;
  name: string;
  /** null for a restaurant that does not split its floor into rooms. */
  room_id: string | null;
  min_pax: number;
  max_pax: number;
}

/** "Parties of up to `max_party_size` guests stay `duration_minutes`." */
export interface DurationRule {
  max_party_size: number;
  duration_minutes: number;
}

export interface DepositRule {
  /** Smallest currency unit per guest. */
  amount_per_cover: number;
  /** Parties smaller than this pay no deposit. */
  min_party_size: number;
  payment_mode: string;
}

export interface Shift {
  id: string;
  name: string;
  /** First bookable start (inclusive). */
  start_time: LocalTime;
  /**
   * Last bookable start (inclusive). Earlier than start_time means the shift runs past midnight: its
   * late starts fall on the next calendar day but belong to the service day the shift started on.
   */
  end_time: LocalTime;
  /** ISO 8601: 1 = Monday … 7 = Sunday, of the service day in the restaurant's time zone. */
  days_of_week: number[];
  slot_interval_minutes: number;
  /** Seating length when no duration rule matches the party. */
  duration_minutes: number;
  /** Sorted by max_party_size ascending; the first rule whose max_party_size ≥ party size applies. */
  durations_by_party_size: DurationRule[];
  /** Covers (guests) per service day for this shift; null: only tables limit it. */
  max_covers: number | null;
  min_party_size: number;
  /** null: the largest table decides. */
  max_party_size: number | null;
  /** Partners choose a room: availability answers one slot per room able to seat the party. */
  requires_room_selection: boolean;
  requires_approval: boolean;
  deposit: DepositRule | null;
  /** Bookable up to this many calendar days ahead (service day ≤ today + N); null: no limit. */
  booking_window_days: number | null;
  /** A slot must start at least this long after now. */
  minimum_notice_minutes: number;
}

export interface Prescriber {
  id: string;
  name: string;
  phone_number: string | null;
  email: string | null;
}

/** Spec §2.6. */
export interface Discount {
  id: string;
  is_active: boolean;
  value: number;
  message: string;
  start_date: string | null;
  end_date: string | null;
  start_time: LocalTime;
  end_time: LocalTime;
  days_of_week: number[];
  max_covers_per_day: number;
}

export const CUSTOMER_FIELD_TYPES = ['TEXT', 'NUMBER', 'DATE', 'BOOLEAN', 'SELECT', 'MULTI_SELECT'] as const;
export type CustomerFieldType = (typeof CUSTOMER_FIELD_TYPES)[number];

/** Spec §2.4. Properties that do not apply to the type are null. */
export interface CustomerField {
  id: string;
  name: string;
  type: CustomerFieldType;
  /** SELECT and MULTI_SELECT: the allowed values. */
  options: string[] | null;
  /** NUMBER bounds (inclusive). */
  min: number | null;
  max: number | null;
  /** MULTI_SELECT: at most this many values. */
  max_items: number | null;
}

export const TEMPLATE_TYPES = ['MISSED_CALL', 'MISSED_CALL_WITH_RESERVATION'] as const;
export const TEMPLATE_CHANNELS = ['WHATSAPP', 'SMS'] as const;
export const TEMPLATE_STATUSES = ['APPROVED', 'PENDING', 'REJECTED'] as const;

export interface MessageTemplate {
  id: string;
  type: (typeof TEMPLATE_TYPES)[number];
  channel: (typeof TEMPLATE_CHANNELS)[number];
  /** Only APPROVED templates may be sent (WhatsApp approves them beforehand). */
  status: (typeof TEMPLATE_STATUSES)[number];
  /** The text, with the placeholders of commands/missed-calls/template.ts ({{guest_name}} or {{1}}…). */
  body: string;
  /** The provider's template name (WhatsApp); defaults to the id. */
  name: string;
  /** The provider's language code (fr, en_US, pt_BR…); null: from the restaurant's country. */
  language: string | null;
}

/** The kinds of catalog item, each a list keyed by id. */
export interface CatalogLists {
  rooms: Room[];
  tables: Table[];
  shifts: Shift[];
  prescribers: Prescriber[];
  discounts: Discount[];
  customer_fields: CustomerField[];
  message_templates: MessageTemplate[];
}
export type CatalogKind = keyof CatalogLists;
export const CATALOG_KINDS: readonly CatalogKind[] = [
  'rooms',
  'tables',
  'shifts',
  'prescribers',
  'discounts',
  'customer_fields',
  'message_templates',
];

export interface Catalog extends CatalogLists {
  restaurant_id: string;
}

export const emptyCatalog = (restaurantId: string): Catalog => ({
  restaurant_id: restaurantId,
  rooms: [],
  tables: [],
  shifts: [],
  prescribers: [],
  discounts: [],
  customer_fields: [],
  message_templates: [],
});
