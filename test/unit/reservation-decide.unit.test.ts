import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildReservation, type CreateInput, decideCreate } from '../../commands/reservations/decide-create';
import { decideFeedback, decidePayment } from '../../commands/reservations/decide-records';
import {
  assertArrivalNotTooEarly,
  decidePartnerCancel,
  decideStatusOperation,
} from '../../commands/reservations/decide-status';
import { checkPatch, decideLocks, decidePatch } from '../../commands/reservations/decide-update';
import type { ReservationSnapshot, ReservationStatus } from '../../commands/reservations/events';
import {
  evolveReservation,
  initialReservation,
  type ReservationState,
} from '../../commands/reservations/evolve';
import { paymentSummary } from '../../commands/reservations/payments';
import { ApiError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { createInput } from '../helpers/reservation-input';

const AT = '2026-06-02T10:00:00.000Z';

const input = createInput;

let position = 0n;
const recorded = (e: NewEvent): RecordedEvent => ({
  id: e.id ?? `e${position}`,
  type: e.type,
  data: e.data,
  metadata: {},
  created: AT,
  stream: 'reservation-res_1',
  revision: Number(position),
  position: ++position,
});

const fold = (events: NewEvent[], from: ReservationState = initialReservation) =>
  events.map(recorded).reduce(evolveReservation, from);

const created = (over: Partial<CreateInput> = {}) => fold(decideCreate(initialReservation, input(over), AT));
const snapshot = (over: Partial<CreateInput> = {}, patch: Partial<ReservationSnapshot> = {}) => ({
  ...(created(over).r as ReservationSnapshot),
  ...patch,
});

const rejects = (fn: () => unknown, status: number, reason?: string) => {
  try {
    fn();
  } catch (err) {
    assert.instance(err, ApiError);
    assert.is((err as ApiError).status, status);
    if (reason) assert.is((err as ApiError).details?.reason, reason);
    return err as ApiError;
  }
  assert.unreachable('expected a refusal');
};

test('a plain creation is CONFIRMED with the defaults recorded', () => {
  const r = snapshot();
  assert.is(r.status, 'CONFIRMED');
  assert.is(r.send_client_notifications, true);
  assert.is(r.send_payment_link, true);
  assert.equal(r.payments, []);
  assert.is(r.seated_at, null);
});

test('the ReservationCreated event id is deterministic; a second decide on an existing stream appends nothing', () => {
  const [a] = decideCreate(initialReservation, input(), AT);
  const [b] = decideCreate(initialReservation, input(), AT);
  assert.is(a?.id, b?.id);
  assert.equal(decideCreate(created(), input(), AT), []);
});

test('a fenced (abandoned) stream refuses the late ReservationCreated with 409', () => {
  const fenced = fold([{ type: 'ReservationCreationAbandoned', data: { reservation_id: 'res_1', at: AT } }]);
  assert.is(fenced.abandoned, true);
  rejects(() => decideCreate(fenced, input(), AT), 409);
});

test('a shift asking for approval creates PENDING unless bypass_approval', () => {
  assert.is(snapshot({ requiresApproval: true }).status, 'PENDING');
  assert.is(snapshot({ requiresApproval: true, bypassApproval: true }).status, 'CONFIRMED');
});

test('a deposit rule adds a pending DEPOSIT row for parties from its minimum, and PENDING_PAYMENT', () => {
  const deposit = { amount_per_cover: 1500, min_party_size: 4, payment_mode: 'SOFT_PREAUTH' };
  const small = snapshot({ deposit });
  assert.equal(small.payments, []);
  assert.is(small.status, 'CONFIRMED');
  const big = snapshot({ deposit, seating: { ...input().seating, party_size: 6 } });
  assert.is(big.status, 'PENDING_PAYMENT');
  assert.is(big.payments.length, 1);
  const [row] = big.payments;
  assert.is(row?.payment_type, 'DEPOSIT');
  assert.is(row?.status, 'PENDING');
  assert.is(row?.amount, 9000);
  assert.is(row?.unit_price, 1500);
  assert.is(row?.quantity, 6);
  assert.is(row?.payment_mode, 'SOFT_PREAUTH');
  assert.equal(paymentSummary(big.payments, 'EUR').pending_amount, 9000);
  const bypassed = snapshot({
    deposit,
    bypassPayments: true,
    seating: { ...input().seating, party_size: 6 },
  });
  assert.equal(bypassed.payments, []);
  assert.is(bypassed.status, 'CONFIRMED');
  // Approval comes first; the deposit row waits beside it.
  const both = snapshot({ deposit, requiresApproval: true, seating: { ...input().seating, party_size: 6 } });
  assert.is(both.status, 'PENDING');
  assert.is(both.payments.length, 1);
});

test('initial_status wins, and a seated walk-in is seated now', () => {
  const r = snapshot({ initialStatus: 'SEATED', source: 'WALK_IN' });
  assert.is(r.status, 'SEATED');
  assert.is(r.seated_at, AT);
});

test('partner cancel: any state but canceled; a repeat keeps the first reason; a status lock refuses', () => {
  const r = snapshot();
  const events = decidePartnerCancel(r, 'kitchen closed', AT);
  const after = fold(events, created()).r as ReservationSnapshot;
  assert.is(after.status, 'CANCELED_BY_RESTAURANT');
  assert.is(after.cancellation_reason, 'kitchen closed');
  assert.equal(decidePartnerCancel(after, 'another reason', AT), []);
  assert.equal(decidePartnerCancel({ ...r, status: 'CANCELED_BY_CUSTOMER' }, null, AT), []);
  const err = rejects(() => decidePartnerCancel({ ...r, locked_fields: ['status'] }, null, AT), 409);
  assert.equal(err?.details?.locked_fields, ['status']);
  // Spec §3: even a finished reservation may be canceled by the restaurant.
  assert.is(decidePartnerCancel({ ...r, status: 'DONE' }, null, AT).length, 1);
});

test('a cancellation voids the deposits of guests still to come, and nothing else', () => {
  const deposit = { amount_per_cover: 1000, min_party_size: 1, payment_mode: 'CHARGE' };
  const staffRow = (r: ReservationSnapshot, id: string, paymentType: string) =>
    fold(decidePayment(r, { paymentId: id, status: 'PENDING', amount: 500, paymentType }, 'EUR', AT), {
      exists: true,
      abandoned: false,
      r,
    }).r as ReservationSnapshot;
  const voided = (events: NewEvent[]) =>
    events
      .filter((e) => e.type === 'ReservationPaymentRecorded')
      .map((e) => (e.data as { payment: { id: string } }).payment.id);
  const cancels = (r: ReservationSnapshot) => ({
    partner: decidePartnerCancel(r, null, AT),
    staff: decideStatusOperation(r, { kind: 'cancel_by_staff', reason: null }, new Date(AT)),
  });
  // Booked with a deposit, a prepayment and a row of another kind pending: the first two go.
  let booked = snapshot({ deposit });
  const depositId = booked.payments[0]?.id as string;
  booked = staffRow(staffRow(booked, 'pay_pre', 'PREPAYMENT'), 'pay_other', 'OTHER');
  for (const [who, events] of Object.entries(cancels(booked))) {
    assert.equal(voided(events), [depositId, 'pay_pre'], who);
    const after = fold(events, { exists: true, abandoned: false, r: booked }).r as ReservationSnapshot;
    assert.is(
      after.status,
      'CANCELED_BY_RESTAURANT',
      `${who}: a void on a canceled booking confirms nothing`,
    );
    // The staff's void (decidePayment), on the closed reservation.
    const closed = fold(events.slice(0, 1), { exists: true, abandoned: false, r: booked })
      .r as ReservationSnapshot;
    assert.equal(
      events[1],
      decidePayment(closed, { paymentId: depositId, status: 'VOIDED' }, 'EUR', AT)[0],
      who,
    );
    assert.is(after.payments.find((p) => p.id === 'pay_other')?.status, 'PENDING', who);
  }
  // The guests came, or never did: what they owe is the restaurant's call (RESERVATIONS.md).
  for (const status of ['NO_SHOW', 'DONE', 'SEATED'] as const) {
    const r = staffRow(staffRow({ ...booked, status }, 'pay_fee', 'NO_SHOW_FEE'), 'pay_bill', 'BILL');
    for (const [who, events] of Object.entries(cancels(r)))
      assert.equal(
        events.map((e) => e.type),
        ['ReservationStatusChanged'],
        `${status}, ${who}`,
      );
  }
  // Rejected while pending approval: its deposit goes too.
  const pending = snapshot({ requiresApproval: true, deposit });
  assert.equal(voided(decideStatusOperation(pending, { kind: 'reject', reason: null }, now)), [
    pending.payments[0]?.id,
  ]);
});

const now = new Date('2026-06-03T21:00:00+02:00');

test('restaurant-side transitions: approve, reject, seat, leave, and what each refuses', () => {
  const pending = snapshot({ requiresApproval: true });
  const approved = decideStatusOperation(pending, { kind: 'approve' }, now)[0];
  assert.is(approved?.data.to, 'CONFIRMED');
  assert.is(decideStatusOperation(pending, { kind: 'reject', reason: 'full' }, now)[0]?.data.to, 'REJECTED');
  assert.equal(decideStatusOperation(snapshot(), { kind: 'approve' }, now), [], 'approving twice is a no-op');
  rejects(
    () => decideStatusOperation(snapshot({}, { status: 'NO_SHOW' }), { kind: 'approve' }, now),
    422,
    'INVALID_STATUS_TRANSITION',
  );
  const seated = fold(decideStatusOperation(snapshot(), { kind: 'seat' }, now), created())
    .r as ReservationSnapshot;
  assert.is(seated.status, 'SEATED');
  assert.is(seated.seated_at, now.toISOString());
  const left = fold(decideStatusOperation(seated, { kind: 'leave' }, now), {
    exists: true,
    abandoned: false,
    r: seated,
  }).r as ReservationSnapshot;
  assert.is(left.status, 'DONE');
  assert.is(left.left_at, now.toISOString());
  rejects(() => decideStatusOperation(snapshot(), { kind: 'leave' }, now), 422, 'INVALID_STATUS_TRANSITION');
  // Asking for the state it is already in is a no-op (retries, overlapping scheduler runs).
  assert.equal(decideStatusOperation(seated, { kind: 'seat' }, now), []);
});

test('a creation in an arrived status: from two hours before its start, not days before (no seated_at weeks early)', () => {
  const start = '2026-06-03T19:00:00+02:00';
  const daysBefore = new Date('2026-06-01T17:00:00Z');
  const err = rejects(
    () => assertArrivalNotTooEarly(start, 'SEATED', daysBefore),
    422,
    'TOO_EARLY_TO_ARRIVE',
  );
  assert.is(err?.details?.earliest_at, '2026-06-03T15:00:00.000Z');
  rejects(() => assertArrivalNotTooEarly(start, 'SHOWED_UP', daysBefore), 422, 'TOO_EARLY_TO_ARRIVE');
  assertArrivalNotTooEarly(start, 'CONFIRMED', daysBefore);
  assertArrivalNotTooEarly(start, 'SEATED', new Date('2026-06-03T15:00:00Z'));
  assertArrivalNotTooEarly(start, 'SEATED', new Date('2026-06-04T15:00:00Z'));
});

test('staff seat and leave obey the arrival window: not days before the start', () => {
  // The snapshot starts 2026-06-03T19:00+02:00: the guests may be recorded as there from 15:00Z.
  const daysBefore = new Date('2026-06-01T12:00:00Z');
  const justBefore = new Date('2026-06-03T14:59:59.999Z');
  const opens = new Date('2026-06-03T15:00:00Z');
  for (const kind of ['seat', 'partially_seat'] as const) {
    for (const from of ['PENDING', 'CONFIRMED', 'SHOWED_UP', 'SEATED_FOR_DRINKS'] as ReservationStatus[]) {
      const err = rejects(
        () => decideStatusOperation(snapshot({}, { status: from }), { kind }, daysBefore),
        422,
        'TOO_EARLY_TO_ARRIVE',
      );
      assert.is(err?.details?.earliest_at, '2026-06-03T15:00:00.000Z');
      rejects(
        () => decideStatusOperation(snapshot({}, { status: from }), { kind }, justBefore),
        422,
        'TOO_EARLY_TO_ARRIVE',
      );
      assert.is(
        decideStatusOperation(snapshot({}, { status: from }), { kind }, opens).length,
        1,
        `${kind} ${from}`,
      );
    }
  }
  const seated = snapshot({}, { status: 'SEATED' });
  const err = rejects(
    () => decideStatusOperation(seated, { kind: 'leave' }, daysBefore),
    422,
    'TOO_EARLY_TO_LEAVE',
  );
  assert.is(err?.details?.earliest_at, '2026-06-03T15:00:00.000Z');
  assert.is(decideStatusOperation(seated, { kind: 'leave' }, opens)[0]?.data.to, 'DONE');
  // Seated days before its start by an earlier version: the guests were recorded at the table, so
  // they may be recorded as gone from then on (not refused until the arrival window opens).
  const seatedEarly = snapshot({}, { status: 'SEATED', seated_at: '2026-05-30T20:00:00.000Z' });
  assert.is(decideStatusOperation(seatedEarly, { kind: 'leave' }, daysBefore)[0]?.data.to, 'DONE');
  const beforeSeated = rejects(
    () => decideStatusOperation(seatedEarly, { kind: 'leave' }, new Date('2026-05-30T19:59:59.999Z')),
    422,
    'TOO_EARLY_TO_LEAVE',
  );
  assert.is(beforeSeated?.details?.earliest_at, '2026-05-30T20:00:00.000Z');
  assert.is(beforeSeated?.details?.seated_at, '2026-05-30T20:00:00.000Z');
  // The status comes first: an illegal move is named as such whatever the time; a repeat stays a no-op.
  rejects(
    () => decideStatusOperation(snapshot({}, { status: 'DONE' }), { kind: 'seat' }, daysBefore),
    422,
    'INVALID_STATUS_TRANSITION',
  );
  assert.equal(decideStatusOperation(seated, { kind: 'seat' }, daysBefore), []);
  // Approvals and cancellations say nothing about the guests being there: any time.
  assert.is(
    decideStatusOperation(snapshot({ requiresApproval: true }), { kind: 'approve' }, daysBefore).length,
    1,
  );
  assert.is(
    decideStatusOperation(snapshot(), { kind: 'cancel_by_staff', reason: null }, daysBefore).length,
    1,
  );
});

test('approving a pending reservation whose deposit is unpaid gives CONFIRMED_PENDING_PAYMENT', () => {
  const deposit = { amount_per_cover: 1000, min_party_size: 1, payment_mode: 'CHARGE' };
  const pending = snapshot({ requiresApproval: true, deposit });
  assert.is(
    decideStatusOperation(pending, { kind: 'approve' }, now)[0]?.data.to,
    'CONFIRMED_PENDING_PAYMENT',
  );
});

test('customer cancellation only before arrival; staff cancellation from anything not canceled', () => {
  assert.is(
    decideStatusOperation(snapshot(), { kind: 'cancel_by_customer', reason: null }, now)[0]?.data.actor_kind,
    'CUSTOMER',
  );
  rejects(
    () =>
      decideStatusOperation(
        snapshot({}, { status: 'SEATED' }),
        { kind: 'cancel_by_customer', reason: null },
        now,
      ),
    422,
  );
  assert.is(
    decideStatusOperation(snapshot({}, { status: 'SEATED' }), { kind: 'cancel_by_staff', reason: 'x' }, now)
      .length,
    1,
  );
  // Already canceled, by either side: nothing (the customer's cancellation is not rewritten as the
  // restaurant's, and its reason stays).
  for (const status of ['CANCELED_BY_CUSTOMER', 'CANCELED_BY_RESTAURANT'] as const)
    assert.equal(
      decideStatusOperation(snapshot({}, { status }), { kind: 'cancel_by_staff', reason: 'x' }, now),
      [],
      status,
    );
  // Staff ignore the POS lock: the lock restricts the partner API.
  assert.is(
    decideStatusOperation(
      snapshot({}, { locked_fields: ['status'] }),
      { kind: 'cancel_by_staff', reason: null },
      now,
    ).length,
    1,
  );
});

test('finish waits for the seating end; no-show waits for the grace period', () => {
  const seated = snapshot({}, { status: 'SEATED' });
  rejects(
    () => decideStatusOperation(seated, { kind: 'finish' }, new Date('2026-06-03T20:00:00+02:00')),
    422,
  );
  assert.is(
    decideStatusOperation(seated, { kind: 'finish' }, new Date('2026-06-03T20:30:00+02:00')).length,
    1,
  );
  const booked = snapshot();
  rejects(
    () =>
      decideStatusOperation(
        booked,
        { kind: 'no_show', graceMinutes: 30 },
        new Date('2026-06-03T19:29:00+02:00'),
      ),
    422,
  );
  const noShow = decideStatusOperation(
    booked,
    { kind: 'no_show', graceMinutes: 30 },
    new Date('2026-06-03T19:30:00+02:00'),
  );
  assert.is(noShow[0]?.data.to, 'NO_SHOW');
  assert.is(noShow[0]?.data.actor_kind, 'SYSTEM');
  for (const status of ['PENDING', 'SEATED', 'CANCELED_BY_RESTAURANT'] as ReservationStatus[])
    rejects(
      () => decideStatusOperation(snapshot({}, { status }), { kind: 'no_show', graceMinutes: 0 }, now),
      422,
    );
});

test('a patch changes only what differs, remembers the previous values, and sending a current value is no change', () => {
  const r = snapshot();
  assert.equal(decidePatch(r, { custom_message: null, tags: [] }, 'PARTNER', AT), []);
  const [e] = decidePatch(r, { custom_message: 'window seat', tags: ['vip'] }, 'PARTNER', AT);
  assert.equal(e?.data.changes, { custom_message: 'window seat', tags: ['vip'] });
  assert.equal(e?.data.previous, { custom_message: null, tags: [] });
});

test('a change of customer names the guest text it restates (src/audit/changes.ts leaves out only those)', () => {
  const r = snapshot({}, { customer_id: 'cus_1', allergies: 'nuts', custom_message: null });
  const [moved] = decidePatch(r, { customer_id: 'cus_2', custom_message: 'window seat' }, 'PARTNER', AT);
  assert.equal(moved?.data.changes, {
    customer_id: 'cus_2',
    custom_message: 'window seat',
    allergies: 'nuts',
  });
  assert.equal(moved?.data.restated, ['allergies']);
  const [alone] = decidePatch(r, { customer_id: 'cus_2', allergies: 'nuts and shellfish' }, 'PARTNER', AT);
  assert.equal(alone?.data.restated, []);
  const [kept] = decidePatch(r, { custom_message: 'window seat' }, 'PARTNER', AT);
  assert.not.ok(kept && 'restated' in kept.data, 'only a change of customer restates');
});

test('a POS lock refuses a change of a locked field (409 naming it) but not an unchanged value', () => {
  const r = snapshot({}, { locked_fields: ['party_size', 'customer', 'start_at'] });
  const seating = { ...input().seating, party_size: 4 };
  const err = rejects(() => checkPatch(r, { seating, custom_message: 'x' }), 409);
  assert.equal(err?.details?.locked_fields, ['party_size']);
  const err2 = rejects(() => checkPatch(r, { customer_id: 'cus_2' }), 409);
  assert.equal(err2?.details?.locked_fields, ['customer']);
  // A derived change of the end (a new start) counts as a change of start_at.
  const later = {
    ...input().seating,
    start_at: '2026-06-03T19:15:00+02:00',
    end_at: '2026-06-03T20:45:00+02:00',
  };
  assert.equal(rejects(() => checkPatch(r, { seating: later }), 409)?.details?.locked_fields, ['start_at']);
  assert.equal(checkPatch(r, { seating: input().seating, custom_message: 'x' }).changes, {
    custom_message: 'x',
  });
});

test('a canceled reservation cannot move, but its notes can change', () => {
  const r = snapshot({}, { status: 'CANCELED_BY_RESTAURANT' });
  rejects(
    () => checkPatch(r, { seating: { ...input().seating, party_size: 3 } }),
    422,
    'RESERVATION_CANCELED',
  );
  assert.is(checkPatch(r, { custom_message: 'x' }).changes.custom_message, 'x');
});

test('locks are set and cleared as a set', () => {
  const r = snapshot();
  const [set] = decideLocks(r, ['table_ids', 'status', 'table_ids'], AT);
  assert.equal(set?.data.changes, { locked_fields: ['status', 'table_ids'] });
  const locked = { ...r, locked_fields: ['status', 'table_ids'] };
  assert.equal(decideLocks(locked, ['table_ids', 'status'], AT), []);
  assert.equal(decideLocks(locked, [], AT)[0]?.data.changes, { locked_fields: [] });
});

test('paying the deposit confirms a PENDING_PAYMENT reservation and adds to total_amount_paid', () => {
  const deposit = { amount_per_cover: 1000, min_party_size: 1, payment_mode: 'CHARGE' };
  const r = snapshot({ deposit, totalAmountPaid: 500 });
  assert.is(r.status, 'PENDING_PAYMENT');
  const paymentId = r.payments[0]?.id as string;
  const events = decidePayment(r, { paymentId, status: 'PAID' }, 'EUR', AT);
  assert.equal(
    events.map((e) => e.type),
    ['ReservationPaymentRecorded', 'ReservationStatusChanged'],
  );
  const after = fold(events, { exists: true, abandoned: false, r }).r as ReservationSnapshot;
  assert.is(after.status, 'CONFIRMED');
  assert.is(after.payments.length, 1);
  assert.is(after.payments[0]?.status, 'PAID');
  assert.is(after.payments[0]?.captured_at, AT);
  assert.is(after.total_amount_paid, 2500);
  assert.is(paymentSummary(after.payments, 'EUR').paid_amount, 2000);
  // Recording the same status again changes nothing; a refund takes it back off the total.
  assert.equal(decidePayment(after, { paymentId, status: 'PAID' }, 'EUR', AT), []);
  const refunded = fold(decidePayment(after, { paymentId, status: 'REFUNDED' }, 'EUR', AT), {
    exists: true,
    abandoned: false,
    r: after,
  }).r as ReservationSnapshot;
  assert.is(refunded.total_amount_paid, 500);
  rejects(() => decidePayment(r, { paymentId: 'pay_new', status: 'PAID' }, 'EUR', AT), 422, 'INVALID_AMOUNT');
});

test('a deposit applies from its min_party_size on, inclusive: amount per cover times the party', () => {
  // The party is 2 (input()).
  const at2 = snapshot({ deposit: { amount_per_cover: 1500, min_party_size: 2, payment_mode: 'CHARGE' } });
  assert.is(at2.status, 'PENDING_PAYMENT');
  assert.equal(
    at2.payments.map((p) => [p.payment_type, p.status, p.amount, p.quantity, p.unit_price]),
    [['DEPOSIT', 'PENDING', 3000, 2, 1500]],
  );
  const from3 = snapshot({ deposit: { amount_per_cover: 1500, min_party_size: 3, payment_mode: 'CHARGE' } });
  assert.is(from3.status, 'CONFIRMED');
  assert.equal(from3.payments, []);
  const free = snapshot({ deposit: { amount_per_cover: 0, min_party_size: 1, payment_mode: 'CHARGE' } });
  assert.is(free.status, 'CONFIRMED');
  assert.equal(free.payments, []);
});

test('a payment that leaves the deposit pending confirms nothing', () => {
  const deposit = { amount_per_cover: 1000, min_party_size: 1, payment_mode: 'CHARGE' };
  const r = snapshot({ deposit });
  assert.is(r.status, 'PENDING_PAYMENT');
  const depositId = r.payments[0]?.id as string;
  // Another row paid (a bill, a prepayment): the deposit still waits, so the status stays.
  const other = decidePayment(r, { paymentId: 'pay_bill', status: 'PAID', amount: 3000 }, 'EUR', AT);
  assert.equal(
    other.map((e) => e.type),
    ['ReservationPaymentRecorded'],
  );
  const after = fold(other, { exists: true, abandoned: false, r }).r as ReservationSnapshot;
  assert.is(after.status, 'PENDING_PAYMENT');
  assert.is(after.total_amount_paid, 3000);
  // The deposit voided (docs/RESERVATIONS.md: voiding the last pending one confirms): nothing pending left.
  assert.equal(
    decidePayment(after, { paymentId: depositId, status: 'VOIDED' }, 'EUR', AT).map((e) => e.type),
    ['ReservationPaymentRecorded', 'ReservationStatusChanged'],
  );
});

test('a deposit that failed confirms nothing; paid or voided afterwards, it does', () => {
  const deposit = { amount_per_cover: 1000, min_party_size: 1, payment_mode: 'CHARGE' };
  const r = snapshot({ deposit });
  const depositId = r.payments[0]?.id as string;
  // The guest's card declined: nothing is pending any more, but nothing was paid either.
  const failed = decidePayment(r, { paymentId: depositId, status: 'FAILED' }, 'EUR', AT);
  assert.equal(
    failed.map((e) => e.type),
    ['ReservationPaymentRecorded'],
  );
  const after = fold(failed, { exists: true, abandoned: false, r }).r as ReservationSnapshot;
  assert.is(after.status, 'PENDING_PAYMENT');
  for (const status of ['PAID', 'AUTHORIZED', 'VOIDED'] as const) {
    const settled = decidePayment(after, { paymentId: depositId, status }, 'EUR', AT);
    assert.equal(
      settled.map((e) => e.type),
      ['ReservationPaymentRecorded', 'ReservationStatusChanged'],
      status,
    );
    assert.equal(
      settled[1]?.data,
      {
        reservation_id: after.reservation_id,
        restaurant_id: after.restaurant_id,
        at: AT,
        from: 'PENDING_PAYMENT',
        to: 'CONFIRMED',
        reason: status === 'VOIDED' ? 'payment voided' : 'payment received',
        actor_kind: 'SYSTEM',
      },
      status,
    );
  }
});

test('approved while its deposit was pending: a failed deposit leaves it waiting, paid or voided it is confirmed', () => {
  const deposit = { amount_per_cover: 1000, min_party_size: 1, payment_mode: 'CHARGE' };
  const pending = snapshot({ requiresApproval: true, deposit });
  const approved = fold(decideStatusOperation(pending, { kind: 'approve' }, now), {
    exists: true,
    abandoned: false,
    r: pending,
  }).r as ReservationSnapshot;
  assert.is(approved.status, 'CONFIRMED_PENDING_PAYMENT');
  const depositId = approved.payments[0]?.id as string;
  const failed = decidePayment(approved, { paymentId: depositId, status: 'FAILED' }, 'EUR', AT);
  assert.equal(
    failed.map((e) => e.type),
    ['ReservationPaymentRecorded'],
    'a declined card confirms nothing',
  );
  const after = fold(failed, { exists: true, abandoned: false, r: approved }).r as ReservationSnapshot;
  assert.is(after.status, 'CONFIRMED_PENDING_PAYMENT', 'it stays waiting for the deposit');
  for (const status of ['PAID', 'AUTHORIZED', 'VOIDED'] as const) {
    const settled = decidePayment(after, { paymentId: depositId, status }, 'EUR', AT);
    assert.equal(
      settled.map((e) => e.type),
      ['ReservationPaymentRecorded', 'ReservationStatusChanged'],
      status,
    );
    assert.equal(
      [settled[1]?.data.from, settled[1]?.data.to, settled[1]?.data.reason],
      ['CONFIRMED_PENDING_PAYMENT', 'CONFIRMED', status === 'VOIDED' ? 'payment voided' : 'payment received'],
      status,
    );
  }
});

test('feedback needs a rating first; an answer later stamps answered_at', () => {
  const r = snapshot({}, { status: 'DONE' });
  rejects(() => decideFeedback(r, { comment: 'nice' }, AT), 422, 'RATING_REQUIRED');
  rejects(() => decideFeedback(r, { rating: 6 }, AT), 422, 'INVALID_RATING');
  const first = fold(decideFeedback(r, { rating: 4, comment: 'nice' }, AT), {
    exists: true,
    abandoned: false,
    r,
  }).r as ReservationSnapshot;
  assert.equal(first.feedback, {
    rating: 4,
    comment: 'nice',
    answer: null,
    created_at: AT,
    answered_at: null,
  });
  const later = '2026-06-04T09:00:00.000Z';
  const [answer] = decideFeedback(first, { answer: 'thank you' }, later);
  assert.equal(answer?.data.feedback, {
    rating: 4,
    comment: 'nice',
    answer: 'thank you',
    created_at: AT,
    answered_at: later,
  });
});

test('buildReservation keeps every §2.5 field the partner gave', () => {
  const r = buildReservation(
    input({
      externalId: 'ext',
      customMessage: 'hi',
      allergies: 'nuts',
      metadata: { a: 1 },
      tags: ['t'],
      attachedFiles: ['https://x/f.pdf'],
      discountId: 'disc_1',
      prescriberId: 'pre_1',
      isTableDefinitive: true,
      sendFollowupEmail: true,
      sendClientNotifications: false,
      sendPaymentLink: false,
      totalAmountPaid: 1234,
      forceInserted: true,
    }),
    AT,
  );
  assert.is(r.external_id, 'ext');
  assert.is(r.custom_message, 'hi');
  assert.is(r.allergies, 'nuts');
  assert.equal(r.metadata, { a: 1 });
  assert.equal(r.attached_files, ['https://x/f.pdf']);
  assert.is(r.discount_id, 'disc_1');
  assert.is(r.prescriber_id, 'pre_1');
  assert.is(r.is_table_definitive, true);
  assert.is(r.send_followup_email, true);
  assert.is(r.send_client_notifications, false);
  assert.is(r.send_payment_link, false);
  assert.is(r.total_amount_paid, 1234);
  assert.is(r.is_force_inserted, true);
});

test.run();
