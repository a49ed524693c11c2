// The demo restaurant's catalog: two rooms, ten tables of 2, 4 and 6, lunch and dinner every day, and
// enough of everything else (prescriber, discount, custom fields, templates) for every catalog route
// to answer something real.
import type { CatalogConfig } from '../commands/catalog/decide';
import { catalogStream } from '../commands/catalog/events';
import { applyCatalog } from '../commands/catalog/handler';
import { operatorMeta } from './core/command-meta';
import type { DemoSeeder } from './demo';

const EVERY_DAY = [1, 2, 3, 4, 5, 6, 7];
const table = (n: number, room: string, min: number, max: number) => ({
  id: `tbl_${n}`,
  name: String(n),
  room_id: room,
  min_pax: min,
  max_pax: max,
});

export const DEMO_CATALOG: CatalogConfig = {
  rooms: [
    { id: 'room_main', name: 'Main room' },
    { id: 'room_terrace', name: 'Terrace' },
  ],
  tables: [
    table(1, 'room_main', 1, 2),
    table(2, 'room_main', 1, 2),
    table(3, 'room_main', 1, 2),
    table(4, 'room_main', 1, 2),
    table(5, 'room_main', 2, 4),
    table(6, 'room_main', 2, 4),
    table(7, 'room_main', 2, 4),
    table(8, 'room_main', 4, 6),
    table(9, 'room_terrace', 2, 4),
    table(10, 'room_terrace', 4, 6),
  ],
  shifts: [
    {
      id: 'shift_lunch',
      name: 'Lunch',
      start_time: '12:00',
      end_time: '14:00',
      days_of_week: EVERY_DAY,
      slot_interval_minutes: 15,
      duration_minutes: 90,
      max_covers: 40,
      max_party_size: 6,
      booking_window_days: 60,
      minimum_notice_minutes: 30,
    },
    {
      id: 'shift_dinner',
      name: 'Dinner',
      start_time: '19:00',
      end_time: '22:00',
      days_of_week: EVERY_DAY,
      slot_interval_minutes: 15,
      duration_minutes: 120,
      durations_by_party_size: [{ max_party_size: 2, duration_minutes: 90 }],
      max_covers: 60,
      max_party_size: 6,
      deposit: { amount_per_cover: 1500, min_party_size: 6, payment_mode: 'SOFT_PREAUTH' },
      booking_window_days: 60,
      minimum_notice_minutes: 60,
    },
  ],
  prescribers: [
    {
      id: 'pre_concierge',
      name: 'Hotel Concierge',
      phone_number: '+33612345678',
      email: 'concierge@hotel.test',
    },
  ],
  discounts: [
    {
      id: 'disc_lunch',
      is_active: true,
      value: 20,
      message: '-20% lunch',
      start_date: null,
      end_date: null,
      start_time: '12:00',
      end_time: '14:00',
      days_of_week: [1, 2, 3, 4, 5],
      max_covers_per_day: 20,
    },
  ],
  customer_fields: [
    { id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] },
    {
      id: 'cf_diet',
      name: 'Dietary needs',
      type: 'MULTI_SELECT',
      options: ['vegetarian', 'vegan', 'gluten_free', 'nut_allergy'],
      max_items: 3,
    },
    { id: 'cf_birthday', name: 'Birthday', type: 'DATE' },
    { id: 'cf_visits', name: 'Visits before the app', type: 'NUMBER', min: 0, max: 10000 },
    { id: 'cf_wine_club', name: 'Wine club member', type: 'BOOLEAN' },
    { id: 'cf_table_pref', name: 'Preferred table', type: 'TEXT' },
  ],
  message_templates: [
    {
      id: 'tpl_missed',
      type: 'MISSED_CALL',
      channel: 'WHATSAPP',
      status: 'APPROVED',
      body: 'Sorry we missed your call! Book a table any time at le-demo.example.',
    },
    {
      id: 'tpl_missed_booked',
      type: 'MISSED_CALL_WITH_RESERVATION',
      channel: 'WHATSAPP',
      status: 'APPROVED',
      body: 'Sorry we missed your call! We look forward to seeing you for your reservation.',
    },
  ],
};

/** Seeds only a catalog that has never had anything: an operator's later changes are never overwritten. */
export const seedDemoCatalog: DemoSeeder = async (rt, restaurantId) => {
  if ((await rt.events.readStream(catalogStream(restaurantId), { limit: 1 })).length) return null;
  return (await applyCatalog(rt, restaurantId, DEMO_CATALOG, operatorMeta('demo'))).position;
};
