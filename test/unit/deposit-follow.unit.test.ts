// followDeposit (commands/reservations/deposit-follow.ts): what a PATCH's new party and shift do to
// the deposit, checked as properties over parties, rules, statuses and payment rows.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildReservation, creationDepositId } from '../../commands/reservations/decide-create';
import { followDeposit } from '../../commands/reservations/deposit-follow';
import type { Payment, ReservationSnapshot, ReservationStatus } from '../../commands/reservations/events';
import { applyToSnapshot } from '../../commands/reservations/evolve';
import { type DepositRule, depositApplies, depositPayment } from '../../commands/reservations/payments';
import type { RecordedEvent } from '../../src/ports/event-store';
import { createInput } from '../helpers/reservation-input';

const AT = '2026-06-02T10:00:00.000Z';
const LATER = '2026-06-02T11:00:00.000Z';

function reservation(partySize: number, shiftId: string, status: ReservationStatus, payments: Payment[]) {
  const input = createInput();
  const seating = { ...input.seating, shift_id: shiftId, party_size: partySize };
  return { ...buildReservation({ ...input, seating }, AT), status, payments } as ReservationSnapshot;
}

const apply = (r: ReservationSnapshot, events: ReturnType<typeof followDeposit>) =>
  events.reduce((s, e) => applyToSnapshot(s, e as RecordedEvent), r);

const rule = fc.record({
  amount_per_cover: fc.integer({ min: 0, max: 5000 }),
  min_party_size: fc.integer({ min: 1, max: 12 }),
  payment_mode: fc.constantFrom('SOFT_PREAUTH', 'CHARGE'),
});
const status = fc.constantFrom<ReservationStatus>(
  'PENDING',
  'PENDING_PAYMENT',
  'CONFIRMED',
  'CONFIRMED_PENDING_PAYMENT',
  'SEATED',
  'DONE',
  'NO_SHOW',
  'CANCELED_BY_RESTAURANT',
);
const rowStatus = fc.constantFrom('PENDING', 'PAID', 'AUTHORIZED', 'VOIDED', 'FAILED', 'REFUNDED');

const world = fc.record({
  // A party of one often: where a lump sum and a per-cover deposit read alike.
  fromParty: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 20 })),
  toParty: fc.integer({ min: 1, max: 20 }),
  sameShift: fc.boolean(),
  fromRule: rule,
  // The new seating's rule in the catalog now; on the same shift, the booking's unless the restaurant
  // changed (or dropped) it since.
  toRule: fc.option(rule, { nil: null }),
  ruleChangedSince: fc.boolean(),
  status,
  // The creation's deposit row (its status), if it asked one.
  creation: fc.option(rowStatus, { nil: null }),
  // Rows staff recorded: a lump sum, sometimes the very amount the rule asks of the party.
  recorded: fc.array(
    fc.record({ status: rowStatus, amount: fc.integer({ min: 0, max: 20000 }), asRule: fc.boolean() }),
    {
      maxLength: 2,
    },
  ),
});

type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

const CREATION_ID = creationDepositId('res_1');

/** The rule the guests booked under: it applied to their party (else the creation asked nothing). */
const booked = (w: World): DepositRule => ({
  ...w.fromRule,
  amount_per_cover: Math.max(1, w.fromRule.amount_per_cover),
  min_party_size: Math.min(w.fromRule.min_party_size, w.fromParty),
});

/** The catalog's rule for the new seating, as the handler passes it. */
const current = (w: World) => (w.sameShift && !w.ruleChangedSince ? booked(w) : w.toRule);

/**
 * Whether the new seating still asks a deposit (docs/RESERVATIONS.md): a larger party on the booking's
 * own shift is asked it under the rule it booked with, whatever the catalog says now; otherwise (a
 * smaller party, another shift) the catalog's rule now decides.
 */
const stillAsked = (w: World) =>
  w.sameShift && w.toParty > w.fromParty
    ? depositApplies(booked(w), w.toParty)
    : depositApplies(current(w), w.toParty);

function build(w: World) {
  const payments: Payment[] = [];
  if (w.creation)
    payments.push({
      ...depositPayment(CREATION_ID, booked(w), w.fromParty, 'EUR', AT),
      status: w.creation,
    });
  w.recorded.forEach((row, i) => {
    const amount = row.asRule ? booked(w).amount_per_cover * w.fromParty : row.amount;
    // What staff recording a new DEPOSIT row writes (decidePayment): quantity 1, its amount as unit price.
    const p = depositPayment(`pay_staff_${i}`, booked(w), 1, 'EUR', AT);
    payments.push({ ...p, amount, unit_price: amount, status: row.status });
  });
  const before = reservation(w.fromParty, 'shift_a', w.status, payments);
  const after = { ...before, party_size: w.toParty, shift_id: w.sameShift ? 'shift_a' : 'shift_b' };
  return { before, after, events: followDeposit(before, after, current(w), 'EUR', LATER) };
}

test('money paid, authorized or refunded is never touched, nor total_amount_paid', () => {
  fc.assert(
    fc.property(world, (w) => {
      const { before, after, events } = build(w);
      const result = apply(after, events);
      assert.is(result.total_amount_paid, before.total_amount_paid);
      for (const p of before.payments.filter((x) => x.status !== 'PENDING'))
        assert.equal(
          result.payments.find((x) => x.id === p.id),
          p,
        );
      assert.is(result.payments.length, before.payments.length);
    }),
  );
});

test('a deposit the new seating does not ask leaves nothing pending; status only ever confirmed', () => {
  fc.assert(
    fc.property(world, (w) => {
      const { after, events } = build(w);
      const result = apply(after, events);
      const toCome = ['PENDING', 'PENDING_PAYMENT', 'CONFIRMED', 'CONFIRMED_PENDING_PAYMENT'].includes(
        w.status,
      );
      const changed = w.fromParty !== w.toParty || !w.sameShift;
      if (toCome && changed && !stillAsked(w))
        assert.not.ok(result.payments.some((p) => p.status === 'PENDING'));
      if (result.status !== after.status) {
        assert.is(result.status, 'CONFIRMED');
        assert.ok(['PENDING_PAYMENT', 'CONFIRMED_PENDING_PAYMENT'].includes(after.status));
        // Nothing was paid: the history must not say a payment was received.
        const change = events.find((e) => e.type === 'ReservationStatusChanged');
        assert.is((change?.data as { reason?: string } | undefined)?.reason, 'deposit no longer required');
      }
      if (!toCome || !changed) assert.equal(events, []);
    }),
  );
});

test("one pending deposit still asked: the creation's counts the new party's covers, a recorded one is left", () => {
  fc.assert(
    fc.property(world, (w) => {
      const { before, after, events } = build(w);
      const pending = before.payments.filter((p) => p.status === 'PENDING');
      const toCome = ['PENDING', 'PENDING_PAYMENT', 'CONFIRMED', 'CONFIRMED_PENDING_PAYMENT'].includes(
        w.status,
      );
      const changed = w.fromParty !== w.toParty || !w.sameShift;
      fc.pre(toCome && changed && stillAsked(w) && pending.length === 1);
      const row = pending[0] as Payment;
      const result = apply(after, events).payments.find((p) => p.id === row.id) as Payment;
      if (row.id !== CREATION_ID) return assert.equal(result, row);
      // The creation asked the rule's price per cover of the party it was made for.
      const unit = w.sameShift ? booked(w).amount_per_cover : (w.toRule as DepositRule).amount_per_cover;
      assert.is(result.status, 'PENDING');
      assert.is(result.quantity, w.toParty);
      assert.is(result.unit_price, unit);
      assert.is(result.amount, unit * w.toParty);
      assert.is(apply(after, events).status, after.status);
    }),
  );
});

test('a lump sum staff recorded on a party of one is not counted per cover when the party grows', () => {
  const rule = { amount_per_cover: 1000, min_party_size: 1, payment_mode: 'CHARGE' };
  const lump = { ...depositPayment('pay_staff', rule, 1, 'EUR', AT), amount: 5000, unit_price: 5000 };
  const before = reservation(1, 'shift_a', 'CONFIRMED', [lump]);
  assert.equal(followDeposit(before, { ...before, party_size: 4 }, rule, 'EUR', LATER), []);
  // The creation's own row on the same party is.
  const own = { ...depositPayment(CREATION_ID, rule, 1, 'EUR', AT) };
  const booked = reservation(1, 'shift_a', 'PENDING_PAYMENT', [own]);
  const grown = apply(booked, followDeposit(booked, { ...booked, party_size: 4 }, rule, 'EUR', LATER));
  assert.equal(
    grown.payments.map((p) => [p.quantity, p.unit_price, p.amount]),
    [[4, 1000, 4000]],
  );
});

test('on its current shift (shift_id unchanged), a larger party keeps its deposit whatever the catalog says now', () => {
  const rule = { amount_per_cover: 1000, min_party_size: 2, payment_mode: 'CHARGE' };
  const booking = reservation(2, 'shift_a', 'PENDING_PAYMENT', [
    depositPayment(CREATION_ID, rule, 2, 'EUR', AT),
  ]);
  // The restaurant dropped the shift's deposit, or now asks it from 6 guests, after the booking.
  for (const now of [null, { ...rule, min_party_size: 6 }]) {
    const three = { ...booking, party_size: 3 };
    const grown = apply(three, followDeposit(booking, three, now, 'EUR', LATER));
    assert.is(grown.status, 'PENDING_PAYMENT');
    assert.equal(
      grown.payments.map((p) => [p.status, p.quantity, p.unit_price, p.amount]),
      [['PENDING', 3, 1000, 3000]],
    );
    // A smaller party is judged by the rule now (the booking's threshold is not recorded).
    const two = { ...grown, party_size: 2 };
    const cut = apply(two, followDeposit(grown, two, now, 'EUR', LATER));
    assert.equal([cut.status, cut.payments[0]?.status], ['CONFIRMED', 'VOIDED']);
  }
});

test.run();
