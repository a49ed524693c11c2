// Reads of missed calls and their messages (read models of projections/missed-calls.ts). Every read
// filters on the caller's restaurant: another restaurant's call answers 404.

import { MESSAGES, type MessageDoc, MISSED_CALLS, type MissedCallDoc } from '../projections/missed-calls';
import { notFound, validationError } from '../src/core/errors';
import type { DocumentStore, Filter } from '../src/ports/document-store';

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

const SORT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[A-Za-z0-9_-]{1,64}$/;

const badCursor = () =>
  validationError(
    [
      {
        path: 'cursor',
        code: 'invalid_cursor',
        message: 'cursor is not a next_cursor this API gave for this restaurant',
      },
    ],
    'The query string is invalid',
  );

export const encodeCallCursor = (restaurantId: string, sortKey: string) =>
  Buffer.from(JSON.stringify({ v: 1, r: restaurantId, k: sortKey })).toString('base64url');

export function decodeCallCursor(cursor: string, restaurantId: string): string {
  let parsed: { v?: unknown; r?: unknown; k?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (
    parsed?.v !== 1 ||
    parsed.r !== restaurantId ||
    typeof parsed.k !== 'string' ||
    !SORT_KEY.test(parsed.k)
  )
    throw badCursor();
  return parsed.k;
}

/** Newest first (occurred_at, then id, descending); `cursor` continues after the last call of a page. */
export async function listMissedCalls(docs: DocumentStore, restaurantId: string, f: ListFilters) {
  const filter: Filter = { restaurant_id: restaurantId, created_at: { $ne: null } };
  const range: Record<string, string> = {};
  // sort_key starts with occurred_at in UTC: string bounds on it are instant bounds.
  if (f.occurred_at_from) range.$gte = new Date(Date.parse(f.occurred_at_from)).toISOString();
  if (f.occurred_at_to) range.$lte = `${new Date(Date.parse(f.occurred_at_to)).toISOString()}|~`;
  if (f.cursor) {
    const after = decodeCallCursor(f.cursor, restaurantId);
    range.$lt = after;
    if (range.$lte && range.$lte < after) delete range.$lt;
    else delete range.$lte;
  }
  if (Object.keys(range).length) filter.sort_key = range;
  if (f.outcome) filter.outcome = f.outcome;
  const found = await docs
    .collection<MissedCallDoc>(MISSED_CALLS)
    .find(filter, { sort: { sort_key: -1 }, limit: f.limit + 1 });
  const page = found.slice(0, f.limit);
  const hasMore = found.length > f.limit;
  const last = page.at(-1);
  return {
    data: page.map(presentCall),
    pagination: {
      next_cursor: hasMore && last ? encodeCallCursor(restaurantId, last.sort_key) : null,
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
