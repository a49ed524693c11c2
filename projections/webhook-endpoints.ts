// Webhook endpoints as partners list them (and as the publisher matches them). Deleted endpoints are
// removed. The sealed secrets are kept for signing; no query returns them.
import { afterRotation } from '../commands/webhook-endpoints/decide';
import { type ApiVersion, defaultOwner } from '../commands/webhook-endpoints/events';
import { positionToString } from '../src/ports/event-store';
import type { Projection } from '../src/projection/projection';

export const WEBHOOK_ENDPOINTS = 'webhook_endpoints';

export interface WebhookEndpointDoc {
  _id: string;
  restaurant_id: string;
  credential_id: string;
  /** Who may see and manage it: `key:<id>`, or `app:<application id>` for OAuth tokens of one application. */
  owner: string;
  api_version: ApiVersion;
  url: string;
  description: string | null;
  enabled_events: string[];
  headers: Record<string, string>;
  disabled: boolean;
  secret: string;
  previous_secret: { secret: string; expires_at: string } | null;
  /** Secrets of rotations before the last one still in their grace (afterRotation). */
  earlier_secrets?: { secret: string; expires_at: string }[];
  /** Log position of the last rotation applied (null or absent: none). */
  rotation_pos?: string | null;
  created_at: string;
  updated_at: string;
  /** Log position of its creation: it receives only events after it. */
  created_position: string;
  [k: string]: unknown;
}

/**
 * Version 1 writes `webhook_endpoints`; version 2 (below, the same code) writes `webhook_endpoints_v2`.
 * Version 2 exists because the documents changed without a new version: `earlier_secrets` (secrets of
 * rotations before the last one, still in their grace) and `rotation_pos` (the last rotation applied,
 * so a redelivered one changes nothing) were added to documents written from then on only, so a store
 * built before (MongoDB keeps its read models across restarts) held every endpoint without them, and
 * differed from a replay (`audit verify` reported each pre-existing endpoint). Version 2 is rebuilt
 * from the whole log beside version 1, so every document has them, and takes over once caught up.
 * Version 1 keeps serving meanwhile with this same code: a document lacking them reads as having no
 * earlier secrets and no rotation applied (afterRotation, the rotation case below), so every reader
 * reads either layout. Remove version 1 once every store has switched.
 */
export const webhookEndpointsProjectionV1: Projection = {
  name: 'webhook_endpoints',
  // Versioned (src/projection/versions.ts): a newer version is rebuilt beside the active one.
  collections: [WEBHOOK_ENDPOINTS],
  eventTypes: [
    'WebhookEndpointCreated',
    'WebhookEndpointUpdated',
    'WebhookEndpointSecretRotated',
    'WebhookEndpointMigrated',
    'WebhookEndpointDeleted',
  ],
  async setup(docs) {
    const col = docs.collection(WEBHOOK_ENDPOINTS);
    await col.createIndex({ keys: { restaurant_id: 1, created_at: 1 }, name: 'by_restaurant' });
    await col.createIndex({ keys: { credential_id: 1 }, name: 'by_credential' });
  },
  async apply(event, docs) {
    const d = event.data as Record<string, unknown>;
    const col = docs.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS);
    const id = d.endpoint_id as string;
    switch (event.type) {
      case 'WebhookEndpointCreated':
        await col.updateOne(
          { _id: id },
          {
            $set: {
              restaurant_id: d.restaurant_id,
              credential_id: d.credential_id,
              owner: (d.owner as string | undefined) ?? defaultOwner(d.credential_id as string),
              api_version: d.api_version,
              url: d.url,
              description: d.description ?? null,
              enabled_events: d.enabled_events,
              headers: d.headers ?? {},
              disabled: Boolean(d.disabled),
              secret: d.secret,
              previous_secret: null,
              earlier_secrets: [],
              rotation_pos: null,
              created_at: d.at,
              updated_at: d.at,
              created_position: positionToString(event.position),
            },
          },
          { upsert: true },
        );
        return;
      case 'WebhookEndpointUpdated':
        await col.updateOne({ _id: id }, { $set: { ...(d.changes as object), updated_at: d.at } });
        return;
      case 'WebhookEndpointSecretRotated': {
        // Built on the document's old secrets (afterRotation), so applied once: a rotation redelivered
        // (its position or a later one's recorded) changes nothing.
        const pos = positionToString(event.position);
        const doc = await col.findOne({ _id: id });
        if (!doc || (typeof doc.rotation_pos === 'string' && doc.rotation_pos >= pos)) return;
        await col.updateOne(
          { _id: id },
          {
            $set: {
              secret: d.secret,
              rotation_pos: pos,
              ...afterRotation(
                doc,
                d as { previous_secret: string; previous_expires_at: string; at: string },
              ),
              updated_at: d.at,
            },
          },
        );
        return;
      }
      case 'WebhookEndpointMigrated':
        await col.updateOne({ _id: id }, { $set: { api_version: 'v1', updated_at: d.at } });
        return;
      case 'WebhookEndpointDeleted':
        await col.deleteOne({ _id: id });
        return;
    }
  },
};

/** The served version (see version 1 above): the same documents, each with its rotation fields. */
export const webhookEndpointsProjection: Projection = { ...webhookEndpointsProjectionV1, version: 2 };
