// A PATCH that changes the party or the shift takes the pending deposit along (docs/RESERVATIONS.md,
// "Status and payments after a PATCH"): the amount a guest still owes is the new party's, a deposit
// the new seating no longer asks is voided (and a reservation that only waited for it is confirmed),
// and money already paid or authorized is left as it is. Before, the deposit kept the party it was
// created with: 6 covers asked of a party of 8, and a party cut to 2 kept in PENDING_PAYMENT.
import * as assert from 'uvu/assert';
import { applyCatalog } from '../../commands/catalog/handler';
import { recordPayment } from '../../commands/reservations/handler-records';
import { operatorMeta } from '../../src/core/command-meta';
import { at, PATCH_PATH, PLAIN, patch, patchSuite, read } from '../helpers/reservation-patches';
import { brunchShift, create } from '../helpers/reservations';

const t = patchSuite('reservations: the deposit after a PATCH');

// Brunch: 1000 per cover from 1 guest, no approval. Lunch: 1500 per cover from 6 guests, approval.
t('a larger or smaller party owes the deposit of its covers', async ({ svc, openapi }) => {
  const r = (await create(svc, { start_at: at('10', '10:00'), party_size: 2 }, PLAIN)).body.data;
  assert.is(r.status, 'PENDING_PAYMENT');
  assert.is(r.payments[0].amount, 2000);
  const grown = await patch(svc, r.id, { party_size: 4 });
  assert.is(grown.status, 200, grown.text);
  openapi.check('PATCH', PATCH_PATH, grown);
  const d = grown.body.data;
  assert.is(d.payments.length, 1);
  assert.is(d.payments[0].id, r.payments[0].id);
  assert.is(d.payments[0].status, 'PENDING');
  assert.is(d.payments[0].quantity, 4);
  assert.is(d.payments[0].unit_price, 1000);
  assert.is(d.payments[0].amount, 4000);
  assert.is(d.payment_summary.pending_amount, 4000);
  assert.is(d.payment_summary.total_amount, 4000);
  assert.is(d.status, 'PENDING_PAYMENT');
  const fewer = await patch(svc, r.id, { party_size: 3 });
  assert.is(fewer.body.data.payments[0].amount, 3000);
  // What the answer said is what the reservation holds.
  assert.equal((await read(svc, r.id)).payments, fewer.body.data.payments);
  // A change that keeps party and shift leaves the row as it is.
  const later = await patch(svc, r.id, { start_at: at('10', '10:30') });
  assert.is(later.status, 200, later.text);
  assert.equal(later.body.data.payments, fewer.body.data.payments);
});

t(
  'moved to a shift without deposit: the pending deposit is voided and the reservation confirmed',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('11', '10:00'), party_size: 2 }, PLAIN)).body.data;
    assert.is(r.status, 'PENDING_PAYMENT');
    const moved = await patch(svc, r.id, { start_at: at('11', '19:00') });
    assert.is(moved.status, 200, moved.text);
    const d = moved.body.data;
    assert.is(d.shift.id, 'shift_dinner');
    assert.is(d.status, 'CONFIRMED');
    assert.is(d.payments.length, 1);
    assert.is(d.payments[0].status, 'VOIDED');
    assert.is(d.payments[0].amount, 2000);
    assert.is(d.payments[0].voided_at, moved.body.data.updated_at);
    assert.is(d.payment_summary.pending_amount, 0);
    assert.is(d.payment_summary.total_amount, 0);
    // A voided deposit is no deposit: moving back onto the brunch is the new requirement it was.
    const back = await patch(svc, r.id, { start_at: at('11', '10:00') });
    assert.is(back.status, 422, back.text);
    assert.is(back.body.error.details.reason, 'DEPOSIT_REQUIRED');
    assert.is((await read(svc, r.id)).shift.id, 'shift_dinner');
  },
);

t('a party cut below the threshold owes nothing; grown again, it is a new requirement', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('12', '12:00'), party_size: 6 }, PLAIN)).body.data;
  assert.is(r.status, 'PENDING');
  assert.is(r.payments[0].amount, 9000);
  const cut = await patch(svc, r.id, { party_size: 4 });
  assert.is(cut.status, 200, cut.text);
  assert.is(cut.body.data.payments[0].status, 'VOIDED');
  // Still waiting for the restaurant's approval, which a deposit does not give.
  assert.is(cut.body.data.status, 'PENDING');
  const again = await patch(svc, r.id, { party_size: 6 });
  assert.is(again.status, 422, again.text);
  assert.is(again.body.error.details.reason, 'DEPOSIT_REQUIRED');
  assert.is((await read(svc, r.id)).party_size, 4);
});

t('a deposit already paid is left as it is, whatever the party', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('13', '10:00'), party_size: 2 }, PLAIN)).body.data;
  await svc.rt.settle(
    (
      await recordPayment(
        svc.rt,
        null,
        r.id,
        { paymentId: r.payments[0].id, status: 'PAID' },
        'EUR',
        operatorMeta('staff'),
      )
    ).position,
  );
  assert.is((await read(svc, r.id)).status, 'CONFIRMED');
  const grown = await patch(svc, r.id, { party_size: 4 });
  assert.is(grown.status, 200, grown.text);
  assert.is(grown.body.data.status, 'CONFIRMED');
  assert.is(grown.body.data.payments.length, 1);
  assert.is(grown.body.data.payments[0].status, 'PAID');
  assert.is(grown.body.data.payments[0].amount, 2000);
  const moved = await patch(svc, r.id, { start_at: at('13', '19:00') });
  assert.is(moved.status, 200, moved.text);
  assert.is(moved.body.data.payments[0].status, 'PAID');
  assert.is(moved.body.data.total_amount_paid, 2000);
});

t(
  'a deposit staff recorded as a lump sum is not counted per cover, even on a party of one',
  async ({ svc }) => {
    // Booked without the brunch's deposit; staff then ask 5000 for the table (quantity 1, unit price 5000).
    const r = (await create(svc, { start_at: at('14', '10:00'), party_size: 1, bypass_payments: true })).body
      .data;
    assert.equal(r.payments, []);
    await svc.rt.settle(
      (
        await recordPayment(
          svc.rt,
          null,
          r.id,
          { paymentId: 'pay_table', status: 'PENDING', amount: 5000, paymentType: 'DEPOSIT' },
          'EUR',
          operatorMeta('staff'),
        )
      ).position,
    );
    const grown = await patch(svc, r.id, { party_size: 4 });
    assert.is(grown.status, 200, grown.text);
    assert.equal(
      grown.body.data.payments.map((p: { status: string; quantity: number; amount: number }) => [
        p.status,
        p.quantity,
        p.amount,
      ]),
      [['PENDING', 1, 5000]],
    );
  },
);

t(
  "the restaurant dropped the shift's deposit since the booking: a larger party still owes it",
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('15', '10:00'), party_size: 2 }, PLAIN)).body.data;
    assert.is(r.status, 'PENDING_PAYMENT');
    const setDeposit = async (deposit: unknown) =>
      svc.rt.settle(
        (
          await applyCatalog(
            svc.rt,
            'rest_demo',
            { shifts: [{ ...brunchShift, deposit }] },
            operatorMeta('staff'),
            'merge',
          )
        ).position,
      );
    await setDeposit(null);
    try {
      const grown = await patch(svc, r.id, { party_size: 3 });
      assert.is(grown.status, 200, grown.text);
      assert.is(grown.body.data.status, 'PENDING_PAYMENT');
      assert.equal(
        grown.body.data.payments.map((p: { id: string; status: string; amount: number }) => [
          p.id,
          p.status,
          p.amount,
        ]),
        [[r.payments[0].id, 'PENDING', 3000]],
      );
    } finally {
      await setDeposit(brunchShift.deposit);
    }
  },
);

t.run();
