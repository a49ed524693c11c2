// The Koa application: request id and access log, the error envelope, rate limits, and every declared
// route with its access rule, body parsing and input validation.
import { randomUUID } from 'node:crypto';
import Koa, { type Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError } from '../core/errors';
import type { Runtime } from '../runtime';
import { authenticate } from './auth';
import { sendError } from './envelope';
import { createLimiter, rateLimit } from './rate-limit';
import type { AnyRoute, AuthContext } from './route';
import { RouteTable } from './route-table';
import { validateInput } from './validate';

export const API_PREFIX = '/api/partner/v1';

export const fullPath = (route: AnyRoute) =>
  route.absolute ? route.path : `${API_PREFIX}${route.path === '/' ? '' : route.path}`;

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function createApp(rt: Runtime, routes: AnyRoute[]): Koa {
  const app = new Koa();
  app.proxy = rt.config.trustProxy;
  app.silent = true;

  // Request id, access log, and the envelope for anything thrown below.
  app.use(async (ctx, next) => {
    const started = performance.now();
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new ApiError(404, 'RESOURCE_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500)
        rt.logger.error({ request_id: requestId, err: errorForLog(err) }, 'request failed');
      sendError(ctx, err, requestId);
    } finally {
      const auth = ctx.state.auth as AuthContext | undefined;
      rt.accessLog.write({
        request_id: requestId,
        method: ctx.method,
        route: (ctx.state.route as string | undefined) ?? ctx.path,
        status: ctx.status,
        duration_ms: performance.now() - started,
        restaurant_id: auth?.restaurant._id ?? null,
        credential_id: auth?.credential._id ?? null,
        ip: ctx.ip,
      });
    }
  });

  const partnerLimiter = createLimiter(rt, rt.config.rateLimitPerMinute, 'partner');
  app.use(rateLimit(rt, partnerLimiter, (p) => p === API_PREFIX || p.startsWith(`${API_PREFIX}/`)));

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
    onError(err) {
      const status = (err as { status?: number }).status;
      if (status === 413)
        throw new ApiError(
          413,
          'VALIDATION_ERROR',
          `The request body is larger than ${rt.config.bodyLimitBytes} bytes`,
        );
      if (status === 415) throw new ApiError(415, 'VALIDATION_ERROR', 'Unsupported content encoding');
      throw new ApiError(400, 'VALIDATION_ERROR', 'The request body is not valid JSON', {
        issues: [{ path: '', code: 'invalid_json', message: 'The body could not be parsed as JSON' }],
      });
    },
  });

  const table = new RouteTable(
    routes.map((route) => ({ method: route.method, path: fullPath(route), route })),
  );
  app.use(async (ctx) => {
    const found = table.lookup(ctx.method, ctx.path);
    if (found.kind === 'not_found')
      throw new ApiError(404, 'RESOURCE_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
    if (found.kind === 'method_not_allowed') {
      ctx.set('allow', found.allowed.join(', '));
      throw new ApiError(
        405,
        'VALIDATION_ERROR',
        `${ctx.method} is not allowed here; use ${found.allowed.join(', ')}`,
      );
    }
    ctx.state.route = found.path;
    await handle(rt, found.route, ctx, found.params, parseBody);
  });
  return app;
}

const noop = async () => {};

async function handle(
  rt: Runtime,
  route: AnyRoute,
  ctx: Context,
  pathParams: Record<string, string>,
  parseBody: (ctx: Context, next: () => Promise<void>) => Promise<unknown>,
): Promise<void> {
  await rt.refresh();
  const auth =
    route.access.kind === 'public'
      ? (null as unknown as AuthContext)
      : await authenticate(rt, ctx.get('authorization'), route.access);
  ctx.state.auth = auth ?? undefined;
  const params = route.params ? validateInput(pathParams, route.params, 'path') : {};
  const query = route.query ? validateInput({ ...ctx.query }, route.query, 'query') : {};
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
    if (route.bodyRequired && !hasBody)
      throw new ApiError(400, 'VALIDATION_ERROR', 'A JSON body is required (an empty object {} is enough)', {
        issues: [{ path: '', code: 'required', message: 'body is required' }],
      });
    body = validateInput(raw === undefined ? {} : raw, route.body, 'body');
  }
  const result = await route.handler({
    params,
    query,
    body,
    auth,
    rt,
    requestId: ctx.state.requestId,
    ctx,
  } as never);
  ctx.status = result.status ?? 200;
  for (const [k, v] of Object.entries(result.headers ?? {})) ctx.set(k, v);
  if (result.body !== undefined) ctx.body = result.body;
}

/** Error details for our own log: message and stack, never request data. */
function errorForLog(err: unknown) {
  return err instanceof Error
    ? { name: err.name, message: err.message, stack: err.stack }
    : { message: String(err) };
}
