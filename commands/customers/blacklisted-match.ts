// on_match create_new ignores a match, but not a blacklisted one (spec §4: a blacklisted customer
// "matched inline" rejects the reservation): a new, unblacklisted twin of the guest would book, at
// once inline or later by its id. POST /customers, inline reservation customers (with create_new
// asked for or the restaurant's matching off) and PATCH /reservations' inline details ask this first.
import { findMatch, type MatchInput, type MatchKey } from '../../queries/customers';
import { BusinessRuleError } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import type { DocumentStore } from '../../src/ports/document-store';
import { followMerges } from './follow-merges';

/** The 422 every refusal of a blacklisted guest answers (`error.details.reason`). */
export const blacklistedError = (
  message = 'This customer is blacklisted: the restaurant takes no reservation for them',
) => new BusinessRuleError('CUSTOMER_BLACKLISTED', message);

/**
 * The customer the details would match (on `order`, as matching would), when it is blacklisted: its
 * id (the survivor of a merge), else null. The flag is read from the customer's own stream.
 */
export async function blacklistedMatch(
  deps: Pick<WriteDeps, 'events'>,
  docs: DocumentStore,
  restaurant: { _id: string; country_code: string | null },
  input: MatchInput,
  order: readonly MatchKey[],
): Promise<{ customerId: string; on: MatchKey } | null> {
  const match = await findMatch(docs, restaurant, input, order);
  if (!match) return null;
  const walk = await followMerges(deps, match.doc._id);
  const live = walk.end === 'survivor' && walk.state.status === 'active' && !walk.state.draft;
  return live && walk.state.blacklisted ? { customerId: walk.customerId, on: match.on } : null;
}
