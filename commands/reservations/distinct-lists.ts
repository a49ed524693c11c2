// A reservation's `tags` and `attached_files` hold one of each, in the order first given (the create
// and update handlers drop repeats). Reservations stored before that rule may still hold repeats in
// their snapshot and events: every partner read (the presenter, the history) and the PATCH's no-op
// test see the list without them, so a partner sees one rule whatever the reservation's age.
import { distinctInOrder } from '../../src/core/text';

const DISTINCT_LISTS: ReadonlySet<string> = new Set(['tags', 'attached_files']);

/** Whether a reservation keeps one of each in field `field`'s list. */
export const isDistinctList = (field: string) => DISTINCT_LISTS.has(field);

/** `value` as partners see field `field`: a tags or attached_files list without repeats; anything else as is. */
export function asPartnerSees(field: string, value: unknown): unknown {
  if (!DISTINCT_LISTS.has(field) || !Array.isArray(value)) return value;
  return distinctInOrder(value as string[]);
}
