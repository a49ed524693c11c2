import { API_KEYS, type ApiKeyDoc } from '../projections/api-keys';
import { sha256 } from '../src/core/ids';
import type { DocumentStore } from '../src/ports/document-store';

/** Looks a presented token up by its hash (a unique index): never a scan, never the token itself. */
export const findKeyByTokenHash = (docs: DocumentStore, tokenHash: string) =>
  docs.collection<ApiKeyDoc>(API_KEYS).findOne({ token_hash: tokenHash });

/**
 * Whether the key opens nothing any more, though its document is there: revoked, or an OAuth token its
 * application's cut-off bars (`cut_off_at`: `applications disable --disconnect`, whose sweep may not have
 * revoked it yet). What authentication refuses and what nothing is sent on behalf of.
 */
export const keyWithdrawn = (key: Pick<ApiKeyDoc, 'revoked_at' | 'cut_off_at'>): boolean =>
  Boolean(key.revoked_at || key.cut_off_at);

export const findKeyByToken = (docs: DocumentStore, token: string) => findKeyByTokenHash(docs, sha256(token));

export const listKeys = (docs: DocumentStore, restaurantId?: string) =>
  docs
    .collection<ApiKeyDoc>(API_KEYS)
    .find(restaurantId ? { restaurant_id: restaurantId } : {}, { sort: { created_at: 1, _id: 1 } });
