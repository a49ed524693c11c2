// Schemas and examples of the webhook endpoint routes (DESIGN.md §3).

import { STORED_TEST_TYPE } from '../../../commands/webhook-deliveries/events';
import { HEADER_VALUE, MAX_HEADERS, URL_CHARACTERS } from '../../../commands/webhook-endpoints/decide';
import { V1_EVENT_TYPES } from '../../../commands/webhook-endpoints/events';
import { DELIVERY_EVENT_TYPES } from '../../../queries/webhooks';
import { MAX_PAGE } from '../../core/limits';
import { MAX_URL_LENGTH } from '../../webhooks/target';
import {
  arr,
  bool,
  clearableText,
  described,
  enums,
  int,
  intQuery,
  type JsonSchema,
  nullable,
  obj,
  optional,
  record,
  type Schema,
  str,
} from '../schema';

const EVENT_LIST = `"*" (every type the credential may read) or any of ${V1_EVENT_TYPES.join(', ')}`;

export const endpointIdParams = obj({ id: str({ min: 1, max: 64 }) });
export const deliveryParams = obj({ id: str({ min: 1, max: 64 }), delivery_id: str({ min: 1, max: 64 }) });

/**
 * What the endpoint commands check beyond the HTTP schema (commands/webhook-endpoints/decide.ts
 * `checkSettings`, shared with the dashboard's forms), stated in the document so that a body it takes
 * is one the server takes: the event types, ["*"] alone, distinct items, at most MAX_HEADERS headers with
 * printable values, a URL without spaces or control characters.
 */
const documented = <T>(schema: Schema<T>, json: JsonSchema, replace = false): Schema<T> => {
  const { description } = schema.json;
  return {
    ...schema,
    json: replace ? { ...json, ...(description ? { description } : {}) } : { ...schema.json, ...json },
  };
};

const eventList = (values: readonly string[], max: number, unique: boolean): JsonSchema => ({
  type: 'array',
  items: { type: 'string', enum: [...values] },
  minItems: 1,
  maxItems: max,
  ...(unique ? { uniqueItems: true } : {}),
});

const settings = {
  description: optional(clearableText({ max: 500, description: 'Free text for your own records' })),
  enabled_events: optional(
    documented(
      arr(str({ min: 1, max: 64 }), {
        min: 1,
        max: 20,
        description: `Default ["*"]. ${EVENT_LIST}. Deliveries still being retried of a type no longer listed are canceled (resend them once it is listed again)`,
      }),
      { oneOf: [eventList(['*'], 1, false), eventList(V1_EVENT_TYPES, 20, true)] },
      true,
    ),
  ),
  headers: optional(
    documented(
      record(str({ max: 1000 }), {
        description: `Custom headers sent with every delivery (at most ${MAX_HEADERS}), values of printable ASCII. Names are 1 to 100 token characters (RFC 9110), each once whatever its case; names starting with X-Service-, hop-by-hop and framing headers (Connection, Host, Content-Length…) and credential headers (Authorization, Cookie…) are refused. Values are kept encrypted and never answered (shown as [redacted]); in a PATCH, a value of [redacted] keeps that header's current value (400 for a header the endpoint does not have, and in a create)`,
      }),
      {
        maxProperties: MAX_HEADERS,
        additionalProperties: { type: 'string', maxLength: 1000, pattern: HEADER_VALUE.source },
      },
    ),
  ),
  disabled: optional(
    bool({
      description:
        'A disabled endpoint receives nothing but the test deliveries sent to it: deliveries still being retried are canceled, and stay so once it is enabled again (resend them then)',
    }),
  ),
};

const url = (description?: string) =>
  documented(str({ min: 1, max: MAX_URL_LENGTH, ...(description ? { description } : {}) }), {
    pattern: URL_CHARACTERS.source,
  });

const URL_RULE =
  'https:// URL resolving only to public addresses (http:// and private addresses only when the service runs with WEBHOOK_ALLOW_PRIVATE_TARGETS=true); no spaces or control characters (percent-encode them), no user name, password or fragment';

export const createEndpointBody = obj({
  url: url(URL_RULE),
  ...settings,
});

export const updateEndpointBody = obj({
  url: optional(url(URL_RULE)),
  ...settings,
});

/**
 * An action that takes no settings (a test delivery, a resend): no body, or an empty JSON object. A
 * property sent there is refused (400 unknown_property), never silently ignored.
 */
export const noSettings = obj(
  {},
  { description: 'Nothing to set: send no body or {}; any property is refused (400 unknown_property)' },
);

export const rotateBody = obj({
  grace_period_seconds: optional(
    int({
      min: 0,
      max: 86_400,
      description: 'How long the old secret keeps signing beside the new one; default 86400 (24 h)',
    }),
  ),
});

export const listEndpointsQuery = obj({
  page: optional(intQuery({ min: 1, max: MAX_PAGE, default: 1, description: 'From 1' })),
  per_page: optional(intQuery({ min: 1, max: 100, default: 25, description: 'Default 25, max 100' })),
});

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;

export const listDeliveriesQuery = obj({
  status: optional(enums(DELIVERY_STATUSES)),
  event_type: optional(
    enums([...DELIVERY_EVENT_TYPES, STORED_TEST_TYPE], {
      description:
        'A v1 type, RESERVATION_UPDATED (legacy) or webhook_endpoint.test (test deliveries; `test`, what the history showed for them before, finds them too)',
    }),
  ),
  event_id: optional(str({ min: 1, max: 64 })),
  limit: optional(intQuery({ min: 1, max: 100, default: 25, description: 'Page size, default 25' })),
  cursor: optional(
    str({
      min: 1,
      max: 64,
      description:
        'pagination.next_cursor of the previous page (the name GET /customers and GET /missed-calls take it by)',
    }),
  ),
  starting_after: optional(
    str({
      min: 1,
      max: 64,
      description: 'The same as `cursor`, by its former name (still taken); give one of the two, not both',
    }),
  ),
});

const DATE_TIME = { type: 'string', format: 'date-time' };
const INT = { type: 'integer' };

const endpointProperties = {
  id: { type: 'string' },
  url: { type: 'string' },
  description: { type: 'string', nullable: true },
  enabled_events: { type: 'array', items: { type: 'string' } },
  headers: {
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'The custom headers by name, each value shown as [redacted]: values are secrets, stored encrypted and sent only with deliveries',
  },
  disabled: { type: 'boolean' },
  api_version: {
    type: 'string',
    enum: ['v1', 'legacy'],
    description:
      'legacy endpoints receive RESERVATION_UPDATED payloads until an operator migrates them (final)',
  },
  secret_rotation: {
    type: 'object',
    nullable: true,
    required: ['previous_secret_expires_at'],
    properties: { previous_secret_expires_at: DATE_TIME },
    description:
      "Set while a rotation's previous secret still signs: until previous_secret_expires_at deliveries carry a v1= signature for each secret (null once it has passed)",
  },
  created_at: DATE_TIME,
  updated_at: DATE_TIME,
};
const endpointRequired = Object.keys(endpointProperties);

const endpointSchema = { type: 'object', required: endpointRequired, properties: endpointProperties };
const endpointWithSecret = {
  type: 'object',
  required: [...endpointRequired, 'secret'],
  properties: {
    ...endpointProperties,
    secret: { type: 'string', description: 'The whsec_ signing secret: shown only in this answer' },
  },
};

export const endpointResponse = described({
  type: 'object',
  required: ['data'],
  properties: { data: endpointSchema },
});
export const endpointSecretResponse = described({
  type: 'object',
  required: ['data'],
  properties: { data: endpointWithSecret },
});
export const endpointPage = described({
  type: 'object',
  required: ['data', 'pagination'],
  properties: {
    data: { type: 'array', items: endpointSchema },
    pagination: {
      type: 'object',
      required: ['page', 'per_page', 'total', 'total_pages', 'has_more'],
      properties: { page: INT, per_page: INT, total: INT, total_pages: INT, has_more: { type: 'boolean' } },
    },
  },
});
export const deletedResponse = described({
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'object',
      required: ['id', 'deleted'],
      properties: { id: { type: 'string' }, deleted: { type: 'boolean' } },
    },
  },
});

const ATTEMPT_ERRORS = ['timeout', 'network', 'blocked_target', 'endpoint_gone', 'credential_revoked'];

const attemptSchema = {
  type: 'object',
  required: ['attempt', 'log_id', 'at', 'duration_ms', 'status_code', 'error'],
  properties: {
    attempt: INT,
    log_id: { type: 'string', description: 'X-Service-Delivery-Log-Id of this attempt' },
    at: DATE_TIME,
    duration_ms: INT,
    status_code: { type: 'integer', nullable: true, description: 'null when no answer came' },
    error: { type: 'string', nullable: true, enum: [...ATTEMPT_ERRORS, null] },
  },
};

const deliverySchema = {
  type: 'object',
  required: [
    'id',
    'endpoint_id',
    'event_id',
    'event_type',
    'test',
    'status',
    'created_at',
    'next_attempt_at',
    'attempts',
  ],
  properties: {
    id: { type: 'string', description: 'X-Service-Delivery: the same on every attempt' },
    endpoint_id: { type: 'string' },
    event_id: { type: 'string' },
    event_type: {
      type: 'string',
      description: `The type of event the delivery's body carried: a v1 type, RESERVATION_UPDATED (the legacy format) or webhook_endpoint.test (a test delivery: \`test\` is true). Today one of ${DELIVERY_EVENT_TYPES.join(', ')}; a new event type may be added (read an unknown one as such, never fail on it).`,
    },
    test: { type: 'boolean' },
    status: { type: 'string', enum: [...DELIVERY_STATUSES] },
    created_at: DATE_TIME,
    next_attempt_at: { ...DATE_TIME, nullable: true },
    attempts: { type: 'array', items: attemptSchema },
  },
};

export const deliveryResponse = described({
  type: 'object',
  required: ['data'],
  properties: { data: deliverySchema },
});
export const deliveryPage = described({
  type: 'object',
  required: ['data', 'pagination'],
  properties: {
    data: { type: 'array', items: deliverySchema },
    pagination: {
      type: 'object',
      required: ['next_cursor', 'has_more'],
      properties: { next_cursor: { type: 'string', nullable: true }, has_more: { type: 'boolean' } },
    },
  },
});

export const testResponse = described({
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'object',
      required: [
        'delivery_id',
        'event_id',
        'succeeded',
        'status_code',
        'error',
        'duration_ms',
        'response_body',
        'response_truncated',
      ],
      properties: {
        delivery_id: { type: 'string' },
        event_id: { type: 'string' },
        succeeded: { type: 'boolean', description: 'The target answered 2xx' },
        status_code: { type: 'integer', nullable: true },
        error: { type: 'string', nullable: true, enum: [...ATTEMPT_ERRORS, null] },
        duration_ms: INT,
        response_body: {
          type: 'string',
          nullable: true,
          description:
            'The first 512 characters of the answer, control characters made visible (U+2400 pictures), any echo of the signing secret or signature redacted',
        },
        response_truncated: {
          type: 'boolean',
          description:
            'The answer was longer than `response_body` (more than 512 characters, or cut: read up to 64 KiB, past 12 seconds, or ended by your side while its body came)',
        },
      },
    },
  },
});

const endpointExample = {
  id: 'we_k2x9q0v7c1m3',
  url: 'https://partner.example.com/hooks/couvert',
  description: 'Production',
  enabled_events: ['reservation.created', 'reservation.updated', 'reservation.canceled'],
  headers: { 'X-Partner-Account': '[redacted]' },
  disabled: false,
  api_version: 'v1',
  secret_rotation: null,
  created_at: '2026-03-02T10:00:00.000Z',
  updated_at: '2026-03-02T10:00:00.000Z',
};

const deliveryExample = {
  id: 'whd_p3m1x8s0a2ke',
  endpoint_id: endpointExample.id,
  event_id: 'evt_0c4f3b2a1d9e4f7a8b6c5d4e3f2a1b0c',
  event_type: 'reservation.updated',
  test: false,
  status: 'succeeded',
  created_at: '2026-03-02T10:05:00.000Z',
  next_attempt_at: null,
  attempts: [
    {
      attempt: 1,
      log_id: 'whl_a1',
      at: '2026-03-02T10:05:00.010Z',
      duration_ms: 120,
      status_code: 503,
      error: null,
    },
    {
      attempt: 2,
      log_id: 'whl_a2',
      at: '2026-03-02T10:05:05.010Z',
      duration_ms: 80,
      status_code: 200,
      error: null,
    },
  ],
};

export const webhookExamples = {
  createBody: {
    url: 'https://partner.example.com/hooks/couvert',
    description: 'Production',
    enabled_events: ['reservation.created', 'reservation.updated', 'reservation.canceled'],
    headers: { 'X-Partner-Account': 'acct_42' },
  },
  updateBody: { enabled_events: ['*'], description: 'Production (all events)' },
  rotateBody: { grace_period_seconds: 3600 },
  endpoint: { data: endpointExample },
  endpointWithSecret: { data: { ...endpointExample, secret: 'whsec_3q2Yk8m0c4Zr7tVb1nX5wP9sLd6fHj2a' } },
  page: {
    data: [endpointExample],
    pagination: { page: 1, per_page: 25, total: 1, total_pages: 1, has_more: false },
  },
  deleted: { data: { id: endpointExample.id, deleted: true } },
  delivery: { data: deliveryExample },
  deliveries: { data: [deliveryExample], pagination: { next_cursor: null, has_more: false } },
  test: {
    data: {
      delivery_id: 'whd_t0s1e2x3a4m5',
      event_id: 'evt_test_t0s1e2x3a4m5',
      succeeded: true,
      status_code: 200,
      error: null,
      duration_ms: 95,
      response_body: 'ok',
      response_truncated: false,
    },
  },
};
