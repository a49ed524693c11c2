import { grantOf } from '../commands/credentials/decide';
import type { Scope } from '../src/core/scopes';
import type { DocumentStore } from '../src/ports/document-store';
import type { RecordedEvent } from '../src/ports/event-store';
import type { Projection } from '../src/projection/projection';

export interface ApiKeyDoc {
  _id: string;
  restaurant_id: string;
  name: string;
  token_hash: string;
  token_hint: string;
  scopes: string[];
  type: 'API_KEY' | 'OAUTH';
  application: { id: string; name: string } | null;
  created_at: string;
  revoked_at: string | null;
  /** The latest recorded use (at most one an hour: commands/credentials/usage.ts); null if never. */
  last_used_at?: string | null;
  /**
   * The scopes the key was created with: for an OAuth token, what the restaurant's manager consented to
   * (the grant), which a later keys update may narrow `scopes` within. Version 2 only: absent from the
   * documents of version 1 (`scopesBeyondGrantOf` in src/cli/key-grants.ts reads either).
   */
  granted_scopes?: Scope[];
  [k: string]: unknown;
}

export const API_KEYS = 'api_keys';

const EVENT_TYPES = ['ApiKeyCreated', 'ApiKeyUpdated', 'ApiKeyRevoked', 'ApiKeyUsed'];

async function setup(docs: DocumentStore): Promise<void> {
  const col = docs.collection(API_KEYS);
  await col.createIndex({ keys: { token_hash: 1 }, unique: true, name: 'token_hash_unique' });
  await col.createIndex({ keys: { restaurant_id: 1 }, name: 'by_restaurant' });
}

/** Both versions' rules; version 2 also keeps the grant (`granted_scopes`). */
async function applyKeyEvent(event: RecordedEvent, docs: DocumentStore, keepGrant: boolean): Promise<void> {
  const d = event.data as Record<string, unknown>;
  const col = docs.collection<ApiKeyDoc>(API_KEYS);
  const id = d.key_id as string;
  switch (event.type) {
    case 'ApiKeyCreated':
      await col.updateOne(
        { _id: id },
        {
          $set: {
            restaurant_id: d.restaurant_id,
            name: d.name,
            token_hash: d.token_hash,
            token_hint: d.token_hint,
            scopes: d.scopes,
            type: d.type,
            application: d.application ?? null,
            created_at: d.at,
            // As the key's stream folds it (evolveApiKey), so both say the same grant.
            ...(keepGrant ? { granted_scopes: grantOf(d) } : {}),
          },
          $setOnInsert: { revoked_at: null, last_used_at: null },
        },
        { upsert: true },
      );
      return;
    case 'ApiKeyUpdated': {
      const set: Record<string, unknown> = {};
      if (d.name !== undefined) set.name = d.name;
      if (d.scopes !== undefined) set.scopes = d.scopes;
      await col.updateOne({ _id: id }, { $set: set });
      return;
    }
    case 'ApiKeyRevoked':
      await col.updateOne({ _id: id }, { $set: { revoked_at: d.at } });
      return;
    case 'ApiKeyUsed': {
      // Only ever forward: applying an older use again (a replay) changes nothing.
      const doc = await col.findOne({ _id: id });
      if (!doc || (typeof doc.last_used_at === 'string' && doc.last_used_at >= (d.at as string))) return;
      await col.updateOne({ _id: id }, { $set: { last_used_at: d.at } });
      return;
    }
  }
}

/**
 * Version 1 writes `api_keys`, without the grant: `keys list` then folded every OAuth token's stream to
 * find what its manager consented to (one read of the log per token). Version 2 (`api_keys_v2`) keeps it
 * in the document, so listing reads the read model alone. A store built before (MongoDB keeps its read
 * models across restarts) goes on serving version 1 while version 2 is rebuilt from the whole log beside
 * it (src/projection/versions.ts); readers of the grant read either layout meanwhile (`scopesBeyondGrantOf`
 * in src/cli/key-grants.ts).
 * Remove version 1 once every store has switched.
 */
export const apiKeysProjectionV1: Projection = {
  name: 'api_keys',
  // Versioned (src/projection/versions.ts): a newer version is rebuilt beside the active one.
  collections: [API_KEYS],
  eventTypes: EVENT_TYPES,
  setup,
  apply: (event, docs) => applyKeyEvent(event, docs, false),
};

/** The served version (see version 1 above): each document with its grant. */
export const apiKeysProjection: Projection = {
  ...apiKeysProjectionV1,
  version: 2,
  apply: (event, docs) => applyKeyEvent(event, docs, true),
};
