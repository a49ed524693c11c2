// Errors the write and read sides throw; the HTTP layer maps each to the spec's envelope (§2.9, §7).

export type ErrorCode =
  | 'AUTHENTICATION_REQUIRED'
  | 'INVALID_AUTHENTICATION'
  | 'INSUFFICIENT_SCOPE'
  | 'RESTAURANT_SUSPENDED'
  | 'VALIDATION_ERROR'
  | 'RESOURCE_NOT_FOUND'
  | 'RESOURCE_CONFLICT'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR';

export interface Issue {
  /** Dotted field path, '' for the whole value. */
  path: string;
  code: string;
  message: string;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/**
 * The challenge every 401 carries (RFC 9110 §11.6.1: a 401 MUST send WWW-Authenticate; RFC 6750 §3 for
 * its Bearer form): no `error` when no credentials were sent, `invalid_request` for an Authorization
 * header that is not Bearer, `invalid_token` for a token that opens nothing.
 */
export const bearerChallenge = (error?: 'invalid_request' | 'invalid_token') =>
  `Bearer realm="Couvert Partner API"${error ? `, error="${error}"` : ''}`;

/** A 401 in the envelope, with its challenge. */
export const unauthorized = (
  code: 'AUTHENTICATION_REQUIRED' | 'INVALID_AUTHENTICATION',
  message: string,
  error?: 'invalid_request' | 'invalid_token',
) => new ApiError(401, code, message, undefined, { 'www-authenticate': bearerChallenge(error) });

export const notFound = (what: string) => new ApiError(404, 'RESOURCE_NOT_FOUND', `${what} not found`);

export const validationError = (issues: Issue[], message = 'The request is invalid') =>
  new ApiError(400, 'VALIDATION_ERROR', message, { issues });

/** A business rule refused the command (HTTP 422). `reason` is a stable code partners can act on. */
export class BusinessRuleError extends ApiError {
  override name = 'BusinessRuleError';
  constructor(
    readonly reason: string,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(422, 'VALIDATION_ERROR', message, { reason, ...details });
  }
}

/** 422 with one issue per faulty field (custom fields and similar semantic checks). */
export const unprocessable = (issues: Issue[], message = 'The request breaks a business rule') =>
  new ApiError(422, 'VALIDATION_ERROR', message, { issues });

export const conflict = (message: string, details?: Record<string, unknown>) =>
  new ApiError(409, 'RESOURCE_CONFLICT', message, details);

/** Seconds a client is told to wait (Retry-After) when the service's storage is full. */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 60;

/**
 * The storage under the log or the key store is full: SQLite's SQLITE_FULL (its "database or disk is
 * full", also `max_page_count` reached), or the file system's ENOSPC / EDQUOT (a file written beside
 * them). Looked for on the error and its causes.
 */
export function isStorageFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * 503 in the envelope (INTERNAL_ERROR, the closest code of the spec, with details.reason STORAGE_FULL
 * and Retry-After) for a request that failed because the storage is full, else null. The log writes
 * each append in one transaction, so nothing of the failed append is kept; a request made of several
 * appends may have landed its first ones (a reservation's held seating, released by the repair job).
 */
export function storageFullError(err: unknown): ApiError | null {
  if (!isStorageFull(err)) return null;
  return new ApiError(
    503,
    'INTERNAL_ERROR',
    "The service's storage is full: this request could not be completed. Retry later; before retrying a write, check whether it succeeded.",
    { reason: 'STORAGE_FULL' },
    { 'retry-after': String(STORAGE_FULL_RETRY_AFTER_SECONDS) },
  );
}
