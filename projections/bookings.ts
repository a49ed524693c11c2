// `bookings`: the seatings that hold capacity, one document per restaurant and service day, fed by the
// capacity streams' SeatingHeld / SeatingReleased. GET /availability reads the few days it needs by
// _id and never scans reservations. Instants are kept as epoch ms, as the availability engine uses them.
import type { SeatingHeldData } from '../commands/availability/capacity-events';
import { applyOnce } from '../src/projection/idempotent';
import type { Projection } from '../src/projection/projection';

export const BOOKINGS = 'bookings';

export interface SeatingEntry {
  shift_id: string;
  room_id: string | null;
  table_ids: string[];
  start_ms: number;
  end_ms: number;
  party_size: number;
}

export interface BookingDayDoc {
  /** bookingDayId(restaurant_id, service_date) */
  _id: string;
  restaurant_id: string;
  service_date: string;
  /**
   * Active seatings keyed by seatingKey(reservation id); a later SeatingHeld for a reservation
   * replaces its entry. A day whose seatings were all released keeps an empty object.
   */
  seatings: Record<string, SeatingEntry>;
  _pos: string;
  [k: string]: unknown;
}

export const bookingDayId = (restaurantId: string, serviceDate: string) => `${restaurantId}|${serviceDate}`;

// Reservation ids become field names: escape the characters MongoDB gives a meaning to in a path.
export const seatingKey = (reservationId: string) =>
  reservationId.replace(/[%.$]/g, (c) => ({ '%': '%25', '.': '%2E', $: '%24' })[c] as string);
export const reservationIdOfKey = (key: string) =>
  key.replace(/%(25|2E|24)/g, (_, h: string) => ({ '25': '%', '2E': '.', '24': '$' })[h] as string);

/** In-place updates of one seating (no rewrite of the day), guarded by position with applyOnce. */
export const bookingsProjection: Projection = {
  name: 'bookings',
  eventTypes: ['SeatingHeld', 'SeatingReleased'],
  async setup(docs) {
    await docs
      .collection(BOOKINGS)
      .createIndex({ keys: { restaurant_id: 1, service_date: 1 }, unique: true, name: 'by_restaurant_day' });
  },
  async apply(event, docs) {
    const d = event.data as unknown as SeatingHeldData;
    const col = docs.collection<BookingDayDoc>(BOOKINGS);
    const _id = bookingDayId(d.restaurant_id, d.service_date);
    const field = `seatings.${seatingKey(d.reservation_id)}`;
    const day = { restaurant_id: d.restaurant_id, service_date: d.service_date };
    if (event.type === 'SeatingHeld') {
      const seating: SeatingEntry = {
        shift_id: d.shift_id,
        room_id: d.room_id,
        table_ids: d.table_ids,
        start_ms: Date.parse(d.start_at),
        end_ms: Date.parse(d.end_at),
        party_size: d.party_size,
      };
      await applyOnce(col, _id, event.position, { $set: { ...day, [field]: seating } }, { upsert: true });
    } else
      await applyOnce(col, _id, event.position, { $set: day, $unset: { [field]: '' } }, { upsert: true });
  },
};
