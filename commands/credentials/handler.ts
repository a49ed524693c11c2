import { randomBytes } from 'node:crypto';
import { claim } from '../../src/core/claims';
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { notFound } from '../../src/core/errors';
import { deterministicUuid, newId, sha256 } from '../../src/core/ids';
import type { Scope } from '../../src/core/scopes';
import type { WriteDeps } from '../../src/core/write-deps';
import { loadRestaurant } from '../restaurants/handler';
import {
  type ApiKeyState,
  checkScopes,
  checkToken,
  decideCreateKey,
  decideRevokeKey,
  decideUpdateKey,
  evolveApiKey,
  initialApiKey,
} from './decide';
import { apiKeyStream, type CredentialType, TOKEN_PREFIX, tokenClaimStream } from './events';

/** The state of an API key (its stream folded): `key` null when there is no such key. */
export async function loadApiKey(deps: Pick<WriteDeps, 'events'>, keyId: string): Promise<ApiKeyState> {
  const events = await deps.events.readStream(apiKeyStream(keyId));
  return events.reduce(evolveApiKey, initialApiKey);
}

/** 32 random bytes, base64url: 256 bits an attacker cannot guess. */
export const generateToken = () => `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;

export interface CreateKeyInput {
  restaurantId: string;
  name: string;
  scopes: readonly string[];
  /** Given by a bootstrap file; otherwise generated. */
  token?: string;
  keyId?: string;
  type?: CredentialType;
  application?: { id: string; name: string } | null;
}

/** Returns the plain token once: it is stored only as a hash. */
export async function createApiKey(deps: WriteDeps, input: CreateKeyInput, meta: CommandMeta) {
  const restaurant = await loadRestaurant(deps, input.restaurantId);
  if (!restaurant.exists) throw notFound(`restaurant ${input.restaurantId}`);
  const scopes = checkScopes(input.scopes);
  const token = input.token ?? generateToken();
  checkToken(token);
  const keyId = input.keyId ?? newId('key');
  const hash = sha256(token);
  const m = { ...meta, restaurant_id: input.restaurantId };
  await claim(deps, tokenClaimStream(hash), keyId, m, 'token');
  const data = {
    key_id: keyId,
    restaurant_id: input.restaurantId,
    name: input.name,
    token_hash: hash,
    token_hint: token.slice(-4),
    scopes,
    type: input.type ?? 'API_KEY',
    application: input.application ?? null,
    at: deps.clock.now().toISOString(),
  } as const;
  const outcome = await runCommand<ApiKeyState>(deps.events, {
    stream: apiKeyStream(keyId),
    initial: initialApiKey,
    evolve: evolveApiKey,
    metadata: m,
    clock: deps.clock,
    decide: (s) =>
      decideCreateKey(s, { ...data, scopes }).map((e) => ({
        ...e,
        // From the key id and its token: a retried create is recognised as the same append, while a
        // concurrent create of the same id with another token conflicts instead of passing for it (and
        // returning a token that authenticates nothing).
        id: deterministicUuid(`apikey:${keyId}:${hash}`),
      })),
  });
  return { ...outcome, keyId, token };
}

export async function updateApiKey(
  deps: WriteDeps,
  keyId: string,
  changes: { name?: string; scopes?: readonly string[] },
  meta: CommandMeta,
) {
  const scopes: Scope[] | undefined = changes.scopes ? checkScopes(changes.scopes) : undefined;
  return runCommand<ApiKeyState>(deps.events, {
    stream: apiKeyStream(keyId),
    initial: initialApiKey,
    evolve: evolveApiKey,
    metadata: meta,
    clock: deps.clock,
    decide: (s) =>
      decideUpdateKey(s, keyId, { name: changes.name, scopes }, deps.clock.now().toISOString()).map((e) => ({
        ...e,
        metadata: { restaurant_id: s.key?.restaurant_id ?? null },
      })),
  });
}

export async function revokeApiKey(deps: WriteDeps, keyId: string, reason: string, meta: CommandMeta) {
  return runCommand<ApiKeyState>(deps.events, {
    stream: apiKeyStream(keyId),
    initial: initialApiKey,
    evolve: evolveApiKey,
    metadata: meta,
    clock: deps.clock,
    decide: (s) =>
      decideRevokeKey(s, keyId, reason, deps.clock.now().toISOString()).map((e) => ({
        ...e,
        metadata: { restaurant_id: s.key?.restaurant_id ?? null },
      })),
  });
}
