// `catalogs`: one document per restaurant holding its whole catalog, folded with the write side's own
// evolve function so the read model can never disagree with the log on what an event means. One
// document, because every catalog route and every availability query wants a restaurant's whole list.
//
// Version 2 also keeps, in `removed`, the last configuration of each item removed since (and not
// configured again): a reservation made before a table, room, shift, discount or prescriber was
// removed still shows it as it was (its name, a shift's hours, a table's sizes), not its id with
// made-up values. Version 1 is kept until version 2 has replaced it (src/projection/versions.ts).
import { evolveCatalog } from '../commands/catalog/decide';
import { CATALOG_EVENT_TYPES, type CatalogEvent } from '../commands/catalog/events';
import { type Catalog, type CatalogKind, emptyCatalog } from '../commands/catalog/types';
import { positionToString, type RecordedEvent } from '../src/ports/event-store';
import type { Projection } from '../src/projection/projection';

export const CATALOGS = 'catalogs';

/**
 * Items removed from the catalog, by kind: their last configuration. Lists, not objects keyed by id:
 * an id may hold characters MongoDB reads as a path (`.`, `$`).
 */
export type RemovedItems = Partial<Record<CatalogKind, readonly { id: string }[]>>;

export interface CatalogDoc extends Catalog {
  _id: string;
  updated_at: string;
  /** Position of the last event applied: a redelivered event is skipped. */
  _pos: string;
  /** Version 2: what was removed (absent in version 1's documents). */
  removed?: RemovedItems;
  [k: string]: unknown;
}

/** What is left of `removed` once an event is applied (a new object when it changes). */
export function removedAfter(before: RemovedItems, catalog: Catalog, event: RecordedEvent): RemovedItems {
  const e = event as unknown as CatalogEvent;
  if (e.type === 'CatalogItemRemoved') {
    const { kind, id } = e.data;
    const item = (catalog[kind] as readonly { id: string }[] | undefined)?.find((x) => x.id === id);
    if (item === undefined) return before;
    return { ...before, [kind]: [...(before[kind] ?? []).filter((x) => x.id !== id), item] };
  }
  if (e.type === 'CatalogItemConfigured') {
    const { kind } = e.data;
    const id = (e.data.item as { id?: unknown } | undefined)?.id;
    const list = before[kind];
    if (list === undefined || !list.some((x) => x.id === id)) return before;
    return { ...before, [kind]: list.filter((x) => x.id !== id) };
  }
  return before;
}

async function applyCatalog(
  event: RecordedEvent,
  docs: Parameters<Projection['apply']>[1],
  keepRemoved: boolean,
) {
  const d = event.data as { restaurant_id: string; at: string };
  const col = docs.collection<CatalogDoc>(CATALOGS);
  const pos = positionToString(event.position);
  const current = await col.findOne({ _id: d.restaurant_id });
  if (current && current._pos >= pos) return;
  const {
    _id,
    updated_at: _u,
    _pos: _p,
    removed,
    ...catalog
  } = current ?? {
    _id: d.restaurant_id,
    updated_at: d.at,
    _pos: pos,
    ...emptyCatalog(d.restaurant_id),
  };
  const next = evolveCatalog(catalog as Catalog, event);
  const doc: CatalogDoc = { ...next, _id: d.restaurant_id, updated_at: d.at, _pos: pos };
  if (keepRemoved) doc.removed = removedAfter(removed ?? {}, catalog as Catalog, event);
  await col.replaceOne({ _id: d.restaurant_id }, doc, { upsert: true });
}

export const catalogProjection: Projection = {
  name: 'catalog',
  collections: [CATALOGS],
  eventTypes: CATALOG_EVENT_TYPES,
  apply: (event, docs) => applyCatalog(event, docs, false),
};

export const catalogProjectionV2: Projection = {
  name: catalogProjection.name,
  version: 2,
  collections: [CATALOGS],
  eventTypes: CATALOG_EVENT_TYPES,
  apply: (event, docs) => applyCatalog(event, docs, true),
};
