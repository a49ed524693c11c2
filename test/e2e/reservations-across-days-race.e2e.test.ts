// Two service days on one table at the same instant (docs/RESERVATIONS.md, "Seatings of neighbouring
// service days"): the night's 05:30 seating (service day D, to 07:00 on D+1) and the next morning's
// 06:00 (service day D+1), each appended to its own day's capacity stream. One request is held
// between its decision and its append while the other is made whole: only one of the two may stand.
// Then the fact that lets a restaurant whose seatings never crossed midnight skip the neighbouring
// days: it must be known before any crossing seating exists, whatever made it cross, and survive a
// restart (the shortened night shift: reservations-across-days.e2e.test.ts).
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createReservation } from '../../commands/reservations/handler-create';
import { updateReservation } from '../../commands/reservations/handler-update';
import { nightFact } from '../../commands/reservations/night-seatings';
import { updateRestaurant } from '../../commands/restaurants/handler';
import type { EventStore } from '../../src/ports/event-store';
import type { Runtime } from '../../src/runtime';
import { withHook } from '../helpers/hooked-events';
import {
  create,
  dinnerShift,
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';

const shift = { ...dinnerShift, slot_interval_minutes: 30, duration_minutes: 90, max_covers: null };
const night = { ...shift, id: 'shift_night', name: 'Night', start_time: '22:00', end_time: '05:30' };
// The day shift seats a party of 4 or more for 8 hours: a forced 23:30 runs into the next morning.
const day = {
  ...shift,
  id: 'shift_day',
  name: 'Day',
  start_time: '06:00',
  end_time: '21:30',
  durations_by_party_size: [{ max_party_size: 2, duration_minutes: 90 }],
  duration_minutes: 480,
};
const tables = [{ id: 'tbl_only', name: 'Only', room_id: 'room_main', min_pax: 1, max_pax: 4 }];

const restaurant = {
  _id: 'rest_demo',
  timezone: 'Europe/Paris',
  currency: 'EUR',
  country_code: 'FR',
  customer_matching: true,
};
const meta = { actor: 'test', restaurant_id: 'rest_demo' };
const at = (d: string, hhmm: string) => `2026-06-${d}T${hhmm}:00+02:00`;

/** The runtime whose first append of a seating on `day`'s capacity stream first runs `meanwhile`. */
const pausedBeforeHold = (rt: Runtime, d: string, meanwhile: () => Promise<void>, type = 'SeatingHeld') =>
  withHook(
    rt,
    (stream, batch) => stream === `capacity-rest_demo-2026-06-${d}` && batch.some((e) => e.type === type),
    meanwhile,
  );

const active = async (svc: ReservationService) =>
  (await svc.api('GET', '/reservations?status=CONFIRMED&per_page=100', { token: TOKENS.full })).body.data as {
    id: string;
    start_at: string;
  }[];

/** Which capacity streams a store was asked to read (the neighbouring days a booking read). */
function readsOf(rt: Runtime): { rt: Runtime; streams: string[] } {
  const streams: string[] = [];
  const real = rt.events;
  const events: EventStore = {
    kind: real.kind,
    append: (s, b, e, o) => real.append(s, b, e, o),
    readStream: (s, o) => {
      streams.push(s);
      return real.readStream(s, o);
    },
    readAll: (o) => real.readAll(o),
    subscribe: (o) => real.subscribe(o),
    headPosition: () => real.headPosition(),
    close: () => real.close(),
  };
  return { rt: { ...rt, events }, streams };
}

const t = suite<{ svc: ReservationService }>('reservations: two service days at the same instant');
t.before(async (ctx) => {
  ctx.svc = await startReservationService({
    bootstrap: reservationBootstrap({ tables, shifts: [night, day] }),
  });
});
t.after(async ({ svc }) => svc.close());

t(
  'the night’s seating decided first, the morning’s booked meanwhile: the night’s is refused',
  async ({ svc }) => {
    let morning: Awaited<ReturnType<typeof create>> | null = null;
    // The night of the 10th (05:30 on the 11th, to 07:00) decided, held back before its append while
    // the 11th's 06:00 is booked whole.
    const rt = pausedBeforeHold(svc.rt, '10', async () => {
      morning = await create(svc, { start_at: at('11', '06:00'), shift_id: 'shift_day' });
    });
    let refused: unknown = null;
    try {
      await createReservation(
        rt,
        restaurant,
        { party_size: 2, start_at: at('11', '05:30'), shift_id: 'shift_night' },
        meta,
      );
    } catch (err) {
      refused = err;
    }
    const m = morning as unknown as Awaited<ReturnType<typeof create>>;
    assert.is(m.status, 201, m.text);
    assert.ok(refused, 'both seatings of the one table were booked');
    assert.is((refused as { status?: number }).status, 422, String(refused));
    assert.is((refused as { reason?: string }).reason, 'NO_TABLE');
    // Its seating, appended before it lost, was given back: the table holds the morning's only.
    const night10 = (await svc.rt.events.readStream('capacity-rest_demo-2026-06-10')).map((e) => e.type);
    assert.equal(night10.slice(-2), ['SeatingHeld', 'SeatingReleased']);
    await svc.rt.settle(await svc.rt.events.headPosition());
    const starts = (await active(svc)).map((r) => r.start_at).filter((s) => s.startsWith('2026-06-11'));
    assert.equal(starts, [at('11', '06:00')]);
  },
);

t(
  'the morning’s seating decided first, the night’s booked meanwhile: the morning’s is refused',
  async ({ svc }) => {
    let late: Awaited<ReturnType<typeof create>> | null = null;
    const rt = pausedBeforeHold(svc.rt, '13', async () => {
      late = await create(svc, { start_at: at('13', '05:30'), shift_id: 'shift_night' });
    });
    let refused: unknown = null;
    try {
      await createReservation(
        rt,
        restaurant,
        { party_size: 2, start_at: at('13', '06:00'), shift_id: 'shift_day' },
        meta,
      );
    } catch (err) {
      refused = err;
    }
    const l = late as unknown as Awaited<ReturnType<typeof create>>;
    assert.is(l.status, 201, l.text);
    assert.ok(refused, 'both seatings of the one table were booked');
    assert.is((refused as { status?: number }).status, 422, String(refused));
    assert.is((refused as { reason?: string }).reason, 'NO_TABLE');
    await svc.rt.settle(await svc.rt.events.headPosition());
    const starts = (await active(svc)).map((r) => r.start_at).filter((s) => s.startsWith('2026-06-13'));
    assert.equal(starts, [at('13', '05:30')]);
  },
);

t(
  'a move onto the night’s seating decided first, the morning’s booked meanwhile: the move is refused, nothing moved',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('23', '12:00'), shift_id: 'shift_day' })).body.data;
    let morning: Awaited<ReturnType<typeof create>> | null = null;
    const rt = pausedBeforeHold(
      svc.rt,
      '24',
      async () => {
        morning = await create(svc, { start_at: at('25', '06:00'), shift_id: 'shift_day' });
      },
      'SeatingMoveHeld',
    );
    let refused: unknown = null;
    try {
      await updateReservation(
        rt,
        restaurant,
        r.id,
        { start_at: at('25', '05:30'), shift_id: 'shift_night' },
        meta,
      );
    } catch (err) {
      refused = err;
    }
    const m = morning as unknown as Awaited<ReturnType<typeof create>>;
    assert.is(m.status, 201, m.text);
    assert.ok(refused, 'the move and the morning both took the one table');
    assert.is((refused as { reason?: string }).reason, 'NO_TABLE', String(refused));
    // Its pending seating, appended before it lost, was let go; the reservation did not move.
    const night24 = (await svc.rt.events.readStream('capacity-rest_demo-2026-06-24')).map((e) => e.type);
    assert.equal(night24, ['SeatingMoveHeld', 'SeatingMoveDropped']);
    const now = await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full });
    assert.is(now.body.data.start_at, at('23', '12:00'));
  },
);

t('a new time zone is recorded as a possible crossing before it applies', async ({ svc }) => {
  assert.is(await nightFact(svc.rt.events, 'rest_demo'), 'maybe', 'the night shift crossed already');
  const other = await nightFact(svc.rt.events, 'rest_other');
  assert.is(other, 'none', 'the other restaurant never seated past midnight');
  await updateRestaurant(svc.rt, 'rest_other', { timezone: 'America/New_York' }, meta);
  assert.is(await nightFact(svc.rt.events, 'rest_other'), 'maybe');
  const stream = await svc.rt.events.readStream('night-seatings-rest_other');
  assert.equal(
    stream.map((e) => [e.type, e.data.reason]),
    [
      ['NightSeatingsTracked', undefined],
      ['SeatingsCrossMidnight', 'TIMEZONE_CHANGED'],
    ],
  );
});

const dayOnly = () => reservationBootstrap({ tables, shifts: [day] });

const suite2 = suite<{ svc: ReservationService; dataDir: string }>(
  'reservations: a restaurant whose seatings never crossed midnight',
);
suite2.before(async (ctx) => {
  ctx.dataDir = join(tmpdir(), `couvert-night-fact-${process.pid}-${Date.now()}`);
  ctx.svc = await startReservationService({
    bootstrap: dayOnly(),
    env: { DATA_DIR: ctx.dataDir },
  });
});
suite2.after(async ({ svc, dataDir }) => {
  await svc.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const neighbourReads = (streams: string[], own: string) =>
  streams.filter((s) => s.startsWith('capacity-rest_demo-') && s !== `capacity-rest_demo-${own}`);

suite2('a daytime booking reads no other day’s seatings', async ({ svc }) => {
  const { rt, streams } = readsOf(svc.rt);
  const out = await createReservation(
    rt,
    restaurant,
    { party_size: 2, start_at: at('05', '12:00'), shift_id: 'shift_day' },
    meta,
  );
  assert.ok(out.reservationId);
  assert.equal(neighbourReads(streams, '2026-06-05'), []);
});

suite2(
  'a forced insert running past midnight is known before it is held: the next morning’s booking on its table is refused',
  async ({ svc }) => {
    // 23:30 on the 7th for 8 hours (to 07:30 on the 8th): no shift of the catalog crosses midnight.
    const forced = await create(svc, {
      start_at: at('07', '23:30'),
      party_size: 4,
      shift_id: 'shift_day',
      table_ids: ['tbl_only'],
      bypass_availability: true,
    });
    assert.is(forced.status, 201, forced.text);
    assert.is(forced.body.data.end_at, at('08', '07:30'));
    const morning = await create(svc, { start_at: at('08', '06:00'), shift_id: 'shift_day' });
    assert.is(morning.status, 422, morning.text);
    assert.is(morning.body.error.details.reason, 'NO_TABLE');
    // From now on every booking reads the neighbouring days.
    const { rt, streams } = readsOf(svc.rt);
    await createReservation(
      rt,
      restaurant,
      { party_size: 2, start_at: at('20', '12:00'), shift_id: 'shift_day' },
      meta,
    );
    assert.equal(neighbourReads(streams, '2026-06-20').length, 4);
  },
);

suite2('after a restart the fact is read from the log: the next morning is still refused', async (ctx) => {
  await ctx.svc.close({ keepData: true });
  ctx.svc = await startReservationService({ bootstrap: dayOnly(), env: { DATA_DIR: ctx.dataDir } });
  const morning = await create(ctx.svc, { start_at: at('08', '06:30'), shift_id: 'shift_day' });
  assert.is(morning.status, 422, morning.text);
  assert.is(morning.body.error.details.reason, 'NO_TABLE');
});

const twoTables = [
  { id: 'tbl_a', name: 'A', room_id: 'room_main', min_pax: 1, max_pax: 4 },
  { id: 'tbl_b', name: 'B', room_id: 'room_main', min_pax: 1, max_pax: 4 },
];
const tablesOf = (r: { tables: { id: string }[] }) => r.tables.map((x) => x.id);
const suite3 = suite<{ svc: ReservationService }>('reservations: a move decided again after a race');
suite3.before(async (ctx) => {
  ctx.svc = await startReservationService({
    bootstrap: reservationBootstrap({ tables: twoTables, shifts: [night, day] }),
  });
});
suite3.after(async ({ svc }) => svc.close());

suite3(
  'a move held on another table, then decided back onto its own seating, lets its pending seating go',
  async ({ svc }) => {
    // Z takes A, R takes B (05:30 on the 11th, service day 10); Z leaves: A is free.
    const z = (await create(svc, { start_at: at('11', '05:30'), shift_id: 'shift_night' })).body.data;
    const r = (await create(svc, { start_at: at('11', '05:30'), shift_id: 'shift_night' })).body.data;
    assert.equal([tablesOf(z), tablesOf(r)], [['tbl_a'], ['tbl_b']]);
    const cancel = await svc.api('POST', `/reservations/${z.id}/cancel`, { token: TOKENS.full, body: {} });
    assert.ok(cancel.status < 300, cancel.text);
    // R's move to any table first holds A; meanwhile the 11th's 06:00 takes A, so R's note on the
    // 11th fails and the move is decided again: B, the seating R holds already.
    let morning: Awaited<ReturnType<typeof create>> | null = null;
    const rt = pausedBeforeHold(
      svc.rt,
      '10',
      async () => {
        morning = await create(svc, { start_at: at('11', '06:00'), shift_id: 'shift_day' });
      },
      'SeatingMoveHeld',
    );
    await updateReservation(rt, restaurant, r.id, { room_id: null }, meta);
    const m = morning as unknown as Awaited<ReturnType<typeof create>>;
    assert.is(m.status, 201, m.text);
    assert.equal(tablesOf(m.body.data), ['tbl_a']);
    // The pending seating on A was let go: nothing of R's move still holds a table.
    const day10 = await svc.rt.events.readStream('capacity-rest_demo-2026-06-10');
    const moves = day10.filter((e) => e.data.reservation_id === r.id && e.type.startsWith('SeatingMove'));
    assert.equal(
      moves.map((e) => [e.type, e.data.move_id]),
      [
        ['SeatingMoveHeld', moves[0]?.data.move_id],
        ['SeatingMoveDropped', moves[0]?.data.move_id],
      ],
    );
    const now = await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full });
    assert.equal(tablesOf(now.body.data), ['tbl_b']);
  },
);

t.run();
suite2.run();
suite3.run();
