// Two of the rules every route follows for its query string (the table is in src/http/input-rules.ts):
// a parameter the route does not declare is refused, never ignored, and a window whose upper bound comes
// before its lower bound is refused, never answered with an empty result.
import { type Issue, validationError } from '../core/errors';
import { malformedEscapes } from './percent-escapes';
import type { AnyRoute, Window } from './route';

const declaredParameters = new WeakMap<AnyRoute, ReadonlySet<string>>();

function parametersOf(route: AnyRoute): ReadonlySet<string> {
  let known = declaredParameters.get(route);
  if (!known) {
    const props = (route.query?.json as { properties?: Record<string, unknown> } | undefined)?.properties;
    known = new Set(Object.keys(props ?? {}));
    declaredParameters.set(route, known);
  }
  return known;
}

/** 400 naming every query parameter the route does not declare (a typo would otherwise filter nothing). */
export function refuseUnknownParameters(route: AnyRoute, query: Record<string, unknown>): void {
  let issues: Issue[] | null = null;
  const known = parametersOf(route);
  for (const name in query) {
    if (known.has(name)) continue;
    issues ??= [];
    issues.push({
      path: name,
      code: 'unknown_parameter',
      message: known.size
        ? `${name} is not a parameter of this operation (it takes ${[...known].join(', ')})`
        : `${name} is not a parameter of this operation (it takes none)`,
    });
  }
  if (issues) throw validationError(issues, 'The query string is invalid');
}

/**
 * 400 `invalid_encoding` on each parameter whose name or value holds a %-escape that is malformed
 * (`%zz`, a lone `%`) or spells bytes that are not UTF-8 (`%E9`, a surrogate's `%ED%A0%80`): the query
 * parser reads such bytes as U+FFFD and keeps a malformed escape as text, so `external_id=Caf%E9`
 * filtered on "Caf\uFFFD" and answered an empty list. A route with an open query (a page's link may
 * carry parameters of its own) is held to it for the parameters it declares only.
 */
export function refuseMalformedEscapes(route: AnyRoute, querystring: string): void {
  let issues: Issue[] | null = null;
  const known = parametersOf(route);
  for (const { name } of malformedEscapes(querystring)) {
    if (route.openQuery && !known.has(name)) continue;
    issues ??= [];
    if (issues.some((i) => i.path === name)) continue;
    issues.push({
      path: name,
      code: 'invalid_encoding',
      message: `${name} holds a %-escape that is malformed or not UTF-8: send each character as the %XX escapes of its UTF-8 bytes (a % itself as %25)`,
    });
  }
  if (issues) throw validationError(issues, 'The query string is invalid');
}

const DAY_MS = 86_400_000;

/**
 * 400 `invalid_range` on the upper bound of each declared window it precedes its lower bound in, and
 * `out_of_range` on the upper bound of a window longer than its declared span.
 */
export function checkWindows(windows: readonly Window[], query: Record<string, unknown>): void {
  const issues = windowIssues(windows, query);
  if (issues.length) throw validationError(issues, 'The query string is invalid');
}

/**
 * The window issues of a query string whose other parameters are faulty (`issues`, from its schema):
 * each window whose two bounds are themselves valid is judged too, so one answer names every mistake
 * (`party_size=0` and an inverted window) rather than the second only once the first is fixed.
 */
export function addWindowIssues(windows: readonly Window[], query: Record<string, unknown>, issues: Issue[]) {
  const faulty = new Set(issues.map((i) => i.path));
  const judged = windows.filter(([lower, upper]) => !faulty.has(lower) && !faulty.has(upper));
  issues.push(...windowIssues(judged, query));
}

function windowIssues(windows: readonly Window[], query: Record<string, unknown>): Issue[] {
  const issues: Issue[] = [];
  for (const [lower, upper, span] of windows) {
    const from = query[lower];
    const to = query[upper];
    if (typeof from !== 'string' || typeof to !== 'string') continue;
    const length = Date.parse(to) - Date.parse(from);
    if (length < 0)
      issues.push({ path: upper, code: 'invalid_range', message: `${upper} must not be before ${lower}` });
    else if (span && length > span.maxDays * DAY_MS)
      issues.push({
        path: upper,
        code: 'out_of_range',
        message: `the window spans at most ${span.maxDays} days; split longer searches`,
      });
  }
  return issues;
}
