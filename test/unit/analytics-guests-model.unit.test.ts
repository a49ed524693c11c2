// analytics_guests and the new-vs-returning figures against a tiny reference model of guest identity:
// random sequences of what the write side allows (reservations created, re-attached to another
// customer or detached by a PATCH, canceled; customers merged, chains of merges; customers erased),
// in every order. The model knows only who each reservation belongs to now: every reservation counts
// once, for the survivor of its customer's merges, whatever its status, and a booking is `returning`
// when that guest already has another reservation at the moment it first names a customer.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ANALYTICS_DAYS,
  ANALYTICS_GUESTS,
  ANALYTICS_RESERVATIONS,
  analyticsProjection,
  type FactsDoc,
  type GuestDoc,
} from '../../projections/analytics/projection';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { DocumentStore } from '../../src/ports/document-store';
import { recorded } from '../helpers/analytics-events';
import { deliverWithCrashes } from '../helpers/crash-redelivery';

const RESTAURANT = 'rest_a';
const DAY = '2026-06-01';
const CUSTOMERS = ['cus_1', 'cus_2', 'cus_3', 'cus_4', 'cus_5'];

type Kind = 'new' | 'returning' | 'unknown';

/** What the write side may do next; `pick`s choose among what exists when the step is taken. */
type Step =
  | { op: 'create'; customer: number | null }
  | { op: 'attach'; reservation: number; customer: number | null }
  | { op: 'cancel'; reservation: number }
  | { op: 'merge'; survivor: number; absorbed: number }
  | { op: 'erase'; customer: number };

const customerPick = fc.nat(CUSTOMERS.length - 1);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), customer: fc.option(customerPick, { freq: 5 }) }),
  fc.record({
    op: fc.constant('attach' as const),
    reservation: fc.nat(20),
    customer: fc.option(customerPick, { freq: 5 }),
  }),
  fc.record({ op: fc.constant('cancel' as const), reservation: fc.nat(20) }),
  fc.record({ op: fc.constant('merge' as const), survivor: customerPick, absorbed: customerPick }),
  fc.record({ op: fc.constant('erase' as const), customer: customerPick }),
);

interface Model {
  /** Reservation → its customer now (null: none) and its guest kind, decided once. */
  reservations: Map<string, { customer: string | null; kind: Kind }>;
  /** Customer merged away → the customer it was merged into. */
  mergedInto: Map<string, string>;
  erased: Set<string>;
}

const survivorOf = (m: Model, c: string): string => {
  let at = c;
  for (let next = m.mergedInto.get(at); next !== undefined; next = m.mergedInto.get(at)) at = next;
  return at;
};
const active = (m: Model, c: string) => !m.mergedInto.has(c) && !m.erased.has(c);

/** The guest's reservations now: those whose customer is, or was merged into, `guest`. */
const reservationsOf = (m: Model, guest: string) =>
  [...m.reservations.values()].filter((r) => r.customer !== null && survivorOf(m, r.customer) === guest)
    .length;

/** Guest → reservations, for every guest that has any. */
function guestsOf(m: Model): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of m.reservations.values())
    if (r.customer !== null) {
      const id = `${RESTAURANT}|${survivorOf(m, r.customer)}`;
      out.set(id, (out.get(id) ?? 0) + 1);
    }
  return out;
}

const snapshot = (id: string, customer: string | null) => ({
  reservation_id: id,
  restaurant_id: RESTAURANT,
  service_date: DAY,
  shift_id: 'dinner',
  start_at: `${DAY}T20:00:00+02:00`,
  created_at: '2026-05-20T10:00:00Z',
  party_size: 2,
  status: 'CONFIRMED',
  source: 'WEBSITE',
  customer_id: customer,
});

/**
 * Plays the steps the write side would accept (a step it would refuse is skipped: a customer merged
 * away or erased takes no reservation and no merge, a customer is not merged into itself) into the
 * log its events make, and the model's state after them.
 */
function play(steps: readonly Step[]): {
  log: { type: string; data: Record<string, unknown> }[];
  model: Model;
} {
  const m: Model = { reservations: new Map(), mergedInto: new Map(), erased: new Set() };
  const log: { type: string; data: Record<string, unknown> }[] = [];
  const ids = () => [...m.reservations.keys()];
  for (const s of steps) {
    if (s.op === 'create') {
      const customer = s.customer === null ? null : (CUSTOMERS[s.customer] as string);
      if (customer !== null && !active(m, customer)) continue;
      const id = `res_${m.reservations.size + 1}`;
      const kind: Kind =
        customer === null ? 'unknown' : reservationsOf(m, customer) > 0 ? 'returning' : 'new';
      m.reservations.set(id, { customer, kind });
      log.push({
        type: 'ReservationCreated',
        data: { reservation_id: id, restaurant_id: RESTAURANT, reservation: snapshot(id, customer) },
      });
    } else if (s.op === 'attach' || s.op === 'cancel') {
      const list = ids();
      if (list.length === 0) continue;
      const id = list[s.reservation % list.length] as string;
      const r = m.reservations.get(id) as { customer: string | null; kind: Kind };
      if (s.op === 'cancel') {
        log.push({
          type: 'ReservationStatusChanged',
          data: { reservation_id: id, to: 'CANCELED_BY_CUSTOMER' },
        });
        continue;
      }
      const customer = s.customer === null ? null : (CUSTOMERS[s.customer] as string);
      if (customer !== null && !active(m, customer)) continue;
      // PATCH customer: another customer ({id}), or none (null); the same one changes nothing.
      if (customer === r.customer) continue;
      const kind: Kind =
        r.kind !== 'unknown' || customer === null
          ? r.kind
          : reservationsOf(m, customer) > 0
            ? 'returning'
            : 'new';
      m.reservations.set(id, { customer, kind });
      log.push({
        type: 'ReservationUpdated',
        data: {
          reservation_id: id,
          changes: { customer_id: customer },
          previous: { customer_id: r.customer },
        },
      });
    } else if (s.op === 'merge') {
      const survivor = CUSTOMERS[s.survivor] as string;
      const absorbed = CUSTOMERS[s.absorbed] as string;
      if (survivor === absorbed || !active(m, survivor) || !active(m, absorbed)) continue;
      m.mergedInto.set(absorbed, survivor);
      log.push(
        {
          type: 'CustomerMergedInto',
          data: { restaurant_id: RESTAURANT, customer_id: absorbed, into_customer_id: survivor },
        },
        {
          type: 'CustomerMerged',
          data: { restaurant_id: RESTAURANT, customer_id: survivor, merged_customer_id: absorbed },
        },
      );
    } else {
      // Erasing a customer erases those merged into it; their reservations keep their (opaque) ids.
      const customer = CUSTOMERS[s.customer] as string;
      if (!active(m, customer)) continue;
      for (const c of CUSTOMERS)
        if (survivorOf(m, c) === customer && !m.erased.has(c)) {
          m.erased.add(c);
          log.push({
            type: 'CustomerDeleted',
            data: {
              restaurant_id: RESTAURANT,
              customer_id: c,
              reason: null,
              ...(c === customer ? {} : { into_customer_id: customer }),
            },
          });
        }
    }
  }
  return { log, model: m };
}

/** A map as a plain object in key order (uvu shows the difference between two). */
const sorted = <V>(m: Map<string, V>) => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));

async function assertMatches(docs: DocumentStore, m: Model, label: string) {
  const rows = new Map<string, number>();
  for (const g of await docs.collection<GuestDoc>(ANALYTICS_GUESTS).find({}))
    if (g.reservations !== 0) rows.set(g._id, g.reservations);
  assert.equal(sorted(rows), sorted(guestsOf(m)), `${label}: analytics_guests, reservations per guest`);
  const kinds = new Map<string, Kind>();
  for (const f of await docs.collection<FactsDoc>(ANALYTICS_RESERVATIONS).find({})) kinds.set(f._id, f.guest);
  const want = new Map([...m.reservations].map(([id, r]) => [id, r.kind]));
  assert.equal(sorted(kinds), sorted(want), `${label}: analytics_reservations, new or returning`);
  const day = await docs.collection(ANALYTICS_DAYS).findOne({ _id: `${RESTAURANT}|${DAY}` });
  const tally = { new: 0, returning: 0, unknown: 0 };
  for (const k of want.values()) tally[k]++;
  assert.equal(day?.guests ?? tally, tally, `${label}: analytics_days.guests`);
}

/** The events the projection receives (an erasure is not among them: it leaves the counts as they are). */
const received = (log: { type: string; data: Record<string, unknown> }[]) =>
  recorded(log).filter((e) => analyticsProjection.eventTypes.includes(e.type));

test('every reservation counts once, for the guest it belongs to now (in order)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
      const { log, model } = play(steps);
      const docs = new EmbeddedDocumentStore();
      await analyticsProjection.setup?.(docs);
      for (const e of received(log)) await analyticsProjection.apply(e, docs);
      await assertMatches(docs, model, 'in order');
    }),
    { numRuns: 500 },
  );
});

test('every reservation counts once, with crashes part-way through an event and redeliveries', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(step, { maxLength: 30 }),
      fc.array(fc.tuple(fc.nat(40), fc.nat(6), fc.nat(10)), { maxLength: 4 }),
      async (steps, crashes) => {
        const { log, model } = play(steps);
        const docs = await deliverWithCrashes(
          (e, d) => analyticsProjection.apply(e, d),
          received(log),
          crashes,
        );
        await assertMatches(docs, model, 'with crashes');
      },
    ),
    { numRuns: 300 },
  );
});

test('examples: moved before a merge, moved through a chain, detached, a guest whose only booking moved away', async () => {
  const cases: [string, Step[], Record<string, number>, Kind[]][] = [
    [
      'moved from A to B, then A merged into B: B counts it once',
      [
        { op: 'create', customer: 0 },
        { op: 'attach', reservation: 0, customer: 1 },
        { op: 'merge', survivor: 1, absorbed: 0 },
      ],
      { 'rest_a|cus_2': 1 },
      ['new'],
    ],
    [
      'moved from A to D, A merged into B, then moved to B: B counts it once, D none',
      [
        { op: 'create', customer: 0 },
        { op: 'attach', reservation: 0, customer: 3 },
        { op: 'merge', survivor: 1, absorbed: 0 },
        { op: 'attach', reservation: 0, customer: 1 },
      ],
      { 'rest_a|cus_2': 1 },
      ['new'],
    ],
    [
      'moved from A to B, then a new booking for A: A has none of its own left, the booking is new',
      [
        { op: 'create', customer: 0 },
        { op: 'attach', reservation: 0, customer: 1 },
        { op: 'create', customer: 0 },
      ],
      { 'rest_a|cus_1': 1, 'rest_a|cus_2': 1 },
      ['new', 'new'],
    ],
    [
      'A merged into B, B into C, a booking for C, one of A erased with C: C counts both, still',
      [
        { op: 'create', customer: 0 },
        { op: 'merge', survivor: 1, absorbed: 0 },
        { op: 'merge', survivor: 2, absorbed: 1 },
        { op: 'create', customer: 2 },
        { op: 'cancel', reservation: 0 },
        { op: 'erase', customer: 2 },
      ],
      { 'rest_a|cus_3': 2 },
      ['new', 'returning'],
    ],
  ];
  for (const [label, steps, guests, kinds] of cases) {
    const { log, model } = play(steps);
    assert.equal(Object.fromEntries(guestsOf(model)), guests, `${label}: the model`);
    assert.equal(
      [...model.reservations.values()].map((r) => r.kind),
      kinds,
      `${label}: the model's kinds`,
    );
    const docs = new EmbeddedDocumentStore();
    for (const e of received(log)) await analyticsProjection.apply(e, docs);
    await assertMatches(docs, model, label);
  }
});

test.run();
