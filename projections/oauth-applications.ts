// OAuth applications as the operator lists them and the pages show them (never the secret's hash).
import type { Projection } from '../src/projection/projection';

export interface OAuthApplicationDoc {
  _id: string;
  name: string;
  logo_url: string | null;
  redirect_uris: string[];
  allowed_scopes: string[];
  published_by_operator: boolean;
  disabled: boolean;
  created_at: string;
  secret_rotated_at: string | null;
  [k: string]: unknown;
}

export const OAUTH_APPLICATIONS = 'oauth_applications';

/** $set of absolute values only: re-applying an event changes nothing. */
export const oauthApplicationsProjection: Projection = {
  name: 'oauth_applications',
  eventTypes: [
    'OAuthApplicationRegistered',
    'OAuthApplicationUpdated',
    'OAuthApplicationSecretRotated',
    'OAuthApplicationDisabled',
    'OAuthApplicationEnabled',
  ],
  async setup() {},
  async apply(event, docs) {
    const d = event.data as Record<string, unknown>;
    const col = docs.collection<OAuthApplicationDoc>(OAUTH_APPLICATIONS);
    const id = d.client_id as string;
    switch (event.type) {
      case 'OAuthApplicationRegistered':
        await col.updateOne(
          { _id: id },
          {
            $set: {
              name: d.name,
              logo_url: d.logo_url ?? null,
              redirect_uris: d.redirect_uris,
              allowed_scopes: d.allowed_scopes,
              published_by_operator: d.published_by_operator,
              disabled: false,
              created_at: d.at,
              secret_rotated_at: null,
            },
          },
          { upsert: true },
        );
        return;
      case 'OAuthApplicationUpdated':
        await col.updateOne({ _id: id }, { $set: { ...(d.changes as Record<string, unknown>) } });
        return;
      case 'OAuthApplicationSecretRotated':
        await col.updateOne({ _id: id }, { $set: { secret_rotated_at: d.at } });
        return;
      case 'OAuthApplicationDisabled':
        await col.updateOne({ _id: id }, { $set: { disabled: true } });
        return;
      case 'OAuthApplicationEnabled':
        await col.updateOne({ _id: id }, { $set: { disabled: false } });
        return;
    }
  },
};
