// The scheduler's reservation jobs, called directly with the service's fixed clock (cron only decides
// when they run).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { changeStatus } from '../../commands/reservations/handler-status';
import { RESERVATIONS, type ReservationDoc } from '../../projections/reservations';
import { ConfigError } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import {
  finishSeatedReservations,
  markNoShows,
  reservationJobSettings,
} from '../../src/jobs/reservation-jobs';
import { registerModules } from '../../src/modules';
import { scheduledJobs, startScheduler } from '../../src/scheduler';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: ReservationService }>('reservations: scheduler');
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

const get = async (svc: TestService, id: string) =>
  (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;

t('seated reservations past their end become DONE, as a SYSTEM status change', async ({ svc }) => {
  const seated = (await create(svc, { start_at: '2026-06-03T19:00:00+02:00' })).body.data;
  const waiting = (await create(svc, { start_at: '2026-06-03T19:30:00+02:00' })).body.data;
  svc.clock.set('2026-06-03T16:55:00Z'); // 18:55 in Paris: the guests are there
  await svc.rt.settle(
    (await changeStatus(svc.rt, null, seated.id, { kind: 'seat' }, operatorMeta('t'))).position,
  );
  svc.clock.set('2026-06-03T18:29:00Z'); // 20:29 in Paris: one minute before the seating ends
  assert.equal((await finishSeatedReservations(svc.rt)).changed, []);
  svc.clock.set('2026-06-03T18:30:00Z');
  assert.equal((await finishSeatedReservations(svc.rt)).changed, [seated.id]);
  const done = await get(svc, seated.id);
  assert.is(done.status, 'DONE');
  assert.is(done.left_at, '2026-06-03T18:30:00.000Z');
  const events = await svc.rt.events.readStream(`reservation-${seated.id}`);
  assert.equal(events.at(-1)?.data.actor_kind, 'SYSTEM');
  assert.is(events.at(-1)?.metadata.actor, 'system:scheduler');
  // Not seated: not finished by this job.
  assert.is((await get(svc, waiting.id)).status, 'CONFIRMED');
  // Running again finds nothing.
  assert.equal((await finishSeatedReservations(svc.rt)).changed, []);
});

t('seatings still running that started earlier do not hold back one that has ended', async () => {
  const svc = await startReservationService();
  try {
    const ended = (await create(svc, { start_at: '2026-06-03T19:00:00+02:00' })).body.data;
    svc.clock.set('2026-06-03T17:00:00Z'); // 19:00 in Paris: the guests are there
    await svc.rt.settle(
      (await changeStatus(svc.rt, null, ended.id, { kind: 'seat' }, operatorMeta('t'))).position,
    );
    // More seatings than a run takes (500), all started earlier and running until late (any
    // restaurant's: the read model is shared): written straight into the read model the job reads.
    const col = svc.rt.docs.collection<ReservationDoc>(RESERVATIONS);
    const doc = (await col.findOne({ _id: ended.id })) as ReservationDoc;
    await col.insertMany(
      Array.from({ length: 501 }, (_, i) => ({
        ...doc,
        _id: `res_long_${i}`,
        start_at: '2026-06-03T18:00:00+02:00',
        start_at_utc: '2026-06-03T16:00:00.000Z',
        end_at: '2026-06-03T23:59:00+02:00',
      })),
    );
    svc.clock.set('2026-06-03T18:30:00Z'); // 20:30 in Paris: the 19:00 seating has ended
    assert.equal((await finishSeatedReservations(svc.rt)).changed, [ended.id]);
    assert.is((await get(svc, ended.id)).status, 'DONE');
  } finally {
    await svc.close();
  }
});

t(
  'reservations never seated become NO_SHOW after the grace period; pending and seated ones do not',
  async ({ svc }) => {
    svc.clock.set('2026-06-02T10:00:00Z');
    const day = '2026-06-04';
    const booked = (await create(svc, { start_at: `${day}T19:00:00+02:00` })).body.data;
    const pending = (await create(svc, { start_at: `${day}T12:00:00+02:00` })).body.data;
    const unpaid = (await create(svc, { start_at: `${day}T10:30:00+02:00` })).body.data;
    const arrived = (await create(svc, { start_at: `${day}T19:00:00+02:00` })).body.data;
    assert.is(pending.status, 'PENDING');
    assert.is(unpaid.status, 'PENDING_PAYMENT');
    svc.clock.set(`${day}T16:50:00Z`); // 18:50 Paris: the 19:00 guests who came are there
    await svc.rt.settle(
      (await changeStatus(svc.rt, null, arrived.id, { kind: 'seat' }, operatorMeta('t'))).position,
    );
    svc.clock.set(`${day}T17:29:00Z`); // 19:29 Paris: 29 minutes after the start
    // The unpaid brunch (10:30) and yesterday's unseated dinner of the first test; not yet the 19:00.
    const early = (await markNoShows(svc.rt, 30)).changed;
    assert.ok(early.includes(unpaid.id));
    assert.not.ok(early.includes(booked.id));
    svc.clock.set(`${day}T17:30:00Z`);
    assert.equal((await markNoShows(svc.rt, 30)).changed, [booked.id]);
    assert.is((await get(svc, booked.id)).status, 'NO_SHOW');
    assert.is((await get(svc, pending.id)).status, 'PENDING');
    assert.is((await get(svc, arrived.id)).status, 'SEATED');
    // A no-show who turns up late can still be seated.
    await changeStatus(svc.rt, null, booked.id, { kind: 'seat' }, operatorMeta('t'));
  },
);

t('settings come from the environment and a bad value stops the start', () => {
  assert.equal(reservationJobSettings({}), { noShowGraceMinutes: 30, repairAfterMinutes: 5 });
  assert.equal(reservationJobSettings({ NO_SHOW_GRACE_MINUTES: '45', SEATING_REPAIR_AFTER_MINUTES: '10' }), {
    noShowGraceMinutes: 45,
    repairAfterMinutes: 10,
  });
  assert.throws(
    () => reservationJobSettings({ NO_SHOW_GRACE_MINUTES: 'soon' }),
    (e: unknown) => e instanceof ConfigError,
  );
  assert.throws(
    () => reservationJobSettings({ SEATING_REPAIR_AFTER_MINUTES: '0' }),
    /SEATING_REPAIR_AFTER_MINUTES/,
  );
});

t('the scheduler role runs the registered jobs on cron and stops cleanly', async ({ svc }) => {
  registerModules();
  const names = scheduledJobs().map((j) => j.name);
  for (const n of [
    'reservations-finish',
    'reservations-no-show',
    'reservations-repair-seatings',
    'missed-call-caller-keys',
  ])
    assert.ok(names.includes(n));
  assert.throws(() => startScheduler(svc.rt, { NO_SHOW_GRACE_MINUTES: 'x' }), /NO_SHOW_GRACE_MINUTES/);
  const scheduler = startScheduler(svc.rt, {});
  await scheduler.stop();
});

t.run();
