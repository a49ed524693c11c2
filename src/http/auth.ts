import { findKeyByTokenHash, keyWithdrawn } from '../../queries/api-keys';
import { barredByApiOption } from '../../queries/oauth';
import { findRestaurant } from '../../queries/restaurants';
import { ApiError, unauthorized } from '../core/errors';
import { constantTimeEqual, sha256 } from '../core/ids';
import type { Scope } from '../core/scopes';
import type { Runtime } from '../runtime';
import type { Access, AuthContext } from './route';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves the Bearer token to its restaurant and scopes, or throws the spec's 401/403. A credential
 * the cache still holds is returned synchronously (the common case: no promise per request); a lookup
 * returns a promise.
 */
export function authenticate(
  rt: Runtime,
  header: string | undefined,
  access: Access,
): AuthContext | Promise<AuthContext> {
  if (!header?.trim())
    throw unauthorized('AUTHENTICATION_REQUIRED', 'Send an API key as "Authorization: Bearer <token>"');
  const match = BEARER.exec(header);
  if (!match)
    throw unauthorized(
      'INVALID_AUTHENTICATION',
      'The Authorization header must be "Bearer <token>"',
      'invalid_request',
    );
  const token = match[1] as string;
  const hash = sha256(token);
  const resolved = resolveCredential(rt, hash);
  return resolved instanceof Promise
    ? resolved.then(
        (auth) => authorize(auth, access),
        (err: unknown) => {
          throw err instanceof ApiError && err.message === INVALID_MESSAGE ? refusedToken(token) : err;
        },
      )
    : authorize(resolved, access);
}

const INVALID_MESSAGE = 'The token is invalid, revoked or disconnected';

/**
 * The 401 for a token that opens nothing names the fix a partner most likely needs: the common mistakes
 * are told by the token's shape (never echoed): quotes or brackets copied with it, or another of the
 * values an integration holds (an OAuth client secret or code, a webhook signing secret) sent in its place.
 */
function refusedToken(token: string): ApiError {
  const say = (message: string) => unauthorized('INVALID_AUTHENTICATION', message, 'invalid_token');
  if (/^["'<`]|["'>`]$/.test(token))
    return say(
      `${INVALID_MESSAGE}: send the token alone, without quotes or brackets ("Authorization: Bearer couvert_pk_…")`,
    );
  if (token.startsWith('couvert_cs_'))
    return say(
      'This is an OAuth client secret, not an access token: exchange an authorization code at POST /api/oauth/token for a couvert_pk_… token and send that',
    );
  if (token.startsWith('couvert_ac_'))
    return say(
      'This is an OAuth authorization code, not an access token: exchange it at POST /api/oauth/token for a couvert_pk_… token and send that',
    );
  if (token.startsWith('whsec_'))
    return say('This is a webhook signing secret, not an access token: send your API key (couvert_pk_…)');
  return say(
    `${INVALID_MESSAGE}: send the whole token as it was given; a revoked or disconnected one never works again (ask the restaurant for a new API key, or connect again through OAuth)`,
  );
}

function authorize(auth: AuthContext, access: Access): AuthContext {
  const { restaurant, scopes } = auth;
  if (restaurant.suspended) throw new ApiError(403, 'RESTAURANT_SUSPENDED', SUSPENDED_MESSAGE);
  if (access.kind === 'scopes' && !holdsAll(scopes, access.scopes)) {
    const missing = access.scopes.filter((s) => !scopes.has(s));
    throw new ApiError(403, 'INSUFFICIENT_SCOPE', scopeMessage(missing), {
      required_scopes: access.scopes,
      missing_scopes: missing,
    });
  }
  return auth;
}

/** Neither the token nor the request is wrong: only the service's operator can lift a suspension. */
export const SUSPENDED_MESSAGE =
  'The restaurant is suspended: every request for it is refused until the service operator resumes it; nothing was done';

/**
 * The 403 names the scopes and how a token gets them: the request itself cannot. `what` is what needs
 * them (a reservation's privileged options name themselves).
 */
export const scopeMessage = (missing: readonly string[], what = 'This operation needs') =>
  `${what} the scope(s) ${missing.join(', ')}: ask the restaurant for an API key that holds them, or ask for them in the OAuth authorization (scope=)`;

/** Held scopes are the common case: checked without a closure or a list of the missing ones. */
function holdsAll(held: ReadonlySet<Scope>, needed: readonly Scope[]): boolean {
  for (const s of needed) if (!held.has(s)) return false;
  return true;
}

const invalid = () => unauthorized('INVALID_AUTHENTICATION', INVALID_MESSAGE, 'invalid_token');

async function lookUp(rt: Runtime, hash: string, restaurantHint?: string): Promise<AuthContext> {
  // With a hint (the restaurant this token's key named last time), the restaurant is read beside the
  // key, not after it: still two reads, but sent together, so the request waits for the slower of
  // the two rather than one after the other. Both are read afresh; the hint is only used when the
  // key still names it.
  const [key, hinted] = await Promise.all([
    findKeyByTokenHash(rt.docs, hash),
    restaurantHint === undefined ? undefined : findRestaurant(rt.docs, restaurantHint),
  ]);
  // The lookup is by hash; the final comparison is constant-time as well. A token its application's
  // cut-off marked (`cut_off_at`, projections/api-keys.ts) is refused as a revoked one: the cut-off's
  // sweep may not have revoked it yet, or ever (a CLI stopped midway; scaled out, a sweep that read a
  // lagging projector). Read from the key's own document: no read more per request.
  if (!key || !constantTimeEqual(key.token_hash, hash) || keyWithdrawn(key)) throw invalid();
  const restaurant =
    hinted !== undefined && key.restaurant_id === restaurantHint
      ? hinted
      : await findRestaurant(rt.docs, key.restaurant_id);
  if (!restaurant) throw invalid();
  if (await barredByApiOption(rt.docs, key, restaurant))
    throw unauthorized(
      'INVALID_AUTHENTICATION',
      'The restaurant has turned its API option off: this application cannot act for it',
      'invalid_token',
    );
  return { restaurant, scopes: new Set(key.scopes as Scope[]), credential: key };
}

// Embedded, the read models live in this process and change only through its projection runner, so a
// credential resolved while the runner's change count stayed put is still exactly what the read
// models say: the cache never serves a revoked key or a suspended restaurant. Scaled out, another
// process writes the read models, so every request looks them up: only which restaurant a token's
// key named is remembered, so that its restaurant is read beside the key (lookUp's hint).
const MAX_CACHED = 10_000;
const restaurantOfToken = new WeakMap<Runtime, Map<string, string>>();

function lookUpScaled(rt: Runtime, hash: string): Promise<AuthContext> {
  let hints = restaurantOfToken.get(rt);
  if (!hints) {
    hints = new Map();
    restaurantOfToken.set(rt, hints);
  }
  const store = hints;
  return lookUp(rt, hash, store.get(hash)).then((auth) => {
    if (store.size >= MAX_CACHED && !store.has(hash)) store.clear();
    store.set(hash, auth.restaurant._id);
    return auth;
  });
}
interface Cached {
  changeCount: number;
  auth: AuthContext;
}
const caches = new WeakMap<Runtime, Map<string, Cached>>();

function resolveCredential(rt: Runtime, hash: string): AuthContext | Promise<AuthContext> {
  if (rt.config.store !== 'embedded') return lookUpScaled(rt, hash);
  let cache = caches.get(rt);
  if (!cache) {
    cache = new Map();
    caches.set(rt, cache);
  }
  const changeCount = rt.projections.changeCount;
  const hit = cache.get(hash);
  if (hit && hit.changeCount === changeCount) return hit.auth;
  const store = cache;
  return lookUp(rt, hash).then((auth) => {
    if (store.size >= MAX_CACHED) store.clear();
    // Shared by every request of this key until the read models change: nobody may modify it.
    store.set(hash, { changeCount, auth: deepFreeze(auth) });
    return auth;
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (!(value instanceof Set)) for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
