import { API_KEYS, type ApiKeyDoc } from '../projections/api-keys';
import { sha256 } from '../src/core/ids';
import type { DocumentStore } from '../src/ports/document-store';

/** Looks a presented token up by its hash (a unique index): never a scan, never the token itself. */
export const findKeyByTokenHash = (docs: DocumentStore, tokenHash: string) =>
  docs.collection<ApiKeyDoc>(API_KEYS).findOne({ token_hash: tokenHash });

export const findKeyByToken = (docs: DocumentStore, token: string) => findKeyByTokenHash(docs, sha256(token));

export const listKeys = (docs: DocumentStore, restaurantId?: string) =>
  docs
    .collection<ApiKeyDoc>(API_KEYS)
    .find(restaurantId ? { restaurant_id: restaurantId } : {}, { sort: { created_at: 1, _id: 1 } });
