// Cursors opaque to partners and tamper-evident for us: a base64url JSON body and its HMAC-SHA256
// (the restaurant's cursor key, commands/customers/cursor-key.ts), `<body>.<mac>`. A label signed with
// the body keeps one listing's cursors from reading as another's (GET /customers: none; GET
// /missed-calls: 'missed-calls:'). What the body must hold is the caller's to check.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { validationError } from '../src/core/errors';

/**
 * A restaurant's cursor key, or its keys (commands/customers/cursor-key.ts): new cursors are signed with
 * `sign`, a cursor given verifies under any of `verify`.
 */
export type CursorKeyring = Buffer | { sign: Buffer; verify: readonly Buffer[] };

const signingKey = (k: CursorKeyring) => (Buffer.isBuffer(k) ? k : k.sign);
const verifyingKeys = (k: CursorKeyring): readonly Buffer[] => (Buffer.isBuffer(k) ? [k] : k.verify);

const sign = (key: Buffer, label: string, body: string) =>
  createHmac('sha256', key)
    .update(label + body)
    .digest();

export function signCursor(key: CursorKeyring, label: string, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${sign(signingKey(key), label, body).toString('base64url')}`;
}

/** The payload of a cursor one of these keys signed under this label (a JSON object), else null. */
export function openCursor(
  key: CursorKeyring,
  label: string,
  cursor: string,
): Record<string, unknown> | null {
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined) return null;
  const given = Buffer.from(mac, 'base64url');
  const signedBy = (k: Buffer) => {
    const expected = sign(k, label, body);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!verifyingKeys(key).some(signedBy)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const cursorIssue = (code: string, message: string) =>
  validationError([{ path: 'cursor', code, message }], 'The query string is invalid');

/** 400: not a cursor this API gave for this restaurant (forged, altered, another's, another listing's). */
export const invalidCursor = () =>
  cursorIssue('invalid_cursor', 'cursor is not a next_cursor this API gave for this restaurant');

/**
 * The filters a next page runs with: those its cursor carries (the pass's, normalised). Filters given
 * again with the cursor must be the same (repeating them is fine), else 400 cursor_mismatch.
 */
export function filtersOfPass<F extends object>(given: F, carried: F): F {
  const a = given as Record<string, unknown>;
  const b = carried as Record<string, unknown>;
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  if (Object.keys(a).length && ![...names].every((n) => a[n] === b[n]))
    throw cursorIssue('cursor_mismatch', 'cursor belongs to a query with other filters');
  return carried;
}
