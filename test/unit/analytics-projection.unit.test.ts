// The analytics projection, applied one event at a time (with redeliveries and crashes part-way
// through an event), equals the figures computed from scratch over the same log.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  emptyFigures,
  figuresOf,
  foldFacts,
  type ReservationFacts,
} from '../../projections/analytics/figures';
import {
  ANALYTICS_DAYS,
  ANALYTICS_GUESTS,
  ANALYTICS_SHIFT_DAYS,
  analyticsProjection,
  type GuestDoc,
} from '../../projections/analytics/projection';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { DocumentStore } from '../../src/ports/document-store';
import type { RecordedEvent } from '../../src/ports/event-store';
import { analyticsLog, recorded } from '../helpers/analytics-events';
import { deliverWithCrashes } from '../helpers/crash-redelivery';

const strip = <T extends { _id: string }>(docs: T[]) =>
  new Map(
    docs.map((d) => {
      const { _id, _pos, ...rest } = d as T & { _pos?: string };
      return [_id, rest];
    }),
  );

async function compare(docs: DocumentStore, events: RecordedEvent[]) {
  const expected = figuresOf(foldFacts(events).facts.values());
  for (const [name, want] of [
    [ANALYTICS_DAYS, expected.days],
    [ANALYTICS_SHIFT_DAYS, expected.shiftDays],
  ] as const) {
    const got = strip(await docs.collection(name).find({}));
    for (const [id, figures] of got) {
      if (want.has(id)) assert.equal(figures, want.get(id), `${name} ${id}`);
      else {
        // Every reservation moved away: an empty day, not stale figures.
        const f = figures as { restaurant_id: string; service_date: string; shift_id?: string };
        const empty = emptyFigures(f as ReservationFacts, name === ANALYTICS_SHIFT_DAYS);
        assert.equal(figures, empty, `${name} ${id} should be empty`);
      }
    }
    for (const id of want.keys()) assert.ok(got.has(id), `${name} ${id} missing`);
  }
  const { customers, facts } = foldFacts(events);
  let counted = 0;
  for (const g of await docs.collection<GuestDoc>(ANALYTICS_GUESTS).find({})) {
    assert.is(g.reservations, customers.get(g._id) ?? 0, `guest ${g._id}`);
    assert.ok(g.reservations >= 0, `guest ${g._id}: never below 0`);
    counted += g.reservations;
  }
  // Whatever the log holds (merges in cycles, repeated, of customers merged away): each reservation
  // with a customer counts once, for one guest.
  const withCustomer = [...facts.values()].filter((f) => f.customer_id !== null).length;
  assert.is(counted, withCustomer, 'every reservation with a customer counted once');
}

test('applied once each, in order: equals the from-scratch figures', async () => {
  await fc.assert(
    fc.asyncProperty(analyticsLog, async (log) => {
      const events = recorded(log);
      const docs = new EmbeddedDocumentStore();
      await analyticsProjection.setup?.(docs);
      for (const e of events) await analyticsProjection.apply(e, docs);
      await compare(docs, events);
    }),
    { numRuns: 300 },
  );
});

test('at least once, with crashes part-way through an event and redelivery from an earlier point: still equal', async () => {
  await fc.assert(
    fc.asyncProperty(
      analyticsLog,
      fc.array(fc.tuple(fc.nat(40), fc.nat(6), fc.nat(10)), { maxLength: 4 }),
      async (log, crashes) => {
        const events = recorded(log);
        const inner = await deliverWithCrashes((e, d) => analyticsProjection.apply(e, d), events, crashes);
        await compare(inner, events);
      },
    ),
    { numRuns: 300 },
  );
});

test('a move between days and shifts, a status change and a customer merge move the counts', async () => {
  const events = recorded([
    {
      type: 'ReservationCreated',
      data: {
        reservation_id: 'r1',
        restaurant_id: 'rest_a',
        reservation: {
          reservation_id: 'r1',
          restaurant_id: 'rest_a',
          service_date: '2026-06-01',
          shift_id: 'lunch',
          start_at: '2026-06-01T12:00:00+02:00',
          created_at: '2026-05-31T10:00:00Z',
          party_size: 2,
          status: 'CONFIRMED',
          source: 'WEBSITE',
          customer_id: 'cus_2',
        },
      },
    },
    {
      type: 'CustomerMerged',
      data: { restaurant_id: 'rest_a', customer_id: 'cus_1', merged_customer_id: 'cus_2' },
    },
    {
      type: 'ReservationUpdated',
      data: {
        reservation_id: 'r1',
        changes: { service_date: '2026-06-02', shift_id: 'dinner', start_at: '2026-06-02T20:00:00+02:00' },
      },
    },
    { type: 'ReservationStatusChanged', data: { reservation_id: 'r1', to: 'NO_SHOW' } },
    {
      type: 'ReservationCreated',
      data: {
        reservation_id: 'r2',
        restaurant_id: 'rest_a',
        reservation: {
          reservation_id: 'r2',
          restaurant_id: 'rest_a',
          service_date: '2026-06-02',
          shift_id: 'dinner',
          start_at: '2026-06-02T20:00:00+02:00',
          created_at: '2026-06-02T10:00:00Z',
          party_size: 3,
          status: 'CONFIRMED',
          source: 'PHONE',
          customer_id: 'cus_1',
        },
      },
    },
  ]);
  const docs = new EmbeddedDocumentStore();
  for (const e of events) await analyticsProjection.apply(e, docs);
  const days = docs.collection(ANALYTICS_DAYS);
  const first = await days.findOne({ _id: 'rest_a|2026-06-01' });
  assert.is(first?.reservations, 0, 'moved away');
  const second = await days.findOne({ _id: 'rest_a|2026-06-02' });
  assert.is(second?.reservations, 2);
  assert.is(second?.covers, 5);
  assert.equal(second?.by_status, {
    NO_SHOW: { reservations: 1, covers: 2 },
    CONFIRMED: { reservations: 1, covers: 3 },
  });
  assert.is(second?.no_show_rate, 1);
  assert.equal(second?.guests, { new: 1, returning: 1, unknown: 0 }, 'cus_1 inherits cus_2’s booking');
  const shift = await docs.collection(ANALYTICS_SHIFT_DAYS).findOne({ _id: 'rest_a|2026-06-02|dinner' });
  assert.is(shift?.reservations, 2);
  await compare(docs, events);
});

test('a reservation re-attached from a merged-away customer to its survivor is counted once', async () => {
  const snapshot = (id: string, customer: string) => ({
    reservation_id: id,
    restaurant_id: 'rest_a',
    service_date: '2026-06-01',
    shift_id: 'lunch',
    start_at: '2026-06-01T12:00:00+02:00',
    created_at: '2026-05-31T10:00:00Z',
    party_size: 2,
    status: 'CONFIRMED',
    source: 'WEBSITE',
    customer_id: customer,
  });
  const created = (id: string, customer: string) => ({
    type: 'ReservationCreated',
    data: { reservation_id: id, restaurant_id: 'rest_a', reservation: snapshot(id, customer) },
  });
  const merge = (into: string, away: string) => ({
    type: 'CustomerMerged',
    data: { restaurant_id: 'rest_a', customer_id: into, merged_customer_id: away },
  });
  const reattach = (id: string, customer: string) => ({
    type: 'ReservationUpdated',
    data: { reservation_id: id, changes: { customer_id: customer } },
  });
  // r1 on cus_a, merged into cus_b, merged into cus_c; r1 then re-attached to cus_c (through the
  // chain) and r2 on cus_a re-attached to cus_b (one hop): each reservation once in each count.
  const events = recorded([
    created('r1', 'cus_a'),
    created('r2', 'cus_a'),
    merge('cus_b', 'cus_a'),
    reattach('r2', 'cus_b'),
    merge('cus_c', 'cus_b'),
    reattach('r1', 'cus_c'),
  ]);
  const docs = new EmbeddedDocumentStore();
  for (const e of events) await analyticsProjection.apply(e, docs);
  const guests = docs.collection(ANALYTICS_GUESTS);
  // Version 3: a merged-away customer keeps none (they belong to its survivor); version 2 kept 2 on cus_b.
  const b = await guests.findOne({ _id: 'rest_a|cus_b' });
  assert.is(b?.reservations, 0, 'cus_b: merged into cus_c, holds none');
  assert.is(b?.merged_into, 'cus_c');
  assert.is((await guests.findOne({ _id: 'rest_a|cus_c' }))?.reservations, 2, 'cus_c: r1 and r2, once each');
  assert.is(foldFacts(events).customers.get('rest_a|cus_c'), 2, 'the from-scratch fold agrees');
  await compare(docs, events);
});

test.run();
