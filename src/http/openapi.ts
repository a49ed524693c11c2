// The OpenAPI 3.0.3 document, generated from the same route declarations the server runs.
import type { AnyRoute, ResponseDoc } from './route';
import type { AnySchema, JsonSchema } from './schema';
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
          },
        },
      },
    },
  },
};

const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed request, invalid JSON or wrong types (VALIDATION_ERROR with details.issues)',
  401: 'Missing (AUTHENTICATION_REQUIRED) or invalid, revoked or disconnected token (INVALID_AUTHENTICATION)',
  403: 'Scope insufficient (INSUFFICIENT_SCOPE, details.missing_scopes) or restaurant suspended (RESTAURANT_SUSPENDED)',
  404: 'Not found, or not visible to this token (RESOURCE_NOT_FOUND)',
  409: 'Conflict (RESOURCE_CONFLICT)',
  413: 'Body too large (VALIDATION_ERROR)',
  415: 'Body is not JSON (VALIDATION_ERROR)',
  422: 'Business rule violation (VALIDATION_ERROR with details)',
  429: 'Rate limit exceeded (RATE_LIMITED); see x-ratelimit-reset (epoch ms) and retry-after',
  500: 'Unexpected error (INTERNAL_ERROR); keep error.request_id',
};

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

function response(doc: ResponseDoc) {
  const schema = jsonOf(doc.schema);
  return {
    description: doc.description,
    ...(doc.headers ? { headers: doc.headers } : {}),
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
  for (const r of routes) {
    if (r.hidden) continue;
    const path = fullPath(r);
    const errors = new Set<number>([500, ...(r.errors ?? [])]);
    if (r.params || r.query || r.body) errors.add(400);
    if (r.body) {
      errors.add(413);
      errors.add(415);
    }
    if (r.access.kind !== 'public') {
      errors.add(401);
      errors.add(403);
    }
    if (r.params) errors.add(404);
    if (path.startsWith(API_PREFIX)) errors.add(429);
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(r.responses)) responses[status] = response(doc);
    for (const status of [...errors].sort()) {
      if (responses[status]) continue;
      responses[status] = {
        description: ERROR_TEXT[status] ?? 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
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
      description: [r.description, access].filter(Boolean).join('\n\n'),
      tags: [r.tag],
      ...(r.access.kind === 'public'
        ? { security: [] }
        : { security: [{ bearerAuth: [] }], 'x-required-scopes': scopes }),
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      ...(body
        ? {
            requestBody: {
              required: Boolean(r.bodyRequired || (body as { required?: string[] }).required?.length),
              content: { 'application/json': { schema: body } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Couvert Partner API',
      version: '1.0.0',
      description:
        'Act for one restaurant per credential: availability, reservations, customers (CRM), catalog, webhooks and OAuth 2. ' +
        'Every error uses the envelope {error: {code, message, request_id, details?}}.',
    },
    servers: [{ url: baseUrl }],
    tags: [...new Set(routes.filter((r) => !r.hidden).map((r) => r.tag))].map((name) => ({ name })),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'A partner API key (couvert_pk_…) or an OAuth access token',
        },
      },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
