// Business rules checked on the write side, not assumed (issues 11 and 18): the room a shift requires,
// a discount's validity, and the calendar date customer stats report. A refusal is 422 with
// `details.reason` and leaves nothing behind: no reservation, no held seating, a free external_id.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { capacityStream } from '../../commands/availability/capacity-events';
import { OpenApiChecker } from '../helpers/openapi';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: ReservationService; openapi: OpenApiChecker }>('reservations: business rules');

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async ({ svc }) => svc.close());

const POST = '/api/partner/v1/reservations';
const PATCH = '/api/partner/v1/reservations/{id}';
/** June 2026: the 3rd is a Wednesday, the 6th a Saturday. */
const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;
const patch = (svc: TestService, id: string, body: unknown) =>
  svc.api('PATCH', `/reservations/${id}`, { token: TOKENS.full, body });
const byExternalId = async (svc: TestService, externalId: string) =>
  (await svc.api('GET', `/reservations?external_id=${externalId}`, { token: TOKENS.full })).body.pagination
    .total;
const events = async (svc: TestService, day: string) =>
  (await svc.rt.events.readStream(capacityStream('rest_demo', `2026-06-${day}`))).map((e) => e.type);

/** Refused with this reason, and nothing left: no reservation, no capacity event, the external_id free. */
async function refusedLeavingNothing(
  ctx: { svc: ReservationService; openapi: OpenApiChecker },
  body: Record<string, unknown>,
  reason: string,
) {
  const { svc, openapi } = ctx;
  const externalId = `refused-${reason}-${Math.random().toString(36).slice(2, 8)}`;
  const day = (body.start_at as string).slice(8, 10);
  const before = await events(svc, day);
  const res = await create(svc, { ...body, external_id: externalId });
  assert.is(res.status, 422, JSON.stringify(res.body));
  assert.is(res.body.error.code, 'VALIDATION_ERROR');
  assert.is(res.body.error.details.reason, reason);
  openapi.check('POST', POST, res);
  assert.is(await byExternalId(svc, externalId), 0);
  assert.equal(await events(svc, day), before);
  assert.equal(await svc.rt.events.readStream(`reservation-external-id-rest_demo-${externalId}`), []);
  return { res, externalId };
}

// ---- room selection (shift_tasting, 17:00–18:00, requires it) -----------------------------------

t(
  'POST /reservations without room_id on a room-selection shift: 422 ROOM_SELECTION_REQUIRED, nothing created',
  async (ctx) => {
    const { svc } = ctx;
    const tasting = { start_at: at('03', '17:00'), party_size: 2 };
    const { externalId } = await refusedLeavingNothing(ctx, tasting, 'ROOM_SELECTION_REQUIRED');
    await refusedLeavingNothing(ctx, { ...tasting, shift_id: 'shift_tasting' }, 'ROOM_SELECTION_REQUIRED');
    // Naming tables does not stand for the room; bypass_availability does not waive it either.
    await refusedLeavingNothing(ctx, { ...tasting, table_ids: ['tbl_2a'] }, 'ROOM_SELECTION_REQUIRED');
    await refusedLeavingNothing(
      ctx,
      { ...tasting, shift_id: 'shift_tasting', bypass_availability: true },
      'ROOM_SELECTION_REQUIRED',
    );
    await refusedLeavingNothing(
      ctx,
      { ...tasting, start_at: at('03', '17:05'), shift_id: 'shift_tasting', bypass_availability: true },
      'ROOM_SELECTION_REQUIRED',
    );
    // An unknown room stays UNKNOWN_ROOM.
    await refusedLeavingNothing(ctx, { ...tasting, room_id: 'room_nope' }, 'UNKNOWN_ROOM');
    // The same request with the room, and the same external_id, goes through.
    const ok = await create(svc, {
      ...tasting,
      room_id: 'room_terrace',
      external_id: externalId,
      party_size: 4,
    });
    assert.is(ok.status, 201);
    assert.equal(ok.body.data.room, { id: 'room_terrace', name: 'Terrace' });
    assert.is(ok.body.data.shift.id, 'shift_tasting');
    assert.is(await byExternalId(svc, externalId), 1);
  },
);

t(
  'POST /availability/check says why: ROOM_SELECTION_REQUIRED, then bookable with a room',
  async ({ svc, openapi }) => {
    const check = (body: Record<string, unknown>) =>
      svc.api('POST', '/availability/check', {
        token: TOKENS.full,
        body: { start_at: at('04', '17:30'), party_size: 2, ...body },
      });
    const without = await check({});
    assert.is(without.status, 200);
    openapi.check('POST', '/api/partner/v1/availability/check', without);
    assert.equal(without.body.data, {
      available: false,
      failure_reason: 'ROOM_SELECTION_REQUIRED',
      slot: null,
    });
    assert.is(
      (await check({ shift_id: 'shift_tasting' })).body.data.failure_reason,
      'ROOM_SELECTION_REQUIRED',
    );
    const withRoom = await check({ room_id: 'room_main' });
    openapi.check('POST', '/api/partner/v1/availability/check', withRoom);
    assert.is(withRoom.body.data.available, true);
    assert.is(withRoom.body.data.slot.room_id, 'room_main');
    // The search offers the shift's starts once per room, each with its room_id to pass on.
    const search = await svc.api(
      'GET',
      `/availability?start_at_from=${encodeURIComponent(at('04', '17:30'))}&start_at_to=${encodeURIComponent(at('04', '17:30'))}&party_size=2&shift_id=shift_tasting`,
      { token: TOKENS.full },
    );
    assert.equal(
      search.body.data.slots.map((s: { room_id: string }) => s.room_id),
      ['room_main'],
    );
  },
);

t(
  'PATCH onto a room-selection shift without room_id: 422, the reservation and its seating unchanged',
  async ({ svc, openapi }) => {
    const r = (await create(svc, { start_at: at('05', '19:00'), external_id: 'move-me' })).body.data;
    assert.is(r.room.id, 'room_main');
    const before = await events(svc, '05');
    for (const body of [
      { start_at: at('05', '17:00') },
      { start_at: at('05', '17:00'), shift_id: 'shift_tasting' },
    ]) {
      const res = await patch(svc, r.id, body);
      assert.is(res.status, 422);
      assert.is(res.body.error.details.reason, 'ROOM_SELECTION_REQUIRED');
      openapi.check('PATCH', PATCH, res);
    }
    assert.equal(await events(svc, '05'), before);
    const same = (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data;
    assert.equal(same, r);
    // With a room it moves; a later change of party keeps the chosen room.
    const moved = await patch(svc, r.id, { start_at: at('05', '17:00'), room_id: 'room_main' });
    assert.is(moved.status, 200);
    assert.is(moved.body.data.shift.id, 'shift_tasting');
    assert.is(moved.body.data.room.id, 'room_main');
    const bigger = await patch(svc, r.id, { party_size: 3 });
    assert.is(bigger.status, 200);
    assert.is(bigger.body.data.room.id, 'room_main');
    // Back to a shift without room selection: no room needed.
    assert.is((await patch(svc, r.id, { start_at: at('05', '20:00') })).status, 200);
  },
);

// ---- discounts -----------------------------------------------------------------------------------

t(
  'a discount must apply to the start: inactive, dates, day of week and hours each refused by name',
  async (ctx) => {
    const { svc } = ctx;
    const dinner = { start_at: at('03', '21:00'), party_size: 2 };
    const { res } = await refusedLeavingNothing(
      ctx,
      { ...dinner, discount_id: 'disc_inactive' },
      'DISCOUNT_INACTIVE',
    );
    assert.is(res.body.error.details.discount_id, 'disc_inactive');
    await refusedLeavingNothing(ctx, { ...dinner, discount_id: 'disc_mid_june' }, 'DISCOUNT_NOT_STARTED');
    await refusedLeavingNothing(
      ctx,
      { ...dinner, start_at: at('25', '21:00'), discount_id: 'disc_mid_june' },
      'DISCOUNT_ENDED',
    );
    // disc_1: Monday to Friday, 12:00 to 14:00. A Saturday lunch, then a Wednesday dinner.
    const saturday = await refusedLeavingNothing(
      ctx,
      { start_at: at('06', '12:30'), party_size: 2, discount_id: 'disc_1' },
      'DISCOUNT_WRONG_DAY',
    );
    assert.equal(
      [saturday.res.body.error.details.day_of_week, saturday.res.body.error.details.days_of_week],
      [6, [1, 2, 3, 4, 5]],
    );
    const evening = await refusedLeavingNothing(
      ctx,
      { ...dinner, discount_id: 'disc_1' },
      'DISCOUNT_OUTSIDE_HOURS',
    );
    assert.is(evening.res.body.error.details.local_time, '21:00');
    // An unknown id keeps its own reason.
    await refusedLeavingNothing(ctx, { ...dinner, discount_id: 'disc_nope' }, 'UNKNOWN_DISCOUNT');
    // Valid ones are attached: the boundaries are inclusive.
    const lunch = await create(svc, { start_at: at('03', '14:00'), party_size: 2, discount_id: 'disc_1' });
    assert.is(lunch.status, 201);
    assert.is(lunch.body.data.discount.id, 'disc_1');
    const june = await create(svc, {
      start_at: at('20', '21:00'),
      party_size: 2,
      discount_id: 'disc_mid_june',
    });
    assert.is(june.status, 201);
  },
);

t(
  'PATCH: a new discount, or a kept one when the start moves, is checked against the new start',
  async ({ svc, openapi }) => {
    const r = (await create(svc, { start_at: at('10', '21:00'), discount_id: 'disc_dinner' })).body.data;
    assert.is(r.discount.id, 'disc_dinner');
    const inactive = await patch(svc, r.id, { discount_id: 'disc_inactive' });
    assert.is(inactive.status, 422);
    assert.is(inactive.body.error.details.reason, 'DISCOUNT_INACTIVE');
    openapi.check('PATCH', PATCH, inactive);
    // Moved to lunch, the dinner discount no longer applies; nothing changes, the seating included.
    const before = await events(svc, '10');
    const toLunch = await patch(svc, r.id, { start_at: at('10', '12:30') });
    assert.is(toLunch.status, 422);
    assert.is(toLunch.body.error.details.reason, 'DISCOUNT_OUTSIDE_HOURS');
    assert.equal(await events(svc, '10'), before);
    assert.equal((await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data, r);
    // Dropping it, or taking the lunch one, makes the move valid.
    const withLunch = await patch(svc, r.id, { start_at: at('10', '12:30'), discount_id: 'disc_1' });
    assert.is(withLunch.status, 200);
    assert.is(withLunch.body.data.discount.id, 'disc_1');
    const dropped = await patch(svc, r.id, { start_at: at('10', '20:00'), discount_id: null });
    assert.is(dropped.status, 200);
    assert.is(dropped.body.data.discount, null);
  },
);

// ---- customer stats ------------------------------------------------------------------------------

t(
  'last_reservation_date is the calendar date of a start after midnight, not its service day',
  async ({ svc }) => {
    // shift_late runs 23:00–00:30: 00:30 on the 12th belongs to the service day of the 11th.
    const r = await create(svc, {
      start_at: at('12', '00:30'),
      party_size: 2,
      customer: { name: 'Night Owl', email: 'owl@example.com' },
    });
    assert.is(r.status, 201);
    assert.is(r.body.data.shift.id, 'shift_late');
    const customer = await svc.api('GET', `/customers/${r.body.data.customer.id}`, { token: TOKENS.full });
    assert.is(customer.body.data.stats.last_reservation_date, '2026-06-12');
  },
);

t.run();
