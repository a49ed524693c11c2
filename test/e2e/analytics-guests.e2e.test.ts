// Guest identity in the analytics, through the service: reservations re-attached to another customer
// (PATCH customer) before a merge, moved away before the customer books again, detached, and an
// erasure. analytics_guests and the new or returning figures of `analytics export` must be what
// docs/analytics.md says, worked out by hand below (literal numbers), live, after the erasure and
// after a restart that rebuilds every read model from the log.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeCustomers } from '../../commands/customers/merge';
import { ANALYTICS_GUESTS, type GuestDoc } from '../../projections/analytics/projection';
import { operatorMeta } from '../../src/core/command-meta';
import { runCli } from '../helpers/cli-in-process';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import { startTestService } from '../helpers/service';

const t = suite<{ svc: ReservationService }>('analytics: each reservation counted once, for its guest now');
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

t(
  're-attached before a merge, moved away, detached, erased: one count each, new where it is new',
  async (ctx) => {
    let svc = ctx.svc;
    const api = (m: string, p: string, body?: unknown) => svc.api(m, p, { token: TOKENS.full, body });
    const customer = async (name: string, phone: string) => {
      const r = await api('POST', '/customers', { name, phone_number: phone });
      assert.is(r.status, 201, r.text);
      return r.body.data.id as string;
    };
    const book = async (day: string, customerId: string) => {
      const r = await create(svc, { start_at: `${day}T19:00:00+02:00`, customer: { id: customerId } });
      assert.is(r.status, 201, r.text);
      return r.body.data.id as string;
    };
    const attach = async (id: string, customerId: string | null) => {
      const body = { customer: customerId === null ? null : { id: customerId } };
      const r = await api('PATCH', `/reservations/${id}`, body);
      assert.is(r.status, 200, r.text);
    };

    const A = await customer('Ann', '+33612345101');
    const B = await customer('Bob', '+33612345102');
    const C = await customer('Cid', '+33612345103');
    const D = await customer('Dee', '+33612345104');
    // r1: booked for A (new), given to B, then A merged into B: B's one reservation, once.
    const r1 = await book('2026-06-03', A);
    await attach(r1, B);
    await svc.rt.settle((await mergeCustomers(svc.rt, A, B, operatorMeta('staff'))).position);
    // r2: booked for C (new), given to D; then C books r3: C has nothing of its own left, r3 is new.
    const r2 = await book('2026-06-04', C);
    await attach(r2, D);
    await book('2026-06-05', C); // r3
    // r4: D books while it has r2 (returning); then r2 loses its customer: D keeps r4 only.
    await book('2026-06-06', D); // r4
    await attach(r2, null);

    const guests = async () =>
      Object.fromEntries(
        (await svc.rt.docs.collection<GuestDoc>(ANALYTICS_GUESTS).find({}))
          .map((g) => [g.customer_id, [g.reservations, g.merged_into ?? null]] as const)
          .sort(([a], [b]) => (a < b ? -1 : 1)),
      );
    const want: Record<string, [number, string | null]> = {
      [A]: [0, B],
      [B]: [1, null],
      [C]: [1, null],
      [D]: [1, null],
    };
    // new, returning, unknown per service day: r1 new, r2 new (detached since: it keeps its kind), r3
    // new, r4 returning.
    const days = async () =>
      (await runCli(svc, 'analytics export', { restaurant: 'rest_demo', format: 'ndjson' })).map((l) => {
        const row = JSON.parse(l) as { service_date: string; guests: Record<string, number> };
        return [row.service_date, row.guests.new, row.guests.returning, row.guests.unknown];
      });
    const wantDays = [
      ['2026-06-03', 1, 0, 0],
      ['2026-06-04', 1, 0, 0],
      ['2026-06-05', 1, 0, 0],
      ['2026-06-06', 0, 1, 0],
    ];

    assert.equal(await guests(), want, 'live: reservations per guest');
    assert.equal(await days(), wantDays, 'live: new and returning');
    // An erasure changes no count.
    await runCli(svc, 'audit erase', { customer: D });
    assert.equal(await guests(), want, 'after the erasure');
    assert.equal(await days(), wantDays, 'after the erasure: new and returning');
    // A restart replays the log into every read model: the same.
    const dataDir = svc.dataDir;
    await svc.close({ keepData: true });
    svc = Object.assign(await startTestService({ dataDir, clock: svc.clock }), { clock: svc.clock });
    ctx.svc = svc;
    assert.equal(await guests(), want, 'after a rebuild');
    assert.equal(await days(), wantDays, 'after a rebuild: new and returning');
  },
);

t.run();
