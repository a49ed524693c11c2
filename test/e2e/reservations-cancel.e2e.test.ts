import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { recordPayment, setPosLock } from '../../commands/reservations/handler-records';
import { changeStatus } from '../../commands/reservations/handler-status';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import {
  create,
  NOW,
  type ReservationService,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const PATH = '/api/partner/v1/reservations/{id}/cancel';
const t = suite<{ svc: ReservationService; openapi: OpenApiChecker }>('reservations: cancel');

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async ({ svc }) => svc.close());

const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;
/** `invalid`: the body breaks the documented schema on purpose. */
const cancel = (svc: TestService, id: string, body?: unknown, token = TOKENS.full, invalid = false) =>
  svc.api('POST', `/reservations/${id}/cancel`, { token, invalid, ...(body === undefined ? {} : { body }) });

t(
  'cancel gives CANCELED_BY_RESTAURANT with the reason, frees the table, and a repeat keeps the first reason',
  async ({ svc, openapi }) => {
    const r = (await create(svc, { start_at: at('15', '20:00'), party_size: 7 })).body.data;
    assert.is(
      (await create(svc, { start_at: at('15', '20:00'), party_size: 7 })).body.error.details.reason,
      'NO_TABLE',
    );
    const res = await cancel(svc, r.id, { reason: 'kitchen flooded' });
    assert.is(res.status, 200);
    openapi.check('POST', PATH, res);
    assert.is(res.body.data.status, 'CANCELED_BY_RESTAURANT');
    assert.is(res.body.data.cancellation_reason, 'kitchen flooded');
    // The table is free again at once.
    assert.is((await create(svc, { start_at: at('15', '20:00'), party_size: 7 })).status, 201);
    svc.clock.advance(60);
    const again = await cancel(svc, r.id, { reason: 'another reason' });
    assert.is(again.status, 200);
    assert.equal(again.body.data, res.body.data);
    const events = await svc.rt.events.readStream(`reservation-${r.id}`);
    assert.equal(
      events.map((e) => e.type),
      ['ReservationCreated', 'ReservationStatusChanged'],
    );
    const capacity = await svc.rt.events.readStream('capacity-rest_demo-2026-06-15');
    assert.equal(
      capacity.filter((e) => e.data.reservation_id === r.id).map((e) => e.type),
      ['SeatingHeld', 'SeatingReleased'],
    );
  },
);

t('the body is required JSON: {} is enough, nothing or another type is refused', async ({ svc, openapi }) => {
  const r = (await create(svc, { start_at: at('16', '20:00') })).body.data;
  const none = await cancel(svc, r.id);
  assert.is(none.status, 400);
  assert.is(none.body.error.code, 'VALIDATION_ERROR');
  openapi.check('POST', PATH, none);
  const text = await svc.api('POST', `/reservations/${r.id}/cancel`, {
    token: TOKENS.full,
    rawBody: 'reason=x',
    headers: { 'content-type': 'text/plain' },
  });
  assert.is(text.status, 415);
  const broken = await svc.api('POST', `/reservations/${r.id}/cancel`, {
    token: TOKENS.full,
    rawBody: '{"reason":',
    headers: { 'content-type': 'application/json' },
  });
  assert.is(broken.status, 400);
  const emptyReason = await cancel(svc, r.id, { reason: '' }, TOKENS.full, true);
  assert.is(emptyReason.status, 400);
  const unknown = await cancel(svc, r.id, { why: 'x' }, TOKENS.full, true);
  assert.is(unknown.status, 400);
  assert.is(
    (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data.status,
    'CONFIRMED',
  );
  const ok = await cancel(svc, r.id, {});
  assert.is(ok.status, 200);
  assert.is(ok.body.data.cancellation_reason, null);
});

t(
  'a canceled or rejected reservation owes nothing: its pending deposit is voided, money paid is kept',
  async ({ svc, openapi }) => {
    // Brunch: a deposit of 1000 per cover, no approval.
    const r = (await create(svc, { start_at: at('16', '10:00'), party_size: 2 })).body.data;
    assert.is(r.payment_summary.pending_amount, 2000);
    const res = await cancel(svc, r.id, {});
    assert.is(res.status, 200, res.text);
    openapi.check('POST', PATH, res);
    const d = res.body.data;
    assert.is(d.status, 'CANCELED_BY_RESTAURANT');
    assert.is(d.payments[0].status, 'VOIDED');
    assert.is(d.payments[0].voided_at, d.updated_at);
    assert.is(d.payment_summary.pending_amount, 0);
    assert.is(d.payment_summary.total_amount, 0);
    // The history says so, after the cancellation.
    const history = await svc.api('GET', `/reservations/${r.id}/history`, { token: TOKENS.full });
    assert.equal(
      history.body.data.map((e: { action: string }) => e.action),
      ['CREATED', 'STATUS_CHANGED', 'PAYMENT_RECORDED'],
    );
    // Told as the reservation's own field: its last `to` is what the reservation shows.
    const recorded = history.body.data[2].changes.find((c: { field: string }) => c.field === 'payments');
    assert.equal(recorded?.from, r.payments);
    assert.equal(recorded?.to, d.payments);
    // A repeat writes nothing more.
    const again = await cancel(svc, r.id, {});
    assert.is(again.body.data.updated_at, d.updated_at);
    // Paid money is the restaurant's to refund: kept as paid.
    const paid = (await create(svc, { start_at: at('16', '10:30'), party_size: 2 })).body.data;
    await svc.rt.settle(
      (
        await recordPayment(
          svc.rt,
          null,
          paid.id,
          { paymentId: paid.payments[0].id, status: 'PAID' },
          'EUR',
          operatorMeta('staff'),
        )
      ).position,
    );
    const kept = (await cancel(svc, paid.id, {})).body.data;
    assert.is(kept.payments[0].status, 'PAID');
    assert.is(kept.total_amount_paid, 2000);
    // Lunch needs approval and asks 1500 per cover from 6: rejected by staff, nothing owed either.
    const big = (await create(svc, { start_at: at('17', '12:00'), party_size: 6 })).body.data;
    assert.is(big.status, 'PENDING');
    await svc.rt.settle(
      (await changeStatus(svc.rt, null, big.id, { kind: 'reject', reason: null }, operatorMeta('staff')))
        .position,
    );
    const rejected = (await svc.api('GET', `/reservations/${big.id}`, { token: TOKENS.full })).body.data;
    assert.is(rejected.status, 'REJECTED');
    assert.is(rejected.payments[0].status, 'VOIDED');
  },
);

t('a POS lock on the status answers 409 with details.locked_fields', async ({ svc, openapi }) => {
  const r = (await create(svc, { start_at: at('17', '20:00') })).body.data;
  await svc.rt.settle((await setPosLock(svc.rt, null, r.id, ['status'], operatorMeta('pos'))).position);
  const res = await cancel(svc, r.id, {});
  assert.is(res.status, 409);
  assert.is(res.body.error.code, 'RESOURCE_CONFLICT');
  assert.equal(res.body.error.details.locked_fields, ['status']);
  openapi.check('POST', PATH, res);
  assert.is(
    (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data.status,
    'CONFIRMED',
  );
});

t('cancel needs RESERVATIONS_CANCEL; unknown or foreign ids are 404', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('18', '20:00') })).body.data;
  const refused = await cancel(svc, r.id, {}, TOKENS.noCancel);
  assert.is(refused.status, 403);
  assert.is(refused.body.error.code, 'INSUFFICIENT_SCOPE');
  assert.is((await cancel(svc, 'res_nope', {})).status, 404);
  assert.is((await cancel(svc, r.id, {}, TOKENS.other)).status, 404);
});

t('a canceled reservation no longer counts in its customer stats', async ({ svc }) => {
  const r = (
    await create(svc, {
      start_at: at('19', '20:00'),
      customer: { name: 'Stat Guest', email: 'stat@example.com' },
    })
  ).body.data;
  const stats = async () =>
    (await svc.api('GET', `/customers/${r.customer.id}`, { token: TOKENS.full })).body.data.stats
      .reservation_count;
  assert.is(await stats(), 1);
  await cancel(svc, r.id, {});
  assert.is(await stats(), 0);
});

t(
  "the history names a cancellation's reason cancellation_reason, as the reservation does",
  async ({ svc, openapi }) => {
    const r = (await create(svc, { start_at: at('17', '20:00') })).body.data;
    await cancel(svc, r.id, { reason: 'kitchen flooded' });
    const res = await svc.api('GET', `/reservations/${r.id}/history`, { token: TOKENS.full });
    openapi.check('GET', '/api/partner/v1/reservations/{id}/history', res);
    const change = res.body.data.find((e: { action: string }) => e.action === 'STATUS_CHANGED');
    assert.equal(change.changes, [
      { field: 'status', from: 'CONFIRMED', to: 'CANCELED_BY_RESTAURANT' },
      { field: 'cancellation_reason', to: 'kitchen flooded' },
    ]);
    const plain = (await create(svc, { start_at: at('17', '21:00') })).body.data;
    await cancel(svc, plain.id, {});
    const none = await svc.api('GET', `/reservations/${plain.id}/history`, { token: TOKENS.full });
    assert.equal(none.body.data.find((e: { action: string }) => e.action === 'STATUS_CHANGED').changes, [
      { field: 'status', from: 'CONFIRMED', to: 'CANCELED_BY_RESTAURANT' },
      { field: 'cancellation_reason', to: null },
    ]);
  },
);

t(
  "a no-show canceled afterwards keeps its pending deposit: what the guests owe is the restaurant's call",
  async ({ svc }) => {
    // Brunch: a deposit of 1000 per cover. The guests never come.
    const r = (await create(svc, { start_at: '2026-06-03T10:00:00+02:00', party_size: 2 })).body.data;
    assert.is(r.payment_summary.pending_amount, 2000);
    svc.clock.set('2026-06-03T09:00:00Z');
    try {
      await svc.rt.settle(
        (
          await changeStatus(
            svc.rt,
            null,
            r.id,
            { kind: 'no_show', graceMinutes: 15 },
            operatorMeta('scheduler'),
          )
        ).position,
      );
      const res = await cancel(svc, r.id, {});
      assert.is(res.status, 200, res.text);
      assert.is(res.body.data.status, 'CANCELED_BY_RESTAURANT');
      assert.is(res.body.data.payments[0].status, 'PENDING');
      assert.is(res.body.data.payment_summary.pending_amount, 2000);
      const events = await svc.rt.events.readStream(`reservation-${r.id}`);
      assert.equal(
        events.map((e) => e.type),
        ['ReservationCreated', 'ReservationStatusChanged', 'ReservationStatusChanged'],
      );
    } finally {
      svc.clock.set(NOW);
    }
  },
);

t.run();
