// API keys (stream `apikey-<id>`): partner credentials bound to one restaurant and a scope set.
// OAuth-issued tokens are API keys too, with type OAUTH and their application.
import type { Scope } from '../../src/core/scopes';

export type CredentialType = 'API_KEY' | 'OAUTH';

export interface ApiKeyCreatedData {
  key_id: string;
  restaurant_id: string;
  name: string;
  /** SHA-256 of the token: the token itself is never stored. */
  token_hash: string;
  /** The last four characters, so an operator can tell keys apart. */
  token_hint: string;
  scopes: Scope[];
  type: CredentialType;
  application: { id: string; name: string } | null;
  at: string;
}

export type ApiKeyEvent =
  | { type: 'ApiKeyCreated'; data: ApiKeyCreatedData }
  | {
      type: 'ApiKeyUpdated';
      data: { key_id: string; restaurant_id: string; at: string; name?: string; scopes?: Scope[] };
    }
  | { type: 'ApiKeyRevoked'; data: { key_id: string; restaurant_id: string; at: string; reason: string } };

export const apiKeyStream = (id: string) => `apikey-${id}`;
export const tokenClaimStream = (hash: string) => `apikey-token-${hash}`;
export const TOKEN_PREFIX = 'couvert_pk_';
