// What `keys list` says of each key's grant (the scopes its OAuth consent gave), from the api_keys read
// model: version 2 keeps it in each document. A store still serving version 1 (built before, while
// version 2 is rebuilt beside it: projections/api-keys.ts) has no grant in its documents; for those
// only, the key's own stream is folded, as every listing once did. Remove that fallback with version 1.
import { scopesBeyond } from '../../commands/credentials/decide';
import { loadApiKey } from '../../commands/credentials/handler';
import type { ApiKeyDoc } from '../../projections/api-keys';
import type { Scope } from '../core/scopes';
import type { WriteDeps } from '../core/write-deps';

/** The scopes an OAuth token holds beyond its manager's consent; none for a dashboard or operator key. */
export async function scopesBeyondGrantOf(deps: Pick<WriteDeps, 'events'>, key: ApiKeyDoc): Promise<Scope[]> {
  if (key.type !== 'OAUTH') return [];
  const granted = key.granted_scopes ?? (await loadApiKey(deps, key._id)).granted_scopes;
  return scopesBeyond(key, granted);
}
