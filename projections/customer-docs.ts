// The customer read model's documents. `customers` holds one document per visible or draft customer
// (deleted and absorbed ones are removed); the other collections serve the sync feed and the stats.
import { emailKey, matchablePhoneKey, phoneKey } from '../commands/customers/contact';
import type { CustomerProfile, OptOutChannel } from '../commands/customers/events';

export const CUSTOMERS = 'customers';
/** Per restaurant: the last sync stamp given (see customer-feed.ts). */
export const CUSTOMER_FEEDS = 'customer_feeds';
/** Per restaurant and bucket of sync_seq: the updated_at its first stamp carried. */
export const CUSTOMER_SYNC_BUCKETS = 'customer_sync_buckets';
/** Absorbed customer → the customer it lives on in (kept pointing at the final survivor). */
export const CUSTOMER_MERGES = 'customer_merges';
/** One row per reservation: what the stats of its customer need. */
export const CUSTOMER_RESERVATIONS = 'customer_reservations';

export interface CustomerStats {
  reservation_count: number;
  confirmed_count: number;
  no_show_count: number;
  feedback_count: number;
  average_feedback_score: number | null;
  total_amount_paid: number;
  average_basket: number;
  last_reservation_date: string | null;
}

export const EMPTY_STATS: CustomerStats = {
  reservation_count: 0,
  confirmed_count: 0,
  no_show_count: 0,
  feedback_count: 0,
  average_feedback_score: null,
  total_amount_paid: 0,
  average_basket: 0,
  last_reservation_date: null,
};

export interface CustomerDoc extends CustomerProfile {
  _id: string;
  restaurant_id: string;
  /** Matching keys: the lower-cased email and the phone's E.164 form (contact.ts). */
  email_key: string | null;
  phone_key: string | null;
  marketing_opt_outs: OptOutChannel[];
  blacklisted: boolean;
  draft: boolean;
  stats: CustomerStats;
  created_at: string;
  updated_at: string;
  /** sync_seq when created: the order of creation in the restaurant (the oldest match wins). */
  created_seq: number;
  /** Position of this customer in its restaurant's sync order; see customer-feed.ts. */
  sync_seq: number;
  sync_bucket: number;
  /** Log position of the last customer event applied (projection idempotency). */
  _pos: string;
  [k: string]: unknown;
}

/** The matching keys that follow from a (partial) profile. */
export function matchingKeys(
  p: Partial<CustomerProfile>,
): Partial<Pick<CustomerDoc, 'email_key' | 'phone_key'>> {
  const keys: Partial<Pick<CustomerDoc, 'email_key' | 'phone_key'>> = {};
  if (p.email !== undefined) keys.email_key = p.email === null ? null : emailKey(p.email);
  if (p.phone_number !== undefined)
    keys.phone_key = p.phone_number === null ? null : matchablePhoneKey(phoneKey(p.phone_number));
  return keys;
}
