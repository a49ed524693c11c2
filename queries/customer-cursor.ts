// GET /customers cursors: opaque to partners, tamper-evident for us. A cursor is the position after
// the last customer returned, the restaurant, and the filters of the query it continues, signed with
// the restaurant's key (HMAC-SHA256). A forged, altered or foreign cursor answers 400.
import { type CursorKeyring, invalidCursor, openCursor, signCursor } from './signed-cursor';

/** The filters a pass was started with, normalised (matching keys, UTC instants). */
export interface FeedFilters {
  email?: string;
  phone?: string;
  external_id?: string;
  tag?: string;
  updated_since?: string;
}

export interface CursorPayload {
  restaurant_id: string;
  /** sync_seq of the last customer returned: the next page starts after it. */
  after: number;
  filters: FeedFilters;
}

const VERSION = 1;
/** GET /customers cursors were signed before labels existed: theirs is empty. */
const LABEL = '';

export const encodeCursor = (key: CursorKeyring, payload: CursorPayload): string =>
  signCursor(key, LABEL, { v: VERSION, r: payload.restaurant_id, a: payload.after, f: payload.filters });

export function decodeCursor(key: CursorKeyring, cursor: string, restaurantId: string): CursorPayload {
  const parsed = openCursor(key, LABEL, cursor);
  if (
    parsed?.v !== VERSION ||
    parsed.r !== restaurantId ||
    typeof parsed.a !== 'number' ||
    !Number.isSafeInteger(parsed.a) ||
    parsed.a < 0 ||
    typeof parsed.f !== 'object' ||
    parsed.f === null
  )
    throw invalidCursor();
  return { restaurant_id: restaurantId, after: parsed.a, filters: parsed.f as FeedFilters };
}
