// The OAuth 2 endpoints a partner's server talks to (spec §4 "OAuth endpoints" 2 and 3, RFC 8414
// metadata). Outside /api/partner/v1; the token endpoint has its own per-IP budget
// (OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE). Client secrets, codes, verifiers and tokens are never logged:
// the access log records the route, never the body.
import type { Context } from 'koa';
import { authenticateClient } from '../../../commands/oauth/application-handler';
import type { ApplicationState } from '../../../commands/oauth/applications';
import { GrantRefused } from '../../../commands/oauth/codes';
import { redeemCode, revokeClientToken } from '../../../commands/oauth/token-handler';
import { SCOPES } from '../../core/scopes';
import type { Runtime } from '../../runtime';
import { BODY_LIMITS } from '../body-guard';
import { AUTHORIZATION_TWICE, headerLineCount } from '../header-lines';
import { repeatedMembers } from '../json-members';
import { invalidClient, invalidRequest, NO_STORE, OAuthError, oauthErrorResult } from '../oauth-errors';
import { type AnyRoute, defineRoute, PUBLIC, type ResponseDoc } from '../route';
import { described, obj, optional, str } from '../schema';
import { REFERENCE_PATH } from './reference';

export const AUTHORIZE_PATH = '/oauth/authorize';
export const TOKEN_PATH = '/api/oauth/token';
export const REVOKE_PATH = '/api/oauth/revoke';
export const METADATA_PATH = '/.well-known/oauth-authorization-server';

/** RFC 8414 metadata: what a standard client needs to discover the flow. `issuer` is BASE_URL. */
export function authorizationServerMetadata(baseUrl: string) {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}${AUTHORIZE_PATH}`,
    token_endpoint: `${baseUrl}${TOKEN_PATH}`,
    revocation_endpoint: `${baseUrl}${REVOKE_PATH}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    scopes_supported: [...SCOPES],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${baseUrl}${REFERENCE_PATH}`,
  };
}

const field = (max: number, description: string) => optional(str({ max, description }));
const clientFields = {
  client_id: field(256, 'With client_secret: client authentication in the body (not with HTTP Basic)'),
  client_secret: field(512, 'With client_id: client authentication in the body (not with HTTP Basic)'),
};

const tokenFields = {
  grant_type: field(100, 'authorization_code'),
  // Bounded by the body guard only: a longer code is an unknown one (invalid_grant), not a bad request.
  code: field(BODY_LIMITS.stringChars, 'The code the redirect carried'),
  redirect_uri: field(2000, 'The redirect_uri of the authorization request, character for character'),
  // Bounded by the body guard only: a longer verifier is refused as invalid_grant saying the 43 to 128
  // rule (docs/OAUTH.md), not with a length limit of this schema's.
  code_verifier: field(BODY_LIMITS.stringChars, 'The PKCE verifier (43 to 128 of A-Z a-z 0-9 - . _ ~)'),
  ...clientFields,
};
const revokeFields = {
  // Bounded by the body guard only: a longer token is an unknown one, answered 200 (RFC 7009 §2.2).
  token: field(BODY_LIMITS.stringChars, 'The access token to revoke'),
  token_type_hint: field(100, 'Ignored (there is one kind of token)'),
  ...clientFields,
};
const TOKEN_PARAMETERS = Object.keys(tokenFields);
const REVOKE_PARAMETERS = Object.keys(revokeFields);

/** Form-encoded before base64 (RFC 6749 §2.3.1). */
const formDecode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));

/**
 * A parameter given twice is invalid_request (RFC 6749 §3.2, spec §4). A form's repeated field parses
 * as a list, which validation refuses; JSON's parser keeps the last value silently, so a JSON body's
 * text is checked for a repeated name the same way (before the client is authenticated, as a form's is).
 */
function refuseRepeatedJson(ctx: Context, parameters: readonly string[]): void {
  if (!ctx.is('application/json')) return;
  const raw: unknown = ctx.request.rawBody;
  if (typeof raw !== 'string') return;
  // The endpoint's parameters only: others are ignored (RFC 6749 §3.2), repeated or not, as in a form.
  const repeated = repeatedMembers(raw).filter((name) => parameters.includes(name));
  if (repeated.length)
    throw invalidRequest(repeated.map((name) => `${name}: repeated or not a single value`).join('; '));
}

/** The client, authenticated by HTTP Basic or by the body, never both (spec §4 2). */
async function client(
  rt: Runtime,
  ctx: Context,
  body: { client_id?: string; client_secret?: string },
): Promise<ApplicationState> {
  if (headerLineCount(ctx.req.rawHeaders, 'authorization') > 1) throw invalidRequest(AUTHORIZATION_TWICE);
  const header = ctx.get('authorization');
  let id: string | undefined;
  let secret: string | undefined;
  if (header) {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (!m) throw invalidClient('The Authorization header must be HTTP Basic (client_id:client_secret)');
    if (body.client_secret !== undefined)
      throw invalidRequest('Authenticate the client by HTTP Basic or in the body, not both');
    const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw invalidClient('HTTP Basic credentials must be client_id:client_secret');
    try {
      id = formDecode(decoded.slice(0, colon));
      secret = formDecode(decoded.slice(colon + 1));
    } catch {
      throw invalidClient('HTTP Basic credentials are not form-encoded');
    }
    if (body.client_id !== undefined && body.client_id !== id)
      throw invalidRequest('client_id in the body differs from the HTTP Basic one');
  } else {
    id = body.client_id;
    secret = body.client_secret;
    if (id === undefined && secret === undefined)
      throw invalidClient('Authenticate the client by HTTP Basic or with client_id and client_secret');
    if (id === undefined || secret === undefined)
      throw invalidClient('Client authentication in the body needs both client_id and client_secret');
  }
  const app = await authenticateClient(rt, id, secret);
  if (!app) throw invalidClient('Client authentication failed (unknown or disabled client, or wrong secret)');
  return app;
}

const oauthErrorSchema = described({
  type: 'object',
  required: ['error', 'error_description'],
  properties: {
    error: {
      type: 'string',
      enum: [
        'invalid_request',
        'invalid_client',
        'invalid_grant',
        'unsupported_grant_type',
        'rate_limited',
        'server_error',
        'temporarily_unavailable',
      ],
    },
    error_description: { type: 'string' },
  },
});
const header = (description: string, type: 'string' | 'integer' = 'string') => ({
  description,
  schema: { type },
});
// cache-control (no-store) is documented on every answer (openapi-responses.ts, CacheControl).
const noStoreHeaders = {
  pragma: header('no-cache'),
};
// x-ratelimit-limit and -remaining are added to every response of a rate-limited route by the generator.
const ref = (name: string) =>
  ({ $ref: `#/components/headers/${name}` }) as unknown as ReturnType<typeof header>;
const oauthError = (
  description: string,
  example: unknown,
  extra: ResponseDoc['headers'] = {},
): ResponseDoc => ({
  description,
  schema: oauthErrorSchema,
  example,
  headers: { ...noStoreHeaders, ...extra },
});
const commonErrors = (endpoint: 'token' | 'revoke'): Record<number, ResponseDoc> => ({
  400: oauthError(
    'invalid_request (a missing or repeated parameter, in a form or a JSON body, two client authentication methods, an Authorization header given more than once, an unreadable body)' +
      (endpoint === 'token'
        ? '; invalid_grant (an unknown, expired or used code, or a redirect_uri or code_verifier that does not match); unsupported_grant_type'
        : ''),
    { error: 'invalid_grant', error_description: 'The authorization code has expired' },
  ),
  401: oauthError(
    'invalid_client: unknown or disabled client, or a wrong secret',
    {
      error: 'invalid_client',
      error_description: 'Client authentication failed (unknown or disabled client, or wrong secret)',
    },
    { 'www-authenticate': header('Basic realm="couvert"') },
  ),
  408: oauthError(
    'invalid_request: the body did not arrive within BODY_TIMEOUT_MS (30 s unless set); nothing was done, send the request again (the connection is closed)',
    {
      error: 'invalid_request',
      error_description:
        'The request body did not arrive within 30 seconds: nothing was done; send the request again, its whole body at once',
    },
  ),
  413: oauthError('invalid_request: the body is larger than BODY_LIMIT_BYTES', {
    error: 'invalid_request',
    error_description: 'The body is too large',
  }),
  429: oauthError(
    'rate_limited: more than OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE token and revocation requests from this IP in a minute',
    { error: 'rate_limited', error_description: 'Too many requests: back off until x-ratelimit-reset' },
    { 'x-ratelimit-reset': ref('RateLimitReset'), 'retry-after': ref('RetryAfter') },
  ),
  500: oauthError('server_error: an unexpected error (the description names the request id)', {
    error: 'server_error',
    error_description:
      'An unexpected error occurred. Keep the request_id; before retrying a write, check whether it succeeded. (request id req_5f0c3a9e2b7d4c1e8a6f0b3d9c2e7a41)',
  }),
  503: oauthError(
    "temporarily_unavailable: the service's storage is full (`retry-after`), a concurrent change kept conflicting (`retry-after: 1`), or it holds as much of request bodies arriving as it keeps in memory (`retry-after`); retry later",
    {
      error: 'temporarily_unavailable',
      error_description:
        "The service's storage is full: this request could not be completed. Retry later; before retrying a write, check whether it succeeded. (request id req_5f0c3a9e2b7d4c1e8a6f0b3d9c2e7a41)",
    },
    { 'retry-after': ref('RetryAfter') },
  ),
});

/**
 * The token and revocation endpoints both authenticate the client, so they draw from one per-IP budget:
 * a client secret cannot be guessed at the revocation endpoint beyond the token endpoint's rate.
 */
const OAUTH_CLIENT_LIMIT = {
  name: 'oauth_token',
  perMinute: (c: { oauthTokenRateLimitPerMinute: number }) => c.oauthTokenRateLimitPerMinute,
};

const renderError = (err: unknown, { requestId }: { requestId: string }) => oauthErrorResult(err, requestId);
/** Any other method on the token and revocation endpoints (GET /api/oauth/token): an RFC 6749 body too. */
const methodNotAllowed = {
  name: 'OAuth',
  doc: oauthError(
    'invalid_request: the endpoint answers POST only (`allow: POST`)',
    { error: 'invalid_request', error_description: 'GET is not allowed here; use POST' },
    { allow: ref('Allow') },
  ),
};
const FORM_AND_JSON = ['application/x-www-form-urlencoded', 'application/json'];

export const oauthRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: METADATA_PATH,
    absolute: true,
    operationId: 'getOAuthMetadata',
    summary: 'OAuth 2 authorization server metadata (RFC 8414)',
    description:
      'The endpoints, PKCE method (S256) and client authentication methods, for standard OAuth clients.',
    tag: 'OAuth',
    access: PUBLIC,
    responses: {
      200: {
        description: 'The metadata document',
        schema: described({
          type: 'object',
          required: ['issuer', 'authorization_endpoint', 'token_endpoint', 'revocation_endpoint'],
          properties: {
            issuer: { type: 'string', format: 'uri' },
            authorization_endpoint: { type: 'string', format: 'uri' },
            token_endpoint: { type: 'string', format: 'uri' },
            revocation_endpoint: { type: 'string', format: 'uri' },
            response_types_supported: { type: 'array', items: { type: 'string' } },
            response_modes_supported: { type: 'array', items: { type: 'string' } },
            grant_types_supported: { type: 'array', items: { type: 'string' } },
            code_challenge_methods_supported: { type: 'array', items: { type: 'string' } },
            token_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string' } },
            revocation_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string' } },
            scopes_supported: { type: 'array', items: { type: 'string' } },
            authorization_response_iss_parameter_supported: { type: 'boolean' },
            service_documentation: { type: 'string', format: 'uri' },
          },
        }),
        example: authorizationServerMetadata('https://api.couvert.example'),
      },
    },
    handler: ({ rt }) => ({ body: authorizationServerMetadata(rt.config.baseUrl) }),
  }),
  defineRoute({
    method: 'POST',
    path: TOKEN_PATH,
    absolute: true,
    operationId: 'oauthToken',
    summary: 'Exchange an authorization code for an access token',
    description:
      'Form-urlencoded (JSON accepted). `grant_type=authorization_code` with `code`, `redirect_uri` (the one of the authorization request) and `code_verifier` (PKCE). ' +
      'The client authenticates by HTTP Basic (`client_id:client_secret`) or with `client_id` and `client_secret` in the body, not both. ' +
      'A code is valid 5 minutes and once: a second presentation is refused and revokes the token it issued. ' +
      'The access token is a partner API key for one restaurant with exactly the consented scopes; it does not expire and has no refresh token. ' +
      'At most 3 tokens stay active per restaurant and application: a fourth revokes the oldest (and deletes the webhook endpoints it created). ' +
      'Errors are RFC 6749 §5.2 bodies, a method other than POST too (405 `invalid_request` with `allow: POST`), and failures of the service (500 `server_error`, 503 `temporarily_unavailable`). Rate limit: OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE (60) per IP.',
    tag: 'OAuth',
    access: PUBLIC,
    ownErrors: true,
    bodyTypes: FORM_AND_JSON,
    limit: OAUTH_CLIENT_LIMIT,
    body: obj(tokenFields, { open: true }),
    bodyExample: {
      grant_type: 'authorization_code',
      code: 'couvert_ac_Qm9uam91ciBsZSBtb25kZSBkZSBDb3V2ZXJ0IQ',
      redirect_uri: 'https://pos.example.test/callback',
      code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    },
    responses: {
      200: {
        description: 'The access token (a partner API key) and the restaurant it acts for',
        headers: noStoreHeaders,
        schema: described({
          type: 'object',
          required: ['access_token', 'token_type', 'scope', 'restaurant'],
          properties: {
            access_token: { type: 'string', description: 'couvert_pk_…: send as "Authorization: Bearer …"' },
            token_type: { type: 'string', enum: ['Bearer'] },
            scope: { type: 'string', description: 'The granted scopes, separated by spaces' },
            restaurant: {
              type: 'object',
              required: ['id', 'name', 'slug'],
              properties: { id: { type: 'string' }, name: { type: 'string' }, slug: { type: 'string' } },
            },
          },
        }),
        example: {
          access_token: 'couvert_pk_8HcL0cT2mOQ2X0d4k9a1o3yZbq8c3l2GZ5m1Qd0e2Xk',
          token_type: 'Bearer',
          scope: 'CATALOG_READ RESERVATIONS_READ',
          restaurant: { id: 'rest_demo', name: 'Le Demo', slug: 'le-demo' },
        },
      },
      ...commonErrors('token'),
    },
    renderError,
    methodNotAllowed,
    handler: async ({ rt, ctx, body, requestId }) => {
      refuseRepeatedJson(ctx, TOKEN_PARAMETERS);
      const app = await client(rt, ctx, body);
      if (body.grant_type === undefined) throw invalidRequest('grant_type is required');
      if (body.grant_type !== 'authorization_code')
        throw new OAuthError(
          400,
          'unsupported_grant_type',
          'Only grant_type=authorization_code is supported',
        );
      for (const name of ['code', 'redirect_uri', 'code_verifier'] as const)
        if (!body[name]) throw invalidRequest(`${name} is required`);
      const meta = { actor: `client:${app.client_id}`, request_id: requestId };
      try {
        const issued = await redeemCode(
          rt,
          app,
          { code: body.code as string, redirect_uri: body.redirect_uri, code_verifier: body.code_verifier },
          meta,
        );
        await rt.settle(issued.position);
        return {
          headers: NO_STORE,
          body: {
            access_token: issued.token,
            token_type: 'Bearer',
            scope: issued.scopes.join(' '),
            restaurant: issued.restaurant,
          },
        };
      } catch (err) {
        if (err instanceof GrantRefused) {
          await rt.settle(await rt.events.headPosition());
          throw new OAuthError(400, 'invalid_grant', err.message);
        }
        throw err;
      }
    },
  }),
  defineRoute({
    method: 'POST',
    path: REVOKE_PATH,
    absolute: true,
    operationId: 'oauthRevoke',
    summary: 'Revoke an access token (RFC 7009)',
    description:
      'Form-urlencoded (JSON accepted): `token`, and the same client authentication as the token endpoint. ' +
      'Answers 200 for an unknown or already revoked token too; a token of another application is left alone. Revoking deletes the webhook endpoints the token created. ' +
      'Errors are RFC 6749 §5.2 bodies, a method other than POST too (405 `invalid_request` with `allow: POST`), and failures of the service (500 `server_error`, 503 `temporarily_unavailable`). ' +
      "Rate limit: the token endpoint's (OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE per IP, one budget for both).",
    tag: 'OAuth',
    access: PUBLIC,
    ownErrors: true,
    bodyTypes: FORM_AND_JSON,
    limit: OAUTH_CLIENT_LIMIT,
    body: obj(revokeFields, { open: true }),
    bodyExample: { token: 'couvert_pk_8HcL0cT2mOQ2X0d4k9a1o3yZbq8c3l2GZ5m1Qd0e2Xk' },
    responses: {
      200: {
        description: 'Revoked, or nothing to revoke',
        headers: noStoreHeaders,
        schema: described({ type: 'object' }),
        example: {},
      },
      ...commonErrors('revoke'),
    },
    renderError,
    methodNotAllowed,
    handler: async ({ rt, ctx, body, requestId }) => {
      refuseRepeatedJson(ctx, REVOKE_PARAMETERS);
      const app = await client(rt, ctx, body);
      if (!body.token) throw invalidRequest('token is required');
      const out = await revokeClientToken(rt, app.client_id as string, body.token, {
        actor: `client:${app.client_id}`,
        request_id: requestId,
      });
      await rt.settle(out.position);
      return { headers: NO_STORE, body: {} };
    },
  }),
];
