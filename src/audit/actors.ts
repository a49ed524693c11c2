// Who did it, from an event's metadata.actor ("credential:key_…", "operator:cli", "system:scheduler",
// "manager:…", "client:<OAuth client_id>"), for auditors (everything) and for partners (never another partner's identity).

export type AuditorActorKind =
  | 'credential'
  | 'application'
  | 'manager'
  | 'operator'
  | 'scheduler'
  | 'system'
  | 'unknown';

export interface AuditorActor {
  kind: AuditorActorKind;
  /** The credential id, user, operator tool or system job; null when the event names no actor. */
  id: string | null;
  /** As written on the event. */
  raw: string | null;
}

export function auditorActor(actor: unknown): AuditorActor {
  if (typeof actor !== 'string' || actor === '') return { kind: 'unknown', id: null, raw: null };
  const colon = actor.indexOf(':');
  const prefix = colon < 0 ? actor : actor.slice(0, colon);
  const id = colon < 0 ? null : actor.slice(colon + 1);
  switch (prefix) {
    case 'credential':
      return { kind: 'credential', id, raw: actor };
    case 'client':
      // An OAuth application at the token endpoint (grants, tokens issued and refreshed).
      return { kind: 'application', id, raw: actor };
    case 'manager':
    case 'user':
    case 'staff':
      return { kind: 'manager', id, raw: actor };
    case 'operator':
      return { kind: 'operator', id, raw: actor };
    case 'system':
      return { kind: id === 'scheduler' ? 'scheduler' : 'system', id, raw: actor };
    case 'scheduler':
      return { kind: 'scheduler', id, raw: actor };
    default:
      return { kind: 'unknown', id: null, raw: actor };
  }
}

export const PARTNER_ACTORS = [
  'THIS_INTEGRATION',
  'ANOTHER_INTEGRATION',
  'RESTAURANT_STAFF',
  'AUTOMATIC',
] as const;
export type PartnerActorType = (typeof PARTNER_ACTORS)[number];

export const PARTNER_ACTOR_LABELS: Record<PartnerActorType, string> = {
  THIS_INTEGRATION: 'this integration',
  ANOTHER_INTEGRATION: 'another integration',
  RESTAURANT_STAFF: 'restaurant staff',
  AUTOMATIC: 'automatic',
};

/**
 * What a partner is told about an actor. Its own credential is "this integration"; any other
 * credential is "another integration" (never which one); people acting for the restaurant —
 * managers in the dashboard, and the platform's operators acting on the restaurant's behalf — are
 * "restaurant staff"; the scheduler and other system jobs are "automatic". An event naming no
 * actor reads as automatic.
 */
export function partnerActor(actor: unknown, callerCredentialIds: readonly string[]): PartnerActorType {
  const a = auditorActor(actor);
  switch (a.kind) {
    case 'credential':
      return a.id !== null && callerCredentialIds.includes(a.id) ? 'THIS_INTEGRATION' : 'ANOTHER_INTEGRATION';
    case 'application':
      return 'ANOTHER_INTEGRATION';
    case 'manager':
    case 'operator':
      return 'RESTAURANT_STAFF';
    default:
      return 'AUTOMATIC';
  }
}
