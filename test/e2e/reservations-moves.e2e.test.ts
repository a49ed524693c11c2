// A move (PATCH of time, party or tables) interrupted or refused between its appends: the seating the
// reservation shows stays held at every instant (its move is only pending beside it), a refused move
// gives nothing up, and the repair job confirms or drops a pending move without ever changing the
// reservation (what it shows is what was acknowledged). The event store is wrapped to make each
// failure happen at exactly the wrong moment; everything else is the real service.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { updateReservation } from '../../commands/reservations/handler-update';
import { BOOKINGS, type BookingDayDoc, bookingDayId } from '../../projections/bookings';
import { repairSeatings } from '../../src/jobs/reservation-jobs';
import type { NewEvent } from '../../src/ports/event-store';
import type { Runtime } from '../../src/runtime';
import { withHook } from '../helpers/hooked-events';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: ReservationService }>('reservations: moves');
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

/** A process that dies at the append `match` picks: nothing from then on lands. */
const dyingAt = (rt: Runtime, match: (stream: string, batch: NewEvent[]) => boolean) =>
  withHook(rt, match, async () => {
    throw new Error('the process died here');
  });

const isUpdate = (stream: string) => stream.startsWith('reservation-res_');
const isConfirm = (_: string, batch: NewEvent[]) => batch[0]?.type === 'SeatingMoveConfirmed';

async function patchDying(rt: Runtime, id: string, body: Record<string, unknown>) {
  // (The failure a move that went through would raise must not pass for the death: 'the move should
  // have died' matched /died/, so a move that never reached the chosen append passed.)
  const err = await updateReservation(rt, restaurant, id, body, meta).then(
    () => null,
    (e: Error) => e,
  );
  assert.ok(err, 'the move should have died at the chosen append');
  assert.match(err?.message ?? '', /the process died here/);
}

const capacity = async (svc: TestService, day: string) =>
  (await svc.rt.events.readStream(`capacity-rest_demo-2026-06-${day}`)).map(
    (e) => `${e.type}:${e.data.reason ?? e.data.start_at}`,
  );

const get = async (svc: TestService, id: string) =>
  (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;

/** Two live reservations of the list sharing a table at overlapping times. */
async function doubleHeld(svc: TestService): Promise<string[]> {
  const list = (await svc.api('GET', '/reservations', { token: TOKENS.full })).body.data as {
    id: string;
    status: string;
    start_at: string;
    end_at: string;
    tables: { id: string }[];
  }[];
  const live = list.filter((r) => !/CANCELED|REJECTED|NO_SHOW/.test(r.status));
  const out: string[] = [];
  for (const [i, a] of live.entries())
    for (const b of live.slice(i + 1))
      if (
        a.tables.some((x) => b.tables.some((y) => y.id === x.id)) &&
        Date.parse(a.start_at) < Date.parse(b.end_at) &&
        Date.parse(b.start_at) < Date.parse(a.end_at)
      )
        out.push(`${a.id}/${b.id}`);
  return out;
}

/** The repair job as the scheduler runs it, past its delay. */
async function repair(svc: ReservationService) {
  svc.clock.advance(6 * 60);
  const out = await repairSeatings(svc.rt, 5);
  await svc.rt.settle(await svc.rt.events.headPosition());
  return out;
}

t(
  'a move that dies before its update keeps the old table held: it cannot be booked again',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('10', '19:00'), table_ids: ['tbl_2a'], external_id: 'mv-r' }))
      .body.data;
    await patchDying(dyingAt(svc.rt, isUpdate), r.id, { start_at: at('10', '21:00'), table_ids: ['tbl_2a'] });
    await svc.rt.settle(await svc.rt.events.headPosition());
    // The reservation is as last acknowledged…
    const shown = await get(svc, r.id);
    assert.is(shown.start_at, at('10', '19:00'));
    assert.equal(
      shown.tables.map((x: { id: string }) => x.id),
      ['tbl_2a'],
    );
    // …and its table is not bookable (it was, before: the capacity stream had given it to the move).
    const again = await create(svc, {
      start_at: at('10', '19:00'),
      table_ids: ['tbl_2a'],
      external_id: 'mv-s',
    });
    assert.is(again.status, 422);
    assert.is(again.body.error.details.reason, 'NO_TABLE');
    // Nor is the seating the move held, until the repair job lets it go.
    assert.is((await create(svc, { start_at: at('10', '21:00'), table_ids: ['tbl_2a'] })).status, 422);
    // The read side (availability reads the bookings read model) counts the pending move as taken too.
    const day = await svc.rt.docs
      .collection<BookingDayDoc>(BOOKINGS)
      .findOne({ _id: bookingDayId('rest_demo', '2026-06-10') });
    assert.equal(
      Object.values(day?.seatings ?? {})
        .filter((x) => x.table_ids.includes('tbl_2a'))
        .map((x) => x.start_ms)
        .sort(),
      [Date.parse(at('10', '19:00')), Date.parse(at('10', '21:00'))],
    );
    assert.equal(await doubleHeld(svc), []);

    assert.is((await repair(svc)).changed.length, 1);
    assert.is((await capacity(svc, '10')).at(-1), 'SeatingMoveDropped:MOVE_NOT_RECORDED');
    assert.is((await get(svc, r.id)).start_at, at('10', '19:00'));
    assert.is((await create(svc, { start_at: at('10', '21:00'), table_ids: ['tbl_2a'] })).status, 201);
    assert.is((await create(svc, { start_at: at('10', '19:00'), table_ids: ['tbl_2a'] })).status, 422);
    assert.equal(await doubleHeld(svc), []);
    assert.equal((await repair(svc)).changed, []);
  },
);

t(
  'a move that dies after its update is confirmed by the repair: the reservation stays as recorded',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('11', '19:00'), table_ids: ['tbl_2a'] })).body.data;
    await patchDying(dyingAt(svc.rt, isConfirm), r.id, { start_at: at('11', '21:00') });
    await svc.rt.settle(await svc.rt.events.headPosition());
    assert.is((await get(svc, r.id)).start_at, at('11', '21:00'));
    // Both seatings are held until the repair: never less than what the reservation shows.
    assert.is((await create(svc, { start_at: at('11', '21:00'), table_ids: ['tbl_2a'] })).status, 422);
    assert.is((await repair(svc)).changed.length, 1);
    assert.is((await capacity(svc, '11')).at(-1), `SeatingMoveConfirmed:${at('11', '21:00')}`);
    const after = await get(svc, r.id);
    assert.is(after.start_at, at('11', '21:00'));
    assert.equal(
      after.tables.map((x: { id: string }) => x.id),
      ['tbl_2a'],
    );
    // The old seating is free now, the new one is not.
    assert.is((await create(svc, { start_at: at('11', '19:00'), table_ids: ['tbl_2a'] })).status, 201);
    assert.is((await create(svc, { start_at: at('11', '21:00'), table_ids: ['tbl_2a'] })).status, 422);
    assert.equal(await doubleHeld(svc), []);
  },
);

t(
  'the repair never moves a reservation past a later acknowledged write (a stale pending move is dropped)',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('12', '19:00'), table_ids: ['tbl_2a'] })).body.data;
    await patchDying(dyingAt(svc.rt, isUpdate), r.id, { start_at: at('12', '21:00') });
    // The partner retries, elsewhere: acknowledged. The dead move's seating is not in its own way.
    const later = await svc.api('PATCH', `/reservations/${r.id}`, {
      token: TOKENS.full,
      body: { start_at: at('12', '20:00'), table_ids: ['tbl_2b'] },
    });
    assert.is(later.status, 200);
    assert.is((await repair(svc)).changed.length, 1);
    const after = await get(svc, r.id);
    assert.is(after.start_at, at('12', '20:00'));
    assert.equal(
      after.tables.map((x: { id: string }) => x.id),
      ['tbl_2b'],
    );
    assert.ok((await capacity(svc, '12')).includes('SeatingMoveDropped:MOVE_NOT_RECORDED'));
    // What the reservation shows is held; what it gave up, and what the dead move held, are free.
    assert.is((await create(svc, { start_at: at('12', '20:00'), table_ids: ['tbl_2b'] })).status, 422);
    assert.is((await create(svc, { start_at: at('12', '21:00'), table_ids: ['tbl_2a'] })).status, 201);
    assert.equal(await doubleHeld(svc), []);
    assert.equal((await repair(svc)).changed, []);
  },
);

t(
  'a refused move gives nothing up: its table cannot be taken while it runs, and nothing is put back by force',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('13', '19:00'), table_ids: ['tbl_2a'] })).body.data;
    let meanwhile: { status: number; body: { error?: { details?: { reason?: string } } } } | null = null;
    // While the move runs (after its hold, before its claim), another booking asks for the old table
    // and someone else claims the external_id the move wants: the move is refused with 409.
    const rt = withHook(
      svc.rt,
      (s) => s.startsWith('reservation-external-id-'),
      async (stream) => {
        meanwhile = await create(svc, { start_at: at('13', '19:00'), table_ids: ['tbl_2a'] });
        await svc.rt.events.append(
          stream,
          [{ type: 'Claimed', data: { owner: 'res_someone_else', at: 'now' } }],
          'no_stream',
        );
      },
    );
    try {
      await updateReservation(rt, restaurant, r.id, { table_ids: ['tbl_2b'], external_id: 'mv-dup' }, meta);
      assert.unreachable();
    } catch (err) {
      assert.is((err as { status?: number }).status, 409);
    }
    // Before: the move had freed tbl_2a, the other booking took it, and the refusal put R back on it.
    assert.is((meanwhile as unknown as { status: number }).status, 422);
    await svc.rt.settle(await svc.rt.events.headPosition());
    const after = await get(svc, r.id);
    assert.equal(
      after.tables.map((x: { id: string }) => x.id),
      ['tbl_2a'],
    );
    assert.is((await capacity(svc, '13')).at(-1), 'SeatingMoveDropped:UPDATE_REFUSED');
    // The move's seating is free again, the reservation's is not; nothing is left to repair.
    assert.is((await create(svc, { start_at: at('13', '19:00'), table_ids: ['tbl_2b'] })).status, 201);
    assert.is((await create(svc, { start_at: at('13', '19:00'), table_ids: ['tbl_2a'] })).status, 422);
    assert.equal(await doubleHeld(svc), []);
    assert.equal((await repair(svc)).changed, []);
  },
);

t(
  'a move to another day that dies after its update: the repair confirms it and frees the old day',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('14', '19:00'), table_ids: ['tbl_2a'] })).body.data;
    await patchDying(dyingAt(svc.rt, isConfirm), r.id, { start_at: at('15', '19:00') });
    await svc.rt.settle(await svc.rt.events.headPosition());
    assert.is((await get(svc, r.id)).start_at, at('15', '19:00'));
    assert.is((await create(svc, { start_at: at('15', '19:00'), table_ids: ['tbl_2a'] })).status, 422);
    assert.is((await repair(svc)).changed.length, 1);
    assert.is((await capacity(svc, '15')).at(-1), `SeatingMoveConfirmed:${at('15', '19:00')}`);
    assert.is((await capacity(svc, '14')).at(-1), 'SeatingReleased:MOVED');
    assert.is((await create(svc, { start_at: at('14', '19:00'), table_ids: ['tbl_2a'] })).status, 201);
    assert.is((await get(svc, r.id)).start_at, at('15', '19:00'));
    assert.equal((await repair(svc)).changed, []);
  },
);

t(
  'an older same-day move (its seating replaced, its update lost) is repaired by holding what the reservation shows',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('16', '19:00'), table_ids: ['tbl_2a'] })).body.data;
    // The log an older version left: the seating replaced in one append, then the process died.
    const stream = 'capacity-rest_demo-2026-06-16';
    const [held] = await svc.rt.events.readStream(stream);
    await svc.rt.events.append(
      stream,
      [
        {
          type: 'SeatingHeld',
          data: {
            ...(held?.data as Record<string, unknown>),
            start_at: at('16', '21:00'),
            end_at: at('16', '22:30'),
          },
        },
      ],
      0,
    );
    assert.is((await repair(svc)).changed.length, 1);
    // Not rolled forward: the reservation is as acknowledged, and holds what it shows again.
    assert.is((await get(svc, r.id)).start_at, at('16', '19:00'));
    assert.is((await capacity(svc, '16')).at(-1), `SeatingHeld:${at('16', '19:00')}`);
    assert.is((await create(svc, { start_at: at('16', '19:00'), table_ids: ['tbl_2a'] })).status, 422);
    assert.is((await create(svc, { start_at: at('16', '21:00'), table_ids: ['tbl_2a'] })).status, 201);
    assert.equal((await repair(svc)).changed, []);
  },
);

t(
  'parallel moves and creates for the last free table: exactly one wins; every loser keeps its seating',
  async ({ svc }) => {
    // A party of 7 fits only tbl_8: five reservations on other days move to the 25th at 20:00 while five
    // creates ask for the same slot, all at once.
    const target = at('25', '20:00');
    const movers = [];
    for (const day of ['26', '27', '28', '29', '30'])
      movers.push((await create(svc, { start_at: at(day, '20:00'), party_size: 7 })).body.data);
    const answers = await Promise.all([
      ...movers.map((r) =>
        svc.api('PATCH', `/reservations/${r.id}`, { token: TOKENS.full, body: { start_at: target } }),
      ),
      ...movers.map(() => create(svc, { start_at: target, party_size: 7 })),
    ]);
    const won = answers.filter((a) => a.status === 200 || a.status === 201);
    assert.is(won.length, 1, answers.map((a) => a.status).join(','));
    for (const a of answers.filter((x) => !won.includes(x))) {
      assert.is(a.status, 422, a.text);
      assert.is(a.body.error.details.reason, 'NO_TABLE');
    }
    const winner = won[0]?.body.data.id;
    const listed = await svc.api(
      'GET',
      `/reservations?start_at_from=${encodeURIComponent(target)}&start_at_to=${encodeURIComponent(target)}`,
      { token: TOKENS.full },
    );
    assert.equal(
      listed.body.data.map((r: { id: string }) => r.id),
      [winner],
    );
    for (const r of movers) {
      if (r.id === winner) continue;
      const shown = await get(svc, r.id);
      assert.is(shown.start_at, r.start_at);
      // Its own day's table is still its own: the same party cannot be booked there.
      const again = await create(svc, { start_at: r.start_at, party_size: 7 });
      assert.is(again.body.error?.details.reason, 'NO_TABLE', again.text);
    }
  },
);

t.run();
