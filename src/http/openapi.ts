// The OpenAPI 3.0.3 document, generated from the same route declarations the server runs.

import { maxHeaderSize } from 'node:http';
import { inputRulesMarkdown } from './input-rules';
import {
  commonHeaders,
  ERROR_EXAMPLES,
  ERROR_RESPONSES,
  errorResponse,
  errorResponseName,
  HEADERS,
} from './openapi-responses';
import { PATTERNS_NOTE } from './portable-pattern';
import type { AnyRoute, ResponseDoc } from './route';
import { type AnySchema, type JsonSchema, nullableJson } from './schema';
import { API_PREFIX, fullPath } from './server';

export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id'],
      properties: {
        code: {
          type: 'string',
          enum: [
            'AUTHENTICATION_REQUIRED',
            'INVALID_AUTHENTICATION',
            'INSUFFICIENT_SCOPE',
            'RESTAURANT_SUSPENDED',
            'VALIDATION_ERROR',
            'RESOURCE_NOT_FOUND',
            'RESOURCE_CONFLICT',
            'RATE_LIMITED',
            'INTERNAL_ERROR',
          ],
        },
        message: { type: 'string' },
        request_id: { type: 'string' },
        details: {
          type: 'object',
          additionalProperties: true,
          properties: {
            issues: {
              description: 'One entry per faulty field (400, and 422 on custom fields)',
              type: 'array',
              items: {
                type: 'object',
                required: ['path', 'code', 'message'],
                properties: {
                  path: { type: 'string' },
                  code: { type: 'string' },
                  message: { type: 'string' },
                },
              },
            },
            missing_scopes: {
              type: 'array',
              items: { type: 'string' },
              description: 'INSUFFICIENT_SCOPE: the scopes the token lacks',
            },
            required_scopes: {
              type: 'array',
              items: { type: 'string' },
              description: 'INSUFFICIENT_SCOPE: every scope the operation needs',
            },
            reason: { type: 'string', description: '422 business rule: a stable code to act on' },
            locked_fields: {
              type: 'array',
              items: { type: 'string' },
              description: '409: the fields the point of sale locked',
            },
            reset_at: {
              type: 'string',
              format: 'date-time',
              description: 'RATE_LIMITED: when the budget is back',
            },
          },
        },
      },
    },
  },
};

/** What each tag groups, for the reference's sections; a tag without one fails generation. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  Meta: 'The API root, this document, the health check and the caller behind a token.',
  Catalog:
    "The restaurant's reference data: tables, rooms, shifts, prescribers, discounts and customer custom fields.",
  Availability: 'Bookable slots for a party size, and a check of one exact seating; nothing is reserved.',
  Customers: 'Customer records (CRM): create or match, read, update, and a feed of changes to sync from.',
  Reservations: 'Create, list, read, update and cancel reservations.',
  OAuth:
    'OAuth 2 (RFC 6749 authorization code with PKCE S256): metadata, the token endpoint and revocation. Outside /api/partner/v1; errors use RFC 6749 §5.2 bodies ({error, error_description}), not the envelope. See docs/OAUTH.md.',
  'Webhook endpoints':
    'Subscribe HTTPS URLs to reservation and customer events: signed deliveries, retries for about 4 hours, 30 days of history with resend.',
  'Missed Calls':
    "Report a call nobody answered: Couvert recognises the caller and follows up with the restaurant's approved WhatsApp template.",
};

/**
 * Every `nullable` of the document in OpenAPI 3.0.3 terms, hand-written response schemas included: a
 * `type` beside it and null listed in an `enum`. Examples are values, not schemas, and are left alone.
 */
function spellNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(spellNullable);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node))
    out[k] = k === 'example' || k === 'examples' ? v : spellNullable(v);
  return out.nullable === true ? nullableJson(out) : out;
}

/** The errors an operation answers, listed in its description for readers of the reference. */
function errorsText(responses: Record<string, unknown>, own: Record<number, ResponseDoc>): string {
  const lines = Object.keys(responses)
    .filter((status) => Number(status) >= 400)
    .sort()
    .map((status) => {
      const why = own[Number(status)]?.description ?? ERROR_RESPONSES[Number(status)]?.description;
      return `- \`${status}\` ${why}`;
    });
  return `**Errors**\n\n${lines.join('\n')}`;
}

const isSchema = (s: AnySchema | JsonSchema): s is AnySchema => 'struct' in s && 'json' in s;
const jsonOf = (s: AnySchema | JsonSchema | undefined) => (s ? (isSchema(s) ? s.json : s) : undefined);

function parameters(schema: AnySchema | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const json = schema.json as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => {
    const { description, example, ...rest } = s as JsonSchema & { description?: string; example?: unknown };
    return {
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      schema: rest,
      ...(description ? { description } : {}),
      ...(example !== undefined ? { example } : {}),
    };
  });
}

function response(doc: ResponseDoc, metered: boolean) {
  const schema = jsonOf(doc.schema);
  return {
    description: doc.description,
    headers: { ...commonHeaders(metered), ...doc.headers },
    ...(schema
      ? {
          content: {
            'application/json': { schema, ...(doc.example !== undefined ? { example: doc.example } : {}) },
          },
        }
      : {}),
  };
}

export function generateOpenApi(routes: AnyRoute[], baseUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const responseComponents: Record<string, unknown> = {};
  const shared = (status: number, metered: boolean) => {
    const name = errorResponseName(status, metered);
    if (!name) throw new Error(`no documented error response for status ${status}`);
    responseComponents[name] ??= errorResponse(status, metered);
    return { $ref: `#/components/responses/${name}` };
  };
  // 405 belongs to no operation (the method is not declared), so it is a component of its own.
  shared(405, true);
  for (const r of routes) {
    if (r.hidden) continue;
    const path = fullPath(r);
    const metered = path.startsWith(API_PREFIX) || Boolean(r.limit);
    if (!metered && !r.methodNotAllowed) shared(405, false);
    if (r.methodNotAllowed)
      responseComponents[`MethodNotAllowed${r.methodNotAllowed.name}`] ??= response(
        r.methodNotAllowed.doc,
        false,
      );
    // Every operation may meet a full disk (a read too: a credential's use noted).
    const errors = new Set<number>([500, 503, ...(r.errors ?? [])]);
    // Every operation refuses a query parameter it does not declare, so every one can answer 400.
    errors.add(400);
    if (r.references) errors.add(422);
    if (r.body) {
      errors.add(408);
      errors.add(413);
      errors.add(415);
    }
    if (r.access.kind !== 'public') {
      errors.add(401);
      errors.add(403);
    }
    if (r.params) errors.add(404);
    if (metered) errors.add(429);
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(r.responses)) responses[status] = response(doc, metered);
    for (const status of [...errors].sort())
      if (!r.ownErrors || status === 500 || status === 503) responses[status] ??= shared(status, metered);
    const scopes = r.access.kind === 'scopes' ? r.access.scopes : [];
    const access =
      r.access.kind === 'public'
        ? 'Public: no authentication.'
        : r.access.kind === 'token'
          ? 'Any valid token.'
          : `Required scopes: ${scopes.join(', ')}.`;
    const body = jsonOf(r.body);
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[r.method.toLowerCase()] = {
      operationId: r.operationId,
      summary: r.summary,
      description: [r.description, access, errorsText(responses, r.responses)].filter(Boolean).join('\n\n'),
      tags: [r.tag],
      ...(r.access.kind === 'public'
        ? { security: [] }
        : { security: [{ bearerAuth: [] }], 'x-required-scopes': scopes }),
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      ...(body
        ? {
            requestBody: {
              required: Boolean(r.bodyRequired || (body as { required?: string[] }).required?.length),
              content: Object.fromEntries(
                (r.bodyTypes ?? ['application/json']).map((type) => [
                  type,
                  { schema: body, ...(r.bodyExample !== undefined ? { example: r.bodyExample } : {}) },
                ]),
              ),
            },
          }
        : {}),
      responses,
    };
  }
  const tags = [...new Set(routes.filter((r) => !r.hidden).map((r) => r.tag))].map((name) => {
    const description = TAG_DESCRIPTIONS[name];
    if (!description) throw new Error(`tag ${name} has no description in TAG_DESCRIPTIONS`);
    return { name, description };
  });
  return spellNullable({
    openapi: '3.0.3',
    info: {
      title: 'Couvert Partner API',
      version: '1.0.0',
      description:
        'Act for one restaurant per credential: availability, reservations, customers (CRM), catalog, webhooks and OAuth 2. ' +
        'Every error uses the envelope {error: {code, message, request_id, details?}}. ' +
        'Every response carries x-request-id (equal to error.request_id); under /api/partner/v1 every response also carries ' +
        'x-ratelimit-limit and x-ratelimit-remaining, and a 429 adds x-ratelimit-reset (epoch ms) and retry-after (seconds). ' +
        'A path this document does not list answers 404 RESOURCE_NOT_FOUND in the envelope, its message naming the route most likely meant (a missing /api/partner/v1 prefix, a singular for a plural…) when one is close. HEAD is answered as GET, without the body. ' +
        'OPTIONS (no CORS preflight is served) and any other method a path does not answer get 405 with an allow header (components.responses.MethodNotAllowed; on the OAuth token and revocation endpoints an RFC 6749 body, components.responses.MethodNotAllowedOAuth). ' +
        'Every answer is JSON (application/json; charset=utf-8), whatever the Accept header asks for. ' +
        `A request line and headers past ${maxHeaderSize} bytes (a long query string) answer 431 in the envelope. ` +
        'A request body is a JSON object in UTF-8 (Content-Type: application/json), naming each property once per object, uncompressed or with Content-Encoding gzip, deflate or br. ' +
        `This document is rendered as a readable reference at ${baseUrl}/docs.\n\n` +
        '## One answer per kind of mistake\n\n' +
        inputRulesMarkdown() +
        '\n\n## Patterns\n\n' +
        PATTERNS_NOTE,
    },
    servers: [{ url: baseUrl }],
    tags,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'A partner API key (couvert_pk_…) or an OAuth access token',
        },
      },
      schemas: { Error: ERROR_SCHEMA },
      headers: HEADERS,
      examples: ERROR_EXAMPLES,
      responses: Object.fromEntries(
        Object.entries(responseComponents).sort(([a], [b]) => a.localeCompare(b)),
      ),
    },
    paths,
  }) as Record<string, unknown>;
}
