// Restaurant-side operations through the operator CLI's commands (the same commands the staff
// dashboard and the POS would call), checked through the partner API.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/cli-in-process';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: ReservationService }>('reservations: restaurant-side operations');
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

const cli = (svc: TestService, name: string, flags: Record<string, string | boolean>) =>
  runCli(svc, `reservations ${name}`, flags);
const get = async (svc: TestService, id: string) =>
  (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;
const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;

t('approve and reject pending reservations; rejecting frees the table', async ({ svc }) => {
  const a = (await create(svc, { start_at: at('15', '12:00') })).body.data;
  const b = (await create(svc, { start_at: at('15', '12:00'), party_size: 7 })).body.data;
  assert.is(a.status, 'PENDING');
  await cli(svc, 'approve', { id: a.id });
  assert.is((await get(svc, a.id)).status, 'CONFIRMED');
  assert.match((await cli(svc, 'approve', { id: a.id }))[0] as string, /unchanged/);
  await cli(svc, 'reject', { id: b.id, reason: 'private event' });
  const rejected = await get(svc, b.id);
  assert.is(rejected.status, 'REJECTED');
  assert.is(rejected.cancellation_reason, 'private event');
  assert.is(
    (await create(svc, { start_at: at('15', '12:00'), party_size: 7, bypass_approval: true })).status,
    201,
  );
  try {
    await cli(svc, 'reject', { id: a.id });
    assert.unreachable();
  } catch (err) {
    assert.is((err as { status?: number }).status, 422);
  }
});

t('seat, partially seat and leave stamp seated_at and left_at', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('16', '19:00'), party_size: 4 })).body.data;
  svc.clock.set('2026-06-16T16:50:00Z'); // 18:50 in Paris: the first guests arrive
  await cli(svc, 'partially-seat', { id: r.id });
  const partial = await get(svc, r.id);
  assert.is(partial.status, 'PARTIALLY_SEATED');
  assert.is(partial.seated_at, '2026-06-16T16:50:00.000Z');
  svc.clock.advance(5 * 60);
  await cli(svc, 'seat', { id: r.id });
  assert.is((await get(svc, r.id)).seated_at, '2026-06-16T16:50:00.000Z', 'the first seating time stays');
  svc.clock.advance(90 * 60);
  await cli(svc, 'leave', { id: r.id });
  const done = await get(svc, r.id);
  assert.is(done.status, 'DONE');
  assert.is(done.left_at, '2026-06-16T18:25:00.000Z');
});

t(
  'staff cancellation ignores the POS lock; customer cancellation before arrival; both free the table',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('17', '20:00'), party_size: 7 })).body.data;
    await cli(svc, 'lock', { id: r.id, fields: 'all' });
    const partner = await svc.api('POST', `/reservations/${r.id}/cancel`, { token: TOKENS.full, body: {} });
    assert.is(partner.status, 409);
    await cli(svc, 'cancel-by-staff', { id: r.id, reason: 'chef ill' });
    const canceled = await get(svc, r.id);
    assert.is(canceled.status, 'CANCELED_BY_RESTAURANT');
    assert.is(canceled.cancellation_reason, 'chef ill');
    const s = (await create(svc, { start_at: at('17', '20:00'), party_size: 7 })).body.data;
    await cli(svc, 'cancel-by-customer', { id: s.id, reason: 'sick' });
    assert.is((await get(svc, s.id)).status, 'CANCELED_BY_CUSTOMER');
    assert.is((await create(svc, { start_at: at('17', '20:00'), party_size: 7 })).status, 201);
  },
);

t('POS lock fields are set and cleared; an unknown field is a usage error', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('18', '20:00') })).body.data;
  await cli(svc, 'lock', { id: r.id, fields: 'party_size,start_at' });
  const locked = await svc.api('PATCH', `/reservations/${r.id}`, {
    token: TOKENS.full,
    body: { party_size: 3 },
  });
  assert.equal(locked.body.error.details.locked_fields, ['party_size']);
  await cli(svc, 'lock', { id: r.id, clear: true });
  assert.is(
    (await svc.api('PATCH', `/reservations/${r.id}`, { token: TOKENS.full, body: { party_size: 3 } })).status,
    200,
  );
  try {
    await cli(svc, 'lock', { id: r.id, fields: 'colour' });
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, /unknown field/);
  }
});

t(
  'feedback, payments and the waiter show on the reservation; paying the deposit confirms it',
  async ({ svc }) => {
    const r = (
      await create(svc, {
        start_at: at('19', '10:30'),
        customer: { name: 'Paying Guest', email: 'pay@example.com' },
      })
    ).body.data;
    assert.is(r.status, 'PENDING_PAYMENT');
    await cli(svc, 'payment', { id: r.id, 'payment-id': r.payments[0].id, status: 'PAID' });
    const paid = await get(svc, r.id);
    assert.is(paid.status, 'CONFIRMED');
    assert.is(paid.payments[0].status, 'PAID');
    assert.is(paid.total_amount_paid, 2000);
    assert.equal(paid.payment_summary, {
      currency: 'EUR',
      total_amount: 2000,
      paid_amount: 2000,
      authorized_amount: 0,
      pending_amount: 0,
      refunded_amount: 0,
      statuses: ['PAID'],
    });
    await cli(svc, 'payment', { id: r.id, status: 'PAID', amount: '4550', type: 'BILL' });
    assert.is((await get(svc, r.id)).total_amount_paid, 6550);
    await cli(svc, 'waiter', { id: r.id, 'waiter-id': 'w_ana', 'waiter-name': 'Ana' });
    assert.equal((await get(svc, r.id)).waiter, { id: 'w_ana', name: 'Ana' });
    await cli(svc, 'feedback', { id: r.id, rating: '5', comment: 'Lovely' });
    await cli(svc, 'feedback', { id: r.id, answer: 'Thank you!' });
    const fb = (await get(svc, r.id)).feedback;
    assert.is(fb.rating, 5);
    assert.is(fb.comment, 'Lovely');
    assert.is(fb.answer, 'Thank you!');
    // The customer's stats read the same events.
    const stats = (await svc.api('GET', `/customers/${r.customer.id}`, { token: TOKENS.full })).body.data
      .stats;
    assert.is(stats.total_amount_paid, 6550);
    assert.is(stats.feedback_count, 1);
    assert.is(stats.average_feedback_score, 5);
    const shown = JSON.parse((await cli(svc, 'show', { id: r.id })).join('\n'));
    assert.is(shown.reservation_id, r.id);
  },
);

// Before, a deposit staff voided confirmed the reservation with the reason "payment received".
t(
  'staff voiding the deposit confirms the reservation, and its history says the payment was voided',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('19', '10:45'), external_id: 'voided-deposit' })).body.data;
    assert.is(r.status, 'PENDING_PAYMENT');
    await cli(svc, 'payment', { id: r.id, 'payment-id': r.payments[0].id, status: 'VOIDED' });
    assert.is((await get(svc, r.id)).status, 'CONFIRMED');
    const history = await svc.api('GET', `/reservations/${r.id}/history`, { token: TOKENS.full });
    assert.is(history.status, 200, history.text);
    const changes = (history.body.data as { changes: { field: string; to?: unknown }[] }[]).flatMap(
      (i) => i.changes,
    );
    assert.ok(
      changes.some((c) => c.field === 'status' && c.to === 'CONFIRMED'),
      history.text,
    );
    assert.equal(
      changes.find((c) => c.field === 'reason'),
      { field: 'reason', to: 'payment voided' },
    );
    assert.not.match(history.text, 'payment received');
  },
);

// Before, staff could seat guests days before their reservation (seated_at days before the start).
t('staff seat the guests from 120 minutes before their start, not days before', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('21', '19:00') })).body.data;
  const refused = async (name: string) => {
    try {
      await cli(svc, name, { id: r.id });
    } catch (err) {
      const e = err as { status?: number; message: string; details?: Record<string, unknown> };
      assert.is(e.status, 422);
      assert.is(e.details?.reason, 'TOO_EARLY_TO_ARRIVE');
      assert.is(e.details?.earliest_at, '2026-06-21T15:00:00.000Z');
      assert.match(e.message, /guests may be recorded as arrived from 120 minutes before its start/);
      return;
    }
    assert.unreachable(`${name} was accepted`);
  };
  for (const name of ['seat', 'partially-seat']) await refused(name);
  svc.clock.set('2026-06-21T14:59:59Z');
  await refused('seat');
  const unchanged = await get(svc, r.id);
  assert.is(unchanged.status, 'CONFIRMED');
  assert.is(unchanged.seated_at, null);
  svc.clock.set('2026-06-21T15:00:00Z');
  await cli(svc, 'seat', { id: r.id });
  const seated = await get(svc, r.id);
  assert.is(seated.status, 'SEATED');
  assert.is(seated.seated_at, '2026-06-21T15:00:00.000Z');
});

t('run-jobs runs the scheduler jobs once', async ({ svc }) => {
  const lines = await cli(svc, 'run-jobs', {});
  assert.match(lines[0] as string, /^finished \d+, no-show \d+, seatings repaired \d+$/);
});

t.run();
