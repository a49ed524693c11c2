// Reads of the `catalogs` read model. A restaurant without any catalog event has an empty catalog.
import { type Catalog, emptyCatalog } from '../commands/catalog/types';
import { CATALOGS, type CatalogDoc } from '../projections/catalog';
import type { DocumentStore } from '../src/ports/document-store';

export async function getCatalog(docs: DocumentStore, restaurantId: string): Promise<Catalog> {
  const doc = await docs.collection<CatalogDoc>(CATALOGS).findOne({ _id: restaurantId });
  if (!doc) return emptyCatalog(restaurantId);
  const { _id, updated_at: _u, _pos: _p, ...catalog } = doc;
  return catalog as Catalog;
}

/** Spec §4 GET /discounts: active discounts first, each group in configured order. */
export const discountsActiveFirst = (catalog: Catalog) => [
  ...catalog.discounts.filter((d) => d.is_active),
  ...catalog.discounts.filter((d) => !d.is_active),
];
