// Reads of the `catalogs` read model. A restaurant without any catalog event has an empty catalog.
import { type Catalog, emptyCatalog } from '../commands/catalog/types';
import { CATALOGS, type CatalogDoc, catalogProjection } from '../projections/catalog';
import type { DocumentStore } from '../src/ports/document-store';

// Every catalog route and every availability query reads a catalog, and catalogs rarely change:
// keep the last one read per store and restaurant while the projection's checkpoint has not moved
// (then nothing changed). Handing out the same frozen object also lets the availability engine keep
// what it derives from it (candidate tables, slot lists) across requests.
interface Entry {
  checkedAt: bigint | null;
  pos: string | null;
  catalog: Catalog;
}
const cache = new WeakMap<DocumentStore, Map<string, Entry>>();
const CACHE_LIMIT = 10_000;

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** The restaurant's catalog, frozen: read it, never change it. */
export async function getCatalog(docs: DocumentStore, restaurantId: string): Promise<Catalog> {
  let known = cache.get(docs);
  if (!known) {
    known = new Map();
    cache.set(docs, known);
  }
  const checkpoint = await docs.getCheckpoint(catalogProjection.name);
  const entry = known.get(restaurantId);
  if (entry && entry.checkedAt === checkpoint) return entry.catalog;
  const doc = await docs.collection<CatalogDoc>(CATALOGS).findOne({ _id: restaurantId });
  const pos = doc?._pos ?? null;
  if (entry && entry.pos === pos) {
    known.set(restaurantId, { ...entry, checkedAt: checkpoint });
    return entry.catalog;
  }
  let catalog = emptyCatalog(restaurantId);
  if (doc) {
    const { _id, updated_at: _u, _pos: _p, ...rest } = doc;
    catalog = rest as Catalog;
  }
  if (known.size >= CACHE_LIMIT) known.clear();
  known.set(restaurantId, { checkedAt: checkpoint, pos, catalog: deepFreeze(catalog) });
  return catalog;
}

/** Spec §4 GET /discounts: active discounts first, each group in configured order. */
export const discountsActiveFirst = (catalog: Catalog) => [
  ...catalog.discounts.filter((d) => d.is_active),
  ...catalog.discounts.filter((d) => !d.is_active),
];
