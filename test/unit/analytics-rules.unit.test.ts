import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESERVATION_STATUSES } from '../../commands/reservations/events';
import { addFacts, emptyFigures, type ReservationFacts } from '../../projections/analytics/figures';
import {
  bucketKey,
  bucketValue,
  cancellationRate,
  histogramQuantile,
  LEAD_TIME_BUCKETS,
  leadTimeBucket,
  leadTimeMinutes,
  noShowRate,
  outcomeOf,
  partySizeGroup,
} from '../../projections/analytics/rules';

test('every status has an outcome; no-show and cancellation rates use their documented denominators', () => {
  const outcomes = new Set(RESERVATION_STATUSES.map(outcomeOf));
  assert.equal([...outcomes].sort(), ['canceled', 'confirmed', 'honoured', 'no_show', 'pending', 'rejected']);
  assert.is(outcomeOf('DONE'), 'honoured');
  assert.is(outcomeOf('SEATED_FOR_DRINKS'), 'honoured');
  assert.is(outcomeOf('CANCELED_BY_RESTAURANT'), 'canceled');
  assert.is(noShowRate(1, 3), 0.25);
  assert.is(noShowRate(0, 0), null, 'no known outcome yet: no rate, not 0');
  assert.is(cancellationRate(1, 3), 0.3333);
  assert.is(cancellationRate(0, 0), null);
});

test('lead time: whole minutes from booking to start, never negative', () => {
  assert.is(leadTimeMinutes('2026-06-01T10:00:00Z', '2026-06-01T12:30:59+02:00'), 30);
  assert.is(leadTimeMinutes('2026-06-01T10:00:00Z', '2026-06-01T09:00:00Z'), 0);
  assert.is(leadTimeMinutes('2026-06-01T10:00:00Z', '2026-06-03T10:00:00Z'), 2880);
});

test('lead-time buckets: each minute falls in the bucket whose bounds hold it', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 3 * 365 * 24 * 60 }), (m) => {
      const i = leadTimeBucket(m);
      assert.ok((LEAD_TIME_BUCKETS[i] as number) <= m);
      if (i + 1 < LEAD_TIME_BUCKETS.length) assert.ok(m < (LEAD_TIME_BUCKETS[i + 1] as number));
    }),
  );
  assert.is(leadTimeBucket(0), 0);
  assert.is(leadTimeBucket(14), 0);
  assert.is(leadTimeBucket(15), 1);
  assert.is(bucketKey(leadTimeBucket(60 * 24)), '1440');
});

test('median and p90 from the histogram lie in the bucket of the exact nearest-rank quantile', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 500 * 24 * 60 }), { minLength: 1, maxLength: 200 }),
      fc.constantFrom(0.5, 0.9, 0.99, 1),
      (leads, q) => {
        const hist: Record<string, number> = {};
        for (const m of leads) {
          const k = bucketKey(leadTimeBucket(m));
          hist[k] = (hist[k] ?? 0) + 1;
        }
        const sorted = [...leads].sort((a, b) => a - b);
        const exact = sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;
        assert.is(histogramQuantile(hist, q), bucketValue(leadTimeBucket(exact)));
      },
    ),
  );
  assert.is(histogramQuantile({}, 0.5), null);
  assert.is(histogramQuantile({ '0': 1, '60': 1, '120': 2 }, 0.5), 120, '2nd of 4 is in [60,120)');
  assert.is(histogramQuantile({ [bucketKey(LEAD_TIME_BUCKETS.length - 1)]: 3 }, 0.9), 365 * 24 * 60);
});

test('party-size groups', () => {
  assert.equal([1, 2, 10, 11, 20, 21, 1000].map(partySizeGroup), [
    '1',
    '2',
    '10',
    '11-20',
    '11-20',
    '21+',
    '21+',
  ]);
});

const facts = (over: Partial<ReservationFacts>): ReservationFacts => ({
  restaurant_id: 'rest_a',
  service_date: '2026-06-01',
  shift_id: 'dinner',
  status: 'CONFIRMED',
  source: 'WEBSITE',
  party_size: 2,
  created_at: '2026-05-31T19:00:00Z',
  start_at: '2026-06-01T21:00:00+02:00',
  customer_id: 'cus_1',
  guest: 'new',
  ...over,
});

test('a day of figures, computed by hand', () => {
  const day = emptyFigures(facts({}), false);
  addFacts(day, facts({ status: 'DONE', party_size: 4 }), 1);
  addFacts(day, facts({ status: 'NO_SHOW', guest: 'returning' }), 1);
  addFacts(day, facts({ status: 'CANCELED_BY_CUSTOMER', source: 'PHONE', party_size: 12 }), 1);
  addFacts(
    day,
    facts({ status: 'SEATED', source: 'WALK_IN', created_at: '2026-06-01T19:00:00Z', guest: 'unknown' }),
    1,
  );
  assert.is(day.reservations, 4);
  assert.is(day.covers, 20);
  assert.equal(day.by_outcome, {
    honoured: { reservations: 2, covers: 6 },
    no_show: { reservations: 1, covers: 2 },
    canceled: { reservations: 1, covers: 12 },
  });
  assert.equal(day.by_source, {
    WEBSITE: { reservations: 2, covers: 6 },
    PHONE: { reservations: 1, covers: 12 },
    WALK_IN: { reservations: 1, covers: 2 },
  });
  assert.equal(day.by_party_size, { '2': 2, '4': 1, '11-20': 1 });
  assert.equal(day.guests, { new: 2, returning: 1, unknown: 1 });
  assert.is(day.no_show_rate, 0.3333, '1 no-show of 3 known outcomes');
  assert.is(day.cancellation_rate, 0.25);
  // Three bookings 24 h ahead (the walk-in is not counted): bucket [1 d, 2 d) reports 2 d.
  assert.is(day.lead_time.count, 3);
  assert.equal(day.lead_time.histogram, { '1440': 3 });
  assert.is(day.lead_time.median_minutes, 2880);
  // Removing what was added gives the empty day back.
  addFacts(day, facts({ status: 'DONE', party_size: 4 }), -1);
  addFacts(day, facts({ status: 'NO_SHOW', guest: 'returning' }), -1);
  addFacts(day, facts({ status: 'CANCELED_BY_CUSTOMER', source: 'PHONE', party_size: 12 }), -1);
  addFacts(
    day,
    facts({ status: 'SEATED', source: 'WALK_IN', created_at: '2026-06-01T19:00:00Z', guest: 'unknown' }),
    -1,
  );
  assert.equal(day, emptyFigures(facts({}), false));
});

test.run();
