// Each scope in plain words, for the consent and connections pages.
import type { Scope } from '../core/scopes';

export const SCOPE_WORDS: Record<Scope, string> = {
  CATALOG_READ: 'See your tables, rooms, shifts, prescribers, discounts and message templates',
  AVAILABILITY_READ: 'See when tables are free to book',
  RESERVATIONS_READ: 'See your reservations',
  RESERVATIONS_READ_SENSITIVE: "See guests' phone numbers and email addresses in reservations",
  RESERVATIONS_WRITE: 'Create and change reservations',
  RESERVATIONS_CANCEL: 'Cancel reservations',
  RESERVATIONS_FORCE_INSERT: 'Book beyond availability and skip deposits',
  RESERVATIONS_FORCE_CONFIRM: 'Confirm reservations that would wait for staff approval',
  CUSTOMERS_READ: 'See your customer records, including their personal details',
  CUSTOMERS_WRITE: 'Create and change customer records',
  WEBHOOKS_WRITE: 'Be notified of changes (webhooks)',
  MISSED_CALLS_WRITE: 'Report missed calls and send follow-up messages to callers',
};
