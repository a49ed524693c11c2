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
  [k: string]: unknown;
}

export const API_KEYS = 'api_keys';

export const apiKeysProjection: Projection = {
  name: 'api_keys',
  eventTypes: ['ApiKeyCreated', 'ApiKeyUpdated', 'ApiKeyRevoked', 'ApiKeyUsed'],
  async setup(docs) {
    const col = docs.collection(API_KEYS);
    await col.createIndex({ keys: { token_hash: 1 }, unique: true, name: 'token_hash_unique' });
    await col.createIndex({ keys: { restaurant_id: 1 }, name: 'by_restaurant' });
  },
  async apply(event, docs) {
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
  },
};
