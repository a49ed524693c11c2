// `reservation_days`: how many reservations each service day of a restaurant holds. An unfiltered
// GET /reservations page is found by walking these counts (a few hundred a year) and reading only the
// days the page covers, instead of sorting the restaurant's whole history on every request.
// Reservations are never deleted: a count only grows, or moves when a reservation changes day.
import type { ReservationSnapshot } from '../commands/reservations/events';
import { applyOnce } from '../src/projection/idempotent';
import type { Projection } from '../src/projection/projection';

export const RESERVATION_DAYS = 'reservation_days';

export interface ReservationDayDoc {
  _id: string;
  restaurant_id: string;
  service_date: string;
  count: number;
  [k: string]: unknown;
}

const dayId = (restaurantId: string, day: string) => `${restaurantId}|${day}`;

async function add(
  docs: Parameters<Projection['apply']>[1],
  restaurantId: string,
  day: string,
  n: number,
  position: bigint,
) {
  await applyOnce(
    docs.collection<ReservationDayDoc>(RESERVATION_DAYS),
    dayId(restaurantId, day),
    position,
    { $inc: { count: n }, $setOnInsert: { restaurant_id: restaurantId, service_date: day } },
    { upsert: true },
  );
}

export const reservationDaysProjection: Projection = {
  name: 'reservation-days',
  eventTypes: ['ReservationCreated', 'ReservationUpdated'],
  async setup(docs) {
    await docs.collection(RESERVATION_DAYS).createIndex({ keys: { restaurant_id: 1 }, name: 'restaurant' });
  },
  async apply(event, docs) {
    const d = event.data as {
      restaurant_id: string;
      reservation?: ReservationSnapshot;
      changes?: Partial<ReservationSnapshot>;
      previous?: Partial<ReservationSnapshot>;
    };
    if (event.type === 'ReservationCreated' && d.reservation)
      await add(docs, d.restaurant_id, d.reservation.service_date, 1, event.position);
    const to = d.changes?.service_date;
    const from = d.previous?.service_date;
    if (event.type === 'ReservationUpdated' && to && from && to !== from) {
      await add(docs, d.restaurant_id, from, -1, event.position);
      await add(docs, d.restaurant_id, to, 1, event.position);
    }
  },
};
