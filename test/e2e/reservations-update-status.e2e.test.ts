// Which reservations a PATCH may still move (docs/RESERVATIONS.md, "Which reservations can move"):
// guests still to come, freely; guests at the restaurant, their party, room and tables but not their
// start; a finished, no-show, canceled or rejected reservation not at all (it would hold a table
// again). A refusal is 422 in the envelope with the reason and holds nothing anywhere.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { StatusOperation } from '../../commands/reservations/decide-status';
import { changeStatus } from '../../commands/reservations/handler-status';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';

const PATH = '/api/partner/v1/reservations/{id}';
const t = suite<{ svc: ReservationService; openapi: OpenApiChecker }>('reservations: which can move');

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async ({ svc }) => svc.close());

const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;
const patch = (svc: ReservationService, id: string, body: unknown) =>
  svc.api('PATCH', `/reservations/${id}`, { token: TOKENS.full, body });
const status = async (svc: ReservationService, id: string, op: StatusOperation) =>
  svc.rt.settle((await changeStatus(svc.rt, null, id, op, operatorMeta('staff'))).position);
/** Every seating event of a day, whoever it is for. */
const day = async (svc: ReservationService, d: string) =>
  (await svc.rt.events.readStream(`capacity-rest_demo-2026-06-${d}`)).map((e) => [
    e.type,
    e.data.reservation_id,
  ]);
const read = async (svc: ReservationService, id: string) =>
  (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;

// Guests are seated when they are there (from 120 minutes before their start): each test books ahead,
// then sets the clock to its guests' arrival. The clock only moves forward, test after test.

t('seated guests keep their start and shift; their party and tables may change', async ({ svc, openapi }) => {
  const r = (await create(svc, { start_at: at('10', '19:00') })).body.data;
  svc.clock.set('2026-06-10T16:55:00Z');
  await status(svc, r.id, { kind: 'seat' });
  const moved = await patch(svc, r.id, { start_at: at('11', '20:00') });
  assert.is(moved.status, 422, moved.text);
  openapi.check('PATCH', PATH, moved);
  assert.is(moved.body.error.code, 'VALIDATION_ERROR');
  assert.is(moved.body.error.details.reason, 'RESERVATION_SEATED');
  assert.is(moved.body.error.details.status, 'SEATED');
  assert.equal(await day(svc, '11'), []);
  const later = await patch(svc, r.id, { start_at: at('10', '20:00') });
  assert.is(later.body.error?.details.reason, 'RESERVATION_SEATED');
  // A guest joins: the party and its table change, at the same start.
  const bigger = await patch(svc, r.id, { party_size: 4 });
  assert.is(bigger.status, 200, bigger.text);
  assert.is(bigger.body.data.party_size, 4);
  assert.equal(
    bigger.body.data.tables.map((x: { id: string }) => x.id),
    ['tbl_4'],
  );
  assert.is(bigger.body.data.start_at, at('10', '19:00'));
  assert.is(bigger.body.data.status, 'SEATED');
});

t(
  'a finished reservation cannot move, grow or change tables: it holds no table again',
  async ({ svc, openapi }) => {
    const r = (await create(svc, { start_at: at('12', '19:00') })).body.data;
    svc.clock.set('2026-06-12T17:00:00Z');
    await status(svc, r.id, { kind: 'seat' });
    svc.clock.set('2026-06-12T18:20:00Z');
    await status(svc, r.id, { kind: 'leave' });
    const before12 = await day(svc, '12');
    for (const body of [
      { start_at: at('13', '20:00') },
      { party_size: 3 },
      { table_ids: ['tbl_2b'] },
      { shift_id: 'shift_late', start_at: at('12', '23:00') },
    ]) {
      const res = await patch(svc, r.id, body);
      assert.is(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      openapi.check('PATCH', PATH, res);
      assert.is(res.body.error.details.reason, 'RESERVATION_FINISHED');
      assert.is(res.body.error.details.status, 'DONE');
    }
    // Nothing held anywhere, nothing changed.
    assert.equal(await day(svc, '13'), []);
    assert.equal(await day(svc, '12'), before12);
    const now = await read(svc, r.id);
    assert.is(now.start_at, at('12', '19:00'));
    assert.is(now.party_size, 2);
    // What is not the seating still changes (a note after the meal).
    const noted = await patch(svc, r.id, { custom_message: 'loved the wine' });
    assert.is(noted.status, 200, noted.text);
    assert.is(noted.body.data.custom_message, 'loved the wine');
  },
);

t('a rejected reservation cannot move either', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('15', '12:00'), shift_id: 'shift_lunch' })).body.data;
  assert.is(r.status, 'PENDING');
  await status(svc, r.id, { kind: 'reject', reason: null });
  const res = await patch(svc, r.id, { start_at: at('16', '19:00') });
  assert.is(res.body.error?.details.reason, 'RESERVATION_CANCELED');
  assert.equal(await day(svc, '16'), []);
});

t('a no-show cannot be moved to another day', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('16', '19:00') })).body.data;
  svc.clock.set('2026-06-18T10:00:00Z');
  await status(svc, r.id, { kind: 'no_show', graceMinutes: 30 });
  assert.is((await read(svc, r.id)).status, 'NO_SHOW');
  const res = await patch(svc, r.id, { start_at: at('20', '19:00') });
  assert.is(res.status, 422, res.text);
  assert.is(res.body.error.details.reason, 'RESERVATION_FINISHED');
  assert.equal(await day(svc, '20'), []);
});

// The clock at the guests' start, as when they are really there. Before, the recheck of their new
// party applied the booking rules' time limits to their own start, already past: TOO_LATE, so the
// party of guests at their table could never change in practice.
t(
  'guests at their table grow at their start, past by then; guests still to come do not',
  async ({ svc, openapi }) => {
    const seated = (await create(svc, { start_at: at('22', '19:00') })).body.data;
    const late = (await create(svc, { start_at: at('22', '19:00') })).body.data;
    // The only table for 5 to 8 guests (tbl_8) is taken at that time.
    assert.is((await create(svc, { start_at: at('22', '19:00'), party_size: 6 })).status, 201);
    svc.clock.set('2026-06-22T17:10:00Z');
    await status(svc, seated.id, { kind: 'seat' });
    const bigger = await patch(svc, seated.id, { party_size: 4 });
    assert.is(bigger.status, 200, bigger.text);
    assert.is(bigger.body.data.party_size, 4);
    assert.is(bigger.body.data.start_at, at('22', '19:00'));
    assert.is(bigger.body.data.status, 'SEATED');
    // Still checked otherwise: a party no free table seats is refused.
    const tooBig = await patch(svc, seated.id, { party_size: 5 });
    assert.is(tooBig.status, 422, tooBig.text);
    assert.is(tooBig.body.error.details.reason, 'NO_TABLE');
    // A booking whose guests have not arrived is checked like a booking: its start is past.
    const res = await patch(svc, late.id, { party_size: 3 });
    assert.is(res.status, 422, res.text);
    openapi.check('PATCH', PATH, res);
    assert.is(res.body.error.details.reason, 'TOO_LATE');
  },
);

// The clock at the guests' start, and past it (they are late). Before, every change of the seating of guests
// still to come was held to the minimum notice, a rule for choosing a start: late guests arriving
// could not be given another table, nor could a party that shrank near its start (TOO_LATE), so the
// reservation kept a larger party or a worse table held.
t(
  'guests still to come, at their start: fewer guests or another table; not more, nor another start',
  async ({ svc, openapi }) => {
    // After the 19:00 seatings of the test above (90 minutes).
    const r = (await create(svc, { start_at: at('22', '21:00'), party_size: 2 })).body.data;
    assert.is(r.status, 'CONFIRMED');
    svc.clock.set('2026-06-22T19:10:00Z');
    const other = await patch(svc, r.id, { table_ids: ['tbl_4'] });
    assert.is(other.status, 200, other.text);
    openapi.check('PATCH', PATH, other);
    assert.equal(
      other.body.data.tables.map((x: { id: string }) => x.id),
      ['tbl_4'],
    );
    assert.is(other.body.data.start_at, at('22', '21:00'));
    const fewer = await patch(svc, r.id, { party_size: 1, table_ids: ['tbl_2b'] });
    assert.is(fewer.status, 200, fewer.text);
    assert.is(fewer.body.data.party_size, 1);
    // Still checked otherwise: a table the party does not fit is refused.
    const wrong = await patch(svc, r.id, { table_ids: ['tbl_8'] });
    assert.is(wrong.body.error?.details.reason, 'NO_TABLE', wrong.text);
    // Choosing a start, or growing the party, is a booking made now.
    for (const body of [{ party_size: 2 }, { start_at: at('22', '20:45') }]) {
      const res = await patch(svc, r.id, body);
      assert.is(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.is(res.body.error.details.reason, 'TOO_LATE');
    }
    assert.is((await read(svc, r.id)).party_size, 1);
  },
);

t.run();
