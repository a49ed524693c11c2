// Codes, tokens and connections. The order of the writes of a redemption is chosen so that a crash
// between two of them never leaves a token nobody can revoke (the refusals that need no write — the
// restaurant gone, its API option off, every scope withdrawn, a disconnection since — are made before 1
// as well, so a code refused for them is not used up; they are made again after it; the manager who
// consented no longer managing the restaurant's integrations is one of them):
//   1. the code's single use (OAuthCodeRedeemed, appended with the code stream's expected revision),
//   2. the connection takes the new key id (OAuthTokenAdded, retiring the oldest past 3),
//   3. the retired keys are revoked (ApiKeyRevoked through the credentials command),
//   4. the key is created (ApiKeyCreated, type OAUTH),
//   5. the code stream is read again: a replay recorded meanwhile revokes the new key at once;
//   6. the connection is read again: a disconnection or a newer token's cap that retired the key between
//      2 and 4 (revoking a key not yet created is a no-op) revokes it at once.
// A connection may thus name a key that was never created (a crash after 2); revoking it is a no-op, and
// the next exchange, past KEY_CREATION_GRACE_MS, retires it as never created outside the cap of 3. It may
// also name a key revoked outside it (the operator's `keys revoke`, or step 5's revocation of a replay that
// came before step 2): the next exchange retires it too, outside the cap (keysGone).
import { randomBytes } from 'node:crypto';
import { loadStream, runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { newId, sha256 } from '../../src/core/ids';
import { scopesWithoutCompanion } from '../../src/core/scopes';
import type { WriteDeps } from '../../src/core/write-deps';
import { evolveApiKey, initialApiKey } from '../credentials/decide';
import { apiKeyStream, tokenClaimStream } from '../credentials/events';
import { createApiKey, loadApiKey, revokeApiKey } from '../credentials/handler';
import { loadRestaurant } from '../restaurants/handler';
import { apiOptionAllows } from './api-option';
import { loadApplication } from './application-handler';
import type { ApplicationState } from './applications';
import type { AuthorizationRequest } from './authorize-request';
import { type CodeState, decideRedeem, evolveCode, GrantRefused, initialCode } from './codes';
import {
  type ConnectionState,
  connectionEvolver,
  decideAddToken,
  decideDisconnect,
  decideRemoveToken,
  type GoneKey,
  initialConnection,
  possiblyDeadKeys,
  refuseIfDisconnectedSince,
  retiredKeys,
} from './connections';
import { cutOffBars } from './cut-off';
import { CODE_PREFIX, CODE_TTL_SECONDS, type CodeIssuedData, codeStream, connectionStream } from './events';
import { loadUserById } from './user-handler';

export const generateCode = () => `${CODE_PREFIX}${randomBytes(32).toString('base64url')}`;

/** Consent given: a code for this request and restaurant, returned once (only its hash is stored). */
export async function issueCode(
  deps: WriteDeps,
  request: AuthorizationRequest,
  restaurantId: string,
  userId: string,
  meta: CommandMeta,
) {
  const code = generateCode();
  const hash = sha256(code);
  const now = deps.clock.now();
  const outcome = await runCommand<CodeState>(deps.events, {
    stream: codeStream(hash),
    initial: initialCode,
    evolve: evolveCode,
    metadata: { ...meta, restaurant_id: restaurantId },
    clock: deps.clock,
    decide: (s) => {
      if (s.issued) throw new ApiError(409, 'RESOURCE_CONFLICT', 'code collision'); // 256 random bits: never
      return [
        {
          type: 'OAuthCodeIssued',
          data: {
            code_hash: hash,
            client_id: request.client_id,
            restaurant_id: restaurantId,
            user_id: userId,
            scopes: request.scopes,
            redirect_uri: request.redirect_uri,
            code_challenge: request.code_challenge,
            issued_at: now.toISOString(),
            expires_at: new Date(now.getTime() + CODE_TTL_SECONDS * 1000).toISOString(),
          },
        },
      ];
    },
  });
  return { code, position: outcome.position };
}

/**
 * The connection's active key ids that hold no working token, from the keys' own streams: a key revoked
 * outside the connection (the operator's `keys revoke` revokes the key alone; a replay racing the
 * exchange revokes its token at step 5), and, taken longer than KEY_CREATION_GRACE_MS ago, a key that
 * does not exist (its exchange died between 2 and 4).
 */
async function keysGone(deps: WriteDeps, restaurantId: string, clientId: string, now: Date) {
  const conn = await loadStream(
    deps.events,
    connectionStream(restaurantId, clientId),
    initialConnection,
    connectionEvolver(restaurantId, clientId),
  );
  const pastGrace = new Set(possiblyDeadKeys(conn.state, now));
  const gone: GoneKey[] = [];
  for (const id of conn.state.active) {
    const stream = await deps.events.readStream(apiKeyStream(id));
    const key = stream.reduce(evolveApiKey, initialApiKey);
    // The application's own revocation (RFC 7009) revokes the key, then removes it from the
    // connection: an exchange between those two writes retires it as the client's, not as revoked
    // outside the connection.
    const byClient = stream.some(
      (e) => e.type === 'ApiKeyRevoked' && (e.data as { reason?: unknown }).reason === CLIENT_REVOCATION,
    );
    if (key.key && key.revoked)
      gone.push({ key_id: id, reason: byClient ? 'revoked_by_client' : 'key_revoked' });
    else if (!key.key && pastGrace.has(id)) gone.push({ key_id: id, reason: 'never_created' });
  }
  return gone;
}

/** Revokes keys, ignoring ones that do not exist (a connection may name a key never created). */
async function revokeKeys(deps: WriteDeps, keyIds: readonly string[], reason: string, meta: CommandMeta) {
  let position: bigint | null = null;
  const revoked: string[] = [];
  for (const id of keyIds) {
    try {
      const out = await revokeApiKey(deps, id, reason, meta);
      if (out.appended.length) revoked.push(id);
      if (out.position !== null) position = out.position;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
  }
  return { position, revoked };
}

const connectionCommand = (deps: WriteDeps, restaurantId: string, clientId: string, meta: CommandMeta) => ({
  stream: connectionStream(restaurantId, clientId),
  initial: initialConnection,
  evolve: connectionEvolver(restaurantId, clientId),
  metadata: { ...meta, restaurant_id: restaurantId },
  clock: deps.clock,
});

/**
 * What a code grants now, or GrantRefused: its restaurant's profile (the restaurant must still exist, the
 * manager who consented must still manage its integrations and, for a third-party application, it must
 * allow it) and the scopes consented to that the application may still
 * ask for.
 */
async function grantOf(deps: WriteDeps, app: ApplicationState, code: CodeIssuedData) {
  const restaurant = await loadRestaurant(deps, code.restaurant_id);
  if (!restaurant.profile) throw new GrantRefused('The restaurant of this code no longer exists');
  // The consent is the manager's to give: one who no longer manages the restaurant's integrations (the
  // operator withdrew it in the 5 minutes before the exchange) gives no token.
  const manager = await loadUserById(deps, code.user_id);
  if (manager.restaurants[code.restaurant_id] !== true)
    throw new GrantRefused(
      "The manager who consented no longer manages this restaurant's integrations: send a manager who does to /oauth/authorize again",
    );
  // A third-party application works only where the restaurant's API option is on (spec §5): it may have
  // been turned off since the manager consented.
  if (!apiOptionAllows(restaurant.profile, app.profile))
    throw new GrantRefused(
      'The restaurant has turned its API option off: it no longer allows this application',
    );
  // The scopes consented to that the application may still ask for: the operator may have withdrawn
  // some since (a bootstrap file's update). The token answer's `scope` says what was granted (RFC 6749
  // §5.1); none left is a refusal.
  // A scope whose companion was withdrawn (CUSTOMERS_WRITE left without CUSTOMERS_READ) goes too: it
  // would do nothing alone, and the consent refuses to promise it (scopesWithoutCompanion).
  const allowed = new Set(app.profile?.allowed_scopes ?? []);
  const kept = code.scopes.filter((s) => allowed.has(s));
  const lone = new Set(scopesWithoutCompanion(kept).map((l) => l.scope));
  const scopes = kept.filter((s) => !lone.has(s));
  if (!scopes.length)
    throw new GrantRefused('The application may no longer ask for any of the scopes this code was given');
  return { profile: restaurant.profile, scopes };
}

const CUT_OFF_REFUSAL =
  'The operator disconnected this application from every restaurant after this code was issued: connect again through the authorization flow';

/** A code issued (at that store position) before the application's latest cut-off grants nothing. */
function refuseIfCutOffSince(app: ApplicationState, codeIssuedAt: bigint | null): void {
  if (cutOffBars(codeIssuedAt, app.cut_off_position)) throw new GrantRefused(CUT_OFF_REFUSAL);
}

export interface IssuedToken {
  token: string;
  keyId: string;
  scopes: string[];
  restaurant: { id: string; name: string; slug: string };
  position: bigint | null;
}

export async function redeemCode(
  deps: WriteDeps,
  app: ApplicationState,
  input: { code: string; redirect_uri: string | undefined; code_verifier: string | undefined },
  meta: CommandMeta,
): Promise<IssuedToken> {
  const clientId = app.client_id as string;
  if (!input.code.startsWith(CODE_PREFIX) || input.code.length > 200)
    throw new GrantRefused('The authorization code is unknown');
  const hash = sha256(input.code);
  const keyId = newId('key');
  const now = deps.clock.now();
  const redemption = {
    client_id: clientId,
    redirect_uri: input.redirect_uri,
    code_verifier: input.code_verifier,
    key_id: keyId,
    now,
  };
  // The refusals that need no write are made before the code's single use too (and again after it, for
  // what changed meanwhile): a code refused for them is not used up, so it works once the restaurant
  // allows the application again, and presenting it then is no replay (it was refused as "already used;
  // the token it issued is revoked", of a token never issued, and recorded as OAuthCodeReplayed).
  const before = await loadStream(deps.events, codeStream(hash), initialCode, evolveCode);
  const unused = before.state.issued;
  if (unused && decideRedeem(before.state, redemption).some((e) => e.type === 'OAuthCodeRedeemed')) {
    await grantOf(deps, app, unused);
    const conn = await loadStream(
      deps.events,
      connectionStream(unused.restaurant_id, clientId),
      initialConnection,
      connectionEvolver(unused.restaurant_id, clientId),
    );
    refuseIfDisconnectedSince(conn.state, before.state.issued_position);
    refuseIfCutOffSince(app, before.state.issued_position);
  }
  const redeemed = await runCommand<CodeState>(deps.events, {
    stream: codeStream(hash),
    initial: initialCode,
    evolve: evolveCode,
    metadata: meta,
    clock: deps.clock,
    decide: (s) =>
      decideRedeem(s, redemption).map((e) => ({
        ...e,
        metadata: { restaurant_id: s.issued?.restaurant_id ?? null },
      })),
  });
  const code = redeemed.state.issued;
  if (!code) throw new GrantRefused('The authorization code is unknown');
  if (redeemed.state.redeemed_key_id !== keyId) {
    // A second presentation: the replay is on the record (OAuthCodeReplayed); the token it issued goes.
    const issuedKey = redeemed.state.redeemed_key_id as string;
    await revokeKeys(deps, [issuedKey], 'authorization code replayed', meta);
    await runCommand<ConnectionState>(deps.events, {
      ...connectionCommand(deps, code.restaurant_id, clientId, meta),
      decide: (s) =>
        decideRemoveToken(
          s,
          { restaurant_id: code.restaurant_id, client_id: clientId, key_id: issuedKey },
          'code_replayed',
          now.toISOString(),
        ),
    });
    throw new GrantRefused(
      'The authorization code was already used; the token it issued is revoked (a code works once: send the manager to /oauth/authorize again)',
    );
  }
  refuseIfCutOffSince(app, redeemed.state.issued_position);
  const { profile, scopes } = await grantOf(deps, app, code);
  // A key id the connection took whose exchange died before creating the key (a crash between 2 and 4),
  // or whose key was revoked outside the connection, would count toward the cap for ever and retire a
  // working token early: those past the grace whose key does not exist, and those whose key is revoked,
  // are retired outside the count (docs/OAUTH.md).
  const gone = await keysGone(deps, code.restaurant_id, clientId, now);
  const connection = await runCommand<ConnectionState>(deps.events, {
    ...connectionCommand(deps, code.restaurant_id, clientId, meta),
    decide: (s) =>
      decideAddToken(
        s,
        {
          restaurant_id: code.restaurant_id,
          client_id: clientId,
          key_id: keyId,
          scopes,
          at: now.toISOString(),
        },
        gone,
        redeemed.state.issued_position,
      ),
  });
  await revokeKeys(deps, retiredKeys(connection.appended), 'token cap: a fourth token was issued', meta);
  const name = app.profile?.name ?? clientId;
  const created = await createApiKey(
    deps,
    {
      restaurantId: code.restaurant_id,
      keyId,
      name: `${name} (OAuth)`.slice(0, 200),
      scopes,
      type: 'OAUTH',
      application: { id: clientId, name },
    },
    { ...meta, restaurant_id: code.restaurant_id },
  );
  const after = await loadStream(deps.events, codeStream(hash), initialCode, evolveCode);
  if (after.state.replayed) {
    await revokeKeys(deps, [keyId], 'authorization code replayed', meta);
    throw new GrantRefused(
      'The authorization code was already used; the token it issued is revoked (a code works once: send the manager to /oauth/authorize again)',
    );
  }
  // Between 2 and 4 a disconnection, or a newer token past the cap, may have retired this key before it
  // existed (revoking it then was a no-op): read the connection again, as for a replay.
  const current = await loadStream(
    deps.events,
    connectionStream(code.restaurant_id, clientId),
    initialConnection,
    connectionEvolver(code.restaurant_id, clientId),
  );
  // The application may have been disabled with --disconnect since it authenticated: its sweep of the
  // connections may have run before this token was added (another process), so the cut-off is read
  // again now the key exists; a sweep that began after this read sees the token (docs/OAUTH.md).
  const cutOff = (await loadApplication(deps, clientId)).cut_off_position;
  if (cutOff !== null && (redeemed.state.issued_position ?? 0n) < cutOff) {
    await revokeKeys(
      deps,
      [keyId],
      'application disabled with --disconnect while the token was issued',
      meta,
    );
    throw new GrantRefused(CUT_OFF_REFUSAL);
  }
  if (!current.state.active.includes(keyId)) {
    await revokeKeys(deps, [keyId], 'retired while it was issued (disconnection or token cap)', meta);
    throw new GrantRefused(
      'The connection changed while the token was issued (the application was disconnected, or newer tokens took its place); the token is revoked',
    );
  }
  return {
    token: created.token,
    keyId,
    scopes,
    restaurant: { id: code.restaurant_id, name: profile.name, slug: profile.slug },
    position: created.position,
  };
}

/** The reason an application's own revocation (RFC 7009) records on the key (ApiKeyRevoked). */
export const CLIENT_REVOCATION = 'revoked by the application (RFC 7009)';

/**
 * RFC 7009: revokes the token when it is an OAuth token of this client; anything else (unknown, already
 * revoked, another client's, a dashboard key) changes nothing and is not told apart.
 */
export async function revokeClientToken(deps: WriteDeps, clientId: string, token: string, meta: CommandMeta) {
  if (token.length > 512) return { position: null };
  const hash = sha256(token);
  const claims = await deps.events.readStream(tokenClaimStream(hash), { direction: 'backwards', limit: 1 });
  const owner = claims[0]?.type === 'Claimed' ? (claims[0].data as { owner: string }).owner : null;
  if (!owner) return { position: null };
  const key = await loadApiKey(deps, owner);
  if (!key.key || key.revoked || key.key.type !== 'OAUTH' || key.key.application?.id !== clientId)
    return { position: null };
  const restaurantId = key.key.restaurant_id;
  const out = await revokeKeys(deps, [owner], CLIENT_REVOCATION, meta);
  const conn = await runCommand<ConnectionState>(deps.events, {
    ...connectionCommand(deps, restaurantId, clientId, meta),
    decide: (s) =>
      decideRemoveToken(
        s,
        { restaurant_id: restaurantId, client_id: clientId, key_id: owner },
        'revoked_by_client',
        deps.clock.now().toISOString(),
      ),
  });
  return { position: conn.position ?? out.position };
}

/**
 * The restaurant disconnects an application: every active token of it there is revoked (and, through
 * ApiKeyRevoked, the webhook endpoints they created are deleted by the webhooks module). Every key the
 * connection ever held is revoked again (a no-op when already revoked), which also heals a crash
 * between an earlier decision and its revocations.
 */
export async function disconnectApplication(
  deps: WriteDeps,
  restaurantId: string,
  clientId: string,
  meta: CommandMeta,
) {
  const at = deps.clock.now().toISOString();
  const conn = await runCommand<ConnectionState>(deps.events, {
    ...connectionCommand(deps, restaurantId, clientId, meta),
    decide: (s) => decideDisconnect(s, { restaurant_id: restaurantId, client_id: clientId }, meta.actor, at),
  });
  const out = await revokeKeys(deps, conn.state.all, 'application disconnected by the restaurant', meta);
  return {
    disconnected: conn.appended.length > 0,
    revoked: out.revoked,
    position: out.position ?? conn.position,
  };
}
