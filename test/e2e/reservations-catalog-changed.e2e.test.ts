// A shift's grid changed after a booking (another interval, other hours, other days): the booking keeps
// its start, and a PATCH that keeps its start and shift (fewer guests, a guest joining at the table,
// another table) is checked on its own service day, not against the grid as the catalog draws it now.
// Before, such a PATCH answered 422 OUTSIDE_SHIFT ("take start_at from GET /availability"), so the
// guests' party and table could no longer change. Choosing a start still follows the grid.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyCatalog } from '../../commands/catalog/handler';
import { changeStatus } from '../../commands/reservations/handler-status';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import { create, dinnerShift, startReservationService, TOKENS } from '../helpers/reservations';

const PATH = '/api/partner/v1/reservations/{id}';

test('a PATCH keeping the start and shift of a booking made under an earlier grid', async () => {
  const svc = await startReservationService();
  try {
    const openapi = new OpenApiChecker((await svc.api('GET', '/openapi.json')).body);
    const patch = (id: string, body: unknown) =>
      svc.api('PATCH', `/reservations/${id}`, { token: TOKENS.full, body });
    const start = '2026-06-10T19:15:00+02:00';
    const a = (await create(svc, { start_at: start, party_size: 3 })).body.data;
    const b = (await create(svc, { start_at: start, party_size: 2 })).body.data;
    assert.ok(a.id && b.id);
    // The dinner now starts every 30 minutes, and not on Wednesdays (10 June 2026): 19:15 is off it.
    const changed = await applyCatalog(
      svc.rt,
      'rest_demo',
      { shifts: [{ ...dinnerShift, slot_interval_minutes: 30, days_of_week: [1, 2, 4, 5, 6, 7] }] },
      operatorMeta(),
      'merge',
    );
    await svc.rt.settle(changed.position);

    const fewer = await patch(a.id, { party_size: 2 });
    assert.is(fewer.status, 200, fewer.text);
    openapi.check('PATCH', PATH, fewer);
    assert.is(fewer.body.data.start_at, start);
    assert.is(fewer.body.data.party_size, 2);
    assert.is(fewer.body.data.shift.id, 'shift_dinner');
    const table = await patch(a.id, { table_ids: ['tbl_2b'] });
    assert.is(table.status, 200, table.text);
    assert.equal(
      table.body.data.tables.map((x: { id: string }) => x.id),
      ['tbl_2b'],
    );
    // Still checked otherwise: a table the party does not fit.
    const wrong = await patch(a.id, { table_ids: ['tbl_8'] });
    assert.is(wrong.body.error?.details.reason, 'NO_TABLE', wrong.text);

    // Choosing a start follows today's grid: the same start for a new booking, or as a move.
    const booked = await create(svc, { start_at: start, party_size: 2 });
    assert.is(booked.body.error?.details.reason, 'OUTSIDE_SHIFT', booked.text);
    const other = (await create(svc, { start_at: '2026-06-11T19:00:00+02:00', party_size: 2 })).body.data;
    const moved = await patch(other.id, { start_at: start });
    assert.is(moved.body.error?.details.reason, 'OUTSIDE_SHIFT', moved.text);

    // Guests at their table (the clock at their arrival): one joins.
    svc.clock.set('2026-06-10T17:10:00Z');
    await svc.rt.settle(
      (await changeStatus(svc.rt, null, b.id, { kind: 'seat' }, operatorMeta('staff'))).position,
    );
    const joined = await patch(b.id, { party_size: 3 });
    assert.is(joined.status, 200, joined.text);
    assert.is(joined.body.data.party_size, 3);
    // The seatings stayed on their day.
    const day = await svc.rt.events.readStream('capacity-rest_demo-2026-06-10');
    assert.ok(day.every((e) => e.data.service_date === undefined || e.data.service_date === '2026-06-10'));
  } finally {
    await svc.close();
  }
});

test.run();
