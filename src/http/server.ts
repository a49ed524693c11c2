// The Koa application: request id and access log, the error envelope, rate limits, and every declared
// route with its access rule, body parsing and input validation.
import Koa, { type Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError } from '../core/errors';
import type { Runtime } from '../runtime';
import { authenticate } from './auth';
import { bodyParseError, guardBody } from './body-guard';
import { sendError } from './envelope';
import { checkWindows, refuseUnknownParameters } from './query-rules';
import { consumeRateLimit, createLimiter } from './rate-limit';
import { checkReferences } from './references';
import { newRequestId, REQUEST_ID_PATTERN } from './request-id';
import type { AnyRoute, AuthContext } from './route';
import { createDispatcher } from './router';
import { discardBody, hasUnreadBody } from './unread-body';
import { validateInput } from './validate';

export const API_PREFIX = '/api/partner/v1';

export const fullPath = (route: AnyRoute) =>
  route.absolute ? route.path : `${API_PREFIX}${route.path === '/' ? '' : route.path}`;

const isPartnerPath = (p: string) => p === API_PREFIX || p.startsWith(`${API_PREFIX}/`);

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

  const partnerLimiter = createLimiter(rt, rt.config.rateLimitPerMinute, 'partner');
  const limitHeader = String(rt.config.rateLimitPerMinute);

  // Parsed only for routes that declare a body, once the route is known: other requests never pay for it.
  const parseBody = koaBody({
    json: true,
    jsonStrict: true,
    urlencoded: true,
    multipart: false,
    text: false,
    jsonLimit: rt.config.bodyLimitBytes,
    formLimit: rt.config.bodyLimitBytes,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    onError: (err) => {
      throw bodyParseError(err, rt.config.bodyLimitBytes);
    },
  });

  const dispatch = createDispatcher(
    routes.map((route) => ({ method: route.method, path: fullPath(route), route })),
    (route, ctx, path, params) => {
      // The documented path, for the access log (never the raw one: ids stay out of route names).
      ctx.state.routePath = path;
      return handle(rt, route, ctx, params, parseBody);
    },
  );

  // One middleware for every request, in this order: request id; the rate limit (partner paths, before
  // anything else runs for the caller); routing; the route itself; the error envelope for anything
  // thrown; one access-log line. One level instead of a chain: each Koa middleware level costs a bound
  // `next` and a promise per request.
  app.use(async (ctx) => {
    lifecycle.inFlight++;
    const started = performance.now();
    const incoming = ctx.get('x-request-id');
    const requestId = incoming && REQUEST_ID_PATTERN.test(incoming) ? incoming : newRequestId();
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    let path: string | null = null;
    try {
      if (!lifecycle.isReady) await lifecycle.ready;
      path = parsePath(ctx);
      if (isPartnerPath(path)) await consumeRateLimit(rt, partnerLimiter, ctx, limitHeader);
      await dispatch(ctx);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500)
        rt.logger.error({ request_id: requestId, err: errorForLog(err) }, 'request failed');
      sendError(ctx, err, requestId);
    } finally {
      if (lifecycle.draining) ctx.set('connection', 'close');
      const auth = ctx.state.auth as AuthContext | undefined;
      rt.accessLog.write({
        request_id: requestId,
        method: ctx.method,
        route: (ctx.state.routePath as string | undefined) ?? path ?? ctx.url,
        status: ctx.status,
        duration_ms: performance.now() - started,
        restaurant_id: auth?.restaurant._id ?? null,
        credential_id: auth?.credential._id ?? null,
        ip: ctx.ip,
      });
      if (--lifecycle.inFlight === 0) lifecycle.onIdle?.();
    }
  });
  return app;
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

const noop = async () => {};
const NO_INPUT: Record<string, never> = Object.freeze({});

async function handle(
  rt: Runtime,
  route: AnyRoute,
  ctx: Context,
  pathParams: Record<string, string>,
  parseBody: (ctx: Context, next: () => Promise<void>) => Promise<unknown>,
): Promise<void> {
  await rt.refresh();
  let auth = null as unknown as AuthContext;
  if (route.access.kind !== 'public') {
    // A cached credential answers synchronously: no promise on the common path.
    const resolved = authenticate(rt, ctx.get('authorization'), route.access);
    auth = resolved instanceof Promise ? await resolved : resolved;
    ctx.state.auth = auth;
  }
  const params = route.params ? validateInput(pathParams, route.params, 'path') : NO_INPUT;
  const rawQuery = ctx.querystring ? ctx.query : NO_INPUT;
  refuseUnknownParameters(route, rawQuery);
  const query = route.query ? validateInput({ ...rawQuery }, route.query, 'query') : NO_INPUT;
  if (route.windows) checkWindows(route.windows, query as Record<string, unknown>);
  let body: unknown;
  if (route.body) {
    // Read only once the caller is known: an unauthenticated client gets 401, not a parse of its body.
    await parseBody(ctx, noop);
    const hasBody = (ctx.request.length ?? 0) > 0 || Boolean(ctx.get('transfer-encoding'));
    const contentType = ctx.get('content-type');
    const isJson = Boolean(ctx.is('application/json'));
    const isForm = Boolean(route.absolute && ctx.is('application/x-www-form-urlencoded'));
    if ((contentType || hasBody) && hasBody && !isJson && !isForm)
      throw new ApiError(
        415,
        'VALIDATION_ERROR',
        'Send the body as JSON with "Content-Type: application/json"',
      );
    const raw = ctx.request.body;
    guardBody(raw);
    if (route.bodyRequired && !hasBody)
      throw new ApiError(400, 'VALIDATION_ERROR', 'A JSON body is required (an empty object {} is enough)', {
        issues: [{ path: '', code: 'required', message: 'body is required' }],
      });
    body = validateInput(raw === undefined ? {} : raw, route.body, 'body');
  } else if (hasUnreadBody(ctx)) await discardBody(ctx, rt.config.bodyLimitBytes);
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
