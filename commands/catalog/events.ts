// Catalog events (stream `catalog-<restaurantId>`): one event per item that changed. Items are kept
// whole (normalised), so a reader never merges partial changes and replaying rebuilds the same catalog.
import type { CatalogKind, CatalogLists } from './types';

type Item<K extends CatalogKind> = CatalogLists[K][number];

export type CatalogEvent =
  /** The item was added, or replaced as a whole (same id). */
  | {
      type: 'CatalogItemConfigured';
      data: { restaurant_id: string; kind: CatalogKind; item: Item<CatalogKind>; at: string };
    }
  | {
      type: 'CatalogItemRemoved';
      data: { restaurant_id: string; kind: CatalogKind; id: string; at: string };
    };

export const CATALOG_EVENT_TYPES = ['CatalogItemConfigured', 'CatalogItemRemoved'] as const;

export const catalogStream = (restaurantId: string) => `catalog-${restaurantId}`;
