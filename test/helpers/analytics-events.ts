// Random reservation and customer logs for the analytics property tests (fast-check arbitraries).
import fc from 'fast-check';
import {
  RESERVATION_SOURCES,
  RESERVATION_STATUSES,
  type ReservationSnapshot,
} from '../../commands/reservations/events';
import type { RecordedEvent } from '../../src/ports/event-store';

export interface LogEvent {
  type: string;
  data: Record<string, unknown>;
}

const restaurants = ['rest_a', 'rest_b'];
const days = ['2026-06-01', '2026-06-02', '2026-06-03'];
const shifts = ['lunch', 'dinner'];
const customers = ['cus_1', 'cus_2', 'cus_3', null];
const reservationIds = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];

const startAt = fc
  .tuple(fc.constantFrom(...days), fc.integer({ min: 11, max: 22 }), fc.constantFrom(0, 15, 30, 45))
  .map(([d, h, m]) => `${d}T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00+02:00`);
// Booked from a year ahead to an hour after the start.
const createdAt = fc
  .integer({ min: -400 * 24 * 60, max: 60 })
  .map((mins) => new Date(Date.parse('2026-06-02T12:00:00Z') + mins * 60_000).toISOString());

const created = fc
  .record({
    id: fc.constantFrom(...reservationIds),
    restaurant: fc.constantFrom(...restaurants),
    day: fc.constantFrom(...days),
    shift: fc.constantFrom(...shifts),
    start: startAt,
    at: createdAt,
    party: fc.integer({ min: 1, max: 25 }),
    status: fc.constantFrom(...RESERVATION_STATUSES),
    source: fc.constantFrom(...RESERVATION_SOURCES),
    customer: fc.constantFrom(...customers),
  })
  .map(
    (r): LogEvent => ({
      type: 'ReservationCreated',
      data: {
        reservation_id: r.id,
        restaurant_id: r.restaurant,
        at: r.at,
        reservation: {
          reservation_id: r.id,
          restaurant_id: r.restaurant,
          service_date: r.day,
          shift_id: r.shift,
          start_at: r.start,
          party_size: r.party,
          status: r.status,
          source: r.source,
          customer_id: r.customer,
          created_at: r.at,
        } as Partial<ReservationSnapshot>,
      },
    }),
  );

const updated = fc
  .record({
    id: fc.constantFrom(...reservationIds),
    changes: fc.record(
      {
        service_date: fc.constantFrom(...days),
        shift_id: fc.constantFrom(...shifts),
        start_at: startAt,
        party_size: fc.integer({ min: 1, max: 25 }),
        customer_id: fc.constantFrom(...customers),
        source: fc.constantFrom(...RESERVATION_SOURCES),
      },
      { requiredKeys: [] },
    ),
  })
  .map(
    (u): LogEvent => ({
      type: 'ReservationUpdated',
      data: { reservation_id: u.id, at: '2026-06-01T00:00:00Z', changes: u.changes, previous: {} },
    }),
  );

const statusChanged = fc
  .record({ id: fc.constantFrom(...reservationIds), to: fc.constantFrom(...RESERVATION_STATUSES) })
  .map(
    (s): LogEvent => ({
      type: 'ReservationStatusChanged',
      data: { reservation_id: s.id, at: '2026-06-01T00:00:00Z', from: 'CONFIRMED', to: s.to },
    }),
  );

const merged = fc
  .record({
    restaurant: fc.constantFrom(...restaurants),
    pair: fc.uniqueArray(fc.constantFrom('cus_1', 'cus_2', 'cus_3'), { minLength: 2, maxLength: 2 }),
  })
  .map(
    (m): LogEvent => ({
      type: 'CustomerMerged',
      data: { restaurant_id: m.restaurant, customer_id: m.pair[0], merged_customer_id: m.pair[1] },
    }),
  );

/** Updates and status changes of reservations not created yet are in the log too (they change nothing). */
export const analyticsLog = fc.array(
  fc.oneof(created, created, updated, statusChanged, statusChanged, merged),
  {
    maxLength: 40,
  },
);

/** The log as recorded events; reservation events get the restaurant of their reservation's creation. */
export function recorded(log: LogEvent[]): RecordedEvent[] {
  const restaurantOf = new Map<string, string>();
  return log.map((e, i) => {
    const d = { ...e.data };
    if (e.type === 'ReservationCreated' && !restaurantOf.has(d.reservation_id as string))
      restaurantOf.set(d.reservation_id as string, d.restaurant_id as string);
    if (e.type.startsWith('Reservation') && e.type !== 'ReservationCreated')
      d.restaurant_id = restaurantOf.get(d.reservation_id as string) ?? 'rest_a';
    return {
      id: `e${i}`,
      type: e.type,
      data: d,
      metadata: {},
      created: '2026-06-01T00:00:00Z',
      stream: `s${i}`,
      revision: 0,
      position: BigInt(i + 1),
    };
  });
}
