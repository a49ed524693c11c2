// GET /customers cursors: opaque to partners, tamper-evident for us. A cursor is the position after
// the last customer returned, the restaurant, and the filters of the query it continues, signed with
// the restaurant's key (HMAC-SHA256). A forged, altered or foreign cursor answers 400.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { validationError } from '../src/core/errors';

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

const sign = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();

export function encodeCursor(key: Buffer, payload: CursorPayload): string {
  const body = Buffer.from(
    JSON.stringify({ v: VERSION, r: payload.restaurant_id, a: payload.after, f: payload.filters }),
  ).toString('base64url');
  return `${body}.${sign(key, body).toString('base64url')}`;
}

const invalid = () =>
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

export function decodeCursor(key: Buffer, cursor: string, restaurantId: string): CursorPayload {
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined) throw invalid();
  const given = Buffer.from(mac, 'base64url');
  const expected = sign(key, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
  let parsed: { v?: unknown; r?: unknown; a?: unknown; f?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (
    parsed.v !== VERSION ||
    parsed.r !== restaurantId ||
    typeof parsed.a !== 'number' ||
    !Number.isSafeInteger(parsed.a) ||
    parsed.a < 0 ||
    typeof parsed.f !== 'object' ||
    parsed.f === null
  )
    throw invalid();
  return { restaurant_id: restaurantId, after: parsed.a, filters: parsed.f as FeedFilters };
}
