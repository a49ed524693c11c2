// Routing through @koa/router, built from the route declarations (src/http/routes): each declaration is
// registered on the router of its group of paths (see GROUP_DEPTH), which finds it (a literal path beats a parameter path for the same method,
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
 * Routes are grouped by the first GROUP_DEPTH segments of their path (`/api/partner/v1/customers` for
 * `/api/partner/v1/customers/{id}/...`), one @koa/router per group, so that a request is matched against
 * the few routes of its group instead of every route's regex in turn (@koa/router tries each layer of a
 * router on every request: ~25 ns a layer, and it has to find every match to list `Allow`). A route
 * with a parameter among those segments belongs to every group.
 */
const GROUP_DEPTH = 4;

/**
 * The group a path belongs to: its first GROUP_DEPTH segments (all of them if it has fewer), after one
 * trailing slash is dropped as the router ignores it. A route and every path it matches share it, since
 * a parameter matches exactly one segment.
 */
export function groupKey(path: string): string {
  let end = path.length;
  if (end > 1 && path.charCodeAt(end - 1) === 47) end--;
  let at = 0;
  for (let i = 0; i < GROUP_DEPTH; i++) {
    at = path.indexOf('/', at + 1);
    if (at === -1 || at >= end) return end === path.length ? path : path.slice(0, end);
  }
  return path.slice(0, at);
}

interface Group {
  routes: ReturnType<Router['routes']>;
  allowedMethods: ReturnType<Router['allowedMethods']>;
}

/**
 * Returns a dispatcher that runs the route matching `ctx.method` and `ctx.path`, or throws the envelope's
 * 404 (no such path) or 405 (with `Allow`).
 */
export function createDispatcher<R>(
  entries: Iterable<RouteEntry<R>>,
  run: RunRoute<R>,
): (ctx: Context) => Promise<void> {
  const seen = new Set<string>();
  const grouped = new Map<string, RouteEntry<R>[]>();
  const everywhere: RouteEntry<R>[] = [];
  for (const entry of entries) {
    // `/a/{x}` and `/a/{y}` match the same requests: two of them would make one unreachable.
    const key = `${entry.method} ${entry.path.replace(/\{\w+\}/g, '{}')}`;
    if (seen.has(key)) throw new Error(`two routes for ${entry.method} ${entry.path}`);
    seen.add(key);
    const group = groupKey(entry.path);
    if (group.includes('{')) everywhere.push(entry);
    else grouped.set(group, [...(grouped.get(group) ?? []), entry]);
  }

  const build = (list: RouteEntry<R>[]): Group => {
    // `specificity`: of the layers matching path and method, only the one with the fewest parameters
    // runs, so `/customers/search` wins over `/customers/{id}` without depending on declaration order.
    const router = new Router({ exclusive: 'specificity', sensitive: true, methods: METHODS });
    for (const { method, path, route } of list) {
      const hasParams = path.includes('{');
      router.register(toRouterPath(path), [method], (ctx: Context) =>
        run(route, ctx, path, hasParams ? (ctx.params as Record<string, string>) : NO_PARAMS),
      );
    }
    return { routes: router.routes(), allowedMethods: router.allowedMethods() };
  };
  const groups = new Map<string, Group>();
  for (const [key, list] of grouped) groups.set(key, build([...list, ...everywhere]));
  const others = build(everywhere);

  let matchers: RouteMatcher[] | null = null;
  const refuse = (ctx: Context) => {
    // 501 is the router's answer to a method no route may use; on a path that exists it is still a 405
    // (spec §7 has no 501), and on a path that does not, a 404 (then the Allow list is empty).
    const allow = ctx.status === 405 || ctx.status === 501 ? ctx.response.get('allow') : '';
    // OPTIONS is a browser's CORS preflight: none is served, as the token must never reach a browser.
    const why =
      ctx.method === 'OPTIONS'
        ? ' (no CORS preflight is served: call the API from your server, where the token stays secret)'
        : '';
    // VALIDATION_ERROR: spec §7's codes are a closed list with none for a method (its "malformed
    // request"); a code of our own would break partners that read it as that list, and RESOURCE_NOT_FOUND
    // would deny a path that exists. The status and `allow` say the rest.
    if (allow)
      throw new ApiError(
        405,
        'VALIDATION_ERROR',
        `${ctx.method} is not allowed here${why}; use ${allow}`,
        undefined,
        { allow },
      );
    // allowedMethods answers OPTIONS on any path with `Allow` (empty where nothing is allowed): a 404
    // lists no methods.
    ctx.remove('allow');
    matchers ??= routeMatchers([...grouped.values(), everywhere].flat());
    throw new ApiError(404, 'RESOURCE_NOT_FOUND', noRouteMessage(matchers, ctx.method, ctx.path));
  };

  return (ctx) => {
    const group = groups.get(groupKey(ctx.path)) ?? others;
    const running = group.routes(ctx as never, resolved) as Promise<void>;
    // The router says, before anything awaits, whether a layer matched both path and method: then the
    // route is running and its promise is the answer. Otherwise no route took the request: allowedMethods
    // sets 405 (or 501 for a method no route could ever have) with `Allow` when the path exists under
    // other methods, and leaves 404 otherwise; then the request is refused.
    if ((ctx as { routeMatched?: boolean }).routeMatched) return running;
    return running.then(() => group.allowedMethods(ctx as never, resolved)).then(() => refuse(ctx));
  };
}

/** Where every route is listed: named in the 404 a path no route takes answers. */
export const ROUTE_LIST_HINT =
  'every route is listed in the OpenAPI document, GET /api/partner/v1/openapi.json';

/**
 * The 404 for a path no route takes names the fix: the documented route the caller most likely meant
 * (a missing `/api/partner/v1` prefix, another version, a letter's case, a singular for a plural, `_`
 * for `-`, in the route's own words: the ids in the path are kept as given), and where every route is
 * listed. Only on this error path: it costs nothing to a routed request.
 */
export function noRouteMessage(matchers: readonly RouteMatcher[], method: string, path: string): string {
  const base = `No route for ${method} ${path}`;
  const meant = suggestRoute(matchers, method, path);
  return meant ? `${base}: did you mean ${meant}? (${ROUTE_LIST_HINT})` : `${base}; ${ROUTE_LIST_HINT}`;
}

/** A declared route as the 404's suggestion matches it: its method and its path's segments (null: a parameter). */
export interface RouteMatcher {
  method: string;
  segments: (string | null)[];
}

export const routeMatchers = (entries: readonly { method: string; path: string }[]): RouteMatcher[] =>
  entries.map(({ method, path }) => ({
    method,
    segments: path
      .split('/')
      .slice(1)
      .map((s) => (/^\{\w+\}$/.test(s) ? null : s)),
  }));

/** The path's segments as given, and with the API's prefix put right (added, or another version). */
function prefixForms(path: string): string[][] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const given = trimmed === '/' ? [] : trimmed.split('/').slice(1);
  const [first, second, third] = given.map(loose);
  const isVersion = (word: string | undefined) => word !== undefined && /^v\d+$/.test(word);
  if (first === 'api' && second === 'partner' && third?.startsWith('v'))
    return [given, ['api', 'partner', 'v1', ...given.slice(3)]];
  // The version or the `partner` segment left out (/api/partner/me, /api/v1/me).
  if (first === 'api' && (second === 'partner' || isVersion(second)))
    return [given, ['api', 'partner', 'v1', ...given.slice(2)]];
  return first === 'api' ? [given] : [given, ['api', 'partner', 'v1', ...given]];
}

const loose = (word: string) => word.toLowerCase().replace(/_/g, '-');

/**
 * How a route's literal word takes the caller's: as it is, but for case or `_` for `-`, or also with
 * its plural `s` added or dropped; null when it does not. Only the route's own words are put right: a
 * parameter (an id) is case-sensitive and may hold `_`, and is kept as the caller gave it.
 */
function fit(given: string, word: string): 'same' | 'loose' | 'plural' | null {
  if (given === word) return 'same';
  const a = loose(given);
  const b = loose(word);
  if (a === b) return 'loose';
  return a.length > 0 && (`${a}s` === b || a === `${b}s`) ? 'plural' : null;
}

function suggestRoute(matchers: readonly RouteMatcher[], method: string, path: string): string | null {
  // Bounded: a path of hundreds of segments gets the list's address alone.
  if (path.length > 512 || path.split('/').length > 10) return null;
  const wanted = method === 'HEAD' ? 'GET' : method;
  let best: { text: string; rank: number } | null = null;
  for (const given of prefixForms(path)) {
    // Only a route of the method asked for: another method's path is another operation, not a typo's fix.
    for (const entry of matchers) {
      if (entry.method !== wanted || entry.segments.length !== given.length) continue;
      let params = 0;
      let plurals = 0;
      let changed = 0;
      const out: string[] = [];
      for (let i = 0; i < given.length; i++) {
        const word = entry.segments[i];
        const seg = given[i] as string;
        if (word === null || word === undefined) {
          if (seg === '') break;
          params++;
          out.push(seg);
          continue;
        }
        const how = fit(seg, word);
        if (how === null) break;
        if (how === 'plural') plurals++;
        if (how !== 'same') changed++;
        out.push(word);
      }
      // One singular or plural put right at the most: more is another route, not a typo of this one.
      if (out.length !== given.length || plurals > 1) continue;
      const text = `/${out.join('/')}`;
      if (text === path) continue;
      // The closest: the fewest parameters (a literal route before one taking a word as an id), then
      // the fewest words put right.
      const rank = params * 10_000 + plurals * 100 + changed;
      if (best === null || rank < best.rank) best = { text: `${entry.method} ${text}`, rank };
    }
  }
  return best?.text ?? null;
}
