// Read side of OAuth: applications, and the connections a restaurant has (its active OAuth tokens,
// grouped by application).
import { apiOptionAllows } from '../commands/oauth/api-option';
import { API_KEYS, type ApiKeyDoc } from '../projections/api-keys';
import { OAUTH_APPLICATIONS, type OAuthApplicationDoc } from '../projections/oauth-applications';
import { canonicalScopes, type Scope } from '../src/core/scopes';
import type { DocumentStore } from '../src/ports/document-store';
import { keyWithdrawn } from './api-keys';
import { findRestaurant } from './restaurants';

export const listApplications = (docs: DocumentStore) =>
  docs.collection<OAuthApplicationDoc>(OAUTH_APPLICATIONS).find({}, { sort: { _id: 1 } });

export const findApplication = (docs: DocumentStore, clientId: string) =>
  docs.collection<OAuthApplicationDoc>(OAUTH_APPLICATIONS).findOne({ _id: clientId });

/**
 * Whether a credential is barred from acting for its restaurant now by the API option's rule
 * (`apiOptionAllows`, spec §5). Only OAuth tokens are concerned (a restaurant's own keys are not an
 * application's). A third-party application's tokens are not revoked when the option goes off: they
 * answer 401 and their endpoints receive nothing until it is on again. The application is looked up
 * only when the option alone does not decide.
 */
export async function barredByApiOption(
  docs: DocumentStore,
  key: Pick<ApiKeyDoc, 'type' | 'application'>,
  restaurant: { api_option: boolean } | null,
): Promise<boolean> {
  if (key.type !== 'OAUTH' || restaurant === null) return false;
  const app =
    apiOptionAllows(restaurant, null) || !key.application
      ? null
      : await findApplication(docs, key.application.id);
  return !apiOptionAllows(restaurant, app);
}

/**
 * The credentials among `keys` that `barredByApiOption` bars now, asked once for a page of them: the
 * applications concerned are looked up together (one query), and only when the option alone does not
 * decide. Ids of the barred keys.
 */
export async function barredCredentials(
  docs: DocumentStore,
  keys: readonly Pick<ApiKeyDoc, '_id' | 'type' | 'application'>[],
  restaurant: { api_option: boolean } | null,
): Promise<Set<string>> {
  const oauth = keys.filter((k) => k.type === 'OAUTH');
  if (restaurant === null || !oauth.length || apiOptionAllows(restaurant, null)) return new Set();
  const ids = [...new Set(oauth.flatMap((k) => (k.application ? [k.application.id] : [])))];
  const apps = ids.length
    ? await docs.collection<OAuthApplicationDoc>(OAUTH_APPLICATIONS).find({ _id: { $in: ids } })
    : [];
  const byId = new Map(apps.map((a) => [a._id, a]));
  return new Set(
    oauth
      .filter((k) => !apiOptionAllows(restaurant, k.application ? byId.get(k.application.id) : null))
      .map((k) => k._id),
  );
}

export interface Connection {
  client_id: string;
  name: string;
  logo_url: string | null;
  /** Every scope an active token of the application holds. */
  scopes: Scope[];
  /** When the oldest active token was issued. */
  connected_at: string;
  active_tokens: number;
  /** The latest recorded use of any of its active tokens (hour resolution); null if none recorded. */
  last_used_at: string | null;
  /**
   * A third-party application while the restaurant's API option is off (`apiOptionAllows`): its tokens
   * are kept but answer 401 and its endpoints receive nothing until the option is on again.
   */
  paused_by_api_option: boolean;
}

/**
 * The restaurants where `clientId` holds an active token, sorted: where an operator cutting the
 * application off must disconnect it (applications disable --disconnect).
 */
export async function restaurantsConnectedTo(docs: DocumentStore, clientId: string): Promise<string[]> {
  const keys = await docs
    .collection<ApiKeyDoc>(API_KEYS)
    .find({ type: 'OAUTH', 'application.id': clientId, revoked_at: null });
  return [...new Set(keys.map((k) => k.restaurant_id))].sort();
}

export async function listConnections(docs: DocumentStore, restaurantId: string): Promise<Connection[]> {
  const keys = await docs
    .collection<ApiKeyDoc>(API_KEYS)
    .find(
      { restaurant_id: restaurantId, type: 'OAUTH', revoked_at: null },
      { sort: { created_at: 1, _id: 1 } },
    );
  const byApp = new Map<string, ApiKeyDoc[]>();
  // A token its application's cut-off bars connects nothing, revoked by the sweep or not yet.
  for (const k of keys) {
    if (keyWithdrawn(k)) continue;
    const id = k.application?.id;
    if (!id) continue;
    byApp.set(id, [...(byApp.get(id) ?? []), k]);
  }
  const out: Connection[] = [];
  const restaurant = byApp.size ? await findRestaurant(docs, restaurantId) : null;
  for (const [clientId, list] of byApp) {
    const app = await findApplication(docs, clientId);
    out.push({
      client_id: clientId,
      name: app?.name ?? list[0]?.application?.name ?? clientId,
      logo_url: app?.logo_url ?? null,
      scopes: canonicalScopes(list.flatMap((k) => k.scopes)),
      connected_at: list[0]?.created_at as string,
      active_tokens: list.length,
      last_used_at: list.reduce<string | null>(
        (latest, k) => (k.last_used_at && (!latest || k.last_used_at > latest) ? k.last_used_at : latest),
        null,
      ),
      paused_by_api_option: restaurant !== null && !apiOptionAllows(restaurant, app),
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.client_id.localeCompare(b.client_id));
}
