// Seatings of two service days on one table: a shift past midnight (the night's 05:30 start, service
// day the evening before) meets the next day's first seatings (the 06:00 start of the day shift). The
// availability check always saw both; a create or a move now rechecks against the neighbouring days'
// capacity streams too, so it no longer books a table the check calls taken.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { markNoShows } from '../../src/jobs/reservation-jobs';
import { runCli } from '../helpers/cli-in-process';
import {
  create,
  dinnerShift,
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';

const t = suite<{ svc: ReservationService }>('reservations: seatings of neighbouring service days');
t.before(async (ctx) => {
  // A place open around the clock: night 22:00-05:30 (past midnight), day 06:00-21:30, one table.
  const shift = { ...dinnerShift, slot_interval_minutes: 30, duration_minutes: 90, max_covers: null };
  ctx.svc = await startReservationService({
    bootstrap: reservationBootstrap({
      tables: [{ id: 'tbl_only', name: 'Only', room_id: 'room_main', min_pax: 1, max_pax: 4 }],
      shifts: [
        { ...shift, id: 'shift_night', name: 'Night', start_time: '22:00', end_time: '05:30' },
        { ...shift, id: 'shift_day', name: 'Day', start_time: '06:00', end_time: '21:30' },
      ],
    }),
  });
});
t.after(async ({ svc }) => svc.close());

const check = async (svc: ReservationService, startAt: string, shiftId: string) =>
  (
    await svc.api('POST', '/availability/check', {
      token: TOKENS.full,
      body: { start_at: startAt, party_size: 2, shift_id: shiftId },
    })
  ).body.data;

t(
  'the next day’s early seating first: the night’s late start that would overlap it is refused',
  async ({ svc }) => {
    const early = await create(svc, { start_at: '2026-06-11T06:00:00+02:00', shift_id: 'shift_day' });
    assert.is(early.status, 201, early.text);
    // 05:30 on the 11th belongs to the night of the 10th: its seating runs to 07:00, over the 06:00 one.
    assert.is((await check(svc, '2026-06-11T05:30:00+02:00', 'shift_night')).failure_reason, 'NO_TABLE');
    const late = await create(svc, { start_at: '2026-06-11T05:30:00+02:00', shift_id: 'shift_night' });
    assert.is(late.status, 422, late.text);
    assert.is(late.body.error.details.reason, 'NO_TABLE');
    // Touching seatings do not overlap: the night's 04:30 (to 06:00) is bookable.
    assert.is(
      (await create(svc, { start_at: '2026-06-11T04:30:00+02:00', shift_id: 'shift_night' })).status,
      201,
    );
  },
);

t(
  'the night’s late seating first: the next day’s early start that would overlap it is refused',
  async ({ svc }) => {
    const late = await create(svc, { start_at: '2026-06-13T05:30:00+02:00', shift_id: 'shift_night' });
    assert.is(late.status, 201, late.text);
    assert.is((await check(svc, '2026-06-13T06:00:00+02:00', 'shift_day')).failure_reason, 'NO_TABLE');
    const early = await create(svc, { start_at: '2026-06-13T06:00:00+02:00', shift_id: 'shift_day' });
    assert.is(early.status, 422, early.text);
    assert.is(early.body.error.details.reason, 'NO_TABLE');
    // Canceled, the night's seating frees the table for the morning.
    const canceled = await svc.api('POST', `/reservations/${late.body.data.id}/cancel`, {
      token: TOKENS.full,
      body: {},
    });
    assert.is(canceled.status, 200, canceled.text);
    assert.is(
      (await create(svc, { start_at: '2026-06-13T06:00:00+02:00', shift_id: 'shift_day' })).status,
      201,
    );
  },
);

t(
  'a move onto the other day’s overlapping start is refused; a move away from its own is not in its way',
  async ({ svc }) => {
    const early = await create(svc, { start_at: '2026-06-15T06:00:00+02:00', shift_id: 'shift_day' });
    assert.is(early.status, 201, early.text);
    const other = await create(svc, { start_at: '2026-06-15T02:00:00+02:00', shift_id: 'shift_night' });
    assert.is(other.status, 201, other.text);
    const moved = await svc.api('PATCH', `/reservations/${other.body.data.id}`, {
      token: TOKENS.full,
      body: { start_at: '2026-06-15T05:00:00+02:00', shift_id: 'shift_night' },
    });
    assert.is(moved.status, 422, moved.text);
    assert.is(moved.body.error.details.reason, 'NO_TABLE');
    // The 06:00 reservation itself moves to the night's 05:00 (the service day before): its own
    // seating on the 15th, which the move gives up, is not in its way.
    const own = await svc.api('PATCH', `/reservations/${early.body.data.id}`, {
      token: TOKENS.full,
      body: { start_at: '2026-06-15T05:00:00+02:00', shift_id: 'shift_night' },
    });
    assert.is(own.status, 200, own.text);
    // And the morning of the 15th is free again.
    assert.is(
      (await create(svc, { start_at: '2026-06-15T07:00:00+02:00', shift_id: 'shift_day' })).status,
      201,
    );
  },
);

t('a night no-show seated after the next morning took its table: refused (NO_TABLE)', async ({ svc }) => {
  svc.clock.set('2026-06-02T10:00:00Z');
  const ghost = (await create(svc, { start_at: '2026-06-17T05:30:00+02:00', shift_id: 'shift_night' })).body
    .data;
  // Nobody came: the no-show frees the table from 06:01; the morning's 06:30 takes it.
  svc.clock.set('2026-06-17T06:01:00+02:00');
  await markNoShows(svc.rt, 30);
  const morning = await create(svc, { start_at: '2026-06-17T06:30:00+02:00', shift_id: 'shift_day' });
  assert.is(morning.status, 201, morning.text);
  // The guests turn up at 06:10: their table is the morning's from 06:30.
  svc.clock.set('2026-06-17T06:10:00+02:00');
  try {
    await runCli(svc, 'reservations seat', { id: ghost.id });
    assert.unreachable('seated on a table the next day sold meanwhile');
  } catch (err) {
    assert.is((err as { status?: number }).status, 422, String(err));
    assert.match((err as Error).message, /given to another booking/);
  }
  const still = await svc.api('GET', `/reservations/${ghost.id}`, { token: TOKENS.full });
  assert.is(still.body.data.status, 'NO_SHOW');
});

// Last: it changes the catalog.
t(
  'a night shift shortened after bookings were taken: its seating past midnight still keeps the morning’s table',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const late = await create(svc, { start_at: '2026-06-20T05:30:00+02:00', shift_id: 'shift_night' });
    assert.is(late.status, 201, late.text);
    // The night now ends at 22:00: no seating of the current catalog crosses midnight any more.
    const shift = { ...dinnerShift, slot_interval_minutes: 30, duration_minutes: 90, max_covers: null };
    const file = join(tmpdir(), `couvert-across-days-${process.pid}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        shifts: [
          { ...shift, id: 'shift_night', name: 'Night', start_time: '22:00', end_time: '22:00' },
          { ...shift, id: 'shift_day', name: 'Day', start_time: '06:00', end_time: '21:30' },
        ],
      }),
    );
    await runCli(svc, 'catalog apply', { restaurant: 'rest_demo' }, [file]);
    // The 05:30 seating (service day the 19th) still holds the only table to 07:00.
    assert.is((await check(svc, '2026-06-20T06:00:00+02:00', 'shift_day')).failure_reason, 'NO_TABLE');
    const early = await create(svc, { start_at: '2026-06-20T06:00:00+02:00', shift_id: 'shift_day' });
    assert.is(early.status, 422, early.text);
    assert.is(early.body.error.details.reason, 'NO_TABLE');
  },
);

t.run();
