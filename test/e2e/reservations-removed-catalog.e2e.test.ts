// A reservation made before its shift, tables, room, discount or prescriber were removed from the
// catalog shows them as they were (name, a shift's hours, a table's sizes), not its ids with made-up
// values; an item configured again shows its new configuration. Checked against the OpenAPI document.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyCatalog } from '../../commands/catalog/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import { create, DINNER, dinnerShift, startReservationService, TOKENS } from '../helpers/reservations';

test('items removed from the catalog since still show on the reservations made with them', async () => {
  const svc = await startReservationService();
  try {
    const openapi = new OpenApiChecker((await svc.api('GET', '/openapi.json')).body);
    const made = await create(svc, {
      start_at: DINNER,
      party_size: 4,
      table_ids: ['tbl_4'],
      room_id: 'room_main',
      prescriber_id: 'pre_1',
      discount_id: 'disc_dinner',
    });
    assert.is(made.status, 201, made.text);
    const id = made.body.data.id as string;
    const before = made.body.data;
    assert.equal(before.shift, {
      id: 'shift_dinner',
      name: dinnerShift.name,
      start_time: '19:00',
      end_time: '22:00',
    });

    // The catalog replaced by one without them (a renovation): only a small table and a new shift.
    const removal = await applyCatalog(
      svc.rt,
      'rest_demo',
      {
        rooms: [{ id: 'room_new', name: 'New room' }],
        tables: [{ id: 'tbl_new', name: 'N', room_id: 'room_new', min_pax: 1, max_pax: 2 }],
        shifts: [{ ...dinnerShift, id: 'shift_other', name: 'Other' }],
        discounts: [],
        prescribers: [],
      },
      operatorMeta(),
    );
    await svc.rt.settle(removal.position);
    const after = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
    assert.is(after.status, 200);
    openapi.check('GET', '/api/partner/v1/reservations/{id}', after);
    for (const field of ['shift', 'tables', 'room', 'discount', 'prescriber'])
      assert.equal(after.body.data[field], before[field], `${field} as it was`);
    const list = await svc.api('GET', '/reservations', { token: TOKENS.full });
    openapi.check('GET', '/api/partner/v1/reservations', list);
    assert.equal(
      list.body.data.find((r: { id: string }) => r.id === id).shift,
      before.shift,
      'the list shows it too',
    );

    // The shift configured again under its id, with other hours: its new configuration shows.
    const back = await applyCatalog(
      svc.rt,
      'rest_demo',
      { shifts: [{ ...dinnerShift, name: 'Dinner (new hours)', start_time: '18:30', end_time: '21:30' }] },
      operatorMeta(),
      'merge',
    );
    await svc.rt.settle(back.position);
    const again = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
    assert.equal(again.body.data.shift, {
      id: 'shift_dinner',
      name: 'Dinner (new hours)',
      start_time: '18:30',
      end_time: '21:30',
    });
    assert.equal(again.body.data.tables, before.tables, 'the removed table still as it was');
  } finally {
    await svc.close();
  }
});

test.run();
