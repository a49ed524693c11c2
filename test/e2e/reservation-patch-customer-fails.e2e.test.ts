// A PATCH whose reservation change has landed, and whose customer then cannot be written or connected
// (the log failing on the customer's stream, the connection losing every round): what the change
// needs besides the customer is completed all the same (docs/RESERVATIONS.md, "Order of writes").
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { updateReservation } from '../../commands/reservations/handler-update';
import { alwaysRaced, failingOn } from '../helpers/hooked-events';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';

const t = suite<{ svc: ReservationService }>('reservations: a PATCH whose customer cannot be written');
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

const restaurant = {
  _id: 'rest_demo',
  timezone: 'Europe/Paris',
  currency: 'EUR',
  country_code: 'FR',
  customer_matching: true,
};
const meta = { actor: 'test' };
const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;

async function reservation(svc: ReservationService, id: string) {
  await svc.rt.settle(await svc.rt.events.headPosition());
  return (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;
}

async function failure(run: Promise<unknown>): Promise<unknown> {
  try {
    await run;
  } catch (err) {
    return err;
  }
  assert.unreachable('the PATCH failed');
}

for (const [day, otherDay, what, fails] of [
  ['16', '17', 'the customer write fails', (s: string) => s.startsWith('customer-')],
  [
    '18',
    '19',
    'the connection loses every round',
    (s: string, batch: { data: unknown }[]) =>
      s.startsWith('reservation-') &&
      (batch[0]?.data as { changes?: Record<string, unknown> })?.changes?.customer_id !== undefined,
  ],
] as const) {
  t(
    `${what} once the reservation moved day: the move is confirmed, the old day and external_id freed`,
    async ({ svc }) => {
      // Only tbl_8 seats 7.
      const r = (await create(svc, { start_at: at(day, '19:00'), party_size: 7, external_id: `old-${day}` }))
        .body.data;
      const rt = fails.length === 1 ? failingOn(svc.rt, fails) : alwaysRaced(svc.rt, fails);
      const err = await failure(
        updateReservation(
          rt,
          restaurant,
          r.id,
          {
            start_at: at(otherDay, '20:00'),
            external_id: `new-${day}`,
            customer: { name: 'Never Linked', email: `never.linked.${day}@example.com` },
          },
          meta,
        ),
      );
      // The change is recorded and the customer is not connected: told as a 500 that says so, not as
      // the error met on the way (a disk error, a lost race), which reads as nothing done.
      const e = err as { status?: number; code?: string; details?: Record<string, unknown> };
      assert.equal(
        [e.status, e.code, e.details],
        [500, 'INTERNAL_ERROR', { reason: 'CUSTOMER_NOT_CONNECTED', reservation_id: r.id }],
      );
      const now = await reservation(svc, r.id);
      assert.equal(
        [now.start_at, now.external_id, now.customer],
        [at(otherDay, '20:00'), `new-${day}`, null],
      );
      // The old day's tbl_8 and the old external_id are free now, not once the repair job runs.
      const table = await create(svc, { start_at: at(day, '19:00'), party_size: 7 });
      assert.is(table.status, 201, JSON.stringify(table.body));
      const externalId = await create(svc, { start_at: at(day, '21:00'), external_id: `old-${day}` });
      assert.is(externalId.status, 201, JSON.stringify(externalId.body));
    },
  );
}

t.run();
