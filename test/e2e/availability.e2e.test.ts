import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { capacityStream, type SeatingHeldData } from '../../commands/availability/capacity-events';
import { suspendRestaurant } from '../../commands/restaurants/handler';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { ANY } from '../../src/ports/event-store';
import { OpenApiChecker } from '../helpers/openapi';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const TOKEN = 'couvert_pk_avail_000000000000000000000000001';
const CATALOG_ONLY = 'couvert_pk_catonly_0000000000000000000000002';
const ROOMS = 'couvert_pk_rooms_000000000000000000000000003';
const BOOKER = 'couvert_pk_booker_00000000000000000000000004';
const P = '/api/partner/v1';
const NOW = '2026-05-01T08:00:00Z';

const dinner = {
  id: 'shift_dinner',
  name: 'Dinner',
  start_time: '19:00',
  end_time: '22:00',
  days_of_week: [1, 2, 3, 4, 5, 6, 7],
  slot_interval_minutes: 15,
  duration_minutes: 90,
  max_covers: 60,
  requires_room_selection: false,
  requires_approval: false,
  deposit: null,
};

// The reference restaurant: one 2-seat table, 90-minute seatings every 15 minutes from 19:00.
const bootstrap = demoBootstrap(
  {
    rooms: [{ id: 'room_main', name: 'Main room' }],
    tables: [{ id: 'tbl_1', name: '1', room_id: 'room_main', min_pax: 1, max_pax: 2 }],
    shifts: [dinner],
  },
  [
    { id: 'key_avail', token: TOKEN, scopes: ['AVAILABILITY_READ'] },
    { id: 'key_catalog', token: CATALOG_ONLY, scopes: ['CATALOG_READ'] },
    {
      id: 'key_booker',
      token: BOOKER,
      scopes: ['AVAILABILITY_READ', 'RESERVATIONS_WRITE', 'RESERVATIONS_READ', 'RESERVATIONS_CANCEL'],
    },
  ],
);
// A second restaurant whose dinner requires room selection.
bootstrap.restaurants.push({
  ...demoBootstrap(
    {
      rooms: [
        { id: 'room_main', name: 'Main room' },
        { id: 'room_terrace', name: 'Terrace' },
      ],
      tables: [
        { id: 'm1', room_id: 'room_main', max_pax: 2 },
        { id: 't1', room_id: 'room_terrace', max_pax: 4 },
      ],
      shifts: [{ ...dinner, end_time: '19:30', requires_room_selection: true }],
    },
    [{ id: 'key_rooms', token: ROOMS, scopes: ['AVAILABILITY_READ'] }],
  ).restaurants[0],
  id: 'rest_rooms',
  slug: 'rooms',
} as (typeof bootstrap.restaurants)[number]);

const t = suite<{ svc: TestService; openapi: OpenApiChecker }>('availability routes');

t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap, clock: new FixedClock(NOW) });
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async (ctx) => {
  await ctx.svc.close();
});

const enc = encodeURIComponent;
const search = (svc: TestService, q: Record<string, string | number>, token = TOKEN) =>
  svc.api(
    'GET',
    `/availability?${Object.entries(q)
      .map(([k, v]) => `${k}=${enc(String(v))}`)
      .join('&')}`,
    { token },
  );
const evening = { start_at_from: '2026-05-01T18:00:00+02:00', start_at_to: '2026-05-01T23:00:00+02:00' };
const starts = (res: { body: { data: { slots: { start_at: string }[] } } }) =>
  res.body.data.slots.map((s) => s.start_at.slice(11, 16));

async function hold(svc: TestService, o: Partial<SeatingHeldData> & { start_at: string; end_at: string }) {
  const data: SeatingHeldData = {
    restaurant_id: 'rest_demo',
    service_date: o.start_at.slice(0, 10),
    reservation_id: 'res_1',
    shift_id: 'shift_dinner',
    room_id: null,
    table_ids: ['tbl_1'],
    party_size: 2,
    at: NOW,
    ...o,
  };
  const r = await svc.rt.events.append(
    capacityStream(data.restaurant_id, data.service_date),
    [{ type: 'SeatingHeld', data: data as unknown as Record<string, unknown> }],
    ANY,
  );
  await svc.rt.settle(r.position);
}

async function release(svc: TestService, reservationId: string, serviceDate: string) {
  const r = await svc.rt.events.append(
    capacityStream('rest_demo', serviceDate),
    [
      {
        type: 'SeatingReleased',
        data: {
          restaurant_id: 'rest_demo',
          service_date: serviceDate,
          reservation_id: reservationId,
          reason: 'test',
          at: NOW,
        },
      },
    ],
    ANY,
  );
  await svc.rt.settle(r.position);
}

t(
  'reference case: after a 19:00 booking, 19:00–20:15 are gone and 20:30 is offered',
  async ({ svc, openapi }) => {
    const before = await search(svc, { ...evening, party_size: 2 });
    assert.is(before.status, 200);
    openapi.check('GET', `${P}/availability`, before);
    assert.is(before.body.data.slots.length, 13);
    assert.equal(before.body.data.slots[0], {
      start_at: '2026-05-01T19:00:00+02:00',
      end_at: '2026-05-01T20:30:00+02:00',
      duration_minutes: 90,
      shift_id: 'shift_dinner',
      room_id: null,
    });
    await hold(svc, { start_at: '2026-05-01T17:00:00.000Z', end_at: '2026-05-01T18:30:00.000Z' });
    const after = await search(svc, { ...evening, party_size: 2 });
    assert.equal(starts(after), ['20:30', '20:45', '21:00', '21:15', '21:30', '21:45', '22:00']);
    const check = async (start_at: string) =>
      (await svc.api('POST', '/availability/check', { token: TOKEN, body: { start_at, party_size: 2 } })).body
        .data;
    assert.equal(await check('2026-05-01T20:15:00+02:00'), {
      available: false,
      failure_reason: 'NO_TABLE',
      slot: null,
    });
    assert.equal(await check('2026-05-01T20:30:00+02:00'), {
      available: true,
      failure_reason: null,
      slot: {
        start_at: '2026-05-01T20:30:00+02:00',
        end_at: '2026-05-01T22:00:00+02:00',
        duration_minutes: 90,
        shift_id: 'shift_dinner',
        room_id: null,
      },
    });
    // Released capacity is offered again.
    await release(svc, 'res_1', '2026-05-01');
    assert.is((await search(svc, { ...evening, party_size: 2 })).body.data.slots.length, 13);
  },
);

t(
  'reference case through the API: POST /reservations takes 19:00, cancelling gives it back',
  async ({ svc }) => {
    const day = { start_at_from: '2026-05-02T18:00:00+02:00', start_at_to: '2026-05-02T23:00:00+02:00' };
    const created = await svc.api('POST', '/reservations', {
      token: BOOKER,
      body: {
        customer: null,
        party_size: 2,
        start_at: '2026-05-02T19:00:00+02:00',
        shift_id: 'shift_dinner',
      },
    });
    assert.is(created.status, 201, created.text);
    // Read your writes: the very next search sees the seating.
    const after = await search(svc, { ...day, party_size: 2 }, BOOKER);
    assert.equal(starts(after), ['20:30', '20:45', '21:00', '21:15', '21:30', '21:45', '22:00']);
    const taken = await svc.api('POST', '/reservations', {
      token: BOOKER,
      body: {
        customer: null,
        party_size: 2,
        start_at: '2026-05-02T20:00:00+02:00',
        shift_id: 'shift_dinner',
      },
    });
    assert.is(taken.status, 422);
    assert.is(taken.body.error.details.reason, 'NO_TABLE');
    const canceled = await svc.api('POST', `/reservations/${created.body.data.id}/cancel`, {
      token: BOOKER,
      body: {},
    });
    assert.is(canceled.status, 200);
    assert.is((await search(svc, { ...day, party_size: 2 }, BOOKER)).body.data.slots.length, 13);
  },
);

t(
  'bounds are inclusive instants; any offset is accepted, answers use the restaurant offset',
  async ({ svc }) => {
    const exact = await search(svc, {
      start_at_from: '2026-05-01T17:00:00Z',
      start_at_to: '2026-05-01T19:30:00+02:00',
      party_size: 2,
    });
    assert.equal(starts(exact), ['19:00', '19:15', '19:30']);
    assert.ok(exact.body.data.slots.every((s: { start_at: string }) => s.start_at.endsWith('+02:00')));
  },
);

t('the offset follows the instant across the DST change', async ({ svc }) => {
  const res = await search(svc, {
    start_at_from: '2026-10-24T21:30:00+02:00',
    start_at_to: '2026-10-25T19:15:00+01:00',
    party_size: 2,
  });
  assert.equal(
    res.body.data.slots.map((s: { start_at: string }) => s.start_at),
    [
      '2026-10-24T21:30:00+02:00',
      '2026-10-24T21:45:00+02:00',
      '2026-10-24T22:00:00+02:00',
      '2026-10-25T19:00:00+01:00',
      '2026-10-25T19:15:00+01:00',
    ],
  );
});

t('party size beyond every table, or a past window, offers nothing', async ({ svc }) => {
  assert.equal((await search(svc, { ...evening, party_size: 3 })).body.data.slots, []);
  const past = await search(svc, {
    start_at_from: '2026-04-30T18:00:00+02:00',
    start_at_to: '2026-04-30T23:00:00+02:00',
    party_size: 2,
  });
  assert.equal(past.body.data.slots, []);
});

t('room selection: one slot per room able to seat the party', async ({ svc, openapi }) => {
  const res = await search(svc, { ...evening, party_size: 2 }, ROOMS);
  openapi.check('GET', `${P}/availability`, res);
  assert.equal(
    res.body.data.slots.map((s: { start_at: string; room_id: string }) => [
      s.start_at.slice(11, 16),
      s.room_id,
    ]),
    [
      ['19:00', 'room_main'],
      ['19:00', 'room_terrace'],
      ['19:15', 'room_main'],
      ['19:15', 'room_terrace'],
      ['19:30', 'room_main'],
      ['19:30', 'room_terrace'],
    ],
  );
  const four = await search(svc, { ...evening, party_size: 4, room_id: 'room_terrace' }, ROOMS);
  assert.equal(
    four.body.data.slots.map((s: { room_id: string }) => s.room_id),
    ['room_terrace', 'room_terrace', 'room_terrace'],
  );
  const none = await search(svc, { ...evening, party_size: 4, room_id: 'room_main' }, ROOMS);
  assert.equal(none.body.data.slots, []);
});

t(
  'unknown shift_id or room_id answers 422 unknown_reference; another restaurant’s ids are unknown',
  async ({ svc, openapi }) => {
    const shift = await search(svc, { ...evening, party_size: 2, shift_id: 'shift_nope' });
    assert.is(shift.status, 422);
    assert.is(shift.body.error.code, 'VALIDATION_ERROR');
    assert.is(shift.body.error.details.reason, 'UNKNOWN_SHIFT');
    assert.equal(issue(shift), {
      path: 'shift_id',
      code: 'unknown_reference',
      message: 'shift_id: this restaurant has no shift with id "shift_nope"',
    });
    openapi.check('GET', `${P}/availability`, shift);
    const room = await search(svc, { ...evening, party_size: 2, room_id: 'room_terrace' });
    assert.is(room.status, 422);
    assert.equal([issue(room)?.path, room.body.error.details.reason], ['room_id', 'UNKNOWN_ROOM']);
    const ok = await search(svc, {
      ...evening,
      party_size: 2,
      shift_id: 'shift_dinner',
      room_id: 'room_main',
    });
    assert.is(ok.body.data.slots.length, 13);
  },
);

const issue = (res: {
  body: { error: { details: { issues: { path: string; code: string; message: string }[] } } };
}) => res.body.error.details.issues[0];

t(
  'validation: missing offset, unencoded +, inverted or too wide window, party_size 0',
  async ({ svc, openapi }) => {
    const noOffset = await search(svc, { ...evening, start_at_from: '2026-05-01T18:00:00', party_size: 2 });
    assert.is(noOffset.status, 400);
    assert.is(noOffset.body.error.code, 'VALIDATION_ERROR');
    assert.is(issue(noOffset)?.path, 'start_at_from');
    assert.match(issue(noOffset)?.message ?? '', /explicit offset/);
    openapi.check('GET', `${P}/availability`, noOffset);
    // The query string's %2B note belongs to query strings: in a JSON body a + is sent as it is.
    const inBody = await svc.api('POST', '/availability/check', {
      token: TOKEN,
      body: { start_at: '2026-05-01T19:00:00', party_size: 2 },
      invalid: true,
    });
    assert.is(inBody.status, 400);
    assert.is(issue(inBody)?.path, 'start_at');
    assert.match(issue(inBody)?.message ?? '', /explicit offset/);
    assert.not.match(issue(inBody)?.message ?? '', /%2B|query string/);
    assert.match(issue(noOffset)?.message ?? '', /encoded as %2B/, 'a query string keeps it');

    const plus = await svc.api(
      'GET',
      `/availability?start_at_from=2026-05-01T18:00:00+02:00&start_at_to=${enc(evening.start_at_to)}&party_size=2`,
      { token: TOKEN },
    );
    assert.is(plus.status, 400);
    assert.is(issue(plus)?.path, 'start_at_from');
    assert.match(issue(plus)?.message ?? '', /URL-encoded as %2B/);

    const inverted = await search(svc, {
      start_at_from: evening.start_at_to,
      start_at_to: evening.start_at_from,
      party_size: 2,
    });
    assert.is(inverted.status, 400);
    assert.equal([issue(inverted)?.path, issue(inverted)?.code], ['start_at_to', 'invalid_range']);
    // Every mistake in one answer: a faulty party_size does not hide the inverted window.
    const both = await search(svc, {
      start_at_from: evening.start_at_to,
      start_at_to: evening.start_at_from,
      party_size: 0,
    });
    assert.is(both.status, 400);
    assert.equal(
      both.body.error.details.issues.map((i: { path: string; code: string }) => [i.path, i.code]),
      [
        ['party_size', 'out_of_range'],
        ['start_at_to', 'invalid_range'],
      ],
    );
    openapi.check('GET', `${P}/availability`, both);
    // A bound that is itself faulty is named once, for what is wrong with it.
    const badBound = await search(svc, { ...evening, start_at_to: 'soon', party_size: 0 });
    assert.equal(
      badBound.body.error.details.issues.map((i: { path: string }) => i.path),
      ['start_at_to', 'party_size'],
    );

    const wide = await search(svc, {
      start_at_from: '2026-05-01T00:00:00+02:00',
      start_at_to: '2026-06-01T00:00:01+02:00',
      party_size: 2,
    });
    assert.is(wide.status, 400);
    assert.match(issue(wide)?.message ?? '', /31 days/);
    const month = await search(svc, {
      start_at_from: '2026-05-01T00:00:00+02:00',
      start_at_to: '2026-06-01T00:00:00+02:00',
      party_size: 2,
    });
    assert.is(month.status, 200);
    assert.is(month.body.data.slots.length, 31 * 13);

    const zero = await search(svc, { ...evening, party_size: 0 });
    assert.is(zero.status, 400);
    assert.equal([issue(zero)?.path, issue(zero)?.code], ['party_size', 'out_of_range']);
    const word = await search(svc, { ...evening, party_size: 'two' });
    assert.is(word.status, 400);
    const missing = await svc.api('GET', '/availability?party_size=2', { token: TOKEN });
    assert.is(missing.status, 400);
    assert.equal(
      missing.body.error.details.issues.map((i: { path: string; code: string }) => [i.path, i.code]),
      [
        ['start_at_from', 'required'],
        ['start_at_to', 'required'],
      ],
    );
    const unknown = await search(svc, { ...evening, party_size: 2, partysize: 2 });
    assert.is(unknown.status, 400);
    assert.equal(issue(unknown), {
      path: 'partysize',
      code: 'unknown_parameter',
      message:
        'partysize is not a parameter of this operation (it takes start_at_from, start_at_to, party_size, room_id, shift_id)',
    });
  },
);

t('POST /availability/check: failure reasons a partner can act on', async ({ svc, openapi }) => {
  const check = async (body: Record<string, unknown>, token = TOKEN) => {
    const res = await svc.api('POST', '/availability/check', { token, body });
    openapi.check('POST', `${P}/availability/check`, res);
    return res;
  };
  const reason = async (body: Record<string, unknown>) =>
    (await check({ start_at: '2026-05-01T19:00:00+02:00', party_size: 2, ...body })).body.data.failure_reason;
  assert.is(await reason({}), null);
  assert.is(await reason({ start_at: '2026-05-01T19:05:00+02:00' }), 'OUTSIDE_SHIFT');
  assert.is(await reason({ start_at: '2026-05-01T12:00:00+02:00' }), 'OUTSIDE_SHIFT');
  assert.is(await reason({ party_size: 3 }), 'PARTY_SIZE_OUT_OF_RANGE');
  assert.is(await reason({ start_at: '2026-04-30T19:00:00+02:00' }), 'TOO_LATE');
  // An id the restaurant does not have is a mistake in the request, answered like on every route.
  for (const [body, path] of [
    [{ shift_id: 'shift_lunch' }, 'shift_id'],
    [{ room_id: 'room_nope' }, 'room_id'],
  ] as const) {
    const res = await check({ start_at: '2026-05-01T19:00:00+02:00', party_size: 2, ...body });
    assert.equal([res.status, issue(res)?.path, issue(res)?.code], [422, path, 'unknown_reference']);
  }
  assert.is(
    await reason({ start_at: '2026-05-01T17:00:00Z', shift_id: 'shift_dinner', room_id: 'room_main' }),
    null,
  );
  await hold(svc, {
    reservation_id: 'res_2',
    start_at: '2026-05-01T17:30:00.000Z',
    end_at: '2026-05-01T19:00:00.000Z',
  });
  assert.is(await reason({}), 'NO_TABLE');
  await release(svc, 'res_2', '2026-05-01');
  assert.is(await reason({}), null);
});

t(
  'POST /availability/check takes a slot of GET /availability as it is (room_id null)',
  async ({ svc, openapi }) => {
    const [slot] = (await search(svc, { ...evening, party_size: 2 })).body.data.slots;
    assert.is(slot.room_id, null);
    // The fields POST /reservations takes, copied from the slot: its room_id null included.
    const res = await svc.api('POST', '/availability/check', {
      token: TOKEN,
      body: { start_at: slot.start_at, party_size: 2, shift_id: slot.shift_id, room_id: slot.room_id },
    });
    openapi.check('POST', `${P}/availability/check`, res);
    assert.is(res.status, 200, res.text);
    assert.equal(res.body.data, { available: true, failure_reason: null, slot });
  },
);

t(
  'POST /availability/check: the documented failure reasons are the ones a 200 can carry; room_id is passed on',
  async ({ svc }) => {
    const doc = (await svc.api('GET', '/openapi.json')).body;
    const schema =
      doc.paths[`${P}/availability/check`].post.responses['200'].content['application/json'].schema;
    const reasons: string[] = schema.properties.data.properties.failure_reason.enum;
    // An unknown shift_id or room_id is a 422 (tested above); the body has no table_ids.
    for (const never of ['UNKNOWN_SHIFT', 'UNKNOWN_ROOM', 'UNKNOWN_TABLE'])
      assert.not.ok(reasons.includes(never), never);
    assert.ok(reasons.includes('NO_TABLE') && reasons.includes('OUTSIDE_SHIFT'));
    // A room_id asked for a shift without room selection is not in the slot (spec §2.7: null): the
    // document tells the partner to pass their own on, or POST /reservations may seat any room.
    const post = doc.paths[`${P}/availability/check`].post;
    assert.match(post.description, 'the room_id you sent');
    const param = doc.paths[`${P}/availability`].get.parameters.find(
      (x: { name: string }) => x.name === 'room_id',
    );
    assert.match(param.description, 'pass this room_id on');
  },
);

t('POST /availability/check: body validation in the envelope', async ({ svc, openapi }) => {
  // Every body here breaks the documented schema on purpose.
  const post = (body: unknown) =>
    svc.api('POST', '/availability/check', { token: TOKEN, body, invalid: true });
  const noOffset = await post({ start_at: '2026-05-01T19:00:00', party_size: 2 });
  assert.is(noOffset.status, 400);
  assert.is(issue(noOffset)?.path, 'start_at');
  openapi.check('POST', `${P}/availability/check`, noOffset);
  const zero = await post({ start_at: '2026-05-01T19:00:00+02:00', party_size: 0 });
  assert.equal([zero.status, issue(zero)?.path], [400, 'party_size']);
  const extra = await post({ start_at: '2026-05-01T19:00:00+02:00', party_size: 2, table: 'x' });
  assert.equal([extra.status, issue(extra)?.code], [400, 'unknown_property']);
  const empty = await svc.api('POST', '/availability/check', { token: TOKEN });
  assert.is(empty.status, 400);
});

t('scopes: AVAILABILITY_READ is required (403), a token too (401)', async ({ svc, openapi }) => {
  const denied = await search(svc, { ...evening, party_size: 2 }, CATALOG_ONLY);
  assert.is(denied.status, 403);
  assert.is(denied.body.error.code, 'INSUFFICIENT_SCOPE');
  openapi.check('GET', `${P}/availability`, denied);
  const deniedCheck = await svc.api('POST', '/availability/check', {
    token: CATALOG_ONLY,
    body: { start_at: '2026-05-01T19:00:00+02:00', party_size: 2 },
  });
  assert.is(deniedCheck.status, 403);
  const anonymous = await svc.api('GET', `/availability?party_size=2`);
  assert.is(anonymous.status, 401);
  assert.is(anonymous.body.error.code, 'AUTHENTICATION_REQUIRED');
});

t('a suspended restaurant answers 403 RESTAURANT_SUSPENDED', async ({ svc }) => {
  const out = await suspendRestaurant(svc.rt, 'rest_rooms', 'test', operatorMeta('test'));
  await svc.rt.settle(out.position);
  const res = await search(svc, { ...evening, party_size: 2 }, ROOMS);
  assert.is(res.status, 403);
  assert.is(res.body.error.code, 'RESTAURANT_SUSPENDED');
});

t.run();
