// on_match create_new ignores a match, but not a blacklisted one: a new, unblacklisted twin of the
// guest could book, at once inline or later by its id. A reservation's inline customer (create_new
// asked for, or the restaurant's matching off) and PATCH /reservations' inline details are refused
// (spec §4: a blacklisted customer "matched inline" rejects the reservation); POST /customers, which
// the spec says always creates with create_new, creates the twin blacklisted (twinBlacklistReason).
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

/** The reason a twin made by on_match create_new is blacklisted with (it names the guest it matched). */
export const twinBlacklistReason = (matchedId: string) =>
  `created with on_match create_new on details matching blacklisted customer ${matchedId}`;
