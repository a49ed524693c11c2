import { ApiError } from '../../core/errors';
import { SCOPES } from '../../core/scopes';
import { generateOpenApi } from '../openapi';
import { ANY_TOKEN, type AnyRoute, type AuthContext, defineRoute, PUBLIC } from '../route';
import { described, num, obj } from '../schema';
import { API_PREFIX } from '../server';
import { REFERENCE_PATH } from './reference';

const restaurantSchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'country_code', 'timezone', 'currency'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    slug: { type: 'string' },
    country_code: { type: 'string', description: 'ISO 3166-1 alpha-2' },
    timezone: { type: 'string', description: 'IANA time zone' },
    currency: { type: 'string', description: 'ISO 4217' },
  },
};

const meSchema = described({
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'object',
      required: ['restaurant', 'scopes', 'credential'],
      properties: {
        restaurant: restaurantSchema,
        scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
        credential: {
          type: 'object',
          required: ['id', 'type', 'application', 'created_at'],
          properties: {
            id: { type: 'string' },
            type: { type: 'string', enum: ['API_KEY', 'OAUTH'] },
            application: {
              type: 'object',
              nullable: true,
              required: ['id', 'name'],
              properties: { id: { type: 'string' }, name: { type: 'string' } },
            },
            created_at: { type: 'string', format: 'date-time' },
          },
        },
      },
    },
  },
});

/** The routes every deployment has. `all` is the full list, so openapi.json documents everything. */
export function metaRoutes(all: () => AnyRoute[]): AnyRoute[] {
  let cached: { baseUrl: string; doc: Record<string, unknown> } | null = null;
  return [
    defineRoute({
      method: 'GET',
      path: '/',
      operationId: 'getApiRoot',
      summary: 'Service name, version and links',
      description:
        'Links: `openapi`, this API described in OpenAPI 3.0.3; `reference`, the same rendered as a human-readable reference (HTML, no token needed); `me`, the caller behind a token.',
      tag: 'Meta',
      access: PUBLIC,
      responses: {
        200: {
          description: 'The API root',
          schema: described({
            type: 'object',
            required: ['name', 'version', 'links'],
            properties: {
              name: { type: 'string' },
              version: { type: 'string' },
              links: {
                type: 'object',
                required: ['openapi', 'reference', 'me'],
                additionalProperties: { type: 'string', format: 'uri' },
                properties: {
                  openapi: { type: 'string', format: 'uri', description: 'This API in OpenAPI 3.0.3' },
                  reference: {
                    type: 'string',
                    format: 'uri',
                    description: 'The human-readable reference (HTML), rendered from openapi.json',
                  },
                  me: { type: 'string', format: 'uri', description: 'The caller behind a token' },
                },
              },
            },
          }),
          example: {
            name: 'Couvert Partner API',
            version: 'v1',
            links: {
              openapi: 'https://api.couvert.example/api/partner/v1/openapi.json',
              me: 'https://api.couvert.example/api/partner/v1/me',
              reference: 'https://api.couvert.example/docs',
            },
          },
        },
      },
      handler: ({ rt }) => ({
        body: {
          name: 'Couvert Partner API',
          version: 'v1',
          links: {
            openapi: `${rt.config.baseUrl}${API_PREFIX}/openapi.json`,
            me: `${rt.config.baseUrl}${API_PREFIX}/me`,
            reference: `${rt.config.baseUrl}${REFERENCE_PATH}`,
          },
        },
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This API described in OpenAPI 3.0.3',
      tag: 'Meta',
      access: PUBLIC,
      responses: {
        200: {
          description: 'The OpenAPI document',
          schema: described({ type: 'object' }),
          example: { openapi: '3.0.3', info: { title: 'Couvert Partner API', version: '1.0.0' }, paths: {} },
        },
      },
      handler: ({ rt }) => {
        if (!cached || cached.baseUrl !== rt.config.baseUrl)
          cached = { baseUrl: rt.config.baseUrl, doc: generateOpenApi(all(), rt.config.baseUrl) };
        return { body: cached.doc };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/healthz',
      absolute: true,
      operationId: 'getHealth',
      summary: 'Liveness (load balancers, container health checks)',
      description:
        "200 while this process serves; 503 (`details.reason` `PROJECTOR_STOPPED`) when its projector stopped on a write the document store refuses for good. Public, so it says nothing of the data: the read models' checkpoints and the head of the log (how many events the whole platform holds) are for operators, in `npm run cli -- projections status`.",
      tag: 'Meta',
      access: PUBLIC,
      responses: {
        200: {
          description: 'The process serves requests',
          schema: described({
            type: 'object',
            required: ['status', 'store'],
            properties: {
              status: { type: 'string', enum: ['ok'] },
              store: { type: 'string', enum: ['embedded', 'eventstoredb'] },
            },
          }),
          example: { status: 'ok', store: 'embedded' },
        },
      },
      handler: ({ rt }) => {
        const halted = rt.projections.halted;
        const body = { status: 'ok', store: rt.config.store };
        if (!halted) return { body };
        // A projector stopped on a write the store refuses for good (src/projection/follow.ts): the
        // container turns unhealthy, and the answer says which projection and event type. The route is
        // public: no position (the count of the whole platform's events), no event id, and the error's
        // name only (the store's message can quote a document); the log and `projections status` have
        // them whole.
        throw new ApiError(
          503,
          'INTERNAL_ERROR',
          `The projector of this process has stopped: the document store refuses projection ${halted.projection ?? '?'}'s write of an event ${halted.event_type ?? '?'}, whatever the retry. The read models stay before it; see \`projections status\`, fix the projection or the document, then restart the projector.`,
          {
            reason: 'PROJECTOR_STOPPED',
            store: body.store,
            projector: {
              state: 'stopped',
              projection: halted.projection,
              event_type: halted.event_type,
              at: halted.at,
              error: halted.error.split(':', 1)[0],
            },
          },
        );
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/me',
      operationId: 'getMe',
      summary: 'The restaurant, scopes and credential this token maps to',
      tag: 'Meta',
      access: ANY_TOKEN,
      responses: {
        200: {
          description: 'The caller',
          schema: meSchema,
          example: {
            data: {
              restaurant: {
                id: 'rest_demo',
                name: 'Le Demo',
                slug: 'le-demo',
                country_code: 'FR',
                timezone: 'Europe/Paris',
                currency: 'EUR',
              },
              scopes: ['CATALOG_READ'],
              credential: {
                id: 'key_demo',
                type: 'API_KEY',
                application: null,
                created_at: '2026-01-01T00:00:00.000Z',
              },
            },
          },
        },
      },
      handler: ({ auth }) => ({ body: meBody(auth) }),
    }),
  ];
}

/**
 * GET /me's body. It is derived from the caller's AuthContext alone, which the credential cache shares
 * between requests and freezes until the read models change (src/http/auth.ts), so it is built once per
 * cached credential rather than on every request.
 */
const meBodies = new WeakMap<AuthContext, unknown>();
function meBody(auth: AuthContext): unknown {
  let body = meBodies.get(auth);
  if (body === undefined) {
    const r = auth.restaurant;
    const c = auth.credential;
    body = Object.freeze({
      data: {
        restaurant: {
          id: r._id,
          name: r.name,
          slug: r.slug,
          country_code: r.country_code,
          timezone: r.timezone,
          currency: r.currency,
        },
        scopes: [...auth.scopes],
        credential: {
          id: c._id,
          type: c.type,
          application: c.application ?? null,
          created_at: c.created_at,
        },
      },
    });
    meBodies.set(auth, body);
  }
  return body;
}

/** Exists only when TEST_CLOCK is true: moves the server's clock forward. */
export const testClockRoute = defineRoute({
  method: 'POST',
  path: '/__test/clock',
  absolute: true,
  hidden: true,
  operationId: 'advanceTestClock',
  summary: 'Move the server clock forward (TEST_CLOCK only)',
  tag: 'Test',
  access: PUBLIC,
  body: obj({ advance_seconds: num({ min: 0, max: 10 * 365 * 24 * 3600 }) }),
  bodyRequired: true,
  responses: {
    200: {
      description: 'The new time',
      schema: described({ type: 'object', properties: { now: { type: 'string' } } }),
    },
  },
  handler: ({ rt, body }) => {
    const now = (rt.testClock as NonNullable<typeof rt.testClock>).advance(body.advance_seconds);
    return { body: { now: now.toISOString() } };
  },
});
