// Reads of the `catalogs` read model. A restaurant without any catalog event has an empty catalog.
import { type Catalog, emptyCatalog } from '../commands/catalog/types';
import { CATALOGS, type CatalogDoc, catalogProjection, type RemovedItems } from '../projections/catalog';
import type { DocumentStore } from '../src/ports/document-store';

// Every catalog route and every availability query reads a catalog, and catalogs rarely change:
// keep the last one read per store and restaurant while the projection's checkpoint has not moved
// (then nothing changed). Handing out the same frozen object also lets the availability engine keep
// what it derives from it (candidate tables, slot lists) across requests.
interface Entry {
  checkedAt: bigint | null;
  pos: string | null;
  catalog: Catalog;
  removed: RemovedItems;
  /** 2 when the document keeps the removed items (the catalog projection's version 2). */
  layout: 1 | 2;
  /** The collection it was read from: `catalogs`, or a later version's, once that has taken over. */
  collection: string;
}
/**
 * The collection `catalogs` names now (src/projection/versions.ts: a version that takes over changes
 * it, and may do so without the checkpoint moving: it switches once caught up, not on an event).
 */
const physicalOf = (docs: DocumentStore): string =>
  (docs as { resolve?: (name: string) => string }).resolve?.(CATALOGS) ?? CATALOGS;
const layoutOf = (doc: CatalogDoc | null): 1 | 2 => (doc?.removed === undefined ? 1 : 2);
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
  return (await catalogEntry(docs, restaurantId)).catalog;
}

/**
 * The items removed from the restaurant's catalog since, as they were last configured (frozen; empty
 * while the store still serves the catalog's version 1): what a reservation made before shows.
 */
export async function getRemovedCatalogItems(
  docs: DocumentStore,
  restaurantId: string,
): Promise<RemovedItems> {
  return (await catalogEntry(docs, restaurantId)).removed;
}

async function catalogEntry(docs: DocumentStore, restaurantId: string): Promise<Entry> {
  let known = cache.get(docs);
  if (!known) {
    known = new Map();
    cache.set(docs, known);
  }
  const checkpoint = await docs.getCheckpoint(catalogProjection.name);
  const collection = physicalOf(docs);
  const entry = known.get(restaurantId);
  if (entry && entry.checkedAt === checkpoint && entry.collection === collection) return entry;
  const doc = await docs.collection<CatalogDoc>(CATALOGS).findOne({ _id: restaurantId });
  const pos = doc?._pos ?? null;
  // The same position in another layout is another document: version 2, which keeps the removed
  // items, may have taken over from version 1 since (src/projection/versions.ts).
  if (entry && entry.pos === pos && entry.layout === layoutOf(doc) && entry.collection === collection) {
    const same = { ...entry, checkedAt: checkpoint };
    known.set(restaurantId, same);
    return same;
  }
  let catalog = emptyCatalog(restaurantId);
  let removed: RemovedItems = {};
  if (doc) {
    const { _id, updated_at: _u, _pos: _p, removed: gone, ...rest } = doc;
    catalog = rest as Catalog;
    removed = gone ?? {};
  }
  if (known.size >= CACHE_LIMIT) known.clear();
  const fresh: Entry = {
    checkedAt: checkpoint,
    pos,
    catalog: deepFreeze(catalog),
    removed: deepFreeze(removed),
    layout: layoutOf(doc),
    collection,
  };
  known.set(restaurantId, fresh);
  return fresh;
}

/** Spec §4 GET /discounts: active discounts first, each group in configured order. */
export const discountsActiveFirst = (catalog: Catalog) => [
  ...catalog.discounts.filter((d) => d.is_active),
  ...catalog.discounts.filter((d) => !d.is_active),
];
