// `bookings`: the seatings that hold capacity, one document per restaurant and service day, fed by the
// capacity streams' SeatingHeld / SeatingReleased. GET /availability reads the few days it needs by
// _id and never scans reservations. Instants are kept as epoch ms, as the availability engine uses them.
import type { SeatingHeldData } from '../commands/availability/capacity-events';
import { positionToString } from '../src/ports/event-store';
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
  /** Active seatings by reservation id (a later SeatingHeld for a reservation replaces its entry). */
  seatings: Record<string, SeatingEntry>;
  _pos: string;
  [k: string]: unknown;
}

export const bookingDayId = (restaurantId: string, serviceDate: string) => `${restaurantId}|${serviceDate}`;

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
    const pos = positionToString(event.position);
    const current = await col.findOne({ _id });
    // Events of one day arrive in log order; an event at or before the stored position was applied.
    if (current && current._pos >= pos) return;
    const seatings = { ...(current?.seatings ?? {}) };
    if (event.type === 'SeatingHeld')
      seatings[d.reservation_id] = {
        shift_id: d.shift_id,
        room_id: d.room_id,
        table_ids: d.table_ids,
        start_ms: Date.parse(d.start_at),
        end_ms: Date.parse(d.end_at),
        party_size: d.party_size,
      };
    else delete seatings[d.reservation_id];
    await col.replaceOne(
      { _id },
      { _id, restaurant_id: d.restaurant_id, service_date: d.service_date, seatings, _pos: pos },
      { upsert: true },
    );
  },
};
