// The Koa application: request id and access log, the error envelope, rate limits, and every declared
// route with its access rule, body parsing and input validation.
import Koa, { type Context } from 'koa';
import type { RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError, type Issue, storageFullError, unauthorized } from '../core/errors';
import { requestDone, requestStarted } from '../core/foreground';
import type { Runtime } from '../runtime';
import { renderPageError } from '../web/respond';
import { authenticate } from './auth';
import { guardBody, refuseRepeatedMembers } from './body-guard';
import { type BodyReader, createBodyReader } from './body-reader';
import {
  keepBodyChunks,
  refuseForeignCharset,
  refuseMalformedFormEscapes,
  refuseNonAsciiForm,
  refuseReplacedBytes,
} from './body-text';
import { sendError } from './envelope';
import { AUTHORIZATION_TWICE, headerLineCount } from './header-lines';
import { noteCredentialUse } from './key-usage';
import {
  addWindowIssues,
  checkWindows,
  refuseMalformedEscapes,
  refuseUnknownParameters,
} from './query-rules';
import { createLimiter, guessingKey, rateLimitError, rateLimitKey, setBudgetHeaders } from './rate-limit';
import { checkReferences } from './references';
import { newRequestId, REQUEST_ID_PATTERN } from './request-id';
import type { AnyRoute, AuthContext } from './route';
import { createDispatcher } from './router';
import { STRICT_TRANSPORT_SECURITY, sendsStrictTransportSecurity } from './transport-security';
import { discardBody, hasUnreadBody } from './unread-body';
import { validateInput } from './validate';

export const API_PREFIX = '/api/partner/v1';

export const fullPath = (route: AnyRoute) =>
  route.absolute ? route.path : `${API_PREFIX}${route.path === '/' ? '' : route.path}`;

const PARTNER_PATHS = `${API_PREFIX}/`;
const isPartnerPath = (p: string) => p === API_PREFIX || p.startsWith(PARTNER_PATHS);

/** What the server shares with whoever starts and stops it (src/app.ts). */
export interface Lifecycle {
  /** Settles once bootstrap or demo data is in; requests arriving earlier wait for it. */
  ready: Promise<void>;
  isReady: boolean;
  /** Stopping: every response closes its connection. */
  draining: boolean;
  /** Requests inside the middleware; a stop waits for them before closing the stores. */
  inFlight: number;
  /** Called when `inFlight` falls to 0 (set by a stop that waits). */
  onIdle: (() => void) | null;
}

export const newLifecycle = (): Lifecycle => ({
  ready: Promise.resolve(),
  isReady: true,
  draining: false,
  inFlight: 0,
  onIdle: null,
});

export function createApp(rt: Runtime, routes: AnyRoute[], lifecycle: Lifecycle = newLifecycle()): Koa {
  const app = new Koa();
  app.proxy = rt.config.trustProxy;
  // Behind a trusted proxy the client address is the one that proxy appended, the last of
  // X-Forwarded-For: entries before it come from the client and would let it pick its rate-limit key.
  app.maxIpsCount = 1;
  app.silent = true;

  const hsts = sendsStrictTransportSecurity(rt.config.baseUrl);
  const partnerLimiter = createLimiter(rt, rt.config.rateLimitPerMinute, 60, 'partner');
  const limitHeader = String(rt.config.rateLimitPerMinute);

  const readBody = createBodyReader(rt);

  // Routes with a budget of their own (the OAuth token endpoint): one limiter per name, made on first use.
  const routeLimiters = new Map<string, { limiter: ReturnType<typeof createLimiter>; header: string }>();
  const routeLimit = (route: AnyRoute, ctx: Context) => {
    const spec = route.limit as NonNullable<AnyRoute['limit']>;
    let entry = routeLimiters.get(spec.name);
    if (!entry) {
      const perMinute = spec.perMinute(rt.config);
      entry = { limiter: createLimiter(rt, perMinute, 60, spec.name), header: String(perMinute) };
      routeLimiters.set(spec.name, entry);
    }
    const { limiter, header } = entry;
    // These routes check a client secret: an IPv6 client's whole /64 draws from one budget.
    return limiter.consume(guessingKey(ctx.ip)).then(
      (budget: RateLimiterRes) => setBudgetHeaders(ctx.res, header, budget),
      (err: unknown) => {
        throw rateLimitError(rt, err, header);
      },
    );
  };

  // A method a path does not answer (405) is refused before any route runs: answered in the format of
  // the routes of that path when they have their own (the OAuth endpoints' RFC 6749 bodies, the pages').
  const ownErrorsByPath = new Map<string, NonNullable<AnyRoute['renderError']>>();
  for (const route of routes)
    if (route.renderError && !fullPath(route).includes('{'))
      ownErrorsByPath.set(fullPath(route), route.renderError);

  const dispatch = createDispatcher(
    routes.map((route) => ({ method: route.method, path: fullPath(route), route })),
    (route, ctx, path, params) => {
      // The documented path, for the access log (never the raw one: ids stay out of route names).
      ctx.state.routePath = path;
      ctx.state.route = route;
      return handle(rt, route, ctx, params, readBody, routeLimit);
    },
  );

  // One middleware for every request, in this order: request id; the rate limit (partner paths, before
  // anything else runs for the caller); routing; the route itself; the error envelope for anything
  // thrown; one access-log line. One level instead of a chain: each Koa middleware level costs a bound
  // `next` and a promise per request.
  app.use(async (ctx) => {
    lifecycle.inFlight++;
    requestStarted();
    const started = performance.now();
    const incoming = ctx.get('x-request-id');
    const requestId = incoming && REQUEST_ID_PATTERN.test(incoming) ? incoming : newRequestId();
    ctx.state.requestId = requestId;
    // Node's setHeader, not Koa's ctx.set (arrays and a closure per call): this runs on every request.
    ctx.res.setHeader('x-request-id', requestId);
    // Every answer holds a restaurant's data (personal data included) unless a route says otherwise
    // (static assets): no cache keeps it, and no client guesses its type.
    ctx.res.setHeader('cache-control', 'no-store');
    ctx.res.setHeader('x-content-type-options', 'nosniff');
    if (hsts) ctx.res.setHeader('strict-transport-security', STRICT_TRANSPORT_SECURITY);
    let path: string | null = null;
    try {
      if (!lifecycle.isReady) await lifecycle.ready;
      path = parsePath(ctx);
      if (isPartnerPath(path)) {
        // Awaited here rather than in a helper: no frame, closure or promise of its own per request.
        let budget: RateLimiterRes;
        try {
          budget = await partnerLimiter.consume(rateLimitKey(ctx));
        } catch (err) {
          throw rateLimitError(rt, err, limitHeader);
        }
        setBudgetHeaders(ctx.res, limitHeader, budget);
      }
      await dispatch(ctx);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500)
        rt.logger.error({ request_id: requestId, err: errorForLog(err) }, 'request failed');
      // A full disk is not the request's fault nor a bug: 503 with Retry-After, in every format.
      const failure = storageFullError(err) ?? err;
      // A path under the pages' prefixes that no route takes (a mistyped dashboard URL) is answered as
      // the pages answer: an HTML page with their headers (CSP, no framing), not the API's JSON.
      const own =
        (ctx.state.route as AnyRoute | undefined)?.renderError ??
        (path !== null && failure instanceof ApiError && failure.status === 405
          ? ownErrorsByPath.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path)
          : undefined) ??
        (path !== null && PAGE_PATHS.test(path) ? renderMissingPage : undefined);
      if (own) sendOwnError(ctx, own, failure, rt, requestId);
      else sendError(ctx, failure, requestId);
    } finally {
      if (lifecycle.draining) ctx.set('connection', 'close');
      const auth = ctx.state.auth as AuthContext | undefined;
      rt.accessLog.write({
        request_id: requestId,
        method: ctx.method,
        route:
          (ctx.state.routePath as string | undefined) ??
          (path === null ? '(unparsed path)' : pathForLog(path)),
        status: ctx.status,
        duration_ms: performance.now() - started,
        restaurant_id: auth?.restaurant._id ?? null,
        credential_id: auth?.credential._id ?? null,
        ip: ctx.ip,
      });
      requestDone();
      if (--lifecycle.inFlight === 0) lifecycle.onIdle?.();
    }
  });
  return app;
}

/** An error in the route's own format; should rendering it fail, the envelope still answers. */
function sendOwnError(
  ctx: Context,
  render: NonNullable<AnyRoute['renderError']>,
  err: unknown,
  rt: Runtime,
  requestId: string,
): void {
  try {
    const r = render(err, { rt, ctx, requestId });
    ctx.status = r.status ?? 500;
    if (err instanceof ApiError && err.headers)
      for (const k in err.headers) ctx.set(k, err.headers[k] as string);
    if (r.headers) for (const k in r.headers) ctx.set(k, r.headers[k] as string);
    ctx.body = r.body;
  } catch (again) {
    rt.logger.error({ request_id: requestId, err: errorForLog(again) }, 'error page failed');
    sendError(ctx, err, requestId);
  }
}

/** The request path; a request target that does not parse as a URL answers 400 in the envelope. */
function parsePath(ctx: Context): string {
  try {
    return ctx.path;
  } catch {
    throw new ApiError(400, 'VALIDATION_ERROR', 'The request target is not a valid URL', {
      issues: [{ path: '', code: 'invalid_url', message: 'The request target could not be parsed' }],
    });
  }
}

/**
 * A segment kept as it is in the access log: a word or an id (cus_…), never a secret the service
 * issues (couvert_… API keys, client secrets and codes; whsec_… webhook signing secrets).
 */
const PLAIN_SEGMENT = /^(?!couvert_|whsec_)[A-Za-z][A-Za-z0-9_.~-]{0,63}$/i;

/**
 * The path of a request no route took, for the access log: its words and ids as they are, any other
 * segment `{…}`. A mistyped path may hold what the log must never carry (a token, an email address, a
 * phone number: `/api/oauth/token/couvert_pk_…`, `/customers/by-phone/+336…`); the query is never kept.
 */
export function pathForLog(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment === '' || PLAIN_SEGMENT.test(segment) ? segment : '{…}'))
    .join('/');
}

/** The browser pages' paths (sign-in, consent, dashboard): their errors are pages too. */
const PAGE_PATHS = /^\/(dashboard|sign-in|sign-out|oauth\/authorize)(\/|$)/;

/** A page no route takes: said in a person's words (the router's "No route for GET …" is for programs). */
const renderMissingPage: NonNullable<AnyRoute['renderError']> = (err, req) =>
  renderPageError(
    err instanceof ApiError && err.status === 404
      ? new ApiError(
          404,
          'RESOURCE_NOT_FOUND',
          'This page does not exist. Check the address, or start again from the dashboard.',
        )
      : err,
    req,
  );

const noop = async () => {};
const NO_INPUT: Record<string, never> = Object.freeze({});

async function handle(
  rt: Runtime,
  route: AnyRoute,
  ctx: Context,
  pathParams: Record<string, string>,
  parseBody: BodyReader,
  routeLimit: (route: AnyRoute, ctx: Context) => Promise<void>,
): Promise<void> {
  if (route.limit) await routeLimit(route, ctx);
  await rt.refresh();
  let auth = null as unknown as AuthContext;
  if (route.access.kind !== 'public') {
    // A cached credential answers synchronously: no promise on the common path.
    if (headerLineCount(ctx.req.rawHeaders, 'authorization') > 1)
      throw unauthorized('INVALID_AUTHENTICATION', AUTHORIZATION_TWICE, 'invalid_request');
    const resolved = authenticate(rt, ctx.get('authorization'), route.access);
    auth = resolved instanceof Promise ? await resolved : resolved;
    ctx.state.auth = auth;
    noteCredentialUse(rt, auth.credential);
  }
  const params = route.params ? validateInput(pathParams, route.params, 'path') : NO_INPUT;
  const rawQuery = ctx.querystring ? ctx.query : NO_INPUT;
  if (rawQuery !== NO_INPUT && !route.openQuery) refuseUnknownParameters(route, rawQuery);
  if (rawQuery !== NO_INPUT) refuseMalformedEscapes(route, ctx.querystring);
  let query: unknown = NO_INPUT;
  try {
    if (route.query) query = validateInput({ ...rawQuery }, route.query, 'query');
  } catch (error) {
    const issues = (error as ApiError).details?.issues;
    if (route.windows && error instanceof ApiError && Array.isArray(issues))
      addWindowIssues(route.windows, rawQuery, issues as Issue[]);
    throw error;
  }
  if (route.windows) checkWindows(route.windows, query as Record<string, unknown>);
  let body: unknown;
  if (route.body) {
    // Read only once the caller is known: an unauthenticated client gets 401, not a parse of its body.
    const foreignForm = refuseForeignCharset(ctx);
    // Content codings are case-insensitive (RFC 9110 §8.4.1); the parser's decoder takes lower case only.
    const coding = ctx.req.headers['content-encoding'];
    if (coding) ctx.req.headers['content-encoding'] = coding.trim().toLowerCase();
    // Attached in the same turn as the parser's own listener, so it sees every chunk.
    const chunks = keepBodyChunks(ctx);
    await parseBody(ctx, noop);
    refuseReplacedBytes(ctx.request.rawBody, chunks);
    const hasBody = (ctx.request.length ?? 0) > 0 || Boolean(ctx.get('transfer-encoding'));
    const contentType = ctx.get('content-type');
    const isJson = Boolean(ctx.is('application/json'));
    const isForm = Boolean(route.absolute && ctx.is('application/x-www-form-urlencoded'));
    if (isForm && foreignForm) refuseNonAsciiForm(ctx.request.rawBody);
    if (isForm) refuseMalformedFormEscapes(ctx.request.rawBody);
    if ((contentType || hasBody) && hasBody && !isJson && !isForm)
      throw new ApiError(
        415,
        'VALIDATION_ERROR',
        // An absolute route (the OAuth endpoints, the pages' forms) takes a form too: say so, as RFC 6749
        // clients send one.
        route.absolute
          ? 'Send the body form-encoded ("Content-Type: application/x-www-form-urlencoded") or as JSON ("Content-Type: application/json")'
          : 'Send the body as JSON with "Content-Type: application/json"',
      );
    const raw = ctx.request.body;
    guardBody(raw);
    // A name given twice would be read as its last value, silently: refused on the partner API (the
    // OAuth endpoints, absolute, refuse their own parameters repeated, RFC 6749 §3.2, in their format).
    // The integers written past 2^53 are refused on every JSON body (advised by the body's schema).
    if (isJson) refuseRepeatedMembers(ctx.request.rawBody, !route.absolute, route.body.json);
    if (route.bodyRequired && !hasBody)
      throw new ApiError(400, 'VALIDATION_ERROR', 'A JSON body is required (an empty object {} is enough)', {
        issues: [{ path: '', code: 'required', message: 'body is required' }],
      });
    body = validateInput(raw === undefined ? {} : raw, route.body, 'body');
  } else if (!route.readsOwnBody && hasUnreadBody(ctx))
    await discardBody(ctx, rt.config.bodyLimitBytes, rt.config.bodyTimeoutMs);
  if (route.checkInput && auth) route.checkInput({ body, auth });
  // References name ids of the caller's restaurant, so only authenticated routes declare them.
  if (route.references && auth) {
    const restaurantId = auth.restaurant._id;
    if (route.references.query) await checkReferences(rt, restaurantId, route.references.query, query);
    if (route.references.body) await checkReferences(rt, restaurantId, route.references.body, body);
  }
  const pending = route.handler({
    params,
    query,
    body,
    auth,
    rt,
    requestId: ctx.state.requestId,
    ctx,
  } as never);
  const result = pending instanceof Promise ? await pending : pending;
  ctx.status = result.status ?? 200;
  if (result.headers) for (const k in result.headers) ctx.set(k, result.headers[k] as string);
  if (result.body !== undefined) ctx.body = result.body;
}

/** Error details for our own log: message and stack, never request data. */
function errorForLog(err: unknown) {
  return err instanceof Error
    ? { name: err.name, message: err.message, stack: err.stack }
    : { message: String(err) };
}
