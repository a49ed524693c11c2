// The windows between a reservation command's appends: a concurrent claim landing after our check,
// and a process dying after the seating is held. The event store is wrapped to make each happen at
// exactly the wrong moment; everything else is the real service.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimExternalId } from '../../commands/reservations/external-id';
import { createReservation } from '../../commands/reservations/handler-create';
import { setPosLock } from '../../commands/reservations/handler-records';
import { changeStatus } from '../../commands/reservations/handler-status';
import { updateReservation } from '../../commands/reservations/handler-update';
import { repairSeating } from '../../commands/reservations/repair';
import { repairSeatings } from '../../src/jobs/reservation-jobs';
import type { Runtime } from '../../src/runtime';
import { deadFrom, withHook, withHookAfter } from '../helpers/hooked-events';
import {
  create,
  NOW,
  type ReservationService,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: ReservationService }>('reservations: races');
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

const capacity = async (svc: TestService, day: string) =>
  (await svc.rt.events.readStream(`capacity-rest_demo-2026-06-${day}`)).map(
    (e) => `${e.type}:${e.data.reason ?? e.data.start_at}`,
  );

const claimedBySomeoneElse = (rt: Runtime) => async (stream: string) => {
  await rt.events.append(
    stream,
    [{ type: 'Claimed', data: { owner: 'res_someone_else', at: 'now' } }],
    'no_stream',
  );
};

t(
  'create: an external_id claimed by someone else after our check is refused before any table is held (409)',
  async ({ svc }) => {
    const rt = withHook(
      svc.rt,
      (s) => s.startsWith('reservation-external-id-'),
      claimedBySomeoneElse(svc.rt),
    );
    try {
      await createReservation(
        rt,
        restaurant,
        {
          party_size: 2,
          start_at: at('25', '19:00'),
          external_id: 'race-1',
          customer: { name: 'Late Racer', email: 'racer@example.com' },
        },
        meta,
      );
      assert.unreachable('the claim was taken');
    } catch (err) {
      assert.is((err as { status?: number }).status, 409);
    }
    await svc.rt.settle(await svc.rt.events.headPosition());
    // The claim comes before the hold: no table was taken, even for a moment.
    assert.equal(await capacity(svc, '25'), []);
    // Resolved only after the claim: the inline customer was never written.
    const customers = await svc.api('GET', '/customers?email=racer@example.com', { token: TOKENS.full });
    assert.equal(customers.body.data, []);
  },
);

t(
  'update: an external_id claimed after the new seating was held drops the move; the old seating was never given up',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('26', '19:00') })).body.data;
    const rt = withHook(
      svc.rt,
      (s) => s.startsWith('reservation-external-id-'),
      claimedBySomeoneElse(svc.rt),
    );
    try {
      await updateReservation(
        rt,
        restaurant,
        r.id,
        { start_at: at('26', '21:00'), external_id: 'race-2' },
        meta,
      );
      assert.unreachable('the claim was taken');
    } catch (err) {
      assert.is((err as { status?: number }).status, 409);
    }
    assert.equal(await capacity(svc, '26'), [
      'SeatingHeld:2026-06-26T19:00:00+02:00',
      'SeatingMoveHeld:2026-06-26T21:00:00+02:00',
      'SeatingMoveDropped:UPDATE_REFUSED',
    ]);
    const now = (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data;
    assert.is(now.start_at, r.start_at);
    assert.is(now.external_id, null);
  },
);

t(
  'update: someone else changing the reservation meanwhile makes the update start again from their state',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('27', '19:00') })).body.data;
    const rt = withHook(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      async () => {
        await svc.api('PATCH', `/reservations/${r.id}`, {
          token: TOKENS.full,
          body: { allergies: 'shellfish' },
        });
      },
    );
    const out = await updateReservation(rt, restaurant, r.id, { start_at: at('27', '20:00') }, meta);
    await svc.rt.settle(out.position);
    const now = (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data;
    assert.is(now.start_at, '2026-06-27T20:00:00+02:00');
    assert.is(now.allergies, 'shellfish');
    // The overtaken attempt dropped its move; the second one held, and confirmed, its own.
    const holds = await capacity(svc, '27');
    assert.equal(holds.slice(-4), [
      'SeatingMoveHeld:2026-06-27T20:00:00+02:00',
      'SeatingMoveDropped:UPDATE_REFUSED',
      'SeatingMoveHeld:2026-06-27T20:00:00+02:00',
      'SeatingMoveConfirmed:2026-06-27T20:00:00+02:00',
    ]);
  },
);

t(
  'update: a POS lock landing between our hold and our update drops the move: the reservation keeps its own seating',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('27', '21:00'), party_size: 7 })).body.data;
    const rt = withHook(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      async () => {
        await setPosLock(svc.rt, null, r.id, ['start_at'], meta);
      },
    );
    try {
      await updateReservation(rt, restaurant, r.id, { start_at: at('27', '19:00') }, meta);
      assert.unreachable('the start was locked meanwhile');
    } catch (err) {
      assert.equal((err as { details?: { locked_fields?: string[] } }).details?.locked_fields, ['start_at']);
    }
    await svc.rt.settle(await svc.rt.events.headPosition());
    const holds = (await svc.rt.events.readStream('capacity-rest_demo-2026-06-27')).filter(
      (e) => e.data.reservation_id === r.id,
    );
    assert.equal(
      holds.map((e) => e.type),
      ['SeatingHeld', 'SeatingMoveHeld', 'SeatingMoveDropped'],
    );
    assert.is(holds[0]?.data.start_at, '2026-06-27T21:00:00+02:00');
    // 19:00 is free again for someone else; 21:00 is still the reservation's.
    assert.is((await create(svc, { start_at: at('27', '19:00'), party_size: 7 })).status, 201);
    assert.is(
      (await create(svc, { start_at: at('27', '21:00'), party_size: 7 })).body.error.details.reason,
      'NO_TABLE',
    );
  },
);

t(
  'update: a PATCH that creates the customer, overtaken as it connects it, reads the reservation again: one customer',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('24', '19:00') })).body.data;
    const rt = withHook(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      async () => {
        await svc.api('PATCH', `/reservations/${r.id}`, {
          token: TOKENS.full,
          body: { allergies: 'celery' },
        });
      },
    );
    // Name only: nothing to match on, so only the first attempt's customer can be the one.
    const out = await updateReservation(rt, restaurant, r.id, { customer: { name: 'Only Once' } }, meta);
    await svc.rt.settle(out.position);
    const now = (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data;
    assert.is(now.allergies, 'celery');
    assert.is(now.customer.name, 'Only Once');
    const feed = await svc.api('GET', '/customers?limit=100', { token: TOKENS.full });
    const named = feed.body.data.filter((c: { name: string }) => c.name === 'Only Once');
    assert.equal(
      named.map((c: { id: string }) => c.id),
      [now.customer.id],
    );
    assert.is(named[0].stats.reservation_count, 1);
  },
);

t(
  'update: a cancel landing between the update and its move confirmation leaves no table held',
  async ({ svc }) => {
    // Only tbl_8 seats 7: whoever holds it makes the slot full for a party of 7.
    const r = (await create(svc, { party_size: 7, start_at: at('23', '19:00') })).body.data;
    for (const [label, start] of [
      ['same day', at('23', '21:00')],
      ['another day', at('22', '21:00')],
    ] as const) {
      const target =
        label === 'same day'
          ? r
          : (await create(svc, { party_size: 7, start_at: at('21', '19:00') })).body.data;
      // The cancel lands once the update is recorded, before its move is confirmed.
      const rt = withHookAfter(
        svc.rt,
        (s) => s === `reservation-${target.id}`,
        async () => {
          const canceled = await svc.api('POST', `/reservations/${target.id}/cancel`, {
            token: TOKENS.full,
            body: { reason: label },
          });
          assert.is(canceled.status, 200);
        },
      );
      const out = await updateReservation(rt, restaurant, target.id, { start_at: start }, meta);
      await svc.rt.settle(out.position);
      const now = (await svc.api('GET', `/reservations/${target.id}`, { token: TOKENS.full })).body.data;
      assert.is(now.status, 'CANCELED_BY_RESTAURANT');
      // The canceled reservation holds nothing: the table is free at once, not after a repair.
      const again = await create(svc, { party_size: 7, start_at: start });
      assert.is(again.status, 201, label);
      await svc.api('POST', `/reservations/${again.body.data.id}/cancel`, { token: TOKENS.full, body: {} });
    }
  },
);

t(
  'update: the same external_id sent twice at once (a retried PATCH) keeps its claim; it stays unique',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('20', '19:00') })).body.data;
    const seen: { retried?: { status: number; body: { data: { external_id: string } } } } = {};
    // The first PATCH has claimed the value; its retry runs whole before the first's update lands.
    const rt = withHook(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      async () => {
        seen.retried = await svc.api('PATCH', `/reservations/${r.id}`, {
          token: TOKENS.full,
          body: { external_id: 'twice-1' },
        });
      },
    );
    const out = await updateReservation(rt, restaurant, r.id, { external_id: 'twice-1' }, meta);
    await svc.rt.settle(out.position);
    // The retry is the same reservation's: not a conflict.
    assert.is(seen.retried?.status, 200);
    assert.is(seen.retried?.body.data.external_id, 'twice-1');
    const now = (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data;
    assert.is(now.external_id, 'twice-1');
    // The overtaken first attempt did not give back the claim the reservation shows.
    const claim = await svc.rt.events.readStream('reservation-external-id-rest_demo-twice-1');
    assert.is(claim.at(-1)?.type, 'Claimed');
    const other = await create(svc, { start_at: at('20', '20:00'), external_id: 'twice-1' });
    assert.is(other.status, 409);
  },
);

t('a create that dies after holding its seating holds it only until the repair job runs', async ({ svc }) => {
  const dying = withHook(
    svc.rt,
    (s) => s.startsWith('reservation-res_'),
    async () => {
      throw new Error('the process died here');
    },
  );
  try {
    await createReservation(
      dying,
      restaurant,
      { party_size: 7, start_at: at('28', '20:00'), external_id: 'lost-1' },
      meta,
    );
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, /died/);
  }
  await svc.rt.settle(await svc.rt.events.headPosition());
  // tbl_8 (the only table for 7) is held by a reservation that does not exist, and external_id taken.
  const blocked = await create(svc, { party_size: 7, start_at: at('28', '20:00') });
  assert.is(blocked.body.error.details.reason, 'NO_TABLE');
  assert.is((await create(svc, { start_at: at('28', '22:00'), external_id: 'lost-1' })).status, 409);
  // Not yet: a request may still be finishing.
  assert.equal((await repairSeatings(svc.rt, 5)).changed, []);
  svc.clock.advance(5 * 60);
  const repaired = await repairSeatings(svc.rt, 5);
  assert.is(repaired.changed.length, 1);
  const holds = await capacity(svc, '28');
  assert.is(holds.at(-1), 'SeatingReleased:ABANDONED_HOLD');
  // The reservation stream is fenced: the abandoned reservation can never appear late.
  const fenced = await svc.rt.events.readStream(`reservation-${repaired.changed[0]}`);
  assert.equal(
    fenced.map((e) => e.type),
    ['ReservationCreationAbandoned'],
  );
  assert.is(
    (await svc.api('GET', `/reservations/${repaired.changed[0]}`, { token: TOKENS.full })).status,
    404,
  );
  // Capacity and the external_id are free again: the partner's retry succeeds.
  const retry = await create(svc, { party_size: 7, start_at: at('28', '20:00'), external_id: 'lost-1' });
  assert.is(retry.status, 201);
  // Nothing left to repair.
  assert.equal((await repairSeatings(svc.rt, 5)).changed, []);
});

t(
  'create: refused at the hold (no table), it gives its external_id claim back before answering',
  async ({ svc }) => {
    assert.is((await create(svc, { party_size: 7, start_at: at('25', '21:00') })).status, 201);
    const refused = await create(svc, {
      party_size: 7,
      start_at: at('25', '21:00'),
      external_id: 'no-table-1',
    });
    assert.is(refused.body.error.details.reason, 'NO_TABLE');
    assert.equal(
      (await svc.rt.events.readStream('reservation-external-id-rest_demo-no-table-1')).map((e) => e.type),
      ['Claimed', 'Released'],
    );
    assert.is((await create(svc, { start_at: at('25', '21:00'), external_id: 'no-table-1' })).status, 201);
  },
);

t(
  'a create that dies after claiming its external_id, before its hold, frees it when the repair job runs',
  async ({ svc }) => {
    // Dead at its hold: no later append either (a thrown error would make it give the claim back).
    const dying = deadFrom(svc.rt, (s) => s.startsWith('capacity-'));
    try {
      await createReservation(
        dying,
        restaurant,
        { party_size: 7, start_at: at('30', '20:00'), external_id: 'lost-0' },
        meta,
      );
      assert.unreachable();
    } catch (err) {
      assert.match((err as Error).message, /died/);
    }
    await svc.rt.settle(await svc.rt.events.headPosition());
    // No table held, but the external_id is taken by a reservation that does not exist.
    assert.equal(await capacity(svc, '30'), []);
    assert.is((await create(svc, { start_at: at('30', '19:00'), external_id: 'lost-0' })).status, 409);
    // Not yet: a request may still be finishing.
    assert.equal((await repairSeatings(svc.rt, 5)).changed, []);
    svc.clock.advance(5 * 60);
    const repaired = await repairSeatings(svc.rt, 5);
    assert.is(repaired.changed.length, 1);
    assert.equal(
      (await svc.rt.events.readStream(`reservation-${repaired.changed[0]}`)).map((e) => e.type),
      ['ReservationCreationAbandoned'],
    );
    assert.equal(
      (await svc.rt.events.readStream('reservation-external-id-rest_demo-lost-0')).map((e) => e.type),
      ['Claimed', 'Released'],
    );
    // The partner's retry succeeds.
    const retry = await create(svc, { party_size: 7, start_at: at('30', '20:00'), external_id: 'lost-0' });
    assert.is(retry.status, 201);
    assert.equal((await repairSeatings(svc.rt, 5)).changed, []);
  },
);

t(
  'an external_id claimed for a reservation that never came (no seating either) is freed by the repair job',
  async ({ svc }) => {
    // What a create that died between its claim and its hold leaves: the claim, nothing else.
    const orphan = 'res_orphanclaim';
    await claimExternalId(svc.rt, 'rest_demo', 'lost-2', orphan, meta);
    await svc.rt.settle(await svc.rt.events.headPosition());
    assert.is((await create(svc, { start_at: at('28', '19:00'), external_id: 'lost-2' })).status, 409);
    // Not yet: a request may still be finishing.
    assert.equal((await repairSeatings(svc.rt, 5)).changed, []);
    svc.clock.advance(5 * 60);
    assert.equal((await repairSeatings(svc.rt, 5)).changed, [orphan]);
    // Fenced first, then released: the late ReservationCreated of that create could never land.
    assert.equal(
      (await svc.rt.events.readStream(`reservation-${orphan}`)).map((e) => e.type),
      ['ReservationCreationAbandoned'],
    );
    assert.equal(
      (await svc.rt.events.readStream('reservation-external-id-rest_demo-lost-2')).map((e) => e.type),
      ['Claimed', 'Released'],
    );
    const retry = await create(svc, { start_at: at('28', '19:00'), external_id: 'lost-2' });
    assert.is(retry.status, 201);
    assert.equal((await repairSeatings(svc.rt, 5)).changed, []);
  },
);

t(
  'a create still running when the repair fences it is refused (409) and leaves nothing held',
  async ({ svc }) => {
    // The create got as far as ReservationCreated, then stalled past the repair delay.
    const stalled = withHook(
      svc.rt,
      (s) => s.startsWith('reservation-res_'),
      async () => {
        svc.clock.advance(6 * 60);
        assert.is((await repairSeatings(svc.rt, 5)).changed.length, 1);
      },
    );
    try {
      await createReservation(
        stalled,
        restaurant,
        { party_size: 7, start_at: at('29', '22:00'), external_id: 'late-1' },
        meta,
      );
      assert.unreachable('the fence was there first');
    } catch (err) {
      assert.is((err as { status?: number }).status, 409);
    }
    await svc.rt.settle(await svc.rt.events.headPosition());
    assert.equal(
      (await svc.rt.events.readStream('reservation-external-id-rest_demo-late-1')).map((e) => e.type),
      ['Claimed', 'Released'],
    );
    assert.is((await capacity(svc, '29')).at(-1), 'SeatingReleased:ABANDONED_HOLD');
    const retry = await create(svc, { party_size: 7, start_at: at('29', '22:00'), external_id: 'late-1' });
    assert.is(retry.status, 201);
  },
);

t(
  'a create that writes ReservationCreated just before the repair fences it keeps its claim and seating',
  async ({ svc }) => {
    // The create stalls before ReservationCreated…
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let reservationId = '';
    let stalled: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => {
      stalled = resolve;
    });
    const slow = withHook(
      svc.rt,
      (s) => s.startsWith('reservation-res_'),
      async (stream) => {
        reservationId = stream.slice('reservation-'.length);
        stalled();
        await gate;
      },
    );
    const creating = createReservation(
      slow,
      restaurant,
      { party_size: 2, start_at: at('29', '19:00'), external_id: 'slow-1' },
      meta,
    );
    await reached;
    // …the repair sees no reservation behind the claim and the seating, and goes to fence the stream;
    // the create's ReservationCreated lands first.
    const racing = withHook(
      svc.rt,
      (s) => s === `reservation-${reservationId}`,
      async () => {
        open();
        await creating;
      },
    );
    const out = await repairSeating(racing, 'rest_demo', reservationId, ['2026-06-29'], meta, ['slow-1']);
    assert.equal(out.steps, []);
    assert.equal(
      (await svc.rt.events.readStream(`reservation-${reservationId}`)).map((e) => e.type),
      ['ReservationCreated'],
    );
    assert.equal(
      (await svc.rt.events.readStream('reservation-external-id-rest_demo-slow-1')).map((e) => e.type),
      ['Claimed'],
    );
    assert.is((await capacity(svc, '29')).at(-1), 'SeatingHeld:2026-06-29T19:00:00+02:00');
    await svc.rt.settle(await svc.rt.events.headPosition());
    assert.is((await create(svc, { start_at: at('29', '20:00'), external_id: 'slow-1' })).status, 409);
  },
);

t('a cancel whose release never ran is released by the repair job', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('29', '20:00'), party_size: 7 })).body.data;
  const dying = withHook(
    svc.rt,
    (s) => s.startsWith('capacity-'),
    async () => {
      throw new Error('the process died here');
    },
  );
  const { cancelReservation } = await import('../../commands/reservations/handler-status');
  try {
    await cancelReservation(dying, 'rest_demo', r.id, 'storm', meta);
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, /died/);
  }
  await svc.rt.settle(await svc.rt.events.headPosition());
  assert.is(
    (await create(svc, { start_at: at('29', '20:00'), party_size: 7 })).body.error.details.reason,
    'NO_TABLE',
  );
  svc.clock.advance(6 * 60);
  assert.equal((await repairSeatings(svc.rt, 5)).changed, [r.id]);
  assert.is((await capacity(svc, '29')).at(-1), 'SeatingReleased:CANCELED');
  assert.is((await create(svc, { start_at: at('29', '20:00'), party_size: 7 })).status, 201);
});

t(
  "update: guests leaving between a seated party's update and its move confirmation free the table from their leave",
  async ({ svc }) => {
    // Only tbl_8 seats 7; the party is seated, grows to 8 (a same-start move), and leaves at 19:40
    // once the update is recorded, before its move is confirmed.
    const r = (await create(svc, { party_size: 7, start_at: at('24', '19:00') })).body.data;
    svc.clock.set(at('24', '19:10'));
    await changeStatus(svc.rt, null, r.id, { kind: 'seat' }, meta);
    svc.clock.set(at('24', '19:40'));
    const rt = withHookAfter(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      async () => {
        await changeStatus(svc.rt, null, r.id, { kind: 'leave' }, meta);
      },
    );
    const out = await updateReservation(rt, restaurant, r.id, { party_size: 8 }, meta);
    await svc.rt.settle(out.position);
    const now = (await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full })).body.data;
    assert.is(now.status, 'DONE');
    assert.is(now.party_size, 8);
    // The confirmed seating was ended at the leave: the table is free from 19:40, not from 20:30.
    const next = await create(svc, { party_size: 7, start_at: at('24', '19:45') });
    assert.is(next.status, 201, JSON.stringify(next.body));
    svc.clock.set(NOW);
  },
);

t.run();
