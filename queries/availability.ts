// Availability on the read side: the catalog and the day documents of the `bookings` read model fed
// to the pure engine (commands/availability). Only the service days concerned are read.
import type { Booking } from '../commands/availability/capacity';
import {
  type AvailabilityInput,
  type BookableSlot,
  type CheckRequest,
  type CheckResult,
  checkSlot,
  type SearchQuery,
  searchSlots,
} from '../commands/availability/check';
import { serviceDatesFor } from '../commands/availability/slots';
import { addDays } from '../commands/availability/zone-time';
import type { Catalog } from '../commands/catalog/types';
import { BOOKINGS, type BookingDayDoc, bookingDayId } from '../projections/bookings';
import type { RestaurantDoc } from '../projections/restaurants';
import type { DocumentStore } from '../src/ports/document-store';
import { getCatalog } from './catalog';

/** The seatings of these service days (a missing day has none). */
export async function bookingsOn(
  docs: DocumentStore,
  restaurantId: string,
  serviceDates: readonly string[],
): Promise<Booking[]> {
  const days = await docs
    .collection<BookingDayDoc>(BOOKINGS)
    .find({ _id: { $in: serviceDates.map((d) => bookingDayId(restaurantId, d)) } });
  const out: Booking[] = [];
  for (const day of days)
    for (const [reservation_id, s] of Object.entries(day.seatings))
      out.push({ reservation_id, service_date: day.service_date, ...s });
  return out;
}

/**
 * Service days whose seatings can meet a start in [fromMs, toMs]: the days that can offer those
 * starts, and the day after the last (its early seatings may share a table with a late one).
 */
function daysAround(zone: string, fromMs: number, toMs: number): string[] {
  const days = serviceDatesFor(zone, fromMs, toMs);
  return [...days, addDays(days.at(-1) as string, 1)];
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
    bookings: await bookingsOn(docs, restaurant._id, days),
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
