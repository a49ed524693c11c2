// Random logs of webhook deliveries and missed calls (with restaurants and their time zones) for the
// operations analytics property tests, and a document store that crashes part-way through an event.
import fc from 'fast-check';
import type { RecordedEvent } from '../../src/ports/event-store';

export interface LogEvent {
  type: string;
  data: Record<string, unknown>;
}

const restaurants = ['rest_a', 'rest_b'];
const zones = ['Europe/Paris', 'America/New_York', 'Pacific/Auckland', 'UTC'];
// Instants around the local midnights of a few days, so the zone decides the day.
const instant = fc
  .integer({ min: 0, max: 3 * 24 * 60 })
  .map((mins) => new Date(Date.parse('2026-06-01T00:00:00Z') + mins * 60_000).toISOString());

const restaurantEvent = fc
  .record({ r: fc.constantFrom(...restaurants), tz: fc.constantFrom(...zones), created: fc.boolean() })
  .map(
    ({ r, tz, created }): LogEvent =>
      created
        ? { type: 'RestaurantCreated', data: { restaurant_id: r, timezone: tz, at: '2026-05-01T00:00:00Z' } }
        : {
            type: 'RestaurantUpdated',
            data: { restaurant_id: r, changes: { timezone: tz }, at: '2026-05-01T00:00:00Z' },
          },
  );

const deliveryIds = ['d1', 'd2', 'd3', 'd4', 'd5', 'd6'];
const endpoints = ['we_1', 'we_2'];

const fanout = fc
  .record({
    r: fc.constantFrom(...restaurants),
    at: instant,
    deliveries: fc.array(
      fc.record({ delivery_id: fc.constantFrom(...deliveryIds), endpoint_id: fc.constantFrom(...endpoints) }),
      {
        minLength: 1,
        maxLength: 3,
      },
    ),
  })
  .map(
    ({ r, at, deliveries }): LogEvent => ({
      type: 'WebhookDeliveriesScheduled',
      data: {
        restaurant_id: r,
        source_event_id: 'src',
        deliveries: deliveries.map((d) => ({ ...d, payload: 'p' })),
        at,
      },
    }),
  );

const attempt = fc
  .record({
    id: fc.constantFrom(...deliveryIds),
    attempt: fc.integer({ min: 1, max: 4 }),
    outcome: fc.constantFrom('succeeded', 'retry', 'failed'),
    at: instant,
    duration: fc.integer({ min: 0, max: 20_000 }),
  })
  .map(
    (a): LogEvent => ({
      type: 'WebhookAttemptRecorded',
      data: {
        delivery_id: a.id,
        endpoint_id: 'we_x',
        restaurant_id: 'rest_a',
        attempt: a.attempt,
        outcome: a.outcome,
        at: a.at,
        duration_ms: a.duration,
      },
    }),
  );

const cancel = fc.constantFrom(...deliveryIds).map(
  (id): LogEvent => ({
    type: 'WebhookDeliveryCanceled',
    data: { delivery_id: id, endpoint_id: 'we_x', restaurant_id: 'rest_a', reason: 'endpoint_gone' },
  }),
);

/** A resend (or a retry or recovery, which change nothing the figures count) asked of a delivery. */
const request = fc
  .record({
    id: fc.constantFrom(...deliveryIds),
    reason: fc.constantFrom('resend', 'resend', 'retry', 'recovery', 'queue_full'),
  })
  .map(
    ({ id, reason }): LogEvent => ({
      type: 'WebhookAttemptRequested',
      data: { delivery_id: id, endpoint_id: 'we_x', restaurant_id: 'rest_a', attempt: 2, reason },
    }),
  );

export const webhookLog = fc.array(
  fc.oneof(restaurantEvent, fanout, fanout, attempt, attempt, attempt, cancel, request),
  { maxLength: 40 },
);

const callIds = ['c1', 'c2', 'c3', 'c4', 'c5'];
const customers = ['cus_1', 'cus_2', 'cus_3'];

const callEvent = fc
  .record({
    id: fc.constantFrom(...callIds),
    r: fc.constantFrom(...restaurants),
    at: instant,
    kind: fc.constantFrom('report', 'report', 'match', 'skip', 'request', 'sent', 'failed', 'unconfirmed'),
    customer: fc.constantFrom(...customers),
    created: fc.boolean(),
    upcoming: fc.boolean(),
    retryable: fc.boolean(),
  })
  .map((c): LogEvent => {
    const base = { missed_call_id: c.id, restaurant_id: c.r, at: c.at };
    switch (c.kind) {
      case 'report':
        return {
          type: 'MissedCallReported',
          data: { ...base, caller_phone_number: '+33600000000', external_call_id: null, occurred_at: c.at },
        };
      case 'match':
        return {
          type: 'MissedCallMatched',
          data: {
            ...base,
            customer_id: c.customer,
            customer_created: c.created,
            reservation_id: c.upcoming ? 'res_1' : null,
          },
        };
      case 'skip':
        return {
          type: 'MissedCallSkipped',
          data: { ...base, outcome: c.created ? 'SKIPPED_COOLDOWN' : 'SKIPPED_OPTED_OUT', detail: null },
        };
      case 'request':
        return { type: 'MessageRequested', data: { ...base, message_id: 'm', attempt: 1 } };
      case 'sent':
        return { type: 'MessageSent', data: { ...base, message_id: 'm', attempt: 1 } };
      case 'failed':
        return {
          type: 'MessageFailed',
          data: {
            ...base,
            message_id: 'm',
            attempt: 1,
            retryable: c.retryable,
            outcome: c.retryable ? null : 'SKIPPED_INVALID_RECIPIENT',
          },
        };
      default:
        return {
          type: 'MessageUnconfirmed',
          data: { ...base, message_id: 'm', attempt: 1, reason: 'crash' },
        };
    }
  });

const reservation = fc
  .record({
    r: fc.constantFrom(...restaurants),
    customer: fc.option(fc.constantFrom(...customers)),
    at: instant,
  })
  .map(
    (x): LogEvent => ({
      type: 'ReservationCreated',
      data: {
        reservation_id: 'r',
        restaurant_id: x.r,
        reservation: { restaurant_id: x.r, customer_id: x.customer, created_at: x.at },
      },
    }),
  );

export const missedCallLog = fc.array(
  fc.oneof(restaurantEvent, callEvent, callEvent, callEvent, reservation),
  { maxLength: 40 },
);

export function recorded(log: LogEvent[]): RecordedEvent[] {
  return log.map((e, i) => ({
    id: `e${i}`,
    type: e.type,
    data: e.data,
    metadata: {},
    created: '2026-06-01T00:00:00Z',
    stream: `s${i}`,
    revision: 0,
    position: BigInt(i + 1),
  }));
}
