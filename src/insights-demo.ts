// Past activity for the demo restaurant, so the dashboard's Insights page shows something on a fresh
// `npm start`: a month of reservations (sources, lead times, no-shows, cancellations, returning
// guests), webhook deliveries to two endpoints (most delivered at once, some retried, some failed for
// good) and missed calls with their outcomes. Appended as the events the service itself writes, with
// past times, marked `no_webhook` and all finished (no delivery or message left for a worker to pick
// up). Deterministic (a seeded generator), and seeded once: a marker stream says it was done.
import { createHash } from 'node:crypto';
import { capacityStream } from '../commands/availability/capacity-events';
import { formatInstant, localDateOf } from '../commands/availability/zone-time';
import { type CustomerProfile, customerStream } from '../commands/customers/events';
import { missedCallStream } from '../commands/missed-calls/events';
import {
  RELEASED_STATUSES,
  type ReservationSnapshot,
  type ReservationSource,
  type ReservationStatus,
  reservationStream,
} from '../commands/reservations/events';
import { recordCrossing, spillDays } from '../commands/reservations/night-seatings';
import { seatingOfReservation } from '../commands/reservations/repair-plan';
import { deliveryStream, fanoutStream } from '../commands/webhook-deliveries/events';
import { NO_WEBHOOK } from './core/no-webhook';
import { type NewEvent, NO_STREAM, WrongExpectedRevisionError } from './ports/event-store';
import type { Runtime } from './runtime';

export interface InsightsSeed {
  /** The last day seeded is the day before `now` (local), and `days` days back from it. */
  days: number;
  timezone: string;
  /** Endpoint ids the deliveries go to (existing ones show with their URL). */
  endpoints: string[];
  seed?: number;
  /**
   * The restaurant's lunch and dinner shifts, with their durations (default: the demo catalog's,
   * src/catalog-demo.ts): a seeded reservation names a shift the restaurant has, so a partner reading
   * it sees that shift's name and hours.
   */
  shifts?: { lunch: DemoShift; dinner: DemoShift };
}

/** A shift the seeded reservations are booked in. */
export interface DemoShift {
  id: string;
  duration_minutes: number;
  /** A shorter duration for parties up to this size (the catalog's durations_by_party_size). */
  short?: { max_party_size: number; duration_minutes: number };
}

/** The demo catalog's shifts (src/catalog-demo.ts), the seed's default. */
export const DEMO_SHIFTS: { lunch: DemoShift; dinner: DemoShift } = {
  lunch: { id: 'shift_lunch', duration_minutes: 90 },
  dinner: {
    id: 'shift_dinner',
    duration_minutes: 120,
    short: { max_party_size: 2, duration_minutes: 90 },
  },
};

const FIRST_NAMES = [
  'Camille',
  'Léa',
  'Hugo',
  'Chloé',
  'Lucas',
  'Inès',
  'Louis',
  'Manon',
  'Jules',
  'Sarah',
  'Arthur',
  'Zoé',
];
const LAST_NAMES = [
  'Martin',
  'Bernard',
  'Dubois',
  'Laurent',
  'Moreau',
  'Lefèvre',
  'Garnier',
  'Faure',
  'Rousseau',
  'Mercier',
  'Blanc',
  'Guérin',
  'Perrin',
];

/**
 * A demo guest's profile, made from their number alone (no draw of the generator, so the activity
 * seeded is the same with or without them). Addresses in example.com; phone numbers in the range
 * France keeps for fiction (06 39 98 xx xx).
 */
function demoProfile(n: number, phone: string): CustomerProfile {
  const first = FIRST_NAMES[n % FIRST_NAMES.length] as string;
  const last = LAST_NAMES[Math.floor(n / FIRST_NAMES.length) % LAST_NAMES.length] as string;
  const ascii = (v: string) =>
    v
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase();
  return {
    name: `${first} ${last}`,
    email: `${ascii(first)}.${ascii(last)}.${n}@example.com`,
    phone_number: phone,
    country_code: 'FR',
    lang: 'FR',
    tags: n % 7 === 0 ? ['regular'] : [],
    note: null,
    custom_fields: {},
    newsletter_consent: n % 3 === 0,
    external_id: null,
  };
}
const fictionPhone = (n: number) => `+3363998${String(n).padStart(4, '0')}`;

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rnd: () => number, weighted: [T, number][]): T => {
  const total = weighted.reduce((s, [, w]) => s + w, 0);
  let x = rnd() * total;
  for (const [v, w] of weighted) {
    x -= w;
    if (x <= 0) return v;
  }
  return (weighted[weighted.length - 1] as [T, number])[0];
};

/** A UUID made from a name, so a seeding retried after a crash appends nothing twice. */
function uuidOf(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const SOURCES: [ReservationSource, number][] = [
  ['WEBSITE', 38],
  ['PHONE', 22],
  ['RESERVE_WITH_GOOGLE', 14],
  ['WALK_IN', 10],
  ['INSTAGRAM', 6],
  ['WHATSAPP', 5],
  ['MISSED_CALL', 3],
  ['EMAIL', 2],
];
const OUTCOMES: [ReservationStatus, number][] = [
  ['DONE', 74],
  ['NO_SHOW', 8],
  ['CANCELED_BY_CUSTOMER', 13],
  ['CANCELED_BY_RESTAURANT', 2],
  ['REJECTED', 3],
];

function snapshot(
  r: Partial<ReservationSnapshot> & Pick<ReservationSnapshot, 'reservation_id'>,
): ReservationSnapshot {
  return {
    restaurant_id: '',
    external_id: null,
    status: 'CONFIRMED',
    start_at: '',
    end_at: '',
    duration_minutes: 90,
    party_size: 2,
    service_date: '',
    shift_id: DEMO_SHIFTS.dinner.id,
    room_id: null,
    table_ids: [],
    source: 'WEBSITE',
    customer_id: null,
    waiter_id: null,
    discount_id: null,
    prescriber_id: null,
    custom_message: null,
    allergies: null,
    metadata: { demo: true },
    tags: [],
    attached_files: [],
    send_client_notifications: false,
    send_payment_link: false,
    send_followup_email: false,
    is_table_definitive: false,
    is_force_inserted: false,
    total_amount_paid: 0,
    payments: [],
    feedback: null,
    cancellation_reason: null,
    locked_fields: [],
    seated_at: null,
    left_at: null,
    created_at: '',
    updated_at: '',
    ...r,
  };
}

interface Append {
  stream: string;
  events: NewEvent[];
  /**
   * A booking that follows a missed call: appended after every other stream, so it comes after its
   * call in the log (the analytics count it as following the call only then).
   */
  afterCalls?: true;
  /** A guest's CustomerCreated: appended before everything that names them. */
  customers?: true;
}

/** The streams to append, oldest activity first. Pure given `now` (tests read it). */
export function insightsDemoEvents(restaurantId: string, now: Date, seed: InsightsSeed): Append[] {
  const rnd = random(seed.seed ?? 16);
  const zone = seed.timezone;
  const out: Append[] = [];
  const meta = { ...NO_WEBHOOK, restaurant_id: restaurantId, actor: 'operator:demo' };
  const iso = (ms: number) => new Date(ms).toISOString();
  const ev = (name: string, type: string, data: Record<string, unknown>): NewEvent => ({
    id: uuidOf(`insights-demo|${restaurantId}|${name}`),
    type,
    data,
    metadata: meta,
  });
  // A reservation that still holds capacity once seeded (done, no-show, upcoming) holds its seating on
  // its day's capacity stream, as one the service made would: without it the seating repair job would
  // report every one of them to the operator, every minute.
  const holds = new Map<string, NewEvent[]>();
  const hold = (r: ReservationSnapshot, status: ReservationStatus) => {
    if (RELEASED_STATUSES.includes(status)) return;
    const day = holds.get(r.service_date) ?? [];
    day.push(ev(`${r.reservation_id}|held`, 'SeatingHeld', { ...seatingOfReservation(r, r.created_at) }));
    holds.set(r.service_date, day);
  };
  const today = localDateOf(zone, now.getTime());
  const dayMs = 86_400_000;
  const shifts = seed.shifts ?? DEMO_SHIFTS;
  const durationOf = (shift: DemoShift, party: number) =>
    shift.short && party <= shift.short.max_party_size
      ? shift.short.duration_minutes
      : shift.duration_minutes;
  // The guests the reservations and calls name, created before the month seeded (regulars, callers
  // already known) or at their call (callers the call created). seedInsightsDemo appends them in a
  // wave of their own, before the rest: every customer_id seeded names a customer.
  const guests = new Map<string, Append>();
  const firstDay = Date.parse(`${today}T12:00:00Z`) - (seed.days + 30) * dayMs;
  const guest = (id: string, n: number, phone: string, at: number, origin: 'API' | 'MISSED_CALL') => {
    if (guests.has(id)) return;
    guests.set(id, {
      customers: true,
      stream: customerStream(id),
      events: [
        ev(`${id}|created`, 'CustomerCreated', {
          customer_id: id,
          restaurant_id: restaurantId,
          at: iso(at),
          profile: demoProfile(n, phone),
          draft: false,
          origin,
        }),
      ],
    });
  };
  const customers = Array.from({ length: 60 }, (_, i) => `cus_demo_${String(i + 1).padStart(3, '0')}`);
  let n = 0;
  for (let back = seed.days; back >= 1; back--) {
    const date = new Date(Date.parse(`${today}T12:00:00Z`) - back * dayMs).toISOString().slice(0, 10);
    const weekday = new Date(`${date}T12:00:00Z`).getUTCDay();
    const base = weekday === 5 || weekday === 6 ? 16 : weekday === 1 ? 6 : 10;
    const count = base + Math.floor(rnd() * 6);
    for (let i = 0; i < count; i++) {
      const id = `res_demo_${restaurantId}_${String(++n).padStart(5, '0')}`;
      const dinner = rnd() < 0.7;
      const hour = dinner ? 19 + Math.floor(rnd() * 3) : 12 + Math.floor(rnd() * 2);
      const startMs = Date.parse(`${date}T${String(hour).padStart(2, '0')}:${rnd() < 0.5 ? '00' : '30'}:00Z`);
      // The wall time above is read as UTC: shift by the zone's offset to get the instant.
      const startLocal = Date.parse(formatInstant(zone, startMs).slice(0, 19) + 'Z');
      const start = startMs - (startLocal - startMs);
      const source = pick(rnd, SOURCES);
      const leadMin =
        source === 'WALK_IN'
          ? 0
          : Math.round(
              pick(rnd, [
                [30, 2],
                [180, 3],
                [1440, 4],
                [4320, 4],
                [10080, 3],
                [30240, 1],
              ]) *
                (0.3 + rnd()),
            );
      const created = Math.min(start - leadMin * 60_000, now.getTime() - 60_000);
      const status = pick(rnd, OUTCOMES);
      const customer =
        source === 'WALK_IN' && rnd() < 0.5
          ? null
          : (customers[Math.floor(rnd() ** 1.6 * customers.length)] as string);
      const party = pick(rnd, [
        [2, 40],
        [4, 18],
        [3, 12],
        [1, 6],
        [5, 6],
        [6, 8],
        [8, 4],
        [12, 2],
      ]);
      if (customer !== null) {
        const n = customers.indexOf(customer);
        guest(customer, n, fictionPhone(n), firstDay, 'API');
      }
      const shift = dinner ? shifts.dinner : shifts.lunch;
      const minutes = durationOf(shift, party);
      const r = snapshot({
        reservation_id: id,
        restaurant_id: restaurantId,
        start_at: formatInstant(zone, start),
        end_at: formatInstant(zone, start + minutes * 60_000),
        duration_minutes: minutes,
        service_date: date,
        shift_id: shift.id,
        party_size: party,
        source,
        customer_id: customer,
        created_at: iso(created),
        updated_at: iso(created),
      });
      hold(r, status);
      const events = [
        ev(`${id}|created`, 'ReservationCreated', {
          reservation_id: id,
          restaurant_id: restaurantId,
          at: iso(created),
          reservation: r,
        }),
      ];
      const endAt =
        status === 'DONE' || status === 'NO_SHOW'
          ? start + 2 * 3600_000
          : Math.min(start - 3600_000, created + (start - created) / 2);
      events.push(
        ev(`${id}|status`, 'ReservationStatusChanged', {
          reservation_id: id,
          restaurant_id: restaurantId,
          at: iso(Math.max(created, endAt)),
          from: 'CONFIRMED',
          to: status,
          reason: null,
          actor_kind: 'STAFF',
        }),
      );
      out.push({ stream: reservationStream(id), events });
    }
    // Webhook deliveries of the day: one fan-out per three reservations, to each endpoint.
    for (let f = 0; f < Math.ceil(count / 3); f++) {
      const at = Date.parse(`${date}T10:00:00Z`) + Math.floor(rnd() * 12 * 3600_000);
      const source = `insights-demo-${restaurantId}-${date}-${f}`;
      const deliveries = seed.endpoints.map((e, k) => ({
        delivery_id: `whd_demo_${restaurantId}_${date}_${f}_${k}`,
        endpoint_id: e,
        payload: 'p',
      }));
      out.push({
        stream: fanoutStream(source),
        events: [
          ev(`${source}|fanout`, 'WebhookDeliveriesScheduled', {
            restaurant_id: restaurantId,
            source_event_id: uuidOf(source),
            source_position: '0',
            event_types: { p: 'reservation.updated' },
            event_created: iso(at),
            payloads: { p: '{}' },
            deliveries,
            at: iso(at),
          }),
        ],
      });
      deliveries.forEach((d, k) => {
        // The second endpoint is flaky: it times out now and then, and had a bad week.
        const flaky = k === 1;
        const badWeek = flaky && Math.abs(Date.parse(date) - (Date.parse(today) - 10 * dayMs)) < 3 * dayMs;
        const pFail = flaky ? (badWeek ? 0.7 : 0.12) : 0.02;
        const events: NewEvent[] = [];
        let t = at + Math.floor(rnd() * 400);
        const delays = [60, 300, 1800, 7200, 21600];
        for (let attempt = 1; attempt <= 6; attempt++) {
          const ok = rnd() >= pFail;
          const last = attempt === 6;
          const outcome = ok ? 'succeeded' : last ? 'failed' : 'retry';
          const duration = ok ? 40 + Math.floor(rnd() * (flaky ? 900 : 250)) : 10_000;
          events.push(
            ev(`${d.delivery_id}|${attempt}`, 'WebhookAttemptRecorded', {
              delivery_id: d.delivery_id,
              endpoint_id: d.endpoint_id,
              restaurant_id: restaurantId,
              attempt,
              log_id: uuidOf(`${d.delivery_id}|${attempt}|log`),
              at: iso(t),
              duration_ms: duration,
              status_code: ok ? 200 : null,
              error: ok ? null : 'timeout',
              outcome,
              next_attempt_at: outcome === 'retry' ? iso(t + (delays[attempt - 1] as number) * 1000) : null,
            }),
          );
          if (outcome !== 'retry') break;
          t += (delays[attempt - 1] as number) * 1000;
        }
        out.push({ stream: deliveryStream(d.delivery_id), events });
      });
    }
    // Missed calls: a few a day; most get a message, some are skipped, a few callers book afterwards.
    const calls = Math.floor(rnd() * 4);
    for (let c = 0; c < calls; c++) {
      const id = `mc_demo_${restaurantId}_${date}_${c}`;
      const at = Date.parse(`${date}T09:00:00Z`) + Math.floor(rnd() * 11 * 3600_000);
      // Callers are guests of their own (a regular's reservation a day later would count as "followed").
      const customer = `cus_demo_caller_${date}_${c}`;
      const callerNo = 1000 + guests.size;
      const phone = fictionPhone(callerNo);
      const base = { missed_call_id: id, restaurant_id: restaurantId };
      const events: NewEvent[] = [
        ev(`${id}|reported`, 'MissedCallReported', {
          ...base,
          at: iso(at),
          caller_phone_number: phone,
          external_call_id: null,
          occurred_at: iso(at),
        }),
        ev(`${id}|matched`, 'MissedCallMatched', {
          ...base,
          at: iso(at),
          customer_id: customer,
          customer_created: rnd() < 0.6,
          reservation_id: null,
        }),
      ];
      const created = (events[1] as NewEvent).data.customer_created === true;
      guest(customer, callerNo, phone, created ? at : firstDay, created ? 'MISSED_CALL' : 'API');
      const outcome = pick(rnd, [
        ['SENT', 70],
        ['SKIPPED_COOLDOWN', 14],
        ['SKIPPED_OPTED_OUT', 6],
        ['SEND_UNCONFIRMED', 4],
        ['SKIPPED_INVALID_RECIPIENT', 6],
      ] as [string, number][]);
      if (outcome.startsWith('SKIPPED') && outcome !== 'SKIPPED_INVALID_RECIPIENT')
        events.push(
          ev(`${id}|skipped`, 'MissedCallSkipped', { ...base, at: iso(at + 1000), outcome, detail: null }),
        );
      else {
        const message = { message_id: `msg_demo_${id}`, attempt: 1 };
        events.push(
          ev(`${id}|requested`, 'MessageRequested', {
            ...base,
            ...message,
            at: iso(at + 1000),
            idempotency_key: uuidOf(id),
            to: phone,
            template_id: 'tpl_demo',
            template_name: 'missed_call',
            template_type: 'MISSED_CALL',
            language: 'fr',
            form: 'none',
            parameters: [],
            text: 'Sorry we missed your call',
            sender: 'outbox',
          }),
        );
        if (outcome === 'SENT')
          events.push(
            ev(`${id}|sent`, 'MessageSent', {
              ...base,
              ...message,
              at: iso(at + 2000),
              provider: 'outbox',
              provider_message_id: `p_${id}`,
              left_machine: false,
            }),
          );
        else if (outcome === 'SEND_UNCONFIRMED')
          events.push(
            ev(`${id}|unconfirmed`, 'MessageUnconfirmed', {
              ...base,
              ...message,
              at: iso(at + 62_000),
              reason: 'no answer recorded',
            }),
          );
        else
          events.push(
            ev(`${id}|failed`, 'MessageFailed', {
              ...base,
              ...message,
              at: iso(at + 2000),
              kind: 'invalid_recipient',
              code: '131026',
              error: 'not on WhatsApp',
              retryable: false,
              outcome,
            }),
          );
      }
      out.push({ stream: missedCallStream(id), events });
      // Some callers book within a few days: a reservation created after the call.
      if (outcome === 'SENT' && rnd() < 0.45) {
        const rid = `res_demo_${restaurantId}_call_${date}_${c}`;
        const created = at + Math.floor(rnd() * 2 * dayMs);
        if (created < now.getTime()) {
          // Booked for dinner three days later, at 19:30 local.
          const day = localDateOf(zone, created + 3 * dayMs);
          const wall = Date.parse(`${day}T19:30:00Z`);
          const start = wall - (Date.parse(`${formatInstant(zone, wall).slice(0, 19)}Z`) - wall);
          const minutes = durationOf(shifts.dinner, 2);
          const r = snapshot({
            reservation_id: rid,
            restaurant_id: restaurantId,
            start_at: formatInstant(zone, start),
            end_at: formatInstant(zone, start + minutes * 60_000),
            duration_minutes: minutes,
            service_date: day,
            shift_id: shifts.dinner.id,
            source: 'MISSED_CALL',
            customer_id: customer,
            party_size: 2,
            status: start < now.getTime() ? 'DONE' : 'CONFIRMED',
            created_at: iso(created),
            updated_at: iso(created),
          });
          hold(r, r.status);
          out.push({
            afterCalls: true,
            stream: reservationStream(rid),
            events: [
              ev(`${rid}|created`, 'ReservationCreated', {
                reservation_id: rid,
                restaurant_id: restaurantId,
                at: iso(created),
                reservation: r,
              }),
            ],
          });
        }
      }
    }
  }
  // The holds first, as the service appends a seating before its reservation.
  const seatings = [...holds].map(([day, events]) => ({ stream: capacityStream(restaurantId, day), events }));
  return [...guests.values(), ...seatings, ...out];
}

export const insightsMarkerStream = (restaurantId: string) => `insights-demo-${restaurantId}`;

/** Appends the demo activity once; returns the last position appended (null: already there). */
export async function seedInsightsDemo(
  rt: Runtime,
  restaurantId: string,
  seed: InsightsSeed,
): Promise<bigint | null> {
  if ((await rt.events.readStream(insightsMarkerStream(restaurantId), { limit: 1 })).length > 0) return null;
  let last: bigint | null = null;
  const appends = insightsDemoEvents(restaurantId, rt.clock.now(), seed);
  // A seeded seating past midnight (a late dinner) is recorded as crossing before it exists, as a
  // hold's would be (commands/reservations/night-seatings.ts).
  const crossing = appends.some((a) =>
    a.events.some(
      (e) =>
        e.type === 'SeatingHeld' && spillDays(String(e.data.service_date), String(e.data.end_at)).length > 0,
    ),
  );
  if (crossing)
    await recordCrossing(
      rt.events,
      restaurantId,
      'SEATING',
      { actor: 'system:insights-demo', ...NO_WEBHOOK },
      rt.clock.now().toISOString(),
    );
  // Each wave is issued in one turn so the store's group commit writes it in one transaction (one
  // fsync, not ~900); each append has its own outcome, but appends of one turn need not reach the log
  // in the order given (those the sealing layer must look keys up for, a missed call's, come later):
  // the bookings that follow a call wait for the first wave.
  for (const wave of [
    appends.filter((a) => a.customers),
    appends.filter((a) => !a.afterCalls && !a.customers),
    appends.filter((a) => a.afterCalls),
  ]) {
    const outcomes = await Promise.allSettled(
      wave.map((a) => rt.events.append(a.stream, a.events, NO_STREAM)),
    );
    for (const o of outcomes) {
      if (o.status === 'fulfilled') last = last === null || o.value.position > last ? o.value.position : last;
      // A start that died part-way: those streams are already there.
      else if (!(o.reason instanceof WrongExpectedRevisionError)) throw o.reason;
    }
  }
  const marker = await rt.events
    .append(
      insightsMarkerStream(restaurantId),
      [
        {
          id: uuidOf(`insights-demo|${restaurantId}|marker`),
          type: 'InsightsDemoSeeded',
          data: { restaurant_id: restaurantId, at: rt.clock.now().toISOString() },
          metadata: { ...NO_WEBHOOK },
        },
      ],
      NO_STREAM,
    )
    .catch((err) => {
      if (err instanceof WrongExpectedRevisionError) return null;
      throw err;
    });
  return marker?.position ?? last;
}
