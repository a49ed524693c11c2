// One declaration per route: method, path, scopes, input schemas, documented responses and the
// handler. The server enforces it and the OpenAPI document is generated from it.
import type { Context } from 'koa';
import type { ApiKeyDoc } from '../../projections/api-keys';
import type { RestaurantDoc } from '../../projections/restaurants';
import type { Config } from '../config';
import type { Scope } from '../core/scopes';
import type { Runtime } from '../runtime';
import type { References } from './references';
import type { AnySchema, Infer, JsonSchema } from './schema';

export type Window = readonly [lower: string, upper: string, span?: { maxDays: number }];

export interface AuthContext {
  restaurant: RestaurantDoc;
  scopes: ReadonlySet<Scope>;
  credential: ApiKeyDoc;
}

export type Access =
  | { kind: 'public' }
  /** Any valid token, whatever its scopes. */
  | { kind: 'token' }
  /** Every scope listed is required. */
  | { kind: 'scopes'; scopes: readonly Scope[] };

export interface ResponseDoc {
  description: string;
  schema?: AnySchema | JsonSchema;
  example?: unknown;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

export interface RouteRequest<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Null only on public routes. */
  auth: AuthContext;
  rt: Runtime;
  requestId: string;
  ctx: Context;
}

export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteDef<
  P extends AnySchema | undefined = undefined,
  Q extends AnySchema | undefined = undefined,
  B extends AnySchema | undefined = undefined,
> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** OpenAPI style, relative to the API prefix unless `absolute`: /customers/{id} */
  path: string;
  /** The path is not under /api/partner/v1 (OAuth, test clock). */
  absolute?: boolean;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  /** A body that succeeds, shown in the document beside the body schema (validated by the e2e suite). */
  bodyExample?: unknown;
  /** POST /cancel requires a JSON body even when it is an empty object. */
  bodyRequired?: boolean;
  /**
   * Fields (dotted paths) of the query or body holding ids of the caller's restaurant: one that names
   * nothing answers 422 `unknown_reference` before the handler runs (src/http/references.ts).
   */
  references?: { query?: References; body?: References };
  /**
   * Query parameters bounding a window, as [lower, upper] pairs of date-times: an upper bound before its
   * lower bound answers 400 `invalid_range` on the upper one; with `maxDays`, a longer window answers
   * 400 `out_of_range` on it (both with the query string's other mistakes, before any reference's 422).
   */
  windows?: readonly Window[];
  /**
   * Rules of the input that need the caller (the restaurant's country for a phone number, the token's
   * scopes for a privileged option): run once the body is valid, before the references' 422 and the
   * handler, so they answer in README's order (403 and 400 before 422 and 404). Throws an ApiError.
   */
  checkInput?: (input: { body: B extends AnySchema ? Infer<B> : undefined; auth: AuthContext }) => void;
  responses: Record<number, ResponseDoc>;
  /** Extra error statuses this operation can answer, beyond the ones implied by access and input. */
  errors?: number[];
  /**
   * Left out of the public OpenAPI document: the HTML pages (sign-in, consent, dashboard; their errors
   * are pages, not the envelope: CONTRIBUTING, "Pages") and test-only routes.
   */
  hidden?: boolean;
  /**
   * Query parameters the route does not declare are ignored instead of refused, and the handler reads
   * `ctx.query` itself (GET /oauth/authorize: RFC 6749 §3.1 says to ignore unrecognised parameters).
   */
  openQuery?: boolean;
  /**
   * Every error status is declared in `responses` (in the route's own body format): the envelope's
   * responses are not added to the document, except 500.
   */
  ownErrors?: boolean;
  /** Media types the body may come in (default JSON only); each is documented with the same schema. */
  bodyTypes?: string[];
  /**
   * The handler reads the request body itself (a multipart upload, parsed only once the caller is known):
   * the server neither parses it nor drains it as the unread body of a route that takes none.
   */
  readsOwnBody?: boolean;
  /** A per-client-IP budget of this route's own, drawn before anything else of the route runs. */
  limit?: { name: string; perMinute: (config: Config) => number };
  /**
   * Errors answered in this route's own format instead of the envelope: HTML for pages, RFC 6749 §5.2
   * bodies for the OAuth token endpoint. Gets whatever was thrown (ApiError or not).
   */
  renderError?: (err: unknown, req: { rt: Runtime; ctx: Context; requestId: string }) => RouteResult;
  /**
   * With `renderError`: how the route's path answers a method it does not declare (405, rendered by
   * `renderError`), documented as `components.responses.MethodNotAllowed<name>`.
   */
  methodNotAllowed?: { name: string; doc: ResponseDoc };
  handler: (
    req: RouteRequest<
      P extends AnySchema ? Infer<P> : Record<string, never>,
      Q extends AnySchema ? Infer<Q> : Record<string, never>,
      B extends AnySchema ? Infer<B> : undefined
    >,
  ) => Promise<RouteResult> | RouteResult;
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of routes; each is checked where declared
export type AnyRoute = RouteDef<any, any, any>;

/** Identity, for type inference at the declaration site. */
export function defineRoute<
  P extends AnySchema | undefined = undefined,
  Q extends AnySchema | undefined = undefined,
  B extends AnySchema | undefined = undefined,
>(def: RouteDef<P, Q, B>): AnyRoute {
  return def as AnyRoute;
}

export const scopes = (...list: Scope[]): Access => ({ kind: 'scopes', scopes: list });
export const PUBLIC: Access = { kind: 'public' };
export const ANY_TOKEN: Access = { kind: 'token' };
