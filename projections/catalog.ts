// `catalogs`: one document per restaurant holding its whole catalog, folded with the write side's own
// evolve function so the read model can never disagree with the log on what an event means. One
// document, because every catalog route and every availability query wants a restaurant's whole list.
import { evolveCatalog } from '../commands/catalog/decide';
import { CATALOG_EVENT_TYPES } from '../commands/catalog/events';
import { type Catalog, emptyCatalog } from '../commands/catalog/types';
import { positionToString } from '../src/ports/event-store';
import type { Projection } from '../src/projection/projection';

export const CATALOGS = 'catalogs';

export interface CatalogDoc extends Catalog {
  _id: string;
  updated_at: string;
  /** Position of the last event applied: a redelivered event is skipped. */
  _pos: string;
  [k: string]: unknown;
}

export const catalogProjection: Projection = {
  name: 'catalog',
  eventTypes: CATALOG_EVENT_TYPES,
  async apply(event, docs) {
    const d = event.data as { restaurant_id: string; at: string };
    const col = docs.collection<CatalogDoc>(CATALOGS);
    const pos = positionToString(event.position);
    const current = await col.findOne({ _id: d.restaurant_id });
    if (current && current._pos >= pos) return;
    const {
      _id,
      updated_at: _u,
      _pos: _p,
      ...catalog
    } = current ?? {
      _id: d.restaurant_id,
      updated_at: d.at,
      _pos: pos,
      ...emptyCatalog(d.restaurant_id),
    };
    const next = evolveCatalog(catalog as Catalog, event);
    await col.replaceOne(
      { _id: d.restaurant_id },
      { ...next, _id: d.restaurant_id, updated_at: d.at, _pos: pos },
      { upsert: true },
    );
  },
};
