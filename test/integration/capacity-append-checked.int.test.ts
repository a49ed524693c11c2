// appendChecked (commands/reservations/capacity-handler.ts) on a memory log: a seating past midnight
// on a restaurant read as 'maybe' for want of tracking is still recorded as crossing; and when giving
// back its own seating after a failure fails too, the first failure stays the answer (logged undo).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decideRelease } from '../../commands/reservations/capacity-decide';
import { appendChecked } from '../../commands/reservations/capacity-handler';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import type { EventStore } from '../../src/ports/event-store';

const t = suite('capacity: appendChecked');
const meta = { actor: 'test', request_id: 'req_1' };

/** A seating of the 10th's night to 01:00 on the 11th (it crosses midnight). */
const held = (restaurantId: string) => ({
  restaurant_id: restaurantId,
  service_date: '2026-06-10',
  reservation_id: 'res_1',
  shift_id: 'shift_night',
  room_id: null,
  table_ids: ['tbl_a'],
  start_at: '2026-06-10T23:30:00+02:00',
  end_at: '2026-06-11T01:00:00+02:00',
  party_size: 2,
  at: '2026-06-01T10:00:00.000Z',
  external_id: null,
  force_inserted: false,
});

const hold = (events: EventStore, clock: FixedClock, restaurantId: string, logger?: { warn: () => void }) =>
  appendChecked(
    { events, clock, ...(logger ? { logger } : {}) },
    restaurantId,
    '2026-06-10',
    'res_1',
    () => {
      const data = held(restaurantId);
      return { events: [{ type: 'SeatingHeld', data }], seating: data };
    },
    (state, now) =>
      decideRelease(state, restaurantId, '2026-06-10', 'res_1', 'CREATE_REFUSED', now.toISOString()),
    meta,
  );

t('a seating past midnight on an untracked restaurant records the crossing', async () => {
  const clock = new FixedClock('2026-06-01T10:00:00.000Z');
  const events = new MemoryEventStore({ clock });
  await hold(events, clock, 'rest_u');
  const night = await events.readStream('night-seatings-rest_u');
  assert.equal(
    night.map((e) => e.type),
    ['SeatingsCrossMidnight'],
  );
});

t('an undo that fails after a failure: the first failure is the answer, the undo logged', async () => {
  const clock = new FixedClock('2026-06-01T10:00:00.000Z');
  const real = new MemoryEventStore({ clock });
  let dayAppends = 0;
  const events: EventStore = {
    kind: real.kind,
    append: async (s, b, e, o) => {
      if (s === 'capacity-rest_g-2026-06-11') throw new Error('the note failed');
      if (s === 'capacity-rest_g-2026-06-10' && ++dayAppends > 1) throw new Error('the undo failed');
      return real.append(s, b, e, o);
    },
    readStream: (s, o) => real.readStream(s, o),
    readAll: (o) => real.readAll(o),
    subscribe: (o) => real.subscribe(o),
    headPosition: () => real.headPosition(),
    close: () => real.close(),
  };
  const logged: unknown[][] = [];
  let answer: unknown = null;
  try {
    await hold(events, clock, 'rest_g', { warn: (...args: unknown[]) => void logged.push(args) });
  } catch (err) {
    answer = err;
  }
  assert.ok(answer instanceof Error, 'the hold succeeded');
  assert.is((answer as Error).message, 'the note failed');
  assert.is(dayAppends, 2, 'no undo was tried');
  assert.is(logged.length, 1);
  const line = JSON.stringify(logged[0]);
  assert.match(line, /capacity-rest_g-2026-06-10/);
  assert.match(line, /the undo failed/);
});

t.run();
