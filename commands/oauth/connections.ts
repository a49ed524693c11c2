// Pure rules for a connection (an application at one restaurant): the active tokens, at most 3 (spec §5):
// adding a fourth retires the oldest; disconnection retires them all.
import type { Scope } from '../../src/core/scopes';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { MAX_ACTIVE_TOKENS } from './events';

export interface ConnectionState {
  /** Active token key ids, oldest first. */
  active: string[];
  /** Every key ever added (a disconnection revokes each again: revoking twice is a no-op). */
  all: string[];
}
export const initialConnection: ConnectionState = { active: [], all: [] };

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
        active: [...state.active.filter((k) => k !== id), id],
        all: [...state.all.filter((k) => k !== id), id],
      };
    }
    case 'OAuthTokenRemoved':
      return { ...state, active: state.active.filter((k) => k !== d.key_id) };
    case 'OAuthApplicationDisconnected':
      return { ...state, active: [] };
    default:
      return state;
  }
}

export interface AddToken {
  restaurant_id: string;
  client_id: string;
  key_id: string;
  scopes: Scope[];
  at: string;
}

/** The token joins; past the cap the oldest are retired (their keys are then revoked by the handler). */
export function decideAddToken(state: ConnectionState, t: AddToken): NewEvent[] {
  if (state.all.includes(t.key_id)) return [];
  const events: NewEvent[] = [{ type: 'OAuthTokenAdded', data: { ...t } }];
  const overflow = state.active.length + 1 - MAX_ACTIVE_TOKENS;
  for (const key_id of state.active.slice(0, Math.max(0, overflow)))
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
