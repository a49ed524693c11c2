import { ApiError, validationError } from '../../src/core/errors';
import { canonicalScopes, isScope, type Scope } from '../../src/core/scopes';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { type ApiKeyCreatedData, TOKEN_PREFIX } from './events';

export interface ApiKeyState {
  key: ApiKeyCreatedData | null;
  revoked: boolean;
  /** The scopes the key was created with: for an OAuth token, what the manager consented to (the grant). */
  granted_scopes: Scope[];
}
export const initialApiKey: ApiKeyState = { key: null, revoked: false, granted_scopes: [] };

/**
 * The grant an `ApiKeyCreated` records: the scopes the key was created with. One reading for the
 * key's stream (evolveApiKey) and the api_keys read model, so a listing from either agrees.
 */
export function grantOf(created: Record<string, unknown>): Scope[] {
  return (created.scopes as Scope[] | undefined) ?? [];
}

export function evolveApiKey(state: ApiKeyState, event: RecordedEvent): ApiKeyState {
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'ApiKeyCreated':
      return {
        key: d as unknown as ApiKeyCreatedData,
        revoked: false,
        granted_scopes: grantOf(d),
      };
    case 'ApiKeyUpdated': {
      if (!state.key) return state;
      const next = { ...state.key };
      if (d.name !== undefined) next.name = d.name as string;
      if (d.scopes !== undefined) next.scopes = d.scopes as Scope[];
      return { ...state, key: next };
    }
    case 'ApiKeyRevoked':
      return { ...state, revoked: true };
    default:
      return state;
  }
}

/**
 * The scopes an OAuth token holds beyond what the manager consented to (widened by an earlier keys
 * update), in the order it holds them; none for any other key.
 */
export function scopesBeyond(
  key: { type: string; scopes: readonly string[] },
  granted: readonly string[],
): Scope[] {
  if (key.type !== 'OAUTH') return [];
  const consented = new Set(granted);
  return key.scopes.filter((s) => !consented.has(s)) as Scope[];
}

export function checkScopes(scopes: readonly string[]): Scope[] {
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length)
    throw validationError(
      unknown.map((s) => ({ path: 'scopes', code: 'invalid_enum', message: `unknown scope ${s}` })),
      'Unknown scopes',
    );
  return canonicalScopes(scopes);
}

export function checkToken(token: string): void {
  if (
    !token.startsWith(TOKEN_PREFIX) ||
    token.length < TOKEN_PREFIX.length + 8 ||
    !/^[A-Za-z0-9_-]+$/.test(token)
  )
    throw validationError(
      [
        {
          path: 'token',
          code: 'invalid_format',
          message: `a token must start with ${TOKEN_PREFIX} and carry 8+ URL-safe characters`,
        },
      ],
      'The token is invalid',
    );
}

export function decideCreateKey(state: ApiKeyState, data: ApiKeyCreatedData): NewEvent[] {
  if (state.key) {
    // The same key created again (bootstrap applied twice): nothing to do; anything else is a conflict.
    if (state.key.token_hash === data.token_hash && state.key.restaurant_id === data.restaurant_id) return [];
    throw new ApiError(409, 'RESOURCE_CONFLICT', `API key ${data.key_id} already exists`);
  }
  if (!data.name.trim() || data.name.length > 200)
    throw validationError([
      { path: 'name', code: 'out_of_range', message: 'name must be 1 to 200 characters' },
    ]);
  return [{ type: 'ApiKeyCreated', data: data as unknown as Record<string, unknown> }];
}

export function decideUpdateKey(
  state: ApiKeyState,
  keyId: string,
  changes: { name?: string; scopes?: Scope[] },
  at: string,
): NewEvent[] {
  if (!state.key) throw new ApiError(404, 'RESOURCE_NOT_FOUND', `API key ${keyId} not found`);
  const diff: { name?: string; scopes?: Scope[] } = {};
  if (changes.name !== undefined && changes.name !== state.key.name) diff.name = changes.name;
  if (changes.scopes !== undefined && changes.scopes.join() !== state.key.scopes.join())
    diff.scopes = changes.scopes;
  // An OAuth token acts on the manager's consent: the operator may narrow its scopes (and give back what
  // was narrowed), never grant it one the manager did not consent to; more takes a new consent. A scope
  // the token holds now is not refused either: a token widened before this rule (keys update could give
  // it any scope) must be narrowable step by step, and keeping a scope adds nothing.
  if (diff.scopes && state.key.type === 'OAUTH') {
    const allowed = new Set([...state.granted_scopes, ...state.key.scopes]);
    const beyond = diff.scopes.filter((s) => !allowed.has(s));
    if (beyond.length) {
      const app = state.key.application;
      throw validationError(
        [
          {
            path: 'scopes',
            code: 'not_granted',
            message: `${beyond.join(', ')} ${beyond.length > 1 ? 'were' : 'was'} not consented to by the restaurant's manager (the grant: ${state.granted_scopes.join(', ')})`,
          },
        ],
        `API key ${keyId} is an OAuth token of the application ${app ? `${app.name} (${app.id})` : '(unknown)'}: its scopes may be narrowed within what the manager consented to, never widened beyond it. For more, the application sends the manager through the consent flow again (/oauth/authorize) for a new token`,
      );
    }
  }
  if (!Object.keys(diff).length) return [];
  return [
    { type: 'ApiKeyUpdated', data: { key_id: keyId, restaurant_id: state.key.restaurant_id, at, ...diff } },
  ];
}

export function decideRevokeKey(state: ApiKeyState, keyId: string, reason: string, at: string): NewEvent[] {
  if (!state.key) throw new ApiError(404, 'RESOURCE_NOT_FOUND', `API key ${keyId} not found`);
  if (state.revoked) return [];
  return [
    { type: 'ApiKeyRevoked', data: { key_id: keyId, restaurant_id: state.key.restaurant_id, at, reason } },
  ];
}
