// A reservation marked DONE (the guests left) or NO_SHOW (nobody came) before its seating's end frees
// its table from the moment of that status change, over HTTP: the availability check, the search and a
// booking all see it free; the part of the seating before the change stays held; a no-show seated
// after all holds its table again, or is refused when the table was sold meanwhile.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { endSeating, loadCapacity, resumeSeating } from '../../commands/reservations/capacity-handler';
import { occupancyExcept } from '../../commands/reservations/capacity-state';
import { decideStatusOperation, type StatusOperation } from '../../commands/reservations/decide-status';
import { runOnReservation } from '../../commands/reservations/handler-common';
import { changeStatus } from '../../commands/reservations/handler-status';
import { BOOKINGS, type BookingDayDoc } from '../../projections/bookings';
import { allProjections } from '../../projections/index';
import { RESERVATIONS } from '../../projections/reservations';
import { SEATING_SYNC } from '../../projections/seating-sync';
import { seatingOfText } from '../../projections/seating-sync-v2';
import type { SeatingSyncDocV3 } from '../../projections/seating-sync-v3';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { EmbeddedCollection, QueryPlan } from '../../src/adapters/document-store/embedded-collection';
import {
  endFinishedSeatings,
  finishSeatedReservations,
  markNoShows,
  repairSeatings,
} from '../../src/jobs/reservation-jobs';
import { ProjectionRunner } from '../../src/projection/runner';
import type { Runtime } from '../../src/runtime';
import { runCli } from '../helpers/cli-in-process';
import { withHook } from '../helpers/hooked-events';
import { captureLog } from '../helpers/log-sink';
import {
  create,
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';

const t = suite<{ svc: ReservationService }>('reservations: DONE and NO_SHOW free the table');
t.before(async (ctx) => {
  // The only table of the restaurant: any seating on it decides every booking of the evening.
  ctx.svc = await startReservationService({
    bootstrap: reservationBootstrap({
      tables: [{ id: 'tbl_only', name: 'Only', room_id: 'room_main', min_pax: 1, max_pax: 4 }],
    }),
  });
});
t.after(async ({ svc }) => svc.close());

const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;
const check = async (svc: ReservationService, startAt: string) =>
  (
    await svc.api('POST', '/availability/check', {
      token: TOKENS.full,
      body: { start_at: startAt, party_size: 2 },
    })
  ).body.data;
const slotsFrom = async (svc: ReservationService, from: string, to: string) =>
  (
    (
      await svc.api(
        'GET',
        `/availability?start_at_from=${encodeURIComponent(from)}&start_at_to=${encodeURIComponent(to)}&party_size=2`,
        {
          token: TOKENS.full,
        },
      )
    ).body.data.slots as { start_at: string }[]
  ).map((s) => s.start_at);
const cli = (svc: ReservationService, name: string, id: string) =>
  runCli(svc, `reservations ${name}`, { id });
/** Whether the write side's fold of the day leaves tbl_only free for [from, to) to a new seating. */
const tableFree = async (svc: ReservationService, day: string, from: string, to: string) =>
  occupancyExcept(await loadCapacity(svc.rt, 'rest_demo', `2026-06-${day}`), 'nobody').isFree(
    'tbl_only',
    Date.parse(at(day, from)),
    Date.parse(at(day, to)),
  );

t(
  'DONE at 19:40 frees the only table for a booking at 19:45; the seating before stays held',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const first = (await create(svc, { start_at: at('10', '19:00') })).body.data;
    assert.is(first.end_at, at('10', '20:30'));
    svc.clock.set(at('10', '19:05'));
    await cli(svc, 'seat', first.id);
    svc.clock.set(at('10', '19:30'));
    // While the guests are there the table is taken (minimum notice 0: 19:45 is bookable in time).
    assert.is((await check(svc, at('10', '19:45'))).failure_reason, 'NO_TABLE');
    svc.clock.set(at('10', '19:40'));
    await cli(svc, 'leave', first.id);
    const done = (await svc.api('GET', `/reservations/${first.id}`, { token: TOKENS.full })).body.data;
    assert.is(done.status, 'DONE');
    const freed = await check(svc, at('10', '19:45'));
    assert.is(freed.available, true);
    assert.is(freed.failure_reason, null);
    assert.ok((await slotsFrom(svc, at('10', '19:45'), at('10', '20:30'))).includes(at('10', '19:45')));
    const second = await create(svc, { start_at: at('10', '19:45') });
    assert.is(second.status, 201, JSON.stringify(second.body));
    // The reservation still shows its planned seating; the capacity stream keeps the part before 19:40.
    assert.is(done.end_at, at('10', '20:30'));
    assert.is(await tableFree(svc, '10', '19:00', '19:40'), false);
    const capacity = await svc.rt.events.readStream('capacity-rest_demo-2026-06-10');
    const ended = capacity.filter((e) => e.type === 'SeatingEnded');
    assert.equal(
      ended.map((e) => [e.data.reservation_id, e.data.ended_at, e.data.reason]),
      [[first.id, new Date(at('10', '19:40')).toISOString(), 'DONE']],
    );
    // A repeated leave changes nothing.
    svc.clock.set(at('10', '19:50'));
    await cli(svc, 'leave', first.id);
    assert.is((await svc.rt.events.readStream('capacity-rest_demo-2026-06-10')).length, capacity.length);
  },
);

t('the scheduler finishing a seating at its end writes nothing more', async ({ svc }) => {
  svc.clock.set('2026-06-02T10:00:00Z');
  const r = (await create(svc, { start_at: at('11', '19:00') })).body.data;
  svc.clock.set(at('11', '19:00'));
  await cli(svc, 'seat', r.id);
  svc.clock.set(at('11', '20:31'));
  await finishSeatedReservations(svc.rt);
  const capacity = await svc.rt.events.readStream('capacity-rest_demo-2026-06-11');
  assert.equal(
    capacity.map((e) => e.type),
    ['SeatingHeld'],
  );
});

t(
  'the scheduler NO_SHOW at 19:40 frees the table; the no-show seated later is refused while the table is sold, held again once free',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const ghost = (await create(svc, { start_at: at('12', '19:00') })).body.data;
    svc.clock.set(at('12', '19:40'));
    assert.is((await check(svc, at('12', '19:45'))).failure_reason, 'NO_TABLE');
    await markNoShows(svc.rt, 30);
    const marked = (await svc.api('GET', `/reservations/${ghost.id}`, { token: TOKENS.full })).body.data;
    assert.is(marked.status, 'NO_SHOW');
    const walkIn = await create(svc, { start_at: at('12', '19:45') });
    assert.is(walkIn.status, 201, JSON.stringify(walkIn.body));
    // The guests turn up after all at 19:50: their table is the walk-in's now.
    svc.clock.set(at('12', '19:50'));
    try {
      await cli(svc, 'seat', ghost.id);
      assert.unreachable('seated on a table sold meanwhile');
    } catch (err) {
      assert.is((err as { status?: number }).status, 422);
      assert.match((err as Error).message, /given to another booking/);
    }
    const still = (await svc.api('GET', `/reservations/${ghost.id}`, { token: TOKENS.full })).body.data;
    assert.is(still.status, 'NO_SHOW');
    // The walk-in leaves without eating: the no-show can be seated, and holds its table to 20:30 again.
    await svc.api('POST', `/reservations/${walkIn.body.data.id}/cancel`, { token: TOKENS.full, body: {} });
    await cli(svc, 'seat', ghost.id);
    const seated = (await svc.api('GET', `/reservations/${ghost.id}`, { token: TOKENS.full })).body.data;
    assert.is(seated.status, 'SEATED');
    assert.is((await check(svc, at('12', '20:00'))).failure_reason, 'NO_TABLE');
    assert.is((await create(svc, { start_at: at('12', '20:00') })).body.error.details.reason, 'NO_TABLE');
  },
);

t(
  'a no-show held again, then refused its seat by a cancel landing first, gives the table back',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const ghost = (await create(svc, { start_at: at('13', '19:00') })).body.data;
    svc.clock.set(at('13', '19:40'));
    await markNoShows(svc.rt, 30);
    svc.clock.set(at('13', '19:50'));
    // Staff cancel it (status only: its release has not run yet) just before the seat's status lands.
    const rt = withHook(
      svc.rt,
      (stream) => stream === `reservation-${ghost.id}`,
      async () => {
        await runOnReservation(svc.rt, ghost.id, null, { actor: 'test' }, (r, now) =>
          decideStatusOperation(r, { kind: 'cancel_by_staff', reason: null }, now),
        );
      },
    );
    try {
      await changeStatus(rt, null, ghost.id, { kind: 'seat' }, { actor: 'test' });
      assert.unreachable('a canceled reservation seated');
    } catch (err) {
      assert.is((err as { status?: number }).status, 422);
    }
    const types = (await svc.rt.events.readStream('capacity-rest_demo-2026-06-13')).map((e) => e.type);
    assert.equal(types, ['SeatingHeld', 'SeatingEnded', 'SeatingHeld', 'SeatingReleased']);
    assert.is((await create(svc, { start_at: at('13', '20:00') })).status, 201);
  },
);

t(
  'staff seating the guests as the no-show job marks them: the seat lands on the NO_SHOW, the table stays theirs',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const late = (await create(svc, { start_at: at('15', '19:00') })).body.data;
    svc.clock.set(at('15', '19:35'));
    // The seat decided on CONFIRMED (nothing to hold again); the job's no-show and its end land before
    // its status, which is then decided again on NO_SHOW (seat is allowed from there).
    const rt = withHook(
      svc.rt,
      (stream) => stream === `reservation-${late.id}`,
      async () => {
        await changeStatus(svc.rt, null, late.id, { kind: 'no_show', graceMinutes: 30 }, { actor: 'test' });
      },
    );
    await changeStatus(rt, null, late.id, { kind: 'seat' }, { actor: 'test' });
    const seated = (await svc.api('GET', `/reservations/${late.id}`, { token: TOKENS.full })).body.data;
    assert.is(seated.status, 'SEATED');
    // Before: the no-show's end stayed, and the table the guests sit at was sold from 19:35.
    assert.is(await tableFree(svc, '15', '19:45', '20:30'), false);
    assert.is((await check(svc, at('15', '19:45'))).failure_reason, 'NO_TABLE');
  },
);

t("the no-show's end written after the guests were seated: given back to them at once", async ({ svc }) => {
  svc.clock.set('2026-06-02T10:00:00Z');
  const late = (await create(svc, { start_at: at('16', '19:00') })).body.data;
  svc.clock.set(at('16', '19:35'));
  // The job's status lands; staff seat the guests (nothing ended yet: nothing to hold again) just
  // before the job writes its end from the NO_SHOW it saw.
  const rt = withHook(
    svc.rt,
    (stream, batch) => stream === 'capacity-rest_demo-2026-06-16' && batch[0]?.type === 'SeatingEnded',
    async () => {
      await changeStatus(svc.rt, null, late.id, { kind: 'seat' }, { actor: 'test' });
    },
  );
  await changeStatus(rt, null, late.id, { kind: 'no_show', graceMinutes: 30 }, { actor: 'test' });
  const seated = (await svc.api('GET', `/reservations/${late.id}`, { token: TOKENS.full })).body.data;
  assert.is(seated.status, 'SEATED');
  assert.is(await tableFree(svc, '16', '19:45', '20:30'), false);
  assert.is((await check(svc, at('16', '19:45'))).failure_reason, 'NO_TABLE');
});

t(
  'a crash between the leave (or the no-show) and its end: the repair job writes the end from the status change, once',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const left = (await create(svc, { start_at: at('17', '19:00') })).body.data;
    const ghost = (await create(svc, { start_at: at('18', '19:00') })).body.data;
    svc.clock.set(at('17', '19:05'));
    await cli(svc, 'seat', left.id);
    // The process dies right after each status change: the status alone, no SeatingEnded.
    svc.clock.set(at('17', '19:40'));
    await runOnReservation(svc.rt, left.id, null, { actor: 'test' }, (r, now) =>
      decideStatusOperation(r, { kind: 'leave' }, now),
    );
    svc.clock.set(at('18', '19:40'));
    await runOnReservation(svc.rt, ghost.id, null, { actor: 'test' }, (r, now) =>
      decideStatusOperation(r, { kind: 'no_show', graceMinutes: 30 }, now),
    );
    await svc.rt.refresh();
    const types = async (day: string) =>
      (await svc.rt.events.readStream(`capacity-rest_demo-2026-06-${day}`)).map((e) => e.type);
    assert.equal(await types('18'), ['SeatingHeld']);
    assert.is((await check(svc, at('18', '20:00'))).failure_reason, 'NO_TABLE', 'held to its planned end');
    // A request may still be writing its end: left alone for SEATING_REPAIR_AFTER_MINUTES.
    svc.clock.set(at('18', '19:42'));
    await repairSeatings(svc.rt, 5);
    assert.equal(await types('18'), ['SeatingHeld']);
    svc.clock.set(at('18', '19:46'));
    const repaired = await repairSeatings(svc.rt, 5);
    assert.equal(repaired.changed, [ghost.id]);
    const ends = (await svc.rt.events.readStream('capacity-rest_demo-2026-06-18')).filter(
      (e) => e.type === 'SeatingEnded',
    );
    // From the status change's time (19:40), not the repair's (19:46): a replay gives the same instant.
    assert.equal(
      ends.map((e) => [e.data.reservation_id, e.data.ended_at, e.data.reason]),
      [[ghost.id, new Date(at('18', '19:40')).toISOString(), 'NO_SHOW']],
    );
    assert.is((await check(svc, at('18', '20:00'))).available, true);
    assert.is((await create(svc, { start_at: at('18', '20:00') })).status, 201);
    // The leave of the day before: its seating's planned end (20:30 on the 17th) has passed, so its
    // table is free whatever the stream says: nothing to write.
    assert.equal(await types('17'), ['SeatingHeld']);
    // Run again: nothing more.
    svc.clock.set(at('18', '19:50'));
    assert.equal((await repairSeatings(svc.rt, 5)).changed, []);
    assert.equal(await types('18'), ['SeatingHeld', 'SeatingEnded', 'SeatingHeld']);
  },
);

t(
  'a crash between the leave and its end, repaired while the seating still runs: the table is free from the leave',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const left = (await create(svc, { start_at: at('19', '19:00') })).body.data;
    svc.clock.set(at('19', '19:05'));
    await cli(svc, 'seat', left.id);
    svc.clock.set(at('19', '19:30'));
    await runOnReservation(svc.rt, left.id, null, { actor: 'test' }, (r, now) =>
      decideStatusOperation(r, { kind: 'leave' }, now),
    );
    svc.clock.set(at('19', '19:40'));
    assert.is((await check(svc, at('19', '19:45'))).failure_reason, 'NO_TABLE');
    assert.equal((await repairSeatings(svc.rt, 5)).changed, [left.id]);
    assert.is((await check(svc, at('19', '19:45'))).available, true);
    assert.is(await tableFree(svc, '19', '19:30', '20:30'), true);
    assert.is(await tableFree(svc, '19', '19:00', '19:30'), false, 'the part before the leave stays held');
  },
);

t(
  'replay: the bookings read model rebuilt from the log, per event or batched, is the live one',
  async ({ svc }) => {
    await svc.rt.refresh();
    const live = (
      await svc.rt.docs.collection<BookingDayDoc>(BOOKINGS).find({ restaurant_id: 'rest_demo' })
    ).sort((a, b) => (a._id < b._id ? -1 : 1));
    // The first test's seating: its planned end kept, its tables free from 19:40.
    const day = live.find((d) => d.service_date === '2026-06-10');
    const entries = Object.values(day?.seatings ?? {}).filter((e) => e.ended_ms !== undefined);
    assert.equal(
      entries.map((e) => [e.start_ms, e.end_ms, e.ended_ms]),
      [[Date.parse(at('10', '19:00')), Date.parse(at('10', '20:30')), Date.parse(at('10', '19:40'))]],
    );
    for (const writeBack of [false, true]) {
      const docs = new EmbeddedDocumentStore();
      await new ProjectionRunner(svc.rt.events, docs, allProjections(), {
        batchSize: 7,
        writeBack,
      }).catchUp();
      const rebuilt = (
        await docs.collection<BookingDayDoc>(BOOKINGS).find({ restaurant_id: 'rest_demo' })
      ).sort((a, b) => (a._id < b._id ? -1 : 1));
      const strip = (list: BookingDayDoc[]) => list.map(({ _pos: _, ...d }) => d);
      assert.equal(strip(rebuilt), strip(live), `writeBack: ${writeBack}`);
    }
  },
);

/** The runtime with its document reads and stream reads recorded (everything else the real one's). */
function spied(rt: Runtime, beforeFirstStreamRead?: () => Promise<void>) {
  const finds: { collection: string; filter: Record<string, unknown>; plan?: QueryPlan }[] = [];
  const streams: string[] = [];
  const { lines, logger } = captureLog();
  const docs = new Proxy(rt.docs, {
    get(target, prop) {
      if (prop !== 'collection') return Reflect.get(target, prop, target);
      return (name: string) =>
        new Proxy(target.collection(name), {
          get(col, p) {
            const v = Reflect.get(col, p, col);
            if (p !== 'find' || typeof v !== 'function') return typeof v === 'function' ? v.bind(col) : v;
            return (filter: Record<string, unknown>, options?: unknown) => {
              // How the embedded store answers it, at the time it is asked.
              const plan = (col as unknown as EmbeddedCollection).explain?.(filter);
              finds.push({ collection: name, filter, plan });
              return v.call(col, filter, options);
            };
          },
        });
    },
  });
  const events = new Proxy(rt.events, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop !== 'readStream' || typeof v !== 'function')
        return typeof v === 'function' ? v.bind(target) : v;
      return async (stream: string, options?: unknown) => {
        streams.push(stream);
        const hook = beforeFirstStreamRead;
        beforeFirstStreamRead = undefined;
        await hook?.();
        return v.call(target, stream, options);
      };
    },
  });
  return { rt: { ...rt, docs, events, logger } as Runtime, finds, streams, lines };
}

const capacityTypes = async (svc: ReservationService, day: string) =>
  (await svc.rt.events.readStream(`capacity-rest_demo-2026-06-${day}`)).map((e) => e.type);
const dies = (svc: ReservationService, id: string, op: StatusOperation) =>
  runOnReservation(svc.rt, id, null, { actor: 'test' }, (r, now) => decideStatusOperation(r, op, now));

t(
  'the end repair reads the reservations waiting for their end and nothing else: not the finished ones whose end is written',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const ended = (await create(svc, { start_at: at('20', '19:00') })).body.data;
    const left = (await create(svc, { start_at: at('21', '19:00') })).body.data;
    const ghost = (await create(svc, { start_at: at('22', '19:00') })).body.data;
    const crashed = (await create(svc, { start_at: at('23', '19:00') })).body.data;
    // Finished, their ends written: a no-show, a leave, a scheduler's DONE at the end.
    svc.clock.set(at('20', '19:40'));
    await markNoShows(svc.rt, 30);
    svc.clock.set(at('21', '19:05'));
    await cli(svc, 'seat', left.id);
    svc.clock.set(at('21', '19:30'));
    await cli(svc, 'leave', left.id);
    svc.clock.set(at('22', '19:05'));
    await cli(svc, 'seat', ghost.id);
    svc.clock.set(at('22', '20:31'));
    await finishSeatedReservations(svc.rt);
    // Died between the no-show and its end.
    svc.clock.set(at('23', '19:40'));
    await dies(svc, crashed.id, { kind: 'no_show', graceMinutes: 30 });
    assert.equal(await capacityTypes(svc, '23'), ['SeatingHeld']);
    svc.clock.set(at('23', '19:46'));
    const run = spied(svc.rt);
    assert.equal((await endFinishedSeatings(run.rt, 5)).changed, [crashed.id]);
    // One read, of seating_sync, by its index; the store hands the matcher the one waiting document.
    assert.is(run.finds.length, 1, JSON.stringify(run.finds));
    const [read] = run.finds as [(typeof run.finds)[number]];
    assert.is(read.collection, SEATING_SYNC);
    assert.equal(read.plan, { index: 'out_of_sync_end_repair', candidates: 1 });
    // The write side: the crashed reservation's streams only.
    for (const r of [ended, left, ghost])
      assert.not.ok(run.streams.includes(`reservation-${r.id}`), run.streams.join(', '));
    assert.equal(await capacityTypes(svc, '23'), ['SeatingHeld', 'SeatingEnded']);
    for (const r of [ended, left, ghost, crashed]) {
      const doc = await svc.rt.docs.collection<SeatingSyncDocV3>(SEATING_SYNC).findOne({ _id: r.id });
      assert.is(doc?.end_repair_day, undefined, r.id);
    }
    assert.equal((await endFinishedSeatings(spied(svc.rt).rt, 5)).changed, []);
  },
);

t(
  "a no-show's seat holds its table again and dies before its status: the repair waits from that hold, then ends it from the no-show",
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const late = (await create(svc, { start_at: at('24', '19:00') })).body.data;
    svc.clock.set(at('24', '19:40'));
    await markNoShows(svc.rt, 30);
    assert.equal(await capacityTypes(svc, '24'), ['SeatingHeld', 'SeatingEnded']);
    // Staff seat the guests at 19:50: the seating is held again first, then the status is written.
    svc.clock.set(at('24', '19:50'));
    await resumeSeating(svc.rt, 'rest_demo', '2026-06-24', late.id, { actor: 'test' });
    assert.equal(await capacityTypes(svc, '24'), ['SeatingHeld', 'SeatingEnded', 'SeatingHeld']);
    // The no-show is 11 minutes old, the hold 1: a seat still writing its status is left alone (ending
    // it here freed the table under guests about to be seated, then held it again unchecked).
    svc.clock.set(at('24', '19:51'));
    assert.equal((await endFinishedSeatings(svc.rt, 5)).changed, []);
    assert.equal(await capacityTypes(svc, '24'), ['SeatingHeld', 'SeatingEnded', 'SeatingHeld']);
    // Five minutes after the hold, no status came: the seat died. Free from the no-show again.
    svc.clock.set(at('24', '19:55'));
    assert.equal((await endFinishedSeatings(svc.rt, 5)).changed, [late.id]);
    const ends = (await svc.rt.events.readStream('capacity-rest_demo-2026-06-24')).filter(
      (e) => e.type === 'SeatingEnded',
    );
    assert.equal(
      ends.map((e) => e.data.ended_at),
      [new Date(at('24', '19:40')).toISOString(), new Date(at('24', '19:40')).toISOString()],
    );
    assert.is((await check(svc, at('24', '20:00'))).available, true);
  },
);

t(
  "guests seated while the no-show's end is written, its process gone before it holds the seating again: the repair holds it",
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const late = (await create(svc, { start_at: at('28', '19:00') })).body.data;
    // The no-show job writes the status at 19:40; the guests are seated just then (the seat lands on
    // the NO_SHOW, before its end: nothing ended to hold again); then the no-show's end is written and
    // its process dies before reading the reservation again (holdIfSeated).
    svc.clock.set(at('28', '19:40'));
    await dies(svc, late.id, { kind: 'no_show', graceMinutes: 30 });
    await dies(svc, late.id, { kind: 'seat' });
    svc.clock.set(at('28', '19:41'));
    await endSeating(
      svc.rt,
      'rest_demo',
      '2026-06-28',
      late.id,
      new Date(at('28', '19:40')).toISOString(),
      'NO_SHOW',
      { actor: 'test' },
    );
    assert.is((await check(svc, at('28', '19:45'))).available, true, 'seated guests, their table for sale');
    // A process may still be about to hold it: left alone for SEATING_REPAIR_AFTER_MINUTES.
    svc.clock.set(at('28', '19:43'));
    assert.equal((await endFinishedSeatings(svc.rt, 5)).changed, []);
    svc.clock.set(at('28', '19:46'));
    assert.equal((await endFinishedSeatings(svc.rt, 5)).changed, [late.id]);
    assert.equal(await capacityTypes(svc, '28'), ['SeatingHeld', 'SeatingEnded', 'SeatingHeld']);
    assert.is((await check(svc, at('28', '20:00'))).failure_reason, 'NO_TABLE');
    assert.is(await tableFree(svc, '28', '19:46', '20:30'), false);
    svc.clock.set(at('28', '19:52'));
    assert.equal((await endFinishedSeatings(svc.rt, 5)).changed, []);
  },
);

t(
  'two processes running the end repair at once: one writes the end, the other reports nothing',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const ghost = (await create(svc, { start_at: at('25', '19:00') })).body.data;
    svc.clock.set(at('25', '19:40'));
    await dies(svc, ghost.id, { kind: 'no_show', graceMinutes: 30 });
    svc.clock.set(at('25', '19:50'));
    // The second process has its candidates and is about to read their streams when the first (the
    // CLI's run-jobs beside the server, or another scheduler) writes the end.
    const first = spied(svc.rt);
    const second = spied(svc.rt, async () => {
      assert.equal((await endFinishedSeatings(first.rt, 5)).changed, [ghost.id]);
    });
    assert.equal((await endFinishedSeatings(second.rt, 5)).changed, []);
    assert.ok(second.streams.includes(`capacity-rest_demo-2026-06-25`), 'it did try');
    assert.equal(await capacityTypes(svc, '25'), ['SeatingHeld', 'SeatingEnded']);
    assert.equal([...first.lines, ...second.lines], []);
  },
);

t(
  'while an older seating_sync serves (a store built before version 3, rebuilding it), the end repair finds its candidates as before',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const ghost = (await create(svc, { start_at: at('27', '19:00') })).body.data;
    svc.clock.set(at('27', '19:40'));
    await dies(svc, ghost.id, { kind: 'no_show', graceMinutes: 30 });
    svc.clock.set(at('27', '19:46'));
    const run = spied(svc.rt);
    const older = { ...run.rt, versions: { activeVersion: () => 2 } } as unknown as Runtime;
    assert.equal((await endFinishedSeatings(older, 5)).changed, [ghost.id]);
    assert.equal(
      run.finds.map((f) => f.collection),
      [RESERVATIONS, BOOKINGS],
    );
    assert.equal(await capacityTypes(svc, '27'), ['SeatingHeld', 'SeatingEnded']);
  },
);

t('the end repair reports one it cannot end once instead of retrying it every minute', async ({ svc }) => {
  svc.clock.set('2026-06-02T10:00:00Z');
  const booked = (await create(svc, { start_at: at('26', '19:00') })).body.data;
  svc.clock.set(at('26', '19:40'));
  // The read model shows a no-show waiting for its end, while the log has the reservation booked:
  // nothing the repair can write.
  await svc.rt.refresh();
  const col = svc.rt.docs.collection<SeatingSyncDocV3>(SEATING_SYNC);
  await col.updateOne(
    { _id: booked.id },
    {
      $set: {
        status: 'NO_SHOW',
        finished_at: new Date(at('26', '19:35')).toISOString(),
        end_repair_since: new Date(at('26', '19:35')).toISOString(),
        end_repair_day: '2026-06-26',
        end_repair_end_at: new Date(at('26', '20:30')).toISOString(),
      },
    },
  );
  // One runtime for both runs, as the scheduler's.
  const run = spied(svc.rt);
  assert.equal((await endFinishedSeatings(run.rt, 5)).changed, []);
  assert.ok(run.streams.includes(`reservation-${booked.id}`), 'the write side was asked');
  assert.is(run.lines.filter((l) => l.includes(booked.id)).length, 1, run.lines.join('\n'));
  // The next minute: left alone, not reported again.
  svc.clock.set(at('26', '19:41'));
  run.streams.length = 0;
  run.lines.length = 0;
  assert.equal((await endFinishedSeatings(run.rt, 5)).changed, []);
  assert.not.ok(run.streams.includes(`reservation-${booked.id}`), run.streams.join(', '));
  assert.is(run.lines.filter((l) => l.includes(booked.id)).length, 0, run.lines.join('\n'));
});

t('the end repair does not read a keyed reservation whose planned end passed unrepaired', async ({ svc }) => {
  svc.clock.set('2026-06-02T10:00:00Z');
  const stale = (await create(svc, { start_at: at('29', '19:00') })).body.data;
  await svc.rt.refresh();
  // Keyed `later` (and, the other case, under today's day) as a repair that never succeeded before its
  // end leaves it: the refusal remembered in memory only, the process restarted since.
  const col = svc.rt.docs.collection<SeatingSyncDocV3>(SEATING_SYNC);
  const doc = await col.findOne({ _id: stale.id });
  const hold = doc?.holds?.['2026-06-29'];
  assert.ok(hold !== undefined, 'held');
  const end = new Date(seatingOfText(hold).end_at).toISOString();
  await col.updateOne(
    { _id: stale.id },
    {
      $set: {
        status: 'NO_SHOW',
        finished_at: new Date(at('29', '19:35')).toISOString(),
        end_repair_since: new Date(at('27', '19:35')).toISOString(),
        end_repair_day: 'later',
        end_repair_end_at: end,
      },
    },
  );
  for (const key of ['later', '2026-06-29']) {
    await col.updateOne({ _id: stale.id }, { $set: { end_repair_day: key } });
    // Before its end it is a candidate; after, not even read.
    svc.clock.set(at('29', '19:40'));
    const before = spied(svc.rt);
    await endFinishedSeatings(before.rt, 5);
    assert.equal(before.finds[0]?.plan, { index: 'out_of_sync_end_repair', candidates: 1 }, key);
    svc.clock.set(new Date(Date.parse(end) + 60_000).toISOString());
    const after = spied(svc.rt);
    assert.equal((await endFinishedSeatings(after.rt, 5)).changed, []);
    assert.is(after.finds.length, 1, JSON.stringify(after.finds));
    assert.equal(after.finds[0]?.plan, { index: 'out_of_sync_end_repair', candidates: 0 }, key);
  }
});

t.run();
