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
