import { findKeyByTokenHash } from '../../queries/api-keys';
import { findRestaurant } from '../../queries/restaurants';
import { ApiError } from '../core/errors';
import { constantTimeEqual, sha256 } from '../core/ids';
import type { Scope } from '../core/scopes';
import type { Runtime } from '../runtime';
import type { Access, AuthContext } from './route';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves the Bearer token to its restaurant and scopes, or throws the spec's 401/403. */
export async function authenticate(
  rt: Runtime,
  header: string | undefined,
  access: Access,
): Promise<AuthContext> {
  if (!header?.trim())
    throw new ApiError(401, 'AUTHENTICATION_REQUIRED', 'Send an API key as "Authorization: Bearer <token>"');
  const match = BEARER.exec(header);
  if (!match)
    throw new ApiError(401, 'INVALID_AUTHENTICATION', 'The Authorization header must be "Bearer <token>"');
  const token = match[1] as string;
  const hash = sha256(token);
  const key = await findKeyByTokenHash(rt.docs, hash);
  // The lookup is by hash; the final comparison is constant-time as well.
  if (!key || !constantTimeEqual(key.token_hash, hash) || key.revoked_at)
    throw new ApiError(401, 'INVALID_AUTHENTICATION', 'The token is invalid, revoked or disconnected');
  const restaurant = await findRestaurant(rt.docs, key.restaurant_id);
  if (!restaurant)
    throw new ApiError(401, 'INVALID_AUTHENTICATION', 'The token is invalid, revoked or disconnected');
  if (restaurant.suspended) throw new ApiError(403, 'RESTAURANT_SUSPENDED', 'The restaurant is suspended');
  const scopes = new Set(key.scopes as Scope[]);
  if (access.kind === 'scopes') {
    const missing = access.scopes.filter((s) => !scopes.has(s));
    if (missing.length)
      throw new ApiError(
        403,
        'INSUFFICIENT_SCOPE',
        `This operation needs the scope(s) ${missing.join(', ')}`,
        {
          required_scopes: access.scopes,
          missing_scopes: missing,
        },
      );
  }
  return { restaurant, scopes, credential: key };
}
