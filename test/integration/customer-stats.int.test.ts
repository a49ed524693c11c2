// Customer stats (spec §2.2) projected from reservation events, appended here directly in the
// reservation contract's shapes (commands/reservations/events.ts).
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer } from '../../commands/customers/handler';
import { mergeCustomers } from '../../commands/customers/merge';
import {
  type Feedback,
  RESERVATION_STATUSES,
  type ReservationEvent,
  type ReservationSnapshot,
  type ReservationStatus,
  reservationStream,
} from '../../commands/reservations/events';
import { CUSTOMER_RESERVATIONS, CUSTOMERS, type CustomerDoc } from '../../projections/customer-docs';
import { computeStats, type ReservationRow, sameContribution } from '../../projections/customer-stats';
import { customersProjection } from '../../projections/customers';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { ProjectionRunner } from '../../src/projection/runner';
import { type CustomerWorld, customerWorld } from '../helpers/customers';

const t = suite<{ w: CustomerWorld; a: string; b: string }>('customer stats');

t.before.each(async (ctx) => {
  ctx.w = await customerWorld();
  ctx.a = (await createCustomer(ctx.w, ctx.w.restaurant, { name: 'A' }, ctx.w.meta)).customerId;
  ctx.b = (await createCustomer(ctx.w, ctx.w.restaurant, { name: 'B' }, ctx.w.meta)).customerId;
  await ctx.w.settle();
});

const at = '2026-03-01T10:00:00.000Z';

function snapshot(id: string, o: Partial<ReservationSnapshot>): ReservationSnapshot {
  // A service day alone means a 19:00 start that day (winter offset; these dates are only compared).
  const day = o.service_date ?? '2026-03-10';
  return {
    reservation_id: id,
    restaurant_id: 'rest_a',
    external_id: null,
    status: 'CONFIRMED',
    start_at: `${day}T19:00:00+01:00`,
    end_at: `${day}T20:30:00+01:00`,
    duration_minutes: 90,
    party_size: 2,
    service_date: day,
    shift_id: 'shift_dinner',
    room_id: null,
    table_ids: [],
    source: 'WEBSITE',
    customer_id: null,
    waiter_id: null,
    discount_id: null,
    prescriber_id: null,
    custom_message: null,
    allergies: null,
    metadata: {},
    tags: [],
    attached_files: [],
    send_client_notifications: true,
    send_payment_link: true,
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
    created_at: at,
    updated_at: at,
    ...o,
  };
}

async function append(w: CustomerWorld, ...events: ReservationEvent[]) {
  for (const e of events)
    await w.events.append(
      reservationStream(e.data.reservation_id),
      [{ type: e.type, data: e.data as never }],
      'any',
    );
  await w.settle();
}

const base = (id: string) => ({ reservation_id: id, restaurant_id: 'rest_a', at });
const created = (id: string, o: Partial<ReservationSnapshot>): ReservationEvent => ({
  type: 'ReservationCreated',
  data: { ...base(id), reservation: snapshot(id, o) },
});
const status = (id: string, from: ReservationStatus, to: ReservationStatus): ReservationEvent => ({
  type: 'ReservationStatusChanged',
  data: { ...base(id), from, to, reason: null, actor_kind: 'STAFF' },
});
const feedback = (id: string, rating: number): ReservationEvent => {
  const f: Feedback = { rating, comment: null, answer: null, created_at: at, answered_at: null };
  return { type: 'ReservationFeedbackRecorded', data: { ...base(id), feedback: f } };
};
const paid = (id: string, total: number): ReservationEvent => ({
  type: 'ReservationPaymentRecorded',
  data: {
    ...base(id),
    total_amount_paid: total,
    payment: {
      id: `pay_${id}`,
      provider_id: null,
      payment_type: 'DEPOSIT',
      payment_mode: 'SOFT_PREAUTH',
      provider: null,
      status: 'PAID',
      amount: total,
      quantity: 1,
      unit_price: total,
      percent_of_total: null,
      currency: 'EUR',
      is_refundable: true,
      expiration_date: null,
      max_cancellation_date: null,
      authorized_at: null,
      capture_deadline: null,
      captured_at: null,
      voided_at: null,
      linked_product: null,
      linked_variant: null,
      created_at: at,
      updated_at: at,
    },
  },
});

const doc = async (w: CustomerWorld, id: string) =>
  (await w.docs.collection<CustomerDoc>(CUSTOMERS).findOne({ _id: id })) as CustomerDoc;

t('counts, no-shows, feedback, amounts, basket per cover and the last date', async ({ w, a }) => {
  await append(
    w,
    created('r1', { customer_id: a, party_size: 2, total_amount_paid: 5000, service_date: '2026-03-10' }),
    created('r2', { customer_id: a, status: 'PENDING', party_size: 3, service_date: '2026-03-12' }),
    status('r2', 'PENDING', 'NO_SHOW'),
    created('r3', { customer_id: a, party_size: 8, total_amount_paid: 9900, service_date: '2027-01-01' }),
    status('r3', 'CONFIRMED', 'CANCELED_BY_CUSTOMER'),
    created('r4', { customer_id: a, status: 'REJECTED', party_size: 6, service_date: '2027-02-01' }),
    created('r5', { customer_id: a, party_size: 4, service_date: '2026-12-24' }),
    paid('r5', 2000),
    feedback('r1', 4),
    feedback('r5', 5),
    created('r6', { customer_id: null, party_size: 2 }),
  );
  assert.equal((await doc(w, a)).stats, {
    reservation_count: 3,
    confirmed_count: 2,
    no_show_count: 1,
    feedback_count: 2,
    average_feedback_score: 4.5,
    total_amount_paid: 7000,
    average_basket: 777.78,
    last_reservation_date: '2026-12-24',
  });
});

t('last_reservation_date is the calendar date of start_at, not the service day', async ({ w, a }) => {
  // 00:30 on the 11th, in a shift that began on the evening of the 10th.
  const late = { start_at: '2026-03-11T00:30:00+01:00', end_at: '2026-03-11T02:00:00+01:00' };
  await append(w, created('r1', { customer_id: a, service_date: '2026-03-10', ...late }));
  assert.is((await doc(w, a)).stats.last_reservation_date, '2026-03-11');
  // Moved back before midnight, same service day: the date follows start_at.
  await append(w, {
    type: 'ReservationUpdated',
    data: {
      ...base('r1'),
      changes: { start_at: '2026-03-10T23:30:00+01:00', end_at: '2026-03-11T01:00:00+01:00' },
      previous: late,
    },
  });
  assert.is((await doc(w, a)).stats.last_reservation_date, '2026-03-10');
  // The date part of an offset date-time is the restaurant's own (New York at 21:00 is UTC tomorrow).
  await append(
    w,
    created('r2', {
      customer_id: a,
      service_date: '2026-03-20',
      start_at: '2026-03-20T21:00:00-04:00',
      end_at: '2026-03-20T22:30:00-04:00',
    }),
  );
  assert.is((await doc(w, a)).stats.last_reservation_date, '2026-03-20');
});

t('stats never move updated_at nor the sync order', async ({ w, a }) => {
  const before = await doc(w, a);
  await append(w, created('r1', { customer_id: a }), feedback('r1', 3), paid('r1', 100));
  const after = await doc(w, a);
  assert.is(after.stats.reservation_count, 1);
  assert.is(after.updated_at, before.updated_at);
  assert.is(after.sync_seq, before.sync_seq);
});

t('a reservation moved to another customer, or unlinked, leaves its stats', async ({ w, a, b }) => {
  await append(w, created('r1', { customer_id: a, party_size: 2, total_amount_paid: 400 }));
  await append(w, {
    type: 'ReservationUpdated',
    data: {
      ...base('r1'),
      changes: { customer_id: b, party_size: 4 },
      previous: { customer_id: a, party_size: 2 },
    },
  });
  assert.is((await doc(w, a)).stats.reservation_count, 0);
  assert.equal((await doc(w, b)).stats.average_basket, 100);
  await append(w, {
    type: 'ReservationUpdated',
    data: { ...base('r1'), changes: { customer_id: null }, previous: { customer_id: b } },
  });
  assert.is((await doc(w, b)).stats.reservation_count, 0);
  // A reinstated reservation counts again.
  await append(w, created('r2', { customer_id: a, status: 'CANCELED_BY_RESTAURANT' }));
  assert.is((await doc(w, a)).stats.reservation_count, 0);
  await append(w, status('r2', 'CANCELED_BY_RESTAURANT', 'CONFIRMED'));
  assert.is((await doc(w, a)).stats.reservation_count, 1);
});

t('after a merge the survivor counts both histories, and later events of either', async ({ w, a, b }) => {
  await append(
    w,
    created('r1', { customer_id: a }),
    created('r2', { customer_id: b, service_date: '2026-04-01' }),
  );
  await mergeCustomers(w, b, a, w.meta);
  await w.settle();
  assert.is((await doc(w, a)).stats.reservation_count, 2);
  assert.is((await doc(w, a)).stats.last_reservation_date, '2026-04-01');
  await append(w, status('r2', 'CONFIRMED', 'NO_SHOW'), created('r3', { customer_id: b }));
  const s = (await doc(w, a)).stats;
  assert.is(s.no_show_count, 1);
  assert.is(s.reservation_count, 3);
  // A chain of merges still lands on the last survivor.
  const c = (await createCustomer(w, w.restaurant, { name: 'C' }, w.meta)).customerId;
  await mergeCustomers(w, a, c, w.meta);
  await w.settle();
  await append(w, status('r1', 'CONFIRMED', 'NO_SHOW'));
  assert.is((await doc(w, c)).stats.no_show_count, 2);
  assert.is((await doc(w, c)).stats.reservation_count, 3);
});

t(
  "property: stored stats always equal the stats of the owner's rows, events that leave them alone skipped or not",
  async () => {
    // The invariant that makes skipping exact: after any sequence of reservation events (creates,
    // status changes, payments, feedback, moves, relinks and merges), every customer's stored stats
    // are computeStats of the rows it owns, as a recompute on every event would leave them.
    const ids = ['r0', 'r1', 'r2'];
    // Every status now and then; most often those a service day goes through.
    const statusArb = fc.oneof(
      { weight: 1, arbitrary: fc.constantFrom(...RESERVATION_STATUSES) },
      { weight: 3, arbitrary: fc.constantFrom<ReservationStatus>('CONFIRMED', 'SEATED', 'DONE', 'NO_SHOW') },
    );
    const day = fc.constantFrom('2026-03-10', '2026-03-11', '2026-04-01');
    type Op =
      | { k: 'create'; r: number; c: number; s: ReservationStatus; party: number; paid: number; day: string }
      | { k: 'status'; r: number; s: ReservationStatus }
      | { k: 'paid'; r: number; total: number }
      | { k: 'feedback'; r: number; rating: number }
      | { k: 'update'; r: number; c: number | null; party: number | null; day: string | null }
      | { k: 'merge' };
    const r = fc.integer({ min: 0, max: ids.length - 1 });
    const c = fc.integer({ min: 0, max: 2 }); // a, b, or no customer
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        k: fc.constant('create' as const),
        r,
        c,
        s: statusArb,
        party: fc.integer({ min: 1, max: 8 }),
        paid: fc.integer({ min: 0, max: 5000 }),
        day,
      }),
      fc.record({ k: fc.constant('status' as const), r, s: statusArb }),
      fc.record({ k: fc.constant('paid' as const), r, total: fc.integer({ min: 0, max: 9999 }) }),
      fc.record({ k: fc.constant('feedback' as const), r, rating: fc.integer({ min: 1, max: 5 }) }),
      fc.record({
        k: fc.constant('update' as const),
        r,
        c: fc.option(c, { nil: null }),
        party: fc.option(fc.integer({ min: 1, max: 8 }), { nil: null }),
        day: fc.option(day, { nil: null }),
      }),
      fc.constant({ k: 'merge' as const }),
    );
    let skipped = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 6, maxLength: 30, size: 'medium' }), async (ops) => {
        const w = await customerWorld();
        const a = (await createCustomer(w, w.restaurant, { name: 'A' }, w.meta)).customerId;
        const b = (await createCustomer(w, w.restaurant, { name: 'B' }, w.meta)).customerId;
        await w.settle();
        const customers = [a, b, null];
        const statusOf = new Map<string, ReservationStatus>();
        let merged = false;
        const events: ReservationEvent[] = [];
        for (const o of ops) {
          const id = o.k === 'merge' ? '' : (ids[o.r] as string);
          if (o.k === 'merge') {
            if (events.length) await append(w, ...events.splice(0));
            if (!merged) await mergeCustomers(w, b, a, w.meta);
            merged = true;
            await w.settle();
            continue;
          }
          if (o.k === 'create') {
            if (statusOf.has(id)) continue;
            statusOf.set(id, o.s);
            events.push(
              created(id, {
                customer_id: customers[o.c] ?? null,
                status: o.s,
                party_size: o.party,
                total_amount_paid: o.paid,
                service_date: o.day,
                start_at: `${o.day}T19:00:00+01:00`,
              }),
            );
            continue;
          }
          const from = statusOf.get(id);
          if (from === undefined) continue;
          if (o.k === 'status') {
            // An event the projection skips: the row counts as it did.
            const row = { party_size: 1, total_amount_paid: 0, feedback_rating: null, service_date: 'd' };
            if (sameContribution({ ...row, status: from }, { ...row, status: o.s })) skipped++;
            statusOf.set(id, o.s);
            events.push(status(id, from, o.s));
          } else if (o.k === 'paid') events.push(paid(id, o.total));
          else if (o.k === 'feedback') events.push(feedback(id, o.rating));
          else {
            const changes: Partial<ReservationSnapshot> = {};
            if (o.c !== null) changes.customer_id = customers[o.c] ?? null;
            if (o.party !== null) changes.party_size = o.party;
            if (o.day !== null) {
              changes.service_date = o.day;
              changes.start_at = `${o.day}T19:00:00+01:00`;
            }
            events.push({ type: 'ReservationUpdated', data: { ...base(id), changes, previous: {} } });
          }
        }
        if (events.length) await append(w, ...events);
        const rows = await w.docs.collection<ReservationRow>(CUSTOMER_RESERVATIONS).find({});
        for (const id of [a, b]) {
          const d = await w.docs.collection<CustomerDoc>(CUSTOMERS).findOne({ _id: id });
          if (d === null) continue; // merged away
          assert.equal(d.stats, computeStats(rows.filter((x) => x.owner_id === id)), `stats of ${id}`);
        }
      }),
      { numRuns: 100 },
    );
    assert.ok(skipped > 20, `the runs hold status changes the projection skips (${skipped})`);
  },
);

t(
  'idempotent: an event applied twice, and a rebuild from the log, give the same figures',
  async ({ w, a }) => {
    await append(w, created('r1', { customer_id: a, total_amount_paid: 300 }), feedback('r1', 2));
    const before = await doc(w, a);
    const [last] = await w.events.readStream(reservationStream('r1'), { direction: 'backwards', limit: 1 });
    if (!last) throw new Error('no event');
    await customersProjection.apply(last, w.docs);
    const [first] = await w.events.readStream(reservationStream('r1'), { limit: 1 });
    if (!first) throw new Error('no event');
    await customersProjection.apply(first, w.docs);
    assert.equal(await doc(w, a), before);
    const fresh = new EmbeddedDocumentStore();
    await new ProjectionRunner(w.events, fresh, [customersProjection]).catchUp();
    assert.equal(await fresh.collection(CUSTOMERS).findOne({ _id: a }), before);
  },
);

t('a redelivered event finishes the stats a crash left unwritten', async ({ w, a, b }) => {
  await append(w, created('r1', { customer_id: a }));
  // The projector dies after writing the reservation row, before the customers' stats.
  const crashing = Object.assign(Object.create(w.docs) as EmbeddedDocumentStore, {
    collection: (name: string) =>
      name === CUSTOMERS
        ? Object.assign(Object.create(w.docs.collection(name)), {
            updateOne: async () => {
              throw new Error('crash');
            },
          })
        : w.docs.collection(name),
  });
  const moved: ReservationEvent = {
    type: 'ReservationUpdated',
    data: { ...base('r1'), changes: { customer_id: b }, previous: { customer_id: a } },
  };
  await w.events.append(reservationStream('r1'), [{ type: moved.type, data: moved.data as never }], 'any');
  const [event] = await w.events.readStream(reservationStream('r1'), { direction: 'backwards', limit: 1 });
  if (!event) throw new Error('no event');
  let crashed = false;
  await customersProjection.apply(event, crashing).catch(() => {
    crashed = true;
  });
  assert.ok(crashed);
  assert.is((await doc(w, a)).stats.reservation_count, 1);
  await customersProjection.apply(event, w.docs);
  assert.is((await doc(w, a)).stats.reservation_count, 0);
  assert.is((await doc(w, b)).stats.reservation_count, 1);
});

t('a customer created after its reservations were recorded starts with their stats', async ({ w }) => {
  await append(w, created('r1', { customer_id: 'cus_later', party_size: 5 }));
  await createCustomer(w, w.restaurant, { name: 'Later' }, w.meta, { customerId: 'cus_later' });
  await w.settle();
  assert.is((await doc(w, 'cus_later')).stats.reservation_count, 1);
});

t.run();
