// Tracking a restaurant created before the night-seatings stream existed
// (commands/reservations/night-seatings-backfill.ts): its history is looked through once; tracked when
// nothing ever crossed midnight, recorded as crossed otherwise, and never tracked over a crossing
// recorded while it looked.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { capacityStream } from '../../commands/availability/capacity-events';
import { nightFact, recordCrossing } from '../../commands/reservations/night-seatings';
import { backfillNightSeatings } from '../../commands/reservations/night-seatings-backfill';
import { restaurantStream } from '../../commands/restaurants/events';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import { ANY, type EventStore } from '../../src/ports/event-store';
import { runCli } from '../helpers/cli-in-process';
import { startReservationService } from '../helpers/reservations';
import { restaurantProfile } from '../helpers/restaurants';

const t = suite('night-seatings: tracking a restaurant that predates it');
const meta = { actor: 'test' };
const AT = '2026-06-01T10:00:00.000Z';

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

/** A restaurant as versions before the stream wrote it: created, no NightSeatingsTracked. */
async function legacyRestaurant(events: EventStore, id: string, timezone = 'Europe/Paris') {
  await events.append(
    restaurantStream(id),
    [
      {
        type: 'RestaurantCreated',
        data: { restaurant_id: id, at: AT, ...restaurantProfile(id, { timezone }) },
      },
    ],
    ANY,
  );
}

/** A seating held by an old version (no crossing recorded before it). */
async function legacySeating(events: EventStore, id: string, day: string, start: string, end: string) {
  await events.append(
    capacityStream(id, day),
    [
      {
        type: 'SeatingHeld',
        data: {
          restaurant_id: id,
          service_date: day,
          reservation_id: `res_${id}_${start}`,
          shift_id: 'shift_dinner',
          room_id: null,
          table_ids: ['tbl_1'],
          start_at: start,
          end_at: end,
          party_size: 2,
          at: AT,
        },
      },
    ],
    ANY,
  );
}

const types = async (events: EventStore, id: string) =>
  (await events.readStream(`night-seatings-${id}`)).map((e) => e.type);

t('nothing ever crossed midnight: tracked, and holds read no neighbouring day', async () => {
  const events = new MemoryEventStore({ clock: new FixedClock(AT) });
  await legacyRestaurant(events, 'rest_a');
  await legacySeating(
    events,
    'rest_a',
    '2026-05-03',
    '2026-05-03T22:00:00+02:00',
    '2026-05-04T00:00:00+02:00',
  );
  // Another restaurant whose id starts the same crossed: not this one's history.
  await legacyRestaurant(events, 'rest_a-2');
  await legacySeating(
    events,
    'rest_a-2',
    '2026-05-03',
    '2026-05-03T23:30:00+02:00',
    '2026-05-04T01:00:00+02:00',
  );
  assert.is(await nightFact(elsewhere(events), 'rest_a'), 'maybe');
  assert.is(await backfillNightSeatings(events, 'rest_a', meta, AT), 'TRACKED');
  assert.equal(await types(events, 'rest_a'), ['NightSeatingsTracked']);
  assert.is(await nightFact(elsewhere(events), 'rest_a'), 'none');
  // Run again: nothing more written.
  assert.is(await backfillNightSeatings(events, 'rest_a', meta, AT), 'ALREADY_KNOWN');
  assert.equal(await types(events, 'rest_a'), ['NightSeatingsTracked']);
});

t('a seating crossed midnight: recorded as crossed, never tracked', async () => {
  const events = new MemoryEventStore({ clock: new FixedClock(AT) });
  await legacyRestaurant(events, 'rest_b');
  await legacySeating(
    events,
    'rest_b',
    '2026-05-03',
    '2026-05-04T00:30:00+02:00',
    '2026-05-04T01:30:00+02:00',
  );
  assert.is(await backfillNightSeatings(events, 'rest_b', meta, AT), 'CROSSED');
  assert.equal(await types(events, 'rest_b'), ['SeatingsCrossMidnight']);
  assert.is(await nightFact(elsewhere(events), 'rest_b'), 'maybe');
  assert.is(await backfillNightSeatings(events, 'rest_b', meta, AT), 'ALREADY_KNOWN');
});

t('a time zone changed: the calendar days moved, recorded as crossed', async () => {
  const events = new MemoryEventStore({ clock: new FixedClock(AT) });
  await legacyRestaurant(events, 'rest_c');
  await events.append(
    restaurantStream('rest_c'),
    [
      {
        type: 'RestaurantUpdated',
        data: { restaurant_id: 'rest_c', at: AT, changes: { timezone: 'America/New_York' } },
      },
    ],
    ANY,
  );
  assert.is(await backfillNightSeatings(events, 'rest_c', meta, AT), 'CROSSED');
  const stream = await events.readStream('night-seatings-rest_c');
  assert.equal(
    stream.map((e) => (e.data as { reason?: string }).reason),
    ['TIMEZONE_CHANGED'],
  );
});

t('a crossing recorded while the history is read wins: the restaurant stays untracked', async () => {
  const real = new MemoryEventStore({ clock: new FixedClock(AT) });
  await legacyRestaurant(real, 'rest_d');
  // A booking in another process holds a seating past midnight once the scan has read the log.
  const events: EventStore = {
    ...elsewhere(real),
    readAll: (o) => {
      const inner = real.readAll(o);
      return (async function* () {
        yield* inner;
        await recordCrossing(elsewhere(real), 'rest_d', 'SEATING', meta, AT);
      })();
    },
  };
  assert.is(await backfillNightSeatings(events, 'rest_d', meta, AT), 'ALREADY_KNOWN');
  assert.equal(await types(real, 'rest_d'), ['SeatingsCrossMidnight']);
  assert.is(await nightFact(elsewhere(real), 'rest_d'), 'maybe');
});

t('the operator command: a restaurant tracked from its creation is already known', async () => {
  const svc = await startReservationService();
  try {
    const out = await runCli(svc, 'reservations track-night-seatings', { restaurant: 'rest_demo' });
    assert.match(out.join('\n'), /^already known/);
    const unknown = await runCli(svc, 'reservations track-night-seatings', { restaurant: 'rest_nope' }).then(
      () => null,
      (err: unknown) => err,
    );
    assert.match(String(unknown), /restaurant rest_nope/);
  } finally {
    await svc.close();
  }
});

t.run();
