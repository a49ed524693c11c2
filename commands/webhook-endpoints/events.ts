// Webhook endpoints (stream `webhook-endpoint-<id>`): where a credential wants events sent. The
// signing secret is stored sealed (src/secrets.ts), never in clear, in the log or anywhere else.

export const V1_EVENT_TYPES = [
  'reservation.created',
  'reservation.updated',
  'reservation.canceled',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'customer.merged',
] as const;
export type V1EventType = (typeof V1_EVENT_TYPES)[number];

export type ApiVersion = 'v1' | 'legacy';

/** Why an endpoint was deleted: by its owner (partner, manager, operator) or because its credential was revoked. */
export type DeletionReason = 'DELETED' | 'CREDENTIAL_REVOKED';

export interface EndpointSettings {
  url: string;
  description: string | null;
  /** v1 types, or ['*'] for every type the credential may read. */
  enabled_events: string[];
  headers: Record<string, string>;
  disabled: boolean;
}

interface Base {
  endpoint_id: string;
  restaurant_id: string;
  at: string;
}

export type WebhookEndpointEvent =
  | {
      type: 'WebhookEndpointCreated';
      data: Base &
        EndpointSettings & {
          /** The credential (API key or OAuth token) that owns it. */
          credential_id: string;
          owner: string;
          api_version: ApiVersion;
          /** Sealed with the secrets key. */
          secret: string;
        };
    }
  | {
      type: 'WebhookEndpointUpdated';
      data: Base & { changes: Partial<EndpointSettings>; previous: Partial<EndpointSettings> };
    }
  /** The old secret keeps signing beside the new one until `previous_expires_at`. */
  | {
      type: 'WebhookEndpointSecretRotated';
      data: Base & { secret: string; previous_secret: string; previous_expires_at: string };
    }
  | { type: 'WebhookEndpointMigrated'; data: Base & { from: 'legacy'; to: 'v1' } }
  | { type: 'WebhookEndpointDeleted'; data: Base & { reason: DeletionReason; credential_id: string } }
  /**
   * A creation that took a slot of the restaurant's limit (limit.ts) and was never made (its process
   * died): the slot is given back and a late WebhookEndpointCreated of that attempt is refused.
   */
  | { type: 'WebhookEndpointAbandoned'; data: Base & { slot_revision: number } };

export const WEBHOOK_ENDPOINT_EVENT_TYPES = [
  'WebhookEndpointCreated',
  'WebhookEndpointUpdated',
  'WebhookEndpointSecretRotated',
  'WebhookEndpointMigrated',
  'WebhookEndpointDeleted',
  'WebhookEndpointAbandoned',
] as const;

export const webhookEndpointStream = (id: string) => `webhook-endpoint-${id}`;

/**
 * The owner of an endpoint its credential's owner does not name: an API key's (`key:<credential id>`).
 * Also the owner of an endpoint created before owners were recorded (its event has none).
 */
export const defaultOwner = (credentialId: string): string => `key:${credentialId}`;

/** Who asks for an endpoint: a restaurant (null: any) and an owner (null: any, the restaurant's manager). */
export interface EndpointViewer {
  restaurantId: string | null;
  owner: string | null;
}

/**
 * Whether `viewer` sees the endpoint: of its restaurant, and, for a partner's credential, of its own
 * (another owner's endpoint answers 404, as an unknown id: the commands and the reads apply this one rule).
 */
export const visibleTo = (
  endpoint: { restaurant_id: string; owner: string },
  viewer: EndpointViewer,
): boolean =>
  (viewer.restaurantId === null || endpoint.restaurant_id === viewer.restaurantId) &&
  (viewer.owner === null || endpoint.owner === viewer.owner);
