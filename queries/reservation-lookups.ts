// The names a page of reservations refers to, read in two queries (the restaurant's catalog with what
// was removed from it since, and the page's customers in one batch) whatever the page size.

import type { CatalogKind, CatalogLists } from '../commands/catalog/types';
import type { ReservationSnapshot } from '../commands/reservations/events';
import type { DocumentStore } from '../src/ports/document-store';
import { getCatalog, getRemovedCatalogItems } from './catalog';
import { partnerCustomersForReservations } from './customers';
import type { Lookups } from './reservation-presenter';

/** The catalog's items of a kind by id, those removed since included (as they were last configured). */
function byId<K extends CatalogKind, U>(
  current: CatalogLists,
  removed: Awaited<ReturnType<typeof getRemovedCatalogItems>>,
  kind: K,
  view: (t: CatalogLists[K][number]) => U,
): Map<string, U> {
  const out = new Map<string, U>();
  for (const t of removed[kind] ?? []) out.set(t.id, view(t as CatalogLists[K][number]));
  for (const t of current[kind] as readonly CatalogLists[K][number][]) out.set(t.id, view(t));
  return out;
}

export async function loadLookups(
  docs: DocumentStore,
  restaurantId: string,
  reservations: readonly ReservationSnapshot[],
): Promise<Lookups> {
  const ids = reservations.map((r) => r.customer_id).filter((id): id is string => id !== null);
  const [catalog, removed, customers] = await Promise.all([
    getCatalog(docs, restaurantId),
    getRemovedCatalogItems(docs, restaurantId),
    partnerCustomersForReservations(docs, restaurantId, ids),
  ]);
  // A draft customer (a messaging channel's, hidden until published) never appears to partners:
  // GET /customers/{id} answers 404 and webhooks told them customer.deleted, so a reservation linked
  // to one shows no customer, in its answers and its webhooks alike.
  return {
    customers: customers.shown,
    rooms: byId(catalog, removed, 'rooms', (r) => ({ id: r.id, name: r.name })),
    tables: byId(catalog, removed, 'tables', (t) => ({
      id: t.id,
      name: t.name,
      min_pax: t.min_pax,
      max_pax: t.max_pax,
    })),
    shifts: byId(catalog, removed, 'shifts', (s) => ({
      id: s.id,
      name: s.name,
      start_time: s.start_time,
      end_time: s.end_time,
    })),
    discounts: byId(catalog, removed, 'discounts', (d) => ({ id: d.id, value: d.value, message: d.message })),
    prescribers: byId(catalog, removed, 'prescribers', (p) => ({
      id: p.id,
      name: p.name,
      phone_number: p.phone_number,
    })),
  };
}
