// Reads of missed calls and their messages (read models of projections/missed-calls.ts). Every read
// filters on the caller's restaurant: another restaurant's call answers 404.

import { MESSAGES, type MessageDoc, MISSED_CALLS, type MissedCallDoc } from '../projections/missed-calls';
import { instantBound } from '../src/core/datetime';
import { notFound } from '../src/core/errors';
import type { DocumentStore, Filter } from '../src/ports/document-store';
import { type CursorKeyring, filtersOfPass, invalidCursor, openCursor, signCursor } from './signed-cursor';

export interface PresentedCall {
  id: string;
  outcome: string;
  /** E.164; null once the caller's customer was erased. */
  caller_phone_number: string | null;
  customer_id: string | null;
  reservation_id: string | null;
  template_type: string | null;
  external_call_id: string | null;
  occurred_at: string;
  created_at: string;
  updated_at: string;
}

export function presentCall(doc: MissedCallDoc): PresentedCall {
  return {
    id: doc._id,
    outcome: doc.outcome,
    caller_phone_number: doc.caller_phone_number,
    customer_id: doc.customer_id,
    reservation_id: doc.reservation_id,
    template_type: doc.template_type,
    external_call_id: doc.external_call_id,
    occurred_at: doc.occurred_at as string,
    created_at: doc.created_at as string,
    updated_at: doc.updated_at as string,
  };
}

export async function getMissedCall(docs: DocumentStore, restaurantId: string, id: string) {
  const doc = await docs
    .collection<MissedCallDoc>(MISSED_CALLS)
    .findOne({ _id: id, restaurant_id: restaurantId });
  if (!doc?.created_at) throw notFound(`missed call ${id}`);
  return doc;
}

export interface ListFilters {
  occurred_at_from?: string;
  occurred_at_to?: string;
  outcome?: string;
  limit: number;
  cursor?: string;
}

/** The filters a pass was started with, normalised (UTC instants), as its cursor carries them. */
interface CallFilters {
  from?: string;
  to?: string;
  outcome?: string;
}

// Cursors are signed (queries/signed-cursor.ts, the restaurant's cursor key) under a label of their own
// so that a GET /customers cursor never reads as one of these: an altered or forged cursor, or another
// restaurant's, answers 400, as the input rules promise for every cursor. A cursor carries the filters
// of its pass, so a next page asked without them still keeps to them.
const LABEL = 'missed-calls:';

export const encodeCallCursor = (
  key: CursorKeyring,
  restaurantId: string,
  sortKey: string,
  filters: CallFilters,
): string => signCursor(key, LABEL, { v: 2, r: restaurantId, k: sortKey, f: filters });

export function decodeCallCursor(
  key: CursorKeyring,
  cursor: string,
  restaurantId: string,
): { sortKey: string; filters: CallFilters } {
  const parsed = openCursor(key, LABEL, cursor);
  const f = parsed?.f as Record<string, unknown> | null | undefined;
  if (
    parsed?.v !== 2 ||
    parsed.r !== restaurantId ||
    typeof parsed.k !== 'string' ||
    typeof f !== 'object' ||
    f === null ||
    !(['from', 'to', 'outcome'] as const).every((n) => f[n] === undefined || typeof f[n] === 'string')
  )
    throw invalidCursor();
  return { sortKey: parsed.k, filters: f as CallFilters };
}

function filtersOf(f: ListFilters): CallFilters {
  const out: CallFilters = {};
  if (f.occurred_at_from) out.from = instantBound(f.occurred_at_from);
  if (f.occurred_at_to) out.to = instantBound(f.occurred_at_to);
  if (f.outcome) out.outcome = f.outcome;
  return out;
}

/**
 * Newest first (occurred_at, then id, descending); `cursor` continues after the last call of a page,
 * with the filters of the page it came from (repeating them is fine, changing them is a 400).
 */
export async function listMissedCalls(
  docs: DocumentStore,
  restaurantId: string,
  f: ListFilters,
  key: CursorKeyring,
) {
  let filters = filtersOf(f);
  let after: string | null = null;
  if (f.cursor) {
    const cursor = decodeCallCursor(key, f.cursor, restaurantId);
    filters = filtersOfPass(filters, cursor.filters);
    after = cursor.sortKey;
  }
  const filter: Filter = { restaurant_id: restaurantId, created_at: { $ne: null } };
  const range: Record<string, string> = {};
  // sort_key starts with occurred_at in UTC: string bounds on it are instant bounds.
  if (filters.from !== undefined) range.$gte = filters.from;
  if (filters.to !== undefined) range.$lte = `${filters.to}|~`;
  if (after !== null) {
    range.$lt = after;
    if (range.$lte && range.$lte < after) delete range.$lt;
    else delete range.$lte;
  }
  if (Object.keys(range).length) filter.sort_key = range;
  if (filters.outcome !== undefined) filter.outcome = filters.outcome;
  const found = await docs
    .collection<MissedCallDoc>(MISSED_CALLS)
    .find(filter, { sort: { sort_key: -1 }, limit: f.limit + 1 });
  const page = found.slice(0, f.limit);
  const hasMore = found.length > f.limit;
  const last = page.at(-1);
  return {
    data: page.map(presentCall),
    pagination: {
      next_cursor: hasMore && last ? encodeCallCursor(key, restaurantId, last.sort_key, filters) : null,
      has_more: hasMore,
    },
  };
}

export async function listMessages(docs: DocumentStore, restaurantId: string, limit: number) {
  return docs
    .collection<MessageDoc>(MESSAGES)
    .find({ restaurant_id: restaurantId }, { sort: { requested_at: -1 }, limit });
}

export async function listCallsForOperator(docs: DocumentStore, restaurantId: string, limit: number) {
  return docs
    .collection<MissedCallDoc>(MISSED_CALLS)
    .find({ restaurant_id: restaurantId, created_at: { $ne: null } }, { sort: { sort_key: -1 }, limit });
}
