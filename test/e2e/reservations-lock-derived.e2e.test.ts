// A POS lock on start_at also holds the seating's end (spec §7: 409 with details.locked_fields). A party
// size that changes the seating's length moves that end: the PATCH is refused — and refused before it
// writes anything else it carries, such as the linked customer's new details.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setPosLock } from '../../commands/reservations/handler-records';
import { operatorMeta } from '../../src/core/command-meta';
import {
  create,
  dinnerShift,
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';

const t = suite<{ svc: ReservationService }>('reservations: a lock refuses before anything is written');

t.before(async (ctx) => {
  ctx.svc = await startReservationService({
    bootstrap: reservationBootstrap({
      // Parties of up to 2 stay 90 minutes, larger ones 120.
      shifts: [
        {
          ...dinnerShift,
          duration_minutes: 120,
          durations_by_party_size: [{ max_party_size: 2, duration_minutes: 90 }],
        },
      ],
    }),
  });
});
t.after(async ({ svc }) => svc.close());

t(
  'a party size that lengthens the seating under a start_at lock: 409, the linked customer unchanged',
  async ({ svc }) => {
    const made = await create(svc, {
      start_at: '2026-06-03T19:00:00+02:00',
      customer: { name: 'Ada Before', email: 'ada.lock@example.com' },
    });
    assert.is(made.status, 201, made.text);
    const r = made.body.data;
    assert.is(r.duration_minutes, 90);
    await svc.rt.settle((await setPosLock(svc.rt, null, r.id, ['start_at'], operatorMeta('pos'))).position);
    const res = await svc.api('PATCH', `/reservations/${r.id}`, {
      token: TOKENS.full,
      body: { party_size: 4, customer: { name: 'Ada After', email: 'ada.lock@example.com' } },
    });
    assert.is(res.status, 409, res.text);
    assert.ok(res.body.error.details.locked_fields.includes('start_at'), res.text);
    const customer = await svc.api('GET', `/customers/${r.customer.id}`, { token: TOKENS.full });
    assert.is(customer.body.data.name, 'Ada Before', 'the customer was updated by a refused PATCH');
    const after = await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full });
    assert.equal([after.body.data.party_size, after.body.data.duration_minutes], [2, 90]);
  },
);

t.run();
