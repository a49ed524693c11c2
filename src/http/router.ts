// Routing through @koa/router, built from the route declarations (src/http/routes): each declaration is
// registered on one router, which finds it (a literal path beats a parameter path for the same method,
// HEAD is answered like GET, one trailing slash is ignored, case matters) and, when the path exists
// without the method, lists the allowed methods for the 405. What the router does not do for us: answer
// in the spec's envelope; that is this module's mapping of its outcomes to ApiErrors.
import Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError } from '../core/errors';

/** The methods declarations may use; any other method (OPTIONS, TRACE, PROPFIND…) answers 405. */
const METHODS = ['HEAD', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface RouteEntry<R> {
  method: string;
  /** OpenAPI style: /customers/{id} */
  path: string;
  route: R;
}

/** Runs a matched route: its declaration, the documented path it matched, and its decoded parameters. */
export type RunRoute<R> = (route: R, ctx: Context, path: string, params: Record<string, string>) => unknown;

/** `/customers/{id}` → `/customers/:id` (path-to-regexp syntax). */
export const toRouterPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const resolved = () => Promise.resolve();

/**
 * Returns a dispatcher that runs the route matching `ctx.method` and `ctx.path`, or throws the envelope's
 * 404 (no such path) or 405 (with `Allow`).
 */
export function createDispatcher<R>(
  entries: Iterable<RouteEntry<R>>,
  run: RunRoute<R>,
): (ctx: Context) => Promise<void> {
  // `specificity`: of the layers matching path and method, only the one with the fewest parameters runs,
  // so `/customers/search` wins over `/customers/{id}` without depending on declaration order.
  const router = new Router({ exclusive: 'specificity', sensitive: true, methods: METHODS });
  const seen = new Set<string>();
  for (const { method, path, route } of entries) {
    // `/a/{x}` and `/a/{y}` match the same requests: two of them would make one unreachable.
    const key = `${method} ${path.replace(/\{\w+\}/g, '{}')}`;
    if (seen.has(key)) throw new Error(`two routes for ${method} ${path}`);
    seen.add(key);
    const hasParams = path.includes('{');
    router.register(toRouterPath(path), [method], (ctx: Context) =>
      run(route, ctx, path, hasParams ? (ctx.params as Record<string, string>) : NO_PARAMS),
    );
  }
  const routes = router.routes();
  const allowedMethods = router.allowedMethods();
  // Reached only when no route took the request: allowedMethods sets 405 (or 501 for a method no route
  // could ever have) with `Allow` when the path exists under other methods, and leaves 404 otherwise.
  const unmatched = (ctx: Context) => allowedMethods(ctx as never, resolved);

  const refuse = (ctx: Context) => {
    // 501 is the router's answer to a method no route may use; on a path that exists it is still a 405
    // (spec §7 has no 501), and on a path that does not, a 404 (then the Allow list is empty).
    const allow = ctx.status === 405 || ctx.status === 501 ? ctx.response.get('allow') : '';
    if (allow) throw new ApiError(405, 'VALIDATION_ERROR', `${ctx.method} is not allowed here; use ${allow}`);
    throw new ApiError(404, 'RESOURCE_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
  };

  return (ctx) => {
    const running = routes(ctx as never, () => unmatched(ctx)) as Promise<void>;
    // The router says, before anything awaits, whether a layer matched both path and method: then the
    // route is running and its promise is the answer; otherwise the request is refused once
    // allowedMethods has looked at it.
    if ((ctx as { routeMatched?: boolean }).routeMatched) return running;
    return running.then(() => refuse(ctx));
  };
}
