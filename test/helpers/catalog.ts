// Builders for catalog items in tests: every setting at its default unless given.
import type { Booking } from '../../commands/availability/capacity';
import type { Catalog, Room, Shift, Table } from '../../commands/catalog/types';

export const shift = (o: Partial<Shift> = {}): Shift => ({
  id: 'shift_dinner',
  name: 'Dinner',
  start_time: '19:00',
  end_time: '22:00',
  days_of_week: [1, 2, 3, 4, 5, 6, 7],
  slot_interval_minutes: 15,
  duration_minutes: 90,
  durations_by_party_size: [],
  max_covers: null,
  min_party_size: 1,
  max_party_size: null,
  requires_room_selection: false,
  requires_approval: false,
  deposit: null,
  booking_window_days: null,
  minimum_notice_minutes: 0,
  ...o,
});

export const table = (id: string, min: number, max: number, room: string | null = 'room_main'): Table => ({
  id,
  name: id,
  room_id: room,
  min_pax: min,
  max_pax: max,
});

export const room = (id: string): Room => ({ id, name: id });

export const booking = (
  o: Partial<Booking> & { start_at: string; minutes?: number; tables?: string[] },
): Booking => {
  const start = Date.parse(o.start_at);
  return {
    reservation_id: o.reservation_id ?? `res_${o.start_at}`,
    service_date: o.service_date ?? o.start_at.slice(0, 10),
    shift_id: o.shift_id ?? 'shift_dinner',
    room_id: o.room_id ?? null,
    table_ids: o.tables ?? o.table_ids ?? [],
    start_ms: start,
    end_ms: o.end_ms ?? start + (o.minutes ?? 90) * 60_000,
    party_size: o.party_size ?? 2,
  };
};

/** A one-room catalog of rest_1 holding these tables and shifts, and nothing else. */
export const catalogOf = (tables: Table[], shifts: Shift[]): Catalog => ({
  restaurant_id: 'rest_1',
  rooms: [{ id: 'room_main', name: 'Main' }],
  tables,
  shifts,
  prescribers: [],
  discounts: [],
  customer_fields: [],
  message_templates: [],
});
