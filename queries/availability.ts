// Availability on the read side: the catalog and the day documents of the `bookings` read model fed
// to the pure engine (commands/availability). Only the service days concerned are read.
import { type Booking, Occupancy } from '../commands/availability/capacity';
import {
  type AvailabilityInput,
  type BookableSlot,
  type CheckRequest,
  type CheckResult,
  checkSlot,
  type SearchQuery,
  searchSlots,
} from '../commands/availability/check';
import { serviceDatesFor, serviceDaysMeeting } from '../commands/availability/slots';
import type { Catalog } from '../commands/catalog/types';
import {
  BOOKINGS,
  type BookingDayDoc,
  bookingDayId,
  bookingsProjection,
  reservationIdOfKey,
} from '../projections/bookings';
import type { RestaurantDoc } from '../projections/restaurants';
import type { DocumentStore } from '../src/ports/document-store';
import { getCatalog } from './catalog';

/** One service day's seatings and their index, as of the day document's position. */
interface Day {
  /** null: no document (no seating ever held that day). */
  pos: string | null;
  bookings: Booking[];
  occupancy: Occupancy;
  /** The `bookings` projection checkpoint when this entry was last known current. */
  checkedAt: bigint | null;
}

// Availability reads the same days again and again while they rarely change: keep each day's
// decoded seatings and index. While the projection's checkpoint has not moved nothing changed, and
// the entry is used as is; after it moved, a query of the days' positions (_pos only) tells which
// ones to fetch again. Per store, so two services in one process never share entries; bounded.
const cache = new WeakMap<DocumentStore, Map<string, Day>>();
const CACHE_LIMIT = 20_000;

function decode(doc: BookingDayDoc, checkedAt: bigint | null): Day {
  const bookings: Booking[] = [];
  for (const [key, s] of Object.entries(doc.seatings ?? {}))
    bookings.push({ reservation_id: reservationIdOfKey(key), service_date: doc.service_date, ...s });
  return { pos: doc._pos, bookings, occupancy: new Occupancy(bookings), checkedAt };
}

async function daysOf(
  docs: DocumentStore,
  restaurantId: string,
  serviceDates: readonly string[],
): Promise<Day[]> {
  let known = cache.get(docs);
  if (!known) {
    known = new Map();
    cache.set(docs, known);
  }
  const ids = serviceDates.map((d) => bookingDayId(restaurantId, d));
  const checkpoint = await docs.getCheckpoint(bookingsProjection.name);
  // The answer is built here, so a concurrent request clearing the cache cannot take days from it.
  const found = new Map<string, Day>();
  const unchecked: string[] = [];
  for (const id of ids) {
    const day = known.get(id);
    if (day && day.checkedAt === checkpoint) found.set(id, day);
    else unchecked.push(id);
  }
  if (unchecked.length) {
    if (known.size + unchecked.length > CACHE_LIMIT) known.clear();
    const col = docs.collection<BookingDayDoc>(BOOKINGS);
    const heads = new Map(
      (await col.find({ _id: { $in: unchecked } }, { projection: { _pos: 1 } })).map((h) => [h._id, h._pos]),
    );
    const stale: string[] = [];
    for (const id of unchecked) {
      const pos = heads.get(id) ?? null;
      const day = known.get(id);
      if (day && day.pos === pos) found.set(id, { ...day, checkedAt: checkpoint });
      else if (pos === null) found.set(id, emptyDay(checkpoint));
      else stale.push(id);
    }
    if (stale.length) {
      for (const doc of await col.find({ _id: { $in: stale } })) found.set(doc._id, decode(doc, checkpoint));
      // Gone between the two reads (a rebuild): nothing held.
      for (const id of stale) if (!found.has(id)) found.set(id, emptyDay(checkpoint));
    }
    for (const id of unchecked) known.set(id, found.get(id) as Day);
  }
  return ids.map((id) => found.get(id) as Day);
}

const emptyDay = (checkedAt: bigint | null): Day => ({
  pos: null,
  bookings: [],
  occupancy: new Occupancy([]),
  checkedAt,
});

/** The seatings of these service days (a missing day has none). */
export async function bookingsOn(
  docs: DocumentStore,
  restaurantId: string,
  serviceDates: readonly string[],
): Promise<Booking[]> {
  return (await daysOf(docs, restaurantId, serviceDates)).flatMap((d) => d.bookings);
}

/** Service days whose seatings can meet a start in [fromMs, toMs] (serviceDaysMeeting: one rule with a hold's). */
function daysAround(zone: string, fromMs: number, toMs: number): string[] {
  const days = serviceDatesFor(zone, fromMs, toMs);
  return serviceDaysMeeting(days[0] as string, days.at(-1) as string);
}

async function inputFor(
  docs: DocumentStore,
  restaurant: RestaurantDoc,
  catalog: Catalog,
  days: string[],
  now: Date,
): Promise<AvailabilityInput> {
  return {
    timezone: restaurant.timezone,
    suspended: restaurant.suspended,
    catalog,
    bookings: new Occupancy({ combine: (await daysOf(docs, restaurant._id, days)).map((d) => d.occupancy) }),
    now,
  };
}

export async function searchAvailability(
  docs: DocumentStore,
  restaurant: RestaurantDoc,
  query: SearchQuery,
  now: Date,
  catalog?: Catalog,
): Promise<BookableSlot[]> {
  const c = catalog ?? (await getCatalog(docs, restaurant._id));
  const days = daysAround(restaurant.timezone, query.from_ms, query.to_ms);
  return searchSlots(await inputFor(docs, restaurant, c, days, now), query);
}

export async function checkAvailability(
  docs: DocumentStore,
  restaurant: RestaurantDoc,
  request: CheckRequest,
  now: Date,
): Promise<CheckResult> {
  const catalog = await getCatalog(docs, restaurant._id);
  const days = daysAround(restaurant.timezone, request.start_ms, request.start_ms);
  return checkSlot(await inputFor(docs, restaurant, catalog, days, now), request);
}
