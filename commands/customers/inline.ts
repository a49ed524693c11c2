// Inline reservation customers (spec §4 POST /reservations), for the reservations module. Its API is
// stable: checkInlineCustomer never writes, so a reservation can be refused (blacklist, slot, rules)
// before any customer is created or updated; resolveInlineCustomer writes, once the reservation passed.
//
// How inline matching differs from POST /customers: it matches on phone then email, never on
// external_id; with on_match omitted it follows the restaurant (match unless customer_matching is off);
// with return_existing a newsletter consent the guest just gave is still recorded; with update an empty
// email or phone ("" or null) never clears a contact detail.

import { findMatch, type MatchKey } from '../../queries/customers';
import type { CommandMeta } from '../../src/core/command-meta';
import type { Issue } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import type { DocumentStore } from '../../src/ports/document-store';
import { blacklistedMatch } from './blacklisted-match';
import type { ProfileInput } from './bounds';
import { followMerges } from './follow-merges';
import { type CustomerRestaurant, createCustomer, updateCustomer, writeContext } from './handler';
import { prepareProfile, profileIssues } from './prepare';
import type { CustomerState } from './state';
import { matchingInTurn, REMATCHES, settleVanished } from './upsert';

export {
  getCustomerForReservation,
  getCustomersForReservations,
  type ReservationCustomer,
} from '../../queries/customers';
export type { CustomerRestaurant } from './handler';

export type OnMatch = 'return_existing' | 'update' | 'create_new';

/** The customer details a reservation carries instead of a customer id. */
export interface InlineCustomer extends ProfileInput {
  name: string;
}

export interface InlinePlan {
  /** What resolving will do. */
  action: 'create' | 'return_existing' | 'update';
  /**
   * The matched customer; null when a new one will be created. With create_new (asked for, or the
   * restaurant's matching off) a match is named only when it is blacklisted.
   */
  customerId: string | null;
  matchedOn: 'phone' | 'email' | null;
  /**
   * The matched customer is blacklisted, whatever on_match says: the reservation must be rejected
   * (and nothing written).
   */
  blacklisted: boolean;
}

export interface InlineResolution {
  customerId: string;
  /** True only when the matched customer is blacklisted; then nothing was written. */
  blacklisted: boolean;
  result: 'created' | 'matched' | 'updated';
  /** Log position of what was written (settle on it), null when nothing was. */
  position: bigint | null;
}

const empty = (v: string | null | undefined) => v === undefined || v === null || v === '';

/** Empty contact details are absent, never a value to store or to clear with. */
function withoutEmptyContacts<T extends ProfileInput>(inline: T): T {
  const { email, phone_number, ...rest } = inline;
  return {
    ...(rest as T),
    ...(empty(email) ? {} : { email }),
    ...(empty(phone_number) ? {} : { phone_number }),
  };
}

/**
 * The 400s of inline details that need only the restaurant's country (bounds, a phone number no country
 * reads), at paths under `prefix`: the API checks them with the rest of the body, before the references
 * and the reservation's own checks. Pure.
 */
export function inlineProfileIssues(inline: ProfileInput, country: string | null, prefix: string): Issue[] {
  return profileIssues(withoutEmptyContacts(inline), country).map((i) => ({
    ...i,
    path: i.path ? `${prefix}.${i.path}` : prefix,
    // A message naming its field names it by the whole path, as the schema's issues do
    // ("customer.phone_number is not a possible phone number…", not "phone_number …").
    message: i.path && i.message.startsWith(`${i.path} `) ? `${prefix}.${i.message}` : i.message,
  }));
}

/** Inline details match on phone then email, never on external_id (spec §4). */
const INLINE_MATCH_ORDER: readonly MatchKey[] = ['phone', 'email'];

const effective = (restaurant: CustomerRestaurant, onMatch: OnMatch | undefined): OnMatch =>
  onMatch ?? (restaurant.customer_matching ? 'return_existing' : 'create_new');

/**
 * The customer a match designates on its own stream: the read model may still show one a concurrent
 * command deleted (none then: the guest's details make a new customer, rather than a reservation
 * linked to a deleted id that shows no customer) or merged away (the customer that absorbed it).
 */
async function liveCustomer(
  deps: WriteDeps,
  id: string,
): Promise<{ customerId: string; state: CustomerState } | null> {
  const walk = await followMerges(deps, id);
  if (walk.end !== 'survivor' || walk.state.status !== 'active' || walk.state.draft) return null;
  return { customerId: walk.customerId, state: walk.state };
}

/**
 * Validates the details (400 on a bound, 422 on a custom field) and finds what resolving would do,
 * without writing. The blacklist flag is read from the customer's own stream, not a read model.
 */
export async function checkInlineCustomer(
  deps: WriteDeps,
  docs: DocumentStore,
  restaurant: CustomerRestaurant,
  inline: InlineCustomer,
  onMatch: OnMatch | undefined,
): Promise<InlinePlan> {
  const details = withoutEmptyContacts(inline);
  prepareProfile(details, await writeContext(deps, restaurant, details));
  const mode = effective(restaurant, onMatch);
  if (mode === 'create_new') {
    // The match is ignored, unless blacklisted: a new twin of that guest would book.
    const black = await blacklistedMatch(deps, docs, restaurant, details, INLINE_MATCH_ORDER);
    if (!black) return { action: 'create', customerId: null, matchedOn: null, blacklisted: false };
    const matchedOn = black.on === 'email' ? 'email' : 'phone';
    return { action: 'create', customerId: black.customerId, matchedOn, blacklisted: true };
  }
  const match = await findMatch(docs, restaurant, details, INLINE_MATCH_ORDER);
  const live = match && (await liveCustomer(deps, match.doc._id));
  if (!match || !live) return { action: 'create', customerId: null, matchedOn: null, blacklisted: false };
  const { customerId, state } = live;
  return {
    action: mode === 'update' ? 'update' : 'return_existing',
    customerId,
    matchedOn: match.on === 'email' ? 'email' : 'phone',
    blacklisted: state.blacklisted,
  };
}

/**
 * Finds or creates the reservation's customer. A blacklisted match is reported and left untouched
 * (with create_new too: no twin of theirs is created).
 * Within a process, resolutions (and POST /customers) sharing a phone or an email match and write one
 * after the other, each once the read models show the one before (`matchingInTurn`): concurrent
 * reservations of one new guest made one customer each.
 */
export async function resolveInlineCustomer(
  deps: WriteDeps & { settle(position: bigint | null): Promise<unknown> },
  docs: DocumentStore,
  restaurant: CustomerRestaurant,
  inline: InlineCustomer,
  onMatch: OnMatch | undefined,
  meta: CommandMeta,
): Promise<InlineResolution> {
  const details = withoutEmptyContacts(inline);
  const skip = effective(restaurant, onMatch) === 'create_new';
  return matchingInTurn(deps, restaurant, details, INLINE_MATCH_ORDER, skip, () =>
    resolveNow(deps, docs, restaurant, details, onMatch, meta),
  );
}

async function resolveNow(
  deps: WriteDeps & { settle(position: bigint | null): Promise<unknown> },
  docs: DocumentStore,
  restaurant: CustomerRestaurant,
  details: InlineCustomer,
  onMatch: OnMatch | undefined,
  meta: CommandMeta,
): Promise<InlineResolution> {
  for (let attempt = 1; ; attempt++) {
    const plan = await checkInlineCustomer(deps, docs, restaurant, details, onMatch);
    if (plan.blacklisted && plan.customerId !== null)
      return { customerId: plan.customerId, blacklisted: true, result: 'matched', position: null };
    if (plan.customerId === null) {
      const created = await createCustomer(deps, restaurant, details, meta, { origin: 'RESERVATION' });
      return {
        customerId: created.customerId,
        blacklisted: false,
        result: 'created',
        position: created.position,
      };
    }
    const id = plan.customerId;
    // return_existing writes nothing, except a consent the guest just gave.
    const write: ProfileInput | null =
      plan.action === 'update'
        ? details
        : details.newsletter_consent === true
          ? { newsletter_consent: true }
          : null;
    if (write === null) return { customerId: id, blacklisted: false, result: 'matched', position: null };
    try {
      const updated = await updateCustomer(deps, restaurant, id, write, meta);
      const result = plan.action === 'update' ? 'updated' : 'matched';
      return { customerId: id, blacklisted: false, result, position: updated.position };
    } catch (err) {
      // Deleted or merged away between the match and the write (another request, another process): match
      // again once the read models include that customer's last event, as POST /customers does
      // (upsert.ts), rather than answer 404 for a customer the caller never named. A PATCH whose
      // reservation change has landed already relies on it (handler-update.ts).
      await settleVanished(deps, id, err, attempt < REMATCHES);
    }
  }
}
