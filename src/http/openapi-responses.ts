// What openapi.json says every operation shares: the response headers the server sets before or
// around routing (src/http/server.ts, src/http/rate-limit.ts), and one response per error status with
// examples in the envelope. Declared once as components and referenced, so the document stays small.
import { SUSPENDED_MESSAGE, scopeMessage } from './auth';
import { REQUEST_ID_PATTERN } from './request-id';

const REQUEST_ID = 'req_5f0c3a9e2b7d4c1e8a6f0b3d9c2e7a41';

/** `components.headers`; keys are the names operations refer to. */
export const HEADERS = {
  RequestId: {
    description:
      "The request's id, also in error.request_id and the server's logs: the caller's X-Request-Id when it is 8 to 128 characters of [A-Za-z0-9._:-], otherwise a new req_<32 hex digits>",
    required: true,
    schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source, example: REQUEST_ID },
  },
  RateLimitLimit: {
    description: 'Requests allowed per minute per client IP on /api/partner/v1',
    required: true,
    schema: { type: 'integer', minimum: 1, example: 600 },
  },
  RateLimitRemaining: {
    description: 'Requests left in the current minute for this client IP',
    required: true,
    schema: { type: 'integer', minimum: 0, example: 599 },
  },
  RateLimitReset: {
    description: 'When the budget is back, in epoch milliseconds',
    required: true,
    schema: { type: 'integer', minimum: 0, example: 1780394460000 },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying',
    required: true,
    schema: { type: 'integer', minimum: 1, example: 42 },
  },
  CacheControl: {
    description:
      "no-store on every answer (they hold a restaurant's data, personal data included): no cache between the partner and the service keeps a copy",
    required: true,
    schema: { type: 'string', example: 'no-store' },
  },
  ContentTypeOptions: {
    description: 'nosniff: a client reads the body as its content-type says, never as something it guesses',
    required: true,
    schema: { type: 'string', example: 'nosniff' },
  },
  StrictTransportSecurity: {
    description:
      'max-age=31536000 on every answer when the service is published over https (BASE_URL): a browser that saw it goes to the service over https only for a year, so the sign-in page is never reached over plain http first (SSL stripping). Absent over http',
    required: false,
    schema: { type: 'string', example: 'max-age=31536000' },
  },
  Allow: {
    description: 'The methods this path answers, comma-separated',
    required: true,
    schema: { type: 'string', example: 'GET, PATCH' },
  },
  WwwAuthenticate: {
    description:
      'The Bearer challenge (RFC 6750 §3): error="invalid_token" for a token that opens nothing, error="invalid_request" for an Authorization header that is not Bearer or is given more than once, no error when none was sent',
    required: true,
    schema: {
      type: 'string',
      pattern: '^Bearer realm="Couvert Partner API"(, error="(invalid_token|invalid_request)")?$',
      example: 'Bearer realm="Couvert Partner API", error="invalid_token"',
    },
  },
} as const;

export type HeaderName = keyof typeof HEADERS;

const ref = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

/**
 * The headers of every response: the request id, no caching, no sniffing, HSTS over https, and the rate-limit budget on
 * /api/partner/v1.
 */
export function commonHeaders(metered: boolean): Record<string, { $ref: string }> {
  return {
    'x-request-id': ref('RequestId'),
    'cache-control': ref('CacheControl'),
    'x-content-type-options': ref('ContentTypeOptions'),
    'strict-transport-security': ref('StrictTransportSecurity'),
    ...(metered
      ? { 'x-ratelimit-limit': ref('RateLimitLimit'), 'x-ratelimit-remaining': ref('RateLimitRemaining') }
      : {}),
  };
}

const envelope = (summary: string, code: string, message: string, details?: Record<string, unknown>) => ({
  summary,
  value: { error: { code, message, request_id: REQUEST_ID, ...(details ? { details } : {}) } },
});

/** `components.examples`: the error bodies the server sends, one per way a status can happen. */
export const ERROR_EXAMPLES = {
  ValidationError: envelope(
    'A field is missing or has the wrong type',
    'VALIDATION_ERROR',
    'The query string is invalid',
    {
      issues: [
        {
          path: 'per_page',
          code: 'out_of_range',
          message: 'per_page: must be an integer from 1 to 100',
        },
      ],
    },
  ),
  InvalidJson: envelope(
    'The body is not valid JSON',
    'VALIDATION_ERROR',
    'The request body is not valid JSON',
    {
      issues: [{ path: '', code: 'invalid_json', message: 'The body could not be parsed as JSON' }],
    },
  ),
  AuthenticationRequired: envelope(
    'No Authorization header',
    'AUTHENTICATION_REQUIRED',
    'Send an API key as "Authorization: Bearer <token>"',
  ),
  InvalidAuthentication: envelope(
    'Unknown, revoked or disconnected token',
    'INVALID_AUTHENTICATION',
    'The token is invalid, revoked or disconnected',
  ),
  InsufficientScope: envelope(
    'The token lacks a scope the operation needs',
    'INSUFFICIENT_SCOPE',
    scopeMessage(['RESERVATIONS_WRITE']),
    { required_scopes: ['RESERVATIONS_WRITE'], missing_scopes: ['RESERVATIONS_WRITE'] },
  ),
  RestaurantSuspended: envelope(
    "The token's restaurant is suspended",
    'RESTAURANT_SUSPENDED',
    SUSPENDED_MESSAGE,
  ),
  ResourceNotFound: envelope(
    'Unknown, or belongs to another restaurant',
    'RESOURCE_NOT_FOUND',
    'reservation res_8k2m4q6s9u1w3y5a not found',
  ),
  MethodNotAllowed: envelope(
    'The path does not answer this method',
    'VALIDATION_ERROR',
    'DELETE is not allowed here; use GET, PATCH',
  ),
  ExternalIdTaken: envelope(
    'Another reservation of the restaurant has this external_id',
    'RESOURCE_CONFLICT',
    'A reservation with this external_id already exists in this restaurant; find it with GET /reservations?external_id=',
    { external_id: 'partner-res-1042' },
  ),
  ConcurrentChange: envelope(
    'Another change to the same record kept landing first (the write was tried again and gave up); nothing was written: send it again',
    'RESOURCE_CONFLICT',
    'A concurrent change conflicted with this request; retry',
  ),
  LockedFields: envelope(
    'The point of sale locked a field the request changes',
    'RESOURCE_CONFLICT',
    'The point of sale has locked these fields of the reservation',
    { locked_fields: ['table_ids'] },
  ),
  PayloadTooLarge: envelope(
    'The body is over the size limit',
    'VALIDATION_ERROR',
    'The request body is larger than 1000000 bytes (counted decompressed, whatever its Content-Encoding): send a smaller body, or split the change into several requests',
  ),
  RequestTimeout: envelope(
    'The body did not arrive in time',
    'VALIDATION_ERROR',
    'The request body did not arrive within 30 seconds: nothing was done; send the request again, its whole body at once',
  ),
  UnsupportedMediaType: envelope(
    'The body is not sent as JSON',
    'VALIDATION_ERROR',
    'Send the body as JSON with "Content-Type: application/json"',
  ),
  BusinessRule: envelope(
    'A business rule refused the request (details.reason)',
    'VALIDATION_ERROR',
    'No shift offers a seating at this start_at (wrong day, time or interval): take start_at and shift_id from a slot of GET /availability',
    { reason: 'OUTSIDE_SHIFT' },
  ),
  UnknownReference: envelope(
    'An id in the query or body names nothing of this restaurant (one unknown_reference issue each)',
    'VALIDATION_ERROR',
    'shift_id: this restaurant has no shift with id "shift_brunch"',
    {
      reason: 'UNKNOWN_SHIFT',
      issues: [
        {
          path: 'shift_id',
          code: 'unknown_reference',
          message: 'shift_id: this restaurant has no shift with id "shift_brunch"',
        },
      ],
    },
  ),
  InvalidFields: envelope(
    'Custom fields the restaurant does not define, or values that do not fit (one issue each)',
    'VALIDATION_ERROR',
    'A custom field is unknown or its value does not fit',
    {
      issues: [
        {
          path: 'custom_fields.cf_allergy',
          code: 'unknown_field',
          message: 'the restaurant has no custom field cf_allergy',
        },
      ],
    },
  ),
  RateLimited: envelope(
    "The client IP's budget for this minute is spent",
    'RATE_LIMITED',
    'Too many requests: back off until x-ratelimit-reset',
    { reset_at: '2026-06-02T10:01:00.000Z' },
  ),
  ProviderFailed: envelope(
    'The message provider refused the message or could not be reached (details.reason); nothing was sent',
    'INTERNAL_ERROR',
    'WhatsApp refused the message or could not be reached; nothing was sent. Retry with the same external_call_id.',
    {
      reason: 'PROVIDER_RATE_LIMITED',
      missed_call_id: 'mc_q2v8k4m1z7x3c9b5n6a0',
      provider_code: '130429',
      retryable: true,
    },
  ),
  StorageFull: envelope(
    "The service's storage is full (details.reason STORAGE_FULL)",
    'INTERNAL_ERROR',
    "The service's storage is full: this request could not be completed. Retry later; before retrying a write, check whether it succeeded.",
    { reason: 'STORAGE_FULL' },
  ),
  InternalError: envelope(
    'Unexpected failure',
    'INTERNAL_ERROR',
    'An unexpected error occurred. Keep the request_id; before retrying a write, check whether it succeeded.',
  ),
};

type ExampleName = keyof typeof ERROR_EXAMPLES;

interface ErrorDoc {
  /** The `components.responses` name. */
  name: string;
  description: string;
  examples: ExampleName[];
  /** Beyond the common headers. */
  headers?: HeaderName[];
}

/** One shared response per error status. */
export const ERROR_RESPONSES: Record<number, ErrorDoc> = {
  400: {
    name: 'BadRequest',
    description: 'Malformed request, invalid JSON or wrong types (VALIDATION_ERROR with details.issues)',
    examples: ['ValidationError', 'InvalidJson'],
  },
  401: {
    name: 'Unauthorized',
    description:
      'Missing (AUTHENTICATION_REQUIRED) or invalid, revoked or disconnected token (INVALID_AUTHENTICATION); an Authorization header that is not Bearer, or given more than once, is INVALID_AUTHENTICATION too (never read as either value)',
    examples: ['AuthenticationRequired', 'InvalidAuthentication'],
    headers: ['WwwAuthenticate'],
  },
  403: {
    name: 'Forbidden',
    description:
      'Scope insufficient (INSUFFICIENT_SCOPE, details.missing_scopes and required_scopes) or restaurant suspended (RESTAURANT_SUSPENDED)',
    examples: ['InsufficientScope', 'RestaurantSuspended'],
  },
  404: {
    name: 'NotFound',
    description: 'Not found, or not visible to this token (RESOURCE_NOT_FOUND)',
    examples: ['ResourceNotFound'],
  },
  405: {
    name: 'MethodNotAllowed',
    description:
      'The path exists but does not answer this method (VALIDATION_ERROR); `allow` lists the ones it does',
    examples: ['MethodNotAllowed'],
    headers: ['Allow'],
  },
  409: {
    name: 'Conflict',
    description:
      "Conflict (RESOURCE_CONFLICT): duplicate external_id, fields locked by the point of sale, (webhook endpoints) a create that could not finish (the restaurant's endpoints kept changing meanwhile, or it took so long that its place was given back), (reservations) a create that stalled so long that the table it held was given back (search by external_id first), or on any write a concurrent change to the same record that kept landing first: nothing was written, send it again. A slot taken meanwhile is not a conflict: 422 (NO_TABLE, MAX_COVERS_REACHED), as the spec's §4 says of creating a reservation, not 409 as its §7 table lists 'slot no longer available'",
    examples: ['ExternalIdTaken', 'LockedFields', 'ConcurrentChange'],
  },
  408: {
    name: 'RequestTimeout',
    description:
      'Body not received in time (VALIDATION_ERROR): it did not arrive whole within the time the message states (30 seconds unless the service is set otherwise, BODY_TIMEOUT_MS); nothing was done, so sending the request again is safe. The connection is closed',
    examples: ['RequestTimeout'],
  },
  413: {
    name: 'PayloadTooLarge',
    description:
      'Body too large (VALIDATION_ERROR): past the size limit the message states (1,000,000 bytes unless the service is set otherwise), counted once decompressed',
    examples: ['PayloadTooLarge'],
  },
  415: {
    name: 'UnsupportedMediaType',
    description:
      'Body not sent as JSON (VALIDATION_ERROR): another Content-Type than application/json, a charset other than UTF-8, or a Content-Encoding other than gzip, deflate or br; the message says which',
    examples: ['UnsupportedMediaType'],
  },
  422: {
    name: 'UnprocessableEntity',
    description:
      'Business rule violation (VALIDATION_ERROR): details.reason for a refused booking, details.issues for faulty fields, both for ids that name nothing of the restaurant',
    examples: ['BusinessRule', 'UnknownReference', 'InvalidFields'],
  },
  429: {
    name: 'TooManyRequests',
    description:
      'Rate limit exceeded (RATE_LIMITED), or too much of request bodies arrived and not yet read from this address at once (16 bodies of BODY_LIMIT_BYTES; the connection is closed, nothing was done): wait retry-after seconds, or until x-ratelimit-reset (epoch ms)',
    examples: ['RateLimited'],
    headers: ['RateLimitReset', 'RetryAfter'],
  },
  500: {
    name: 'InternalError',
    description: 'Unexpected error (INTERNAL_ERROR); keep error.request_id',
    examples: ['InternalError'],
  },
  502: {
    name: 'BadGateway',
    description:
      'A provider Couvert relies on refused or could not be reached (INTERNAL_ERROR, the closest code of the spec; details.reason says which); nothing was done, retrying is safe',
    examples: ['ProviderFailed'],
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      'The service cannot complete requests now: its storage is full (details.reason STORAGE_FULL); it is shutting down (details.reason SHUTTING_DOWN); or it holds as much of request bodies arriving from everyone as it keeps in memory (details.reason TOO_MANY_BODIES: nothing was done, the connection is closed). INTERNAL_ERROR, the closest code of the spec. Wait retry-after seconds; before retrying a write that was not refused for its body, check whether it succeeded',
    examples: ['StorageFull'],
    headers: ['RetryAfter'],
  },
};

const HEADER_NAME: Record<HeaderName, string> = {
  RequestId: 'x-request-id',
  RateLimitLimit: 'x-ratelimit-limit',
  RateLimitRemaining: 'x-ratelimit-remaining',
  RateLimitReset: 'x-ratelimit-reset',
  RetryAfter: 'retry-after',
  CacheControl: 'cache-control',
  ContentTypeOptions: 'x-content-type-options',
  StrictTransportSecurity: 'strict-transport-security',
  Allow: 'allow',
  WwwAuthenticate: 'www-authenticate',
};

/** The name of the shared response for `status`; outside /api/partner/v1 it has no rate-limit headers. */
export const errorResponseName = (status: number, metered: boolean): string | undefined => {
  const doc = ERROR_RESPONSES[status];
  return doc && (metered ? doc.name : `${doc.name}NoRateLimit`);
};

/** The `components.responses` entry for `status`. */
export function errorResponse(status: number, metered: boolean) {
  const doc = ERROR_RESPONSES[status];
  if (!doc) throw new Error(`no documented error response for status ${status}`);
  return {
    description: doc.description,
    headers: {
      ...commonHeaders(metered),
      ...Object.fromEntries((doc.headers ?? []).map((h) => [HEADER_NAME[h], ref(h)])),
    },
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        examples: Object.fromEntries(doc.examples.map((e) => [e, { $ref: `#/components/examples/${e}` }])),
      },
    },
  };
}
