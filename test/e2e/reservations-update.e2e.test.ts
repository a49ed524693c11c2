import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { blacklistCustomer } from '../../commands/customers/handler';
import { setPosLock } from '../../commands/reservations/handler-records';
import { updateRestaurant } from '../../commands/restaurants/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const PATH = '/api/partner/v1/reservations/{id}';
const t = suite<{ svc: ReservationService; openapi: OpenApiChecker }>('reservations: update');

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async ({ svc }) => svc.close());

const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;
/** `invalid`: the body breaks the documented schema on purpose. */
const patch = (svc: TestService, id: string, body: unknown, token = TOKENS.full, invalid = false) =>
  svc.api('PATCH', `/reservations/${id}`, { token, body, invalid });
const held = async (svc: TestService, day: string) =>
  (await svc.rt.events.readStream(`capacity-rest_demo-2026-06-${day}`)).map((e) => [
    e.type,
    e.data.reservation_id,
    e.type === 'SeatingHeld' || e.type === 'SeatingMoveHeld' || e.type === 'SeatingMoveConfirmed'
      ? `${(e.data.start_at as string).slice(11, 16)} ${(e.data.table_ids as string[]).join('+')}`
      : e.data.reason,
  ]);

t('omitted fields stay unchanged; given ones change; updated_at moves', async ({ svc, openapi }) => {
  const r = (await create(svc, { start_at: at('15', '19:00'), custom_message: 'hello', tags: ['a'] })).body
    .data;
  svc.clock.advance(60);
  const res = await patch(svc, r.id, { allergies: 'gluten', tags: ['a', 'b'], metadata: { pos: 1 } });
  assert.is(res.status, 200);
  openapi.check('PATCH', PATH, res);
  const after = res.body.data;
  assert.is(after.custom_message, 'hello');
  assert.is(after.allergies, 'gluten');
  assert.equal(after.tags, ['a', 'b']);
  assert.equal(after.metadata, { pos: 1 });
  assert.is(after.start_at, r.start_at);
  assert.is(after.updated_at, '2026-06-02T10:01:00.000Z');
  assert.is(after.created_at, r.created_at);
  // An empty patch, or the current values again, changes nothing.
  svc.clock.advance(60);
  const same = await patch(svc, r.id, { allergies: 'gluten' });
  assert.is(same.body.data.updated_at, '2026-06-02T10:01:00.000Z');
  const empty = await patch(svc, r.id, {});
  assert.equal(empty.body.data, same.body.data);
});

t(
  'metadata, tags and attached_files are replaced whole, as the document says (keys are not merged)',
  async ({ svc }) => {
    const r = (
      await create(svc, {
        start_at: at('15', '19:30'),
        metadata: { pos: 1, table: 'A' },
        tags: ['a', 'b'],
        attached_files: ['menu.pdf'],
      })
    ).body.data;
    const res = await patch(svc, r.id, { metadata: { pos: 2 }, tags: ['c'], attached_files: [] });
    assert.is(res.status, 200);
    assert.equal(res.body.data.metadata, { pos: 2 });
    assert.equal(res.body.data.tags, ['c']);
    assert.equal(res.body.data.attached_files, []);
    // A partner used to Stripe's metadata (merged, null deletes a key) reads how this one behaves.
    const doc = (await svc.api('GET', '/openapi.json')).body;
    for (const op of [doc.paths[PATH].patch, doc.paths['/api/partner/v1/reservations'].post]) {
      const props = op.requestBody.content['application/json'].schema.properties;
      assert.match(props.metadata.description ?? '', /PATCH replaces the whole object/);
      assert.match(props.tags.description ?? '', /PATCH replaces the whole list/);
      assert.match(props.attached_files.description ?? '', /PATCH replaces the whole list/);
    }
  },
);

t(
  'a move within the day rechecks capacity, holds the new seating beside the old until the update is recorded, then replaces it; guests keep their table',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('16', '19:00') })).body.data;
    assert.equal(
      r.tables.map((x: { id: string }) => x.id),
      ['tbl_2a'],
    );
    const moved = await patch(svc, r.id, { start_at: at('16', '20:00') });
    assert.is(moved.status, 200);
    assert.is(moved.body.data.start_at, '2026-06-16T20:00:00+02:00');
    assert.is(moved.body.data.end_at, '2026-06-16T21:30:00+02:00');
    assert.equal(
      moved.body.data.tables.map((x: { id: string }) => x.id),
      ['tbl_2a'],
    );
    assert.equal(await held(svc, '16'), [
      ['SeatingHeld', r.id, '19:00 tbl_2a'],
      ['SeatingMoveHeld', r.id, '20:00 tbl_2a'],
      ['SeatingMoveConfirmed', r.id, '20:00 tbl_2a'],
    ]);
    // A bigger party no longer fits tbl_2a: the best free fit is taken instead.
    const bigger = await patch(svc, r.id, { party_size: 4 });
    assert.equal(
      bigger.body.data.tables.map((x: { id: string }) => x.id),
      ['tbl_4'],
    );
    assert.is(bigger.body.data.party_size, 4);
  },
);

t(
  'a reservation in a chosen room (room-selection shift) stays in that room when its party changes',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('16', '17:00'), party_size: 4, room_id: 'room_terrace' }))
      .body.data;
    assert.equal(r.room, { id: 'room_terrace', name: 'Terrace' });
    assert.is((await patch(svc, r.id, { party_size: 5 })).body.data.room.id, 'room_terrace');
    // The terrace has no table for 2: refused, rather than moved to another room behind the guest's back.
    const smaller = await patch(svc, r.id, { party_size: 2 });
    assert.is(smaller.status, 422);
    assert.is(smaller.body.error.details.reason, 'NO_TABLE');
    // Naming the room moves it.
    const moved = await patch(svc, r.id, { party_size: 2, room_id: 'room_main' });
    assert.is(moved.body.data.room.id, 'room_main');
  },
);

t(
  'a move to another day holds there first, confirms it after the update, then releases the old day',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('17', '19:00') })).body.data;
    const res = await patch(svc, r.id, { start_at: at('18', '21:00') });
    assert.is(res.status, 200);
    assert.equal(await held(svc, '17'), [
      ['SeatingHeld', r.id, '19:00 tbl_2a'],
      ['SeatingReleased', r.id, 'MOVED'],
    ]);
    assert.equal(await held(svc, '18'), [
      ['SeatingMoveHeld', r.id, '21:00 tbl_2a'],
      ['SeatingMoveConfirmed', r.id, '21:00 tbl_2a'],
    ]);
  },
);

t('a move to a full slot is 422 and changes nothing, capacity included', async ({ svc, openapi }) => {
  const day = '19';
  // tbl_8 is the only table for 7.
  const big = (await create(svc, { start_at: at(day, '19:00'), party_size: 7 })).body.data;
  const other = (await create(svc, { start_at: at(day, '21:00'), party_size: 7 })).body.data;
  const before = await held(svc, day);
  const res = await patch(svc, other.id, { start_at: at(day, '19:30') });
  assert.is(res.status, 422);
  assert.is(res.body.error.details.reason, 'NO_TABLE');
  openapi.check('PATCH', PATH, res);
  assert.equal(await held(svc, day), before);
  assert.is(
    (await svc.api('GET', `/reservations/${other.id}`, { token: TOKENS.full })).body.data.start_at,
    other.start_at,
  );
  // Explicit tables are checked too.
  const taken = await patch(svc, other.id, { table_ids: ['tbl_8'], start_at: at(day, '20:00') });
  assert.is(taken.body.error.details.reason, 'NO_TABLE');
  assert.ok(big.id);
});

t(
  'a failed move after other writes puts the original seating back (duplicate external_id after the hold)',
  async ({ svc }) => {
    const day = '20';
    await create(svc, { start_at: at(day, '19:00'), external_id: 'taken-20' });
    const r = (await create(svc, { start_at: at(day, '20:00'), external_id: 'mine-20' })).body.data;
    const res = await patch(svc, r.id, { start_at: at(day, '21:00'), external_id: 'taken-20' });
    assert.is(res.status, 409);
    const now = (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data;
    assert.is(now.start_at, r.start_at);
    assert.is(now.external_id, 'mine-20');
  },
);

t('external_id can change: the new value is claimed, the old one freed', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('21', '19:00'), external_id: 'old-21' })).body.data;
  const res = await patch(svc, r.id, { external_id: 'new-21' });
  assert.is(res.body.data.external_id, 'new-21');
  const reuse = await create(svc, { start_at: at('21', '20:00'), external_id: 'old-21' });
  assert.is(reuse.status, 201);
  const clash = await patch(svc, r.id, { external_id: 'old-21' });
  assert.is(clash.status, 409);
});

t(
  'customer: null disconnects, {id} connects, fields update the linked customer, a name creates one',
  async ({ svc }) => {
    const a = (
      await create(svc, {
        start_at: at('22', '19:00'),
        customer: { name: 'Alan Turing', email: 'alan@example.com' },
      })
    ).body.data;
    const alanId = a.customer.id;
    const b = (await create(svc, { start_at: at('22', '20:00'), customer: { id: alanId } })).body.data;
    // Fields without id update the customer itself: every reservation of theirs shows it.
    const renamed = await patch(svc, a.id, {
      customer: { name: 'Alan M. Turing', phone_number: '+447700900123' },
    });
    assert.is(renamed.status, 200);
    assert.is(renamed.body.data.customer.id, alanId);
    assert.is(renamed.body.data.customer.name, 'Alan M. Turing');
    const other = await svc.api('GET', `/reservations/${b.id}`, { token: TOKENS.full });
    assert.is(other.body.data.customer.name, 'Alan M. Turing');
    assert.is(other.body.data.customer.phone_number, '+447700900123');
    const customer = await svc.api('GET', `/customers/${alanId}`, { token: TOKENS.full });
    assert.is(customer.body.data.name, 'Alan M. Turing');
    // null disconnects (the customer stays).
    const off = await patch(svc, a.id, { customer: null });
    assert.is(off.body.data.customer, null);
    assert.is((await svc.api('GET', `/customers/${alanId}`, { token: TOKENS.full })).status, 200);
    // Fields without a name and nobody linked: 422.
    const nameless = await patch(svc, a.id, { customer: { email: 'x@example.com' } });
    assert.is(nameless.status, 422);
    assert.is(nameless.body.error.details.reason, 'CUSTOMER_NAME_REQUIRED');
    // A name creates and connects one.
    const created = await patch(svc, a.id, { customer: { name: 'Joan Clarke', email: 'joan@example.com' } });
    assert.is(created.body.data.customer.name, 'Joan Clarke');
    assert.is.not(created.body.data.customer.id, alanId);
    // {id} connects an existing customer; unknown ids are 422.
    const back = await patch(svc, a.id, { customer: { id: alanId } });
    assert.is(back.body.data.customer.id, alanId);
    const unknown = await patch(svc, a.id, { customer: { id: 'cus_nope' } });
    assert.is(unknown.body.error.details.reason, 'CUSTOMER_NOT_FOUND');
    // Stats follow the links.
    const stats = (await svc.api('GET', `/customers/${alanId}`, { token: TOKENS.full })).body.data.stats;
    assert.is(stats.reservation_count, 2);
  },
);

t(
  'inline details matching a blacklisted customer are refused, with automatic matching off too',
  async ({ svc }) => {
    const banned = (
      await create(svc, {
        start_at: at('24', '19:00'),
        customer: { name: 'Banned Patch', email: 'banned-patch@example.com' },
      })
    ).body.data.customer.id;
    await svc.rt.settle((await blacklistCustomer(svc.rt, banned, null, operatorMeta('test'))).position);
    const r = (await create(svc, { start_at: at('24', '20:00') })).body.data;
    const matching = async (on: boolean) =>
      svc.rt.settle(
        (await updateRestaurant(svc.rt, 'rest_demo', { customer_matching: on }, operatorMeta('test')))
          .position,
      );
    try {
      for (const on of [true, false]) {
        await matching(on);
        const res = await patch(svc, r.id, {
          customer: { name: 'Not Banned', email: 'BANNED-patch@example.com' },
        });
        assert.is(res.status, 422, `matching ${on}`);
        assert.is(res.body.error.details.reason, 'CUSTOMER_BLACKLISTED');
      }
    } finally {
      await matching(true);
    }
    const still = await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full });
    assert.is(still.body.data.customer, null);
    const twins = await svc.api('GET', '/customers?email=banned-patch%40example.com', { token: TOKENS.full });
    assert.is(twins.body.data.length, 1);
  },
);

t(
  'a POS service lock answers 409 RESOURCE_CONFLICT with details.locked_fields; other fields still change',
  async ({ svc, openapi }) => {
    const r = (await create(svc, { start_at: at('23', '19:00') })).body.data;
    await svc.rt.settle(
      (await setPosLock(svc.rt, null, r.id, ['party_size', 'table_ids'], operatorMeta('pos'))).position,
    );
    const res = await patch(svc, r.id, { party_size: 3, custom_message: 'x' });
    assert.is(res.status, 409);
    assert.is(res.body.error.code, 'RESOURCE_CONFLICT');
    assert.equal(res.body.error.details.locked_fields, ['party_size']);
    openapi.check('PATCH', PATH, res);
    assert.is(
      (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data.custom_message,
      null,
    );
    // The locked value sent unchanged is not a change.
    assert.is((await patch(svc, r.id, { party_size: 2, custom_message: 'ok' })).status, 200);
    // A move keeps locked tables: tbl_2a is free at 20:00, so it works; at a time it is taken, it fails.
    assert.equal(
      (await patch(svc, r.id, { start_at: at('23', '20:00') })).body.data.tables.map(
        (x: { id: string }) => x.id,
      ),
      ['tbl_2a'],
    );
    await create(svc, { start_at: at('23', '21:30'), table_ids: ['tbl_2a'] });
    const blocked = await patch(svc, r.id, { start_at: at('23', '21:00') });
    assert.is(blocked.status, 422);
    assert.is(blocked.body.error.details.reason, 'NO_TABLE');
    // Cleared, the change goes through.
    await svc.rt.settle((await setPosLock(svc.rt, null, r.id, [], operatorMeta('pos'))).position);
    assert.is((await patch(svc, r.id, { party_size: 3 })).body.data.party_size, 3);
  },
);

t(
  'a POS lock on the customer refuses inline details that would create one, and no customer is written',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('25', '19:00') })).body.data;
    await svc.rt.settle((await setPosLock(svc.rt, null, r.id, ['customer'], operatorMeta('pos'))).position);
    const res = await patch(svc, r.id, {
      customer: { name: 'Locked Out', email: 'locked-out@example.com' },
      custom_message: 'x',
    });
    assert.is(res.status, 409);
    assert.equal(res.body.error.details.locked_fields, ['customer']);
    const now = (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data;
    assert.is(now.customer, null);
    assert.is(now.custom_message, null);
    // Refused before anything was written: no customer came of it.
    const found = await svc.api('GET', '/customers?email=locked-out@example.com', { token: TOKENS.full });
    assert.equal(found.body.data, []);
  },
);

t(
  "a POS lock on the customer also holds the linked customer's details: a PATCH editing them is 409, nothing written",
  async ({ svc, openapi }) => {
    const r = (
      await create(svc, {
        start_at: at('25', '20:00'),
        customer: { name: 'Grace Hopper', email: 'grace@example.com' },
      })
    ).body.data;
    const customerId = r.customer.id;
    await svc.rt.settle((await setPosLock(svc.rt, null, r.id, ['customer'], operatorMeta('pos'))).position);
    const res = await patch(svc, r.id, {
      customer: { name: 'Grace B. Hopper', phone_number: '+447700900456' },
      custom_message: 'x',
    });
    assert.is(res.status, 409, res.text);
    openapi.check('PATCH', PATH, res);
    assert.is(res.body.error.code, 'RESOURCE_CONFLICT');
    assert.equal(res.body.error.details.locked_fields, ['customer']);
    const customer = (await svc.api('GET', `/customers/${customerId}`, { token: TOKENS.full })).body.data;
    assert.is(customer.name, 'Grace Hopper');
    assert.is(customer.phone_number, null);
    assert.is(
      (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data.custom_message,
      null,
    );
    // The details the customer already has are no change; other fields still change.
    const same = await patch(svc, r.id, { customer: { name: 'Grace Hopper' }, custom_message: 'ok' });
    assert.is(same.status, 200, same.text);
    assert.is(same.body.data.customer.name, 'Grace Hopper');
    assert.is(same.body.data.custom_message, 'ok');
  },
);

t(
  'a canceled reservation cannot move; unknown properties are 400; PATCH needs RESERVATIONS_WRITE',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('24', '19:00') })).body.data;
    await svc.api('POST', `/reservations/${r.id}/cancel`, { token: TOKENS.full, body: {} });
    const moved = await patch(svc, r.id, { party_size: 3 });
    assert.is(moved.status, 422);
    assert.is(moved.body.error.details.reason, 'RESERVATION_CANCELED');
    assert.is((await patch(svc, r.id, { custom_message: 'noted' })).status, 200);
    const unknown = await patch(svc, r.id, { colour: 'red' }, TOKENS.full, true);
    assert.is(unknown.status, 400);
    assert.is(unknown.body.error.details.issues[0].code, 'unknown_property');
    assert.is((await patch(svc, r.id, { initial_status: 'SEATED' }, TOKENS.full, true)).status, 400);
    assert.is((await patch(svc, r.id, { custom_message: 'x' }, TOKENS.readOnly)).status, 403);
    assert.is((await patch(svc, 'res_nope', { custom_message: 'x' })).status, 404);
  },
);

t(
  'a forced reservation is moved without the capacity check only by a token that may force',
  async ({ svc }) => {
    // The only table for 5 is taken at 20:00; a walk-in forced at 15:00 (off the grid) holds it then.
    const booked = await create(svc, { start_at: at('26', '20:00'), party_size: 5 });
    assert.is(booked.status, 201, booked.text);
    const forced = await create(svc, {
      start_at: at('26', '15:00'),
      party_size: 5,
      shift_id: 'shift_dinner',
      bypass_availability: true,
    });
    assert.is(forced.status, 201, forced.text);
    const id = forced.body.data.id;
    // TOKENS.noCancel writes reservations but lacks RESERVATIONS_FORCE_INSERT: its move is checked.
    const moved = await patch(svc, id, { start_at: at('26', '20:00') }, TOKENS.noCancel);
    assert.is(moved.status, 422, moved.text);
    assert.is(moved.body.error.details.reason, 'NO_TABLE');
    const unchanged = (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;
    assert.is(unchanged.start_at, at('26', '15:00'));
    // What needs no seating change is not a force: allowed.
    assert.is((await patch(svc, id, { custom_message: 'walk-in' }, TOKENS.noCancel)).status, 200);
    // A token that may force still moves it, as it could have created it there.
    const forcedMove = await patch(svc, id, { start_at: at('26', '20:00') }, TOKENS.full);
    assert.is(forcedMove.status, 200, forcedMove.text);
    assert.is(forcedMove.body.data.start_at, at('26', '20:00'));
  },
);

t.run();
