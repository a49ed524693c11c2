// The OAuth token and revocation endpoints answer errors as RFC 6749 §5.2 bodies ({error,
// error_description}), not in the partner envelope (spec §7, "OAuth token endpoint errors"), their
// failures too (server_error, temporarily_unavailable: the codes RFC 6749 §4.1.2.1 defines for them).
import { ApiError, type Issue } from '../core/errors';
import { toErrorResponse } from './envelope';
import type { RouteResult } from './route';

export type OAuthErrorName =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'rate_limited'
  | 'server_error'
  | 'temporarily_unavailable';

export class OAuthError extends ApiError {
  override name = 'OAuthError';
  constructor(
    status: number,
    readonly error: OAuthErrorName,
    description: string,
    headers?: Record<string, string>,
  ) {
    super(
      status,
      status === 401 ? 'INVALID_AUTHENTICATION' : 'VALIDATION_ERROR',
      description,
      undefined,
      headers,
    );
  }
}

export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** The characters RFC 6749 allows in `error_description` (§4.1.2.1, §5.2): printable ASCII but `"` and `\`. */
export const ERROR_DESCRIPTION_CHARACTERS = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;
const ASCII_FOR: Record<string, string> = {
  '"': "'",
  '\\': '/',
  '\u2018': "'",
  '\u2019': "'",
  '\u201c': "'",
  '\u201d': "'",
  '\u2013': '-',
  '\u2014': '-',
  '\u2026': '...',
};

/**
 * A sentence as RFC 6749 lets `error_description` carry it (the token endpoint's bodies, the authorization
 * endpoint's redirects): a client or conformance suite that checks the set (OpenID certification does)
 * may refuse the whole answer otherwise. Quotes become `'`, dashes `-`, and anything else outside the set
 * (a value echoed from the request, such as an unknown scope name) `?`.
 */
export const errorDescription = (text: string): string =>
  text.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/gu, (c) => ASCII_FOR[c] ?? '?');

export const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);
export const invalidClient = (description: string) =>
  new OAuthError(401, 'invalid_client', description, { 'www-authenticate': 'Basic realm="couvert"' });

/** Anything the token or revocation endpoint throws, as its RFC 6749 answer. */
export function oauthErrorResult(err: unknown, requestId: string): RouteResult {
  const out = (
    status: number,
    error: string,
    description: string,
    headers: Record<string, string> = {},
  ): RouteResult => ({
    status,
    headers: { ...NO_STORE, ...headers },
    body: { error, error_description: errorDescription(description) },
  });
  if (err instanceof OAuthError) return out(err.status, err.error, err.message);
  if (err instanceof ApiError) {
    if (err.status === 429) return out(429, 'rate_limited', err.message);
    if (err.status === 413) return out(413, 'invalid_request', err.message);
    // A body that did not arrive in time (src/http/body-deadline.ts): 408 says a retry is safe.
    if (err.status === 408) return out(408, 'invalid_request', err.message);
    // A method the endpoint does not answer (GET /api/oauth/token): the router's 405, its Allow kept.
    if (err.status === 405) return out(405, 'invalid_request', err.message);
    if (err.status === 400 || err.status === 415) {
      const issues = (err.details?.issues as Issue[] | undefined) ?? [];
      const what = issues.length
        ? issues.map((i) =>
            i.code !== 'invalid_type'
              ? i.message
              : i.path
                ? `${i.path}: repeated or not a single value`
                : 'the body must be form fields or a JSON object',
          )
        : [err.message];
      return out(400, 'invalid_request', what.join('; '));
    }
  }
  // Anything else (a full disk, a conflict that kept losing its retries, a bug) in RFC 6749's shape too,
  // never the partner envelope an OAuth client cannot read: `temporarily_unavailable` when retrying later
  // may work (503; a full disk's Retry-After is kept by the server), else `server_error` (500). The
  // description is the envelope's own message (written for clients: never an exception's text).
  const envelope = toErrorResponse(err, requestId);
  const { status } = envelope;
  const message = envelope.body.error.message;
  if (status === 503) return out(503, 'temporarily_unavailable', `${message} (request id ${requestId})`);
  // A write that kept losing its race: a retry may succeed at once (the 503's documented retry-after;
  // it was missing here, so a client waiting for it had nothing to wait).
  if (status === 409)
    return out(503, 'temporarily_unavailable', `${message} (request id ${requestId})`, {
      'retry-after': '1',
    });
  if (status >= 500) return out(500, 'server_error', `${message} (request id ${requestId})`);
  return out(status, status === 401 ? 'invalid_client' : 'invalid_request', message);
}
