// The names a page of reservations refers to, read in two queries (the restaurant's catalog, and the
// page's customers in one batch) whatever the page size.
import type { ReservationSnapshot } from '../commands/reservations/events';
import type { DocumentStore } from '../src/ports/document-store';
import { getCatalog } from './catalog';
import { getCustomersForReservations } from './customers';
import type { Lookups } from './reservation-presenter';

const byId = <T extends { id: string }, U>(items: readonly T[], view: (t: T) => U) =>
  new Map(items.map((t) => [t.id, view(t)]));

export async function loadLookups(
  docs: DocumentStore,
  restaurantId: string,
  reservations: readonly ReservationSnapshot[],
): Promise<Lookups> {
  const ids = reservations.map((r) => r.customer_id).filter((id): id is string => id !== null);
  const [catalog, customers] = await Promise.all([
    getCatalog(docs, restaurantId),
    getCustomersForReservations(docs, restaurantId, ids),
  ]);
  return {
    customers,
    rooms: byId(catalog.rooms, (r) => ({ id: r.id, name: r.name })),
    tables: byId(catalog.tables, (t) => ({ id: t.id, name: t.name, min_pax: t.min_pax, max_pax: t.max_pax })),
    shifts: byId(catalog.shifts, (s) => ({
      id: s.id,
      name: s.name,
      start_time: s.start_time,
      end_time: s.end_time,
    })),
    discounts: byId(catalog.discounts, (d) => ({ id: d.id, value: d.value, message: d.message })),
    prescribers: byId(catalog.prescribers, (p) => ({ id: p.id, name: p.name, phone_number: p.phone_number })),
  };
}
