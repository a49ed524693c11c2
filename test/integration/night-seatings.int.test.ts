// The night-seatings fact (commands/reservations/night-seatings.ts) when a seating past midnight is
// recorded while the restaurant's creation is under way (after RestaurantCreated, before its
// NightSeatingsTracked): the crossing must win, so no reader ever takes the restaurant for one whose
// seatings never crossed midnight while a crossing seating exists, and the creation still succeeds.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { nightFact, recordCrossing } from '../../commands/reservations/night-seatings';
import { restaurantStream } from '../../commands/restaurants/events';
import { createRestaurant } from '../../commands/restaurants/handler';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import type { EventStore } from '../../src/ports/event-store';
import { restaurantProfile } from '../helpers/restaurants';

const t = suite('night-seatings: a crossing recorded before tracking starts');
const meta = { actor: 'test' };

/** Another object over the same log: its own (empty) cache of the fact, as another process has. */
const elsewhere = (real: EventStore): EventStore => ({
  kind: real.kind,
  append: (s, b, e, o) => real.append(s, b, e, o),
  readStream: (s, o) => real.readStream(s, o),
  readAll: (o) => real.readAll(o),
  subscribe: (o) => real.subscribe(o),
  headPosition: () => real.headPosition(),
  close: () => real.close(),
});

t(
  'a crossing between RestaurantCreated and startTracking: the creation succeeds, the fact says maybe',
  async () => {
    const clock = new FixedClock('2026-06-01T10:00:00.000Z');
    const real = new MemoryEventStore({ clock });
    // A booking (another process) records a seating past midnight right after the restaurant exists.
    const booking = elsewhere(real);
    let crossed = false;
    const events: EventStore = {
      ...elsewhere(real),
      append: async (s, b, e, o) => {
        const out = await real.append(s, b, e, o);
        if (s === restaurantStream('rest_x') && !crossed) {
          crossed = true;
          await recordCrossing(booking, 'rest_x', 'SEATING', meta, clock.now().toISOString());
        }
        return out;
      },
    };
    const outcome = await createRestaurant({ events, clock }, 'rest_x', restaurantProfile('rest-x'), meta);
    assert.ok(outcome.appended.length, 'the restaurant was not created');
    assert.ok(crossed);
    const stream = await real.readStream('night-seatings-rest_x');
    assert.equal(
      stream.map((e) => e.type),
      ['SeatingsCrossMidnight'],
    );
    assert.is(await nightFact(elsewhere(real), 'rest_x'), 'maybe');
  },
);

t('a restaurant tracked from its creation: the first crossing is recorded once', async () => {
  const clock = new FixedClock('2026-06-01T10:00:00.000Z');
  const events = new MemoryEventStore({ clock });
  await createRestaurant({ events, clock }, 'rest_y', restaurantProfile('rest-y'), meta);
  assert.is(await nightFact(events, 'rest_y'), 'none');
  await recordCrossing(events, 'rest_y', 'SEATING', meta, clock.now().toISOString());
  await recordCrossing(elsewhere(events), 'rest_y', 'SEATING', meta, clock.now().toISOString());
  const stream = await events.readStream('night-seatings-rest_y');
  assert.equal(
    stream.map((e) => e.type),
    ['NightSeatingsTracked', 'SeatingsCrossMidnight'],
  );
  assert.is(await nightFact(elsewhere(events), 'rest_y'), 'maybe');
});

t.run();
