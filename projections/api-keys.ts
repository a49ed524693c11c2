import { grantOf } from '../commands/credentials/decide';
import { cutOffFilter } from '../commands/oauth/cut-off';
import type { Scope } from '../src/core/scopes';
import type { DocumentStore } from '../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../src/ports/event-store';
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
   * (the grant), which a later keys update may narrow `scopes` within. Version 2 on: absent from the
   * documents of version 1 (`scopesBeyondGrantOf` in src/cli/key-grants.ts reads either).
   */
  granted_scopes?: Scope[];
  /** The store position of its ApiKeyCreated (padded, `positionToString`). Version 3 only. */
  created_position?: string;
  /**
   * When the operator cut its application off (`applications disable --disconnect`) after it was
   * issued: the token answers 401 as a revoked one, whether or not the cut-off's sweep revoked it yet.
   * Version 3 only; null or absent otherwise.
   */
  cut_off_at?: string | null;
  [k: string]: unknown;
}

export const API_KEYS = 'api_keys';

const EVENT_TYPES = ['ApiKeyCreated', 'ApiKeyUpdated', 'ApiKeyRevoked', 'ApiKeyUsed'];

/** What each version keeps beyond version 1's fields. */
interface Keeps {
  /** The grant (`granted_scopes`): version 2 on. */
  grant: boolean;
  /** The key's position and its application's cut-off (`created_position`, `cut_off_at`): version 3 on. */
  cutOff: boolean;
}

async function setup(docs: DocumentStore): Promise<void> {
  const col = docs.collection(API_KEYS);
  await col.createIndex({ keys: { token_hash: 1 }, unique: true, name: 'token_hash_unique' });
  await col.createIndex({ keys: { restaurant_id: 1 }, name: 'by_restaurant' });
}

/** Every version's rules, with what it keeps (`Keeps`). */
async function applyKeyEvent(event: RecordedEvent, docs: DocumentStore, keeps: Keeps): Promise<void> {
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
            ...(keeps.grant ? { granted_scopes: grantOf(d) } : {}),
            ...(keeps.cutOff ? { created_position: positionToString(event.position) } : {}),
          },
          $setOnInsert: keeps.cutOff
            ? { revoked_at: null, last_used_at: null, cut_off_at: null }
            : { revoked_at: null, last_used_at: null },
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
    case 'OAuthApplicationDisabled':
      // The cut-off's own sweep revokes these tokens one by one, later (or, stopped midway, never):
      // marked here, in the one document every request reads its token from, they are refused as soon
      // as the read models have the cut-off. Only the keys issued before it (`cutOffFilter`): applied
      // again after a restart, when later tokens are already here, it leaves those alone.
      if (keeps.cutOff && d.disconnect === true)
        await col.updateMany(cutOffFilter(d.client_id as string, event.position), {
          $set: { cut_off_at: d.at },
        });
      return;
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
  apply: (event, docs) => applyKeyEvent(event, docs, { grant: false, cutOff: false }),
};

/** Version 2 (see version 1 above): each document with its grant. */
export const apiKeysProjectionV2: Projection = {
  ...apiKeysProjectionV1,
  version: 2,
  apply: (event, docs) => applyKeyEvent(event, docs, { grant: true, cutOff: false }),
};

/**
 * The served version: version 2, and each OAuth token issued before its application's cut-off
 * (`applications disable --disconnect`) marked (`cut_off_at`), so authentication refuses it from the one
 * document it already reads, before (or without) the cut-off's sweep revoking it. A store built before
 * serves its version (1 or 2) while this one is rebuilt from the whole log beside it: a token the sweep of an
 * earlier cut-off missed is marked too once it switches.
 */
export const apiKeysProjection: Projection = {
  ...apiKeysProjectionV1,
  version: 3,
  eventTypes: [...EVENT_TYPES, 'OAuthApplicationDisabled'],
  apply: (event, docs) => applyKeyEvent(event, docs, { grant: true, cutOff: true }),
};
