// A PATCH sets no status and adds no payment, so a move must not give a reservation what only the
// privileged creation options give (docs/RESERVATIONS.md, "Status and payments after a PATCH"): a
// partner without RESERVATIONS_FORCE_CONFIRM cannot move a confirmed booking onto a shift that requires
// approval, nor one without RESERVATIONS_FORCE_INSERT grow a party (or move it) into the shift's deposit
// with no deposit row. Before, both went through and the booking kept CONFIRMED, no deposit: a way round
// the bypass flags' scopes. A refusal is 422 in the envelope and leaves nothing held.
import * as assert from 'uvu/assert';
import { changeStatus } from '../../commands/reservations/handler-status';
import { operatorMeta } from '../../src/core/command-meta';
import { at, PATCH_PATH, PLAIN, patch, patchSuite, read } from '../helpers/reservation-patches';
import { create, type ReservationService, TOKENS } from '../helpers/reservations';

const t = patchSuite('reservations: what a move requires');
/** What the reservation holds on a day once every move is settled (confirmed or dropped). */
const held = async (svc: ReservationService, day: string, id: string) => {
  const events = (await svc.rt.events.readStream(`capacity-rest_demo-2026-06-${day}`)).filter(
    (e) => e.data.reservation_id === id,
  );
  const pending = new Set<string>();
  let own = false;
  for (const e of events) {
    const moveId = e.data.move_id as string | undefined;
    if (e.type === 'SeatingHeld') own = true;
    else if (e.type === 'SeatingReleased') own = false;
    else if (e.type === 'SeatingMoveHeld' && moveId) pending.add(moveId);
    else if (e.type === 'SeatingMoveConfirmed' && moveId) {
      pending.delete(moveId);
      own = true;
    } else if (e.type === 'SeatingMoveDropped' && moveId) pending.delete(moveId);
  }
  return { own, pending: pending.size };
};

t(
  'a confirmed booking moved onto a shift that requires approval: 422 APPROVAL_REQUIRED without FORCE_CONFIRM',
  async ({ svc, openapi }) => {
    const r = (await create(svc, { start_at: at('10', '19:00') }, PLAIN)).body.data;
    assert.is(r.status, 'CONFIRMED');
    const res = await patch(svc, r.id, { start_at: at('11', '12:00') });
    assert.is(res.status, 422, res.text);
    openapi.check('PATCH', PATCH_PATH, res);
    assert.is(res.body.error.code, 'VALIDATION_ERROR');
    assert.is(res.body.error.details.reason, 'APPROVAL_REQUIRED');
    assert.is(res.body.error.details.shift_id, 'shift_lunch');
    const now = await read(svc, r.id);
    assert.is(now.start_at, at('10', '19:00'));
    assert.is(now.status, 'CONFIRMED');
    assert.equal(await held(svc, '11', r.id), { own: false, pending: 0 });
    assert.equal(await held(svc, '10', r.id), { own: true, pending: 0 });
    // The same move by a caller that may confirm without approval (bypass_approval's scope) goes on.
    const forced = await patch(svc, r.id, { start_at: at('11', '12:00') }, TOKENS.full);
    assert.is(forced.status, 200, forced.text);
    assert.is(forced.body.data.shift.id, 'shift_lunch');
    assert.is(forced.body.data.status, 'CONFIRMED');
  },
);

t(
  'a party grown into the shift deposit with none: 422 DEPOSIT_REQUIRED without FORCE_INSERT',
  async ({ svc, openapi }) => {
    // Lunch: approval (so PENDING, which a move keeps) and a deposit from 6 guests.
    const r = (await create(svc, { start_at: at('12', '12:00'), party_size: 2 }, PLAIN)).body.data;
    assert.is(r.status, 'PENDING');
    assert.equal(r.payments, []);
    const res = await patch(svc, r.id, { party_size: 6 });
    assert.is(res.status, 422, res.text);
    openapi.check('PATCH', PATCH_PATH, res);
    assert.is(res.body.error.details.reason, 'DEPOSIT_REQUIRED');
    assert.is(res.body.error.details.min_party_size, 6);
    assert.is(res.body.error.details.party_size, 6);
    const now = await read(svc, r.id);
    assert.is(now.party_size, 2);
    assert.equal(now.payments, []);
    assert.equal(await held(svc, '12', r.id), { own: true, pending: 0 });
    // Below the threshold the party still changes.
    const five = await patch(svc, r.id, { party_size: 5 });
    assert.is(five.status, 200, five.text);
    assert.is(five.body.data.party_size, 5);
    // A caller holding bypass_payments' scope may (as today: no row, status kept).
    const forced = await patch(svc, r.id, { party_size: 6 }, TOKENS.full);
    assert.is(forced.status, 200, forced.text);
    assert.equal(forced.body.data.payments, []);
    assert.is(forced.body.data.status, 'PENDING');
  },
);

t('moved onto a shift whose deposit applies to the party: 422 DEPOSIT_REQUIRED', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('13', '19:00'), party_size: 2 }, PLAIN)).body.data;
  const res = await patch(svc, r.id, { start_at: at('13', '10:00') });
  assert.is(res.status, 422, res.text);
  assert.is(res.body.error.details.reason, 'DEPOSIT_REQUIRED');
  assert.is(res.body.error.details.shift_id, 'shift_brunch');
  assert.is((await read(svc, r.id)).start_at, at('13', '19:00'));
  assert.equal(await held(svc, '13', r.id), { own: true, pending: 0 });
});

t('what the reservation already settled is kept: its deposit row, a pending approval', async ({ svc }) => {
  // Created with the deposit: a bigger party on the same shift is no new rule (its deposit follows it:
  // reservations-update-deposit), nor is a later time.
  const big = (await create(svc, { start_at: at('15', '12:00'), party_size: 6 }, PLAIN)).body.data;
  assert.is(big.status, 'PENDING');
  assert.is(big.payments.length, 1);
  const grown = await patch(svc, big.id, { party_size: 7 });
  assert.is(grown.status, 200, grown.text);
  assert.is(grown.body.data.payments.length, 1);
  const later = await patch(svc, big.id, { start_at: at('15', '13:00') });
  assert.is(later.status, 200, later.text);
  assert.is(later.body.data.payments[0].status, 'PENDING');
  // A PENDING reservation moved between shifts that require approval still waits for it.
  const pending = (await create(svc, { start_at: at('16', '12:00') }, PLAIN)).body.data;
  const moved = await patch(svc, pending.id, { start_at: at('17', '12:30') });
  assert.is(moved.status, 200, moved.text);
  assert.is(moved.body.data.status, 'PENDING');
});

t(
  'guests already there may grow past the threshold: the deposit guards a booking, not a table',
  async ({ svc }) => {
    const r = (
      await create(svc, { start_at: at('18', '12:00'), party_size: 4, bypass_approval: true }, TOKENS.full)
    ).body.data;
    assert.is(r.status, 'CONFIRMED');
    svc.clock.set('2026-06-18T09:55:00Z'); // 11:55 in Paris: the guests are there
    await svc.rt.settle(
      (await changeStatus(svc.rt, null, r.id, { kind: 'seat' }, operatorMeta('staff'))).position,
    );
    const res = await patch(svc, r.id, { party_size: 6 });
    assert.is(res.status, 200, res.text);
    assert.is(res.body.data.party_size, 6);
    assert.is(res.body.data.status, 'SEATED');
  },
);

t.run();
