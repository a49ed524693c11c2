// Catalog commands, and the write-side loader the reservation commands use for their slot recheck.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { notFound } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import type { EventStore } from '../../src/ports/event-store';
import { loadRestaurant } from '../restaurants/handler';
import {
  type ApplyMode,
  type CatalogConfig,
  decideApplyCatalog,
  evolveCatalog,
  initialCatalog,
} from './decide';
import { catalogStream } from './events';
import type { Catalog } from './types';

/** Applies a configuration to an existing restaurant's catalog; only differences become events. */
export async function applyCatalog(
  deps: WriteDeps,
  restaurantId: string,
  config: CatalogConfig,
  meta: CommandMeta,
  mode: ApplyMode = 'replace',
) {
  if (!(await loadRestaurant(deps, restaurantId)).exists) throw notFound(`restaurant ${restaurantId}`);
  const at = deps.clock.now().toISOString();
  return runCommand<Catalog>(deps.events, {
    stream: catalogStream(restaurantId),
    initial: initialCatalog(restaurantId),
    evolve: evolveCatalog,
    decide: (state) => decideApplyCatalog(state, restaurantId, config, mode, at),
    metadata: { ...meta, restaurant_id: restaurantId },
    clock: deps.clock,
  });
}

// Catalogs change rarely and every reservation command reads one: keep the last fold per store and
// restaurant, and read only the events appended since (a catalog is immutable once handed out).
const folded = new WeakMap<EventStore, Map<string, { revision: number; catalog: Catalog }>>();

/** The restaurant's current catalog, from the event log (never from a read model). Do not mutate it. */
export async function loadCatalog(deps: WriteDeps, restaurantId: string): Promise<Catalog> {
  let perStore = folded.get(deps.events);
  if (!perStore) {
    perStore = new Map();
    folded.set(deps.events, perStore);
  }
  const known = perStore.get(restaurantId);
  const events = await deps.events.readStream(catalogStream(restaurantId), {
    fromRevision: known ? known.revision + 1 : 0,
  });
  if (known && events.length === 0) return known.catalog;
  let catalog = known?.catalog ?? initialCatalog(restaurantId);
  for (const e of events) catalog = evolveCatalog(catalog, e);
  const revision = events.at(-1)?.revision ?? -1;
  perStore.set(restaurantId, { revision, catalog });
  return catalog;
}
