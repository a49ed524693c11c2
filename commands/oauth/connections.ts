// Pure rules for a connection (an application at one restaurant): the active tokens, at most 3 (spec §5):
// adding a fourth retires the oldest; disconnection retires them all.
import type { Scope } from '../../src/core/scopes';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { GrantRefused } from './codes';
import { MAX_ACTIVE_TOKENS } from './events';

export interface ConnectionState {
  /** Active token key ids, oldest first. */
  active: string[];
  /** Every key ever added (a disconnection revokes each again: revoking twice is a no-op). */
  all: string[];
  /** When each active key joined (its OAuthTokenAdded's `at`): tells an exchange in flight from a dead one. */
  added_at: Record<string, string>;
  /**
   * The store position of the restaurant's latest disconnection of the application: a code issued before
   * it (a lower position: the order of the log, not of clocks) grants nothing.
   */
  disconnected_position: bigint | null;
}
export const initialConnection: ConnectionState = {
  active: [],
  all: [],
  added_at: {},
  disconnected_position: null,
};

/**
 * How long after the connection took a key id its exchange may still be creating the key. Past it, an
 * active key id whose key does not exist belongs to an exchange that died between the two writes
 * (docs/OAUTH.md): it no longer counts toward the cap. A live exchange takes well under a second; one
 * slower than this that creates its key after all finds it retired and revokes it (token-handler step 6).
 */
export const KEY_CREATION_GRACE_MS = 60_000;

/** The active key ids that may be dead: taken by the connection longer than the grace ago. */
export const possiblyDeadKeys = (state: ConnectionState, now: Date): string[] =>
  state.active.filter((k) => {
    const at = Date.parse(state.added_at[k] ?? '');
    return !Number.isFinite(at) || now.getTime() - at >= KEY_CREATION_GRACE_MS;
  });

/**
 * The fold of one connection. Its stream name (`oauthconn-<restaurant>-<client_id>`) is shared by
 * another connection when ids hold a `-` (restaurant `r` with client `a-b`, restaurant `r-a` with
 * client `b`): each event names its restaurant and client, and only this connection's count, so one
 * restaurant's disconnection or fourth token never retires another's tokens. Sharing the name costs
 * the two connections a retried append when they change at the same moment, nothing else.
 */
export const connectionEvolver =
  (restaurantId: string, clientId: string) =>
  (state: ConnectionState, event: RecordedEvent): ConnectionState => {
    const d = event.data as { restaurant_id?: unknown; client_id?: unknown };
    if (d.restaurant_id !== restaurantId || d.client_id !== clientId) return state;
    return evolveConnection(state, event);
  };

export function evolveConnection(state: ConnectionState, event: RecordedEvent): ConnectionState {
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'OAuthTokenAdded': {
      const id = d.key_id as string;
      return {
        ...state,
        active: [...state.active.filter((k) => k !== id), id],
        all: [...state.all.filter((k) => k !== id), id],
        added_at: { ...state.added_at, [id]: d.at as string },
      };
    }
    case 'OAuthTokenRemoved': {
      const { [d.key_id as string]: _gone, ...added_at } = state.added_at;
      return { ...state, active: state.active.filter((k) => k !== d.key_id), added_at };
    }
    case 'OAuthApplicationDisconnected':
      return { ...state, active: [], added_at: {}, disconnected_position: event.position };
    default:
      return state;
  }
}

/** An active key id that holds no working token (decideAddToken retires it outside the cap). */
export interface GoneKey {
  key_id: string;
  reason: 'never_created' | 'key_revoked' | 'revoked_by_client';
}

export interface AddToken {
  restaurant_id: string;
  client_id: string;
  key_id: string;
  scopes: Scope[];
  at: string;
}

/** A code issued (at that store position) before the restaurant's latest disconnection grants nothing. */
export function refuseIfDisconnectedSince(state: ConnectionState, codeIssuedAt: bigint | null): void {
  if (
    codeIssuedAt !== null &&
    state.disconnected_position !== null &&
    codeIssuedAt < state.disconnected_position
  )
    throw new GrantRefused(
      'The restaurant disconnected this application after this code was issued: connect again through the authorization flow',
    );
}

/**
 * The token joins; past the cap the oldest are retired (their keys are then revoked by the handler).
 * `gone`: active key ids that hold no working token, as the handler found them in the keys' streams: an
 * exchange that died before creating the key (`never_created`, past KEY_CREATION_GRACE_MS), or a key
 * revoked outside the connection (`key_revoked`: the operator's `keys revoke`, or a replay that raced the
 * exchange; `revoked_by_client`: the application's own revocation, between its two writes). Retired as such, they do not count toward the cap, so a working token is not retired in
 * their place. `codeIssuedAt`: the store position of the code's issue; a
 * code the manager consented to before the restaurant disconnected the application is refused (the
 * disconnection ends what was consented to until then: a code up to 5 minutes old would undo it).
 */
export function decideAddToken(
  state: ConnectionState,
  t: AddToken,
  gone: readonly GoneKey[] = [],
  codeIssuedAt: bigint | null = null,
): NewEvent[] {
  if (state.all.includes(t.key_id)) return [];
  refuseIfDisconnectedSince(state, codeIssuedAt);
  const events: NewEvent[] = [{ type: 'OAuthTokenAdded', data: { ...t } }];
  const ghosts = state.active.filter((k) => gone.some((g) => g.key_id === k));
  for (const key_id of ghosts)
    events.push({
      type: 'OAuthTokenRemoved',
      data: {
        restaurant_id: t.restaurant_id,
        client_id: t.client_id,
        key_id,
        reason: gone.find((g) => g.key_id === key_id)?.reason as GoneKey['reason'],
        at: t.at,
      },
    });
  const counted = state.active.filter((k) => !ghosts.includes(k));
  const overflow = counted.length + 1 - MAX_ACTIVE_TOKENS;
  for (const key_id of counted.slice(0, Math.max(0, overflow)))
    events.push({
      type: 'OAuthTokenRemoved',
      data: { restaurant_id: t.restaurant_id, client_id: t.client_id, key_id, reason: 'token_cap', at: t.at },
    });
  return events;
}

export function decideRemoveToken(
  state: ConnectionState,
  ids: { restaurant_id: string; client_id: string; key_id: string },
  reason: 'revoked_by_client' | 'code_replayed',
  at: string,
): NewEvent[] {
  if (!state.active.includes(ids.key_id)) return [];
  return [{ type: 'OAuthTokenRemoved', data: { ...ids, reason, at } }];
}

export function decideDisconnect(
  state: ConnectionState,
  ids: { restaurant_id: string; client_id: string },
  by: string,
  at: string,
): NewEvent[] {
  if (!state.active.length) return [];
  return [{ type: 'OAuthApplicationDisconnected', data: { ...ids, key_ids: [...state.active], by, at } }];
}

/** The keys a decision retired (to revoke). */
export const retiredKeys = (events: NewEvent[]): string[] =>
  events.flatMap((e) =>
    e.type === 'OAuthTokenRemoved'
      ? [(e.data as { key_id: string }).key_id]
      : e.type === 'OAuthApplicationDisconnected'
        ? (e.data as { key_ids: string[] }).key_ids
        : [],
  );
