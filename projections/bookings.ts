// `bookings`: the seatings that hold capacity, one document per restaurant and service day, fed by the
// capacity streams' SeatingHeld / SeatingReleased (SeatingEnded: the guests left or never came, the
// tables free from then: `ended_ms`). GET /availability reads the few days it needs by
// _id and never scans reservations. Instants are kept as epoch ms, as the availability engine uses them.
// A move's pending seating (SeatingMoveHeld) is a seating of its own (pendingKey) until it is confirmed
// (it then replaces the reservation's) or dropped: the reservation's old tables stay taken meanwhile.
import type {
  SeatingEndedData,
  SeatingHeldData,
  SeatingMoveHeldData,
} from '../commands/availability/capacity-events';
import { pendingKey } from '../commands/reservations/capacity-state';
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
  /**
   * SeatingEnded (DONE, NO_SHOW): the tables are free from this instant (Booking.ended_ms); end_ms
   * stays the seating's planned end. Absent while the seating holds its tables to its end.
   */
  ended_ms?: number;
}

export interface BookingDayDoc {
  /** bookingDayId(restaurant_id, service_date) */
  _id: string;
  restaurant_id: string;
  service_date: string;
  /**
   * Active seatings keyed by seatingKey(reservation id); a later SeatingHeld for a reservation
   * replaces its entry. Pending moves under seatingKey(pendingKey(reservation id, move id)). A day
   * whose seatings were all released keeps an empty object.
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

const entryOf = (d: SeatingHeldData): SeatingEntry => ({
  shift_id: d.shift_id,
  room_id: d.room_id,
  table_ids: d.table_ids,
  start_ms: Date.parse(d.start_at),
  end_ms: Date.parse(d.end_at),
  party_size: d.party_size,
});

/** In-place updates of one seating (no rewrite of the day), guarded by position with applyOnce. */
export const bookingsProjection: Projection = {
  name: 'bookings',
  eventTypes: [
    'SeatingHeld',
    'SeatingReleased',
    'SeatingMoveHeld',
    'SeatingMoveConfirmed',
    'SeatingMoveDropped',
    'SeatingEnded',
  ],
  async setup(docs) {
    await docs
      .collection(BOOKINGS)
      .createIndex({ keys: { restaurant_id: 1, service_date: 1 }, unique: true, name: 'by_restaurant_day' });
  },
  async apply(event, docs) {
    const d = event.data as unknown as SeatingMoveHeldData;
    const col = docs.collection<BookingDayDoc>(BOOKINGS);
    const _id = bookingDayId(d.restaurant_id, d.service_date);
    const field = `seatings.${seatingKey(d.reservation_id)}`;
    const moveField = d.move_id ? `seatings.${seatingKey(pendingKey(d.reservation_id, d.move_id))}` : null;
    const day = { restaurant_id: d.restaurant_id, service_date: d.service_date };
    const apply = async (update: Record<string, unknown>) => {
      await applyOnce(col, _id, event.position, update, { upsert: true });
    };
    switch (event.type) {
      case 'SeatingHeld':
        return apply({ $set: { ...day, [field]: entryOf(d) } });
      case 'SeatingReleased':
        return apply({ $set: day, $unset: { [field]: '' } });
      case 'SeatingMoveHeld':
        return apply({ $set: { ...day, [moveField as string]: entryOf(d) } });
      case 'SeatingMoveConfirmed':
        return apply({ $set: { ...day, [field]: entryOf(d) }, $unset: { [moveField as string]: '' } });
      case 'SeatingMoveDropped':
        return apply({ $set: day, $unset: { [moveField as string]: '' } });
      case 'SeatingEnded': {
        // The seating stays (its part before ended_at is still held); only a seating held is ended.
        const doc = await col.findOne({ _id });
        const entry = doc?.seatings?.[seatingKey(d.reservation_id)];
        if (!entry) return;
        const ended_ms = Date.parse((event.data as unknown as SeatingEndedData).ended_at);
        return apply({ $set: { [field]: { ...entry, ended_ms } } });
      }
    }
  },
};
