// OAuth 2 (spec §3 "OAuth authorization code", §5): applications, users who manage a restaurant's
// integrations, authorization codes and connections. Every one is an event stream; tokens are partner
// API keys (commands/credentials, type OAUTH) and are revoked there with ApiKeyRevoked.
import type { Scope } from '../../src/core/scopes';

/** `oauthapp-<client_id>`: an application registered by the operator. */
export const applicationStream = (clientId: string) => `oauthapp-${clientId}`;
/** `user-<user_id>`: a person who signs in to the consent pages and the dashboard. */
export const userStream = (userId: string) => `user-${userId}`;
/** `oauthcode-<sha256(code)>`: one authorization code, from issue to redemption (the code is never stored). */
export const codeStream = (codeHash: string) => `oauthcode-${codeHash}`;
/** `oauthconn-<restaurant>-<client_id>`: the tokens an application holds at a restaurant (the 3-token cap). */
export const connectionStream = (restaurantId: string, clientId: string) =>
  `oauthconn-${restaurantId}-${clientId}`;

export const CLIENT_SECRET_PREFIX = 'couvert_cs_';
export const CODE_PREFIX = 'couvert_ac_';
/** Spec §8: an authorization code is valid 5 minutes, once. */
export const CODE_TTL_SECONDS = 300;
/** Spec §8: active OAuth tokens per restaurant and application. */
export const MAX_ACTIVE_TOKENS = 3;

export interface ApplicationProfile {
  name: string;
  logo_url: string | null;
  redirect_uris: string[];
  allowed_scopes: Scope[];
  /** Published by the operator: works on every restaurant; otherwise the restaurant's API option is needed. */
  published_by_operator: boolean;
}

export type ApplicationEvent =
  | {
      type: 'OAuthApplicationRegistered';
      data: ApplicationProfile & { client_id: string; secret_hash: string; at: string };
    }
  | {
      type: 'OAuthApplicationUpdated';
      data: { client_id: string; at: string; changes: Partial<ApplicationProfile> };
    }
  | { type: 'OAuthApplicationSecretRotated'; data: { client_id: string; secret_hash: string; at: string } }
  | { type: 'OAuthApplicationDisabled'; data: { client_id: string; at: string; disconnect?: true } }
  | { type: 'OAuthApplicationEnabled'; data: { client_id: string; at: string } };

export interface RestaurantAccess {
  restaurant_id: string;
  manage_integrations: boolean;
}

export type UserEvent =
  | { type: 'UserCreated'; data: { user_id: string; email: string; password_hash: string; at: string } }
  | { type: 'UserPasswordChanged'; data: { user_id: string; password_hash: string; at: string } }
  | { type: 'UserRestaurantAccessSet'; data: { user_id: string; at: string } & RestaurantAccess };

export interface CodeIssuedData {
  code_hash: string;
  client_id: string;
  restaurant_id: string;
  user_id: string;
  scopes: Scope[];
  redirect_uri: string;
  code_challenge: string;
  issued_at: string;
  expires_at: string;
}

export type CodeEvent =
  | { type: 'OAuthCodeIssued'; data: CodeIssuedData }
  /** The single use: appended with the stream's expected revision, so two redemptions cannot both win. */
  | { type: 'OAuthCodeRedeemed'; data: { code_hash: string; key_id: string; at: string } }
  /** A second presentation: refused, and the token the code issued is revoked (spec §3). */
  | {
      type: 'OAuthCodeReplayed';
      data: { code_hash: string; key_id: string; restaurant_id: string; at: string };
    };

export type ConnectionEvent =
  | {
      type: 'OAuthTokenAdded';
      data: { restaurant_id: string; client_id: string; key_id: string; scopes: Scope[]; at: string };
    }
  | {
      type: 'OAuthTokenRemoved';
      data: {
        restaurant_id: string;
        client_id: string;
        key_id: string;
        /**
         * never_created: its exchange died before the key was created; key_revoked: the key was revoked
         * outside the connection (the operator's `keys revoke`) (commands/oauth/connections.ts);
         * revoked_by_client: the application revoked it (RFC 7009), by its own removal or by an exchange
         * run between its revocation of the key and that removal.
         */
        reason: 'token_cap' | 'revoked_by_client' | 'code_replayed' | 'never_created' | 'key_revoked';
        at: string;
      };
    }
  | {
      type: 'OAuthApplicationDisconnected';
      data: { restaurant_id: string; client_id: string; key_ids: string[]; by: string; at: string };
    };
