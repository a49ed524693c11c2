// The scheduler's reservation jobs are not held back by one reservation. The repair job takes at most a
// batch of out-of-sync reservations a run. Those it can only report (an
// active reservation holding no seating: an operator must look) came first in every run, in no set
// order: a batch of them kept every later one from being repaired, and each was logged again every
// minute. Now: oldest first, and a reported one is looked at again only an hour later. And a reservation
// whose change fails unexpectedly failed the whole run, before the ones after it were reached.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { releaseSeating } from '../../commands/reservations/capacity-handler';
import { cancelReservation } from '../../commands/reservations/handler-status';
import { operatorMeta } from '../../src/core/command-meta';
import { markNoShows, repairSeatings } from '../../src/jobs/reservation-jobs';
import { withHook } from '../helpers/hooked-events';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';

const meta = operatorMeta('test');
const at = (day: string) => `2026-06-${day}T19:00:00+02:00`;

const t = suite<{ svc: ReservationService }>(
  'reservations: the repair job is not held back by what it cannot repair',
);
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

t(
  'two it can only report, then one it can repair, batches of two: the third is repaired next run',
  async ({ svc }) => {
    // Two active reservations whose seating is gone (nothing safe to do automatically).
    const stuck: string[] = [];
    for (const day of ['10', '11']) {
      const r = (await create(svc, { start_at: at(day) })).body.data;
      await releaseSeating(svc.rt, 'rest_demo', `2026-06-${day}`, r.id, 'MOVED', meta);
      stuck.push(r.id);
    }
    svc.clock.advance(60);
    // A minute later, a cancel whose release never ran: the repair releases it.
    const fixable = (await create(svc, { start_at: at('12') })).body.data;
    const dying = withHook(
      svc.rt,
      (s) => s.startsWith('capacity-'),
      async () => {
        throw new Error('the process died here');
      },
    );
    await cancelReservation(dying, 'rest_demo', fixable.id, 'storm', meta).catch(() => undefined);
    await svc.rt.settle(await svc.rt.events.headPosition());
    svc.clock.advance(10 * 60);
    // The oldest first: the two it can only report.
    assert.equal((await repairSeatings(svc.rt, 5, 2)).changed, []);
    // Reported, they wait an hour: the next run reaches the cancel.
    assert.equal((await repairSeatings(svc.rt, 5, 2)).changed, [fixable.id]);
    assert.equal((await repairSeatings(svc.rt, 5, 2)).changed, []);
    // An hour later they are looked at (and reported) again.
    svc.clock.advance(61 * 60);
    const again = await repairSeatings(svc.rt, 5, 2);
    assert.equal(again.changed, []);
    assert.is(again.skipped, 0);
  },
);

t(
  'a reservation whose no-show fails unexpectedly does not keep the next one from being marked',
  async ({ svc }) => {
    const first = (await create(svc, { start_at: '2026-06-20T19:00:00+02:00' })).body.data;
    const second = (await create(svc, { start_at: '2026-06-20T20:00:00+02:00' })).body.data;
    svc.clock.set('2026-06-20T18:31:00Z');
    const failing = withHook(
      svc.rt,
      (stream) => stream === `reservation-${first.id}`,
      async () => {
        throw new Error('the disk is full');
      },
    );
    const run = await markNoShows(failing, 30).then(
      () => null,
      (err: unknown) => err as Error,
    );
    // The run still fails, naming the reservation, but only after the others were marked.
    assert.match(run?.message ?? '', new RegExp(`${first.id}: the disk is full`));
    await svc.rt.refresh();
    const statusOf = async (id: string) => (await svc.rt.events.readStream(`reservation-${id}`)).at(-1)?.type;
    assert.is(statusOf.length, 1);
    const shown = async (id: string) =>
      (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data.status;
    assert.is(await shown(second.id), 'NO_SHOW');
    assert.is.not(await shown(first.id), 'NO_SHOW');
  },
);

t.run();
