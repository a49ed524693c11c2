// Merging two customers of one restaurant: the absorbed one is closed first (CustomerMergedInto), then
// the surviving one takes what it lacked (CustomerMerged). Two streams cannot be written at once, so
// each step is decided on its own and repeating the merge after a crash finishes it.
import { BusinessRuleError } from '../../src/core/errors';
import { distinctInOrder } from '../../src/core/text';
import type { NewEvent } from '../../src/ports/event-store';
import { BOUNDS } from './bounds';
import { assertVisible, event } from './decide';
import type { CustomerProfile, OptOutChannel } from './events';
import type { CustomerState } from './state';

/** Step 1, on the absorbed customer's stream. Already merged into `intoId`: nothing to do. */
export function decideMergeInto(
  source: CustomerState,
  sourceId: string,
  target: CustomerState,
  intoId: string,
  at: string,
): NewEvent[] {
  if (sourceId === intoId)
    throw new BusinessRuleError('SAME_CUSTOMER', 'a customer cannot be merged into itself');
  if (source.status === 'merged' && source.mergedInto === intoId) return [];
  assertVisible(source, null, 'internal', sourceId);
  assertVisible(target, source.restaurantId, 'internal', intoId);
  return [
    event({
      type: 'CustomerMergedInto',
      data: { customer_id: sourceId, restaurant_id: source.restaurantId, at, into_customer_id: intoId },
    }),
  ];
}

/**
 * What the surviving customer takes from the absorbed one: contact details, identifiers and a note it
 * lacks, the union of tags (within the bound) and of custom fields it has not set. Its own values win;
 * newsletter consent stays its own (consent is never inferred). Opt-outs and the blacklist are unions:
 * a merge never re-enables marketing to someone who refused it, nor books someone the restaurant refused.
 */
export function mergedProfile(target: CustomerProfile, source: CustomerProfile): Partial<CustomerProfile> {
  const next: Partial<CustomerProfile> = {};
  if (target.email === null && source.email !== null) next.email = source.email;
  if (target.phone_number === null && source.phone_number !== null) {
    next.phone_number = source.phone_number;
    next.country_code = source.country_code;
  }
  if (target.external_id === null && source.external_id !== null) next.external_id = source.external_id;
  if (target.note === null && source.note !== null) next.note = source.note;
  const tags = [...new Set([...target.tags, ...source.tags])].slice(0, BOUNDS.tags.max);
  // Against the tags it shows: one stored before repeats were dropped may hold some (prepare.ts).
  if (tags.length !== distinctInOrder(target.tags).length) next.tags = tags;
  const missing = Object.entries(source.custom_fields).filter(([id]) => !(id in target.custom_fields));
  if (missing.length) next.custom_fields = { ...target.custom_fields, ...Object.fromEntries(missing) };
  return next;
}

/** Step 2, on the surviving customer's stream, from the absorbed customer's last state. */
export function decideAbsorb(
  target: CustomerState,
  intoId: string,
  source: CustomerState,
  sourceId: string,
  at: string,
): NewEvent[] {
  assertVisible(target, source.restaurantId, 'internal', intoId);
  if (target.absorbed.includes(sourceId)) return [];
  const changes = mergedProfile(target.profile, source.profile as CustomerProfile);
  const previous = Object.fromEntries(
    Object.keys(changes).map((k) => [k, target.profile[k as keyof CustomerProfile]]),
  ) as Partial<CustomerProfile>;
  const optOuts: OptOutChannel[] = [...new Set([...target.optOuts, ...source.optOuts])];
  return [
    event({
      type: 'CustomerMerged',
      data: {
        customer_id: intoId,
        restaurant_id: target.restaurantId,
        at,
        merged_customer_id: sourceId,
        changes,
        previous,
        marketing_opt_outs: optOuts,
        blacklisted: target.blacklisted || source.blacklisted,
      },
    }),
  ];
}
