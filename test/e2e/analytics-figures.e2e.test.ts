// The analytics figures checked against docs/analytics.md by hand: a varied history (moves across
// days, shifts and a DST change, a shift past midnight, party sizes changed, statuses of every
// outcome, sources, lead times from minutes to more than a year on bucket bounds, new and returning
// guests, a merge, an erasure) is driven through the service, and `analytics export` (NDJSON per day
// and per shift, and CSV) must show the figures worked out by hand below from the doc's definitions:
// literal numbers, never recomputed with rules of the test's own (a copy of a rule cannot catch a
// wrong rule). Then the same after the erasure and after a rebuild.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeCustomers } from '../../commands/customers/merge';
import type { StatusOperation } from '../../commands/reservations/decide-status';
import { changeStatus } from '../../commands/reservations/handler-status';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { runCli } from '../helpers/cli-in-process';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import { startTestService } from '../helpers/service';

const t = suite<{ svc: ReservationService }>('analytics: figures against the doc');
t.before(async (ctx) => {
  ctx.svc = await startReservationService({ clock: new FixedClock('2026-08-01T10:00:00Z') });
});
t.after(async ({ svc }) => svc.close());

/**
 * The figures of one day (or shift and day), as the doc defines them, worked out by hand.
 * `histogram`: lead-time bucket (lower bound, minutes) → reservations.
 */
interface Figures {
  reservations: number;
  covers: number;
  no_show_rate: number | null;
  cancellation_rate: number | null;
  lead_time_count: number;
  histogram: Record<string, number>;
  median: number | null;
  p90: number | null;
  /** new, returning, unknown */
  guests: [number, number, number];
  outcomes: Record<string, number>;
}

const outcomes = (o: Partial<Record<string, number>>) => ({
  pending: 0,
  confirmed: 0,
  honoured: 0,
  no_show: 0,
  canceled: 0,
  rejected: 0,
  ...o,
});

// The reservations (all booked at 2026-08-01T10:00Z unless said; Paris is UTC+2 until 25 Oct 03:00,
// UTC+1 after; dinner 19:00–22:00, late 23:00–00:30 past midnight). Lead times in minutes, and their
// bucket (lower bound; 60 days = 86,400 min runs to 90 days = 129,600):
//   r1  22 Oct 19:00+02 (17:00Z) dinner, 2, A new, DONE (honoured)            82 d 7 h    = 118,500 → 86,400
//   r2  booked 24 Oct 20:00+02, PHONE, A returning; moved to 26 Oct 19:30+01 (18:30Z), 5 guests,
//       CONFIRMED                                                              86 d 8.5 h  = 124,350 → 86,400
//   r3  25 Oct 00:30+02 (24 Oct 22:30Z) late: service day 24 Oct, 3, no guest (unknown), CONFIRMED
//                                                                              84 d 12.5 h = 121,710 → 86,400
//   r4  25 Oct 19:00+01 (18:00Z) dinner, 6, B new, NO_SHOW                     85 d 8 h    = 122,880 → 86,400
//   r5  25 Oct 21:00+01 (20:00Z) dinner, 2, C new, CANCELED_BY_CUSTOMER        85 d 10 h   = 123,000 → 86,400
//   r6  26 Oct 23:30+01 (22:30Z) late: day 26 Oct, 1, B returning, canceled    86 d 12.5 h = 124,590 → 86,400
//   r8  23 Oct 19:30+02 (17:30Z) dinner, 8, D new, CONFIRMED                   83 d 7.5 h  = 119,970 → 86,400
//   r9  23 Oct 20:30+02 (18:30Z) dinner, 2, E returning (D merged into E had r8), SEATED (honoured)
//                                                                              83 d 8.5 h  = 120,030 → 86,400
//   r10 booked 23 Oct 19:00+02, PHONE, no guest; moved to 24 Oct 00:00+02 (23 Oct 22:00Z) late:
//       day 23 Oct, 2; F named later, its first customer: new; CONFIRMED      83 d 12 h   = 120,240 → 86,400
//   r11 23 Oct 21:00+02 (19:00Z) dinner, 2, C returning, booked 18:50Z, CONFIRMED     10 min → 0
//   r12 23 Oct 21:00+02 dinner, 4, WALK_IN (no lead time), B named first: returning (F later changes
//       nothing), CONFIRMED
//   r13–r18 27 Oct dinner, 2 each, no guest (unknown), CONFIRMED, booked so that the lead times fall
//       on bucket bounds: r13 19:00+01 booked 17:45Z 15 min → 15; r14 20:30+01 booked 18:29Z
//       61 min → 60; r15 21:00+01 booked 25 Oct 20:00Z 2 d = 2,880 → 2,880; r16 19:00+01 booked
//       20 Oct 18:00Z 7 d = 10,080 → 10,080; r17 20:00+01 booked 1 Aug 10:00Z 87 d 9 h = 125,820
//       → 86,400; r18 21:30+01 booked 2025-09-01T00:00Z 421 d 20.5 h = 607,470 → 525,600 (open).
// Quantiles: nearest rank ⌈q·n⌉ of the sorted lead times, reported as the upper bound of its bucket
// (the open bucket: its lower bound, 525,600). 23 Oct: [10, 119,970, 120,030, 120,240]: median the
// 2nd (60 d bucket → 129,600), p90 the 4th (129,600). 27 Oct: [15, 61, 2,880, 10,080, 125,820,
// 607,470]: median the 3rd (2,880, bucket 2 d → 3 d = 4,320), p90 the 6th (open → 525,600).
// Rates: no_show / (no_show + honoured), canceled / reservations, 4 decimals.
const SIXTY_DAYS = '86400';
const BY_DAY: Record<string, Figures> = {
  '2026-10-22': {
    reservations: 1,
    covers: 2,
    no_show_rate: 0,
    cancellation_rate: 0,
    lead_time_count: 1,
    histogram: { [SIXTY_DAYS]: 1 },
    median: 129_600,
    p90: 129_600,
    guests: [1, 0, 0],
    outcomes: outcomes({ honoured: 1 }),
  },
  '2026-10-23': {
    reservations: 5,
    covers: 18,
    no_show_rate: 0,
    cancellation_rate: 0,
    lead_time_count: 4,
    histogram: { '0': 1, [SIXTY_DAYS]: 3 },
    median: 129_600,
    p90: 129_600,
    guests: [2, 3, 0],
    outcomes: outcomes({ confirmed: 4, honoured: 1 }),
  },
  '2026-10-24': {
    reservations: 1,
    covers: 3,
    no_show_rate: null,
    cancellation_rate: 0,
    lead_time_count: 1,
    histogram: { [SIXTY_DAYS]: 1 },
    median: 129_600,
    p90: 129_600,
    guests: [0, 0, 1],
    outcomes: outcomes({ confirmed: 1 }),
  },
  '2026-10-25': {
    reservations: 2,
    covers: 8,
    no_show_rate: 1,
    cancellation_rate: 0.5,
    lead_time_count: 2,
    histogram: { [SIXTY_DAYS]: 2 },
    median: 129_600,
    p90: 129_600,
    guests: [2, 0, 0],
    outcomes: outcomes({ no_show: 1, canceled: 1 }),
  },
  '2026-10-26': {
    reservations: 2,
    covers: 6,
    no_show_rate: null,
    cancellation_rate: 0.5,
    lead_time_count: 2,
    histogram: { [SIXTY_DAYS]: 2 },
    median: 129_600,
    p90: 129_600,
    guests: [0, 2, 0],
    outcomes: outcomes({ confirmed: 1, canceled: 1 }),
  },
  '2026-10-27': {
    reservations: 6,
    covers: 12,
    no_show_rate: null,
    cancellation_rate: 0,
    lead_time_count: 6,
    histogram: { '15': 1, '60': 1, '2880': 1, '10080': 1, [SIXTY_DAYS]: 1, '525600': 1 },
    median: 4_320,
    p90: 525_600,
    guests: [0, 0, 6],
    outcomes: outcomes({ confirmed: 6 }),
  },
};
const day = (d: string) => BY_DAY[d] as Figures;
/** Per shift and day, in the export's order (date, then shift id). */
const BY_SHIFT: [string, string, Figures][] = [
  ['2026-10-22', 'shift_dinner', day('2026-10-22')],
  [
    '2026-10-23',
    'shift_dinner',
    {
      reservations: 4,
      covers: 16,
      no_show_rate: 0,
      cancellation_rate: 0,
      lead_time_count: 3,
      histogram: { '0': 1, [SIXTY_DAYS]: 2 },
      median: 129_600,
      p90: 129_600,
      guests: [1, 3, 0],
      outcomes: outcomes({ confirmed: 3, honoured: 1 }),
    },
  ],
  [
    '2026-10-23',
    'shift_late',
    {
      reservations: 1,
      covers: 2,
      no_show_rate: null,
      cancellation_rate: 0,
      lead_time_count: 1,
      histogram: { [SIXTY_DAYS]: 1 },
      median: 129_600,
      p90: 129_600,
      guests: [1, 0, 0],
      outcomes: outcomes({ confirmed: 1 }),
    },
  ],
  ['2026-10-24', 'shift_late', day('2026-10-24')],
  ['2026-10-25', 'shift_dinner', day('2026-10-25')],
  [
    '2026-10-26',
    'shift_dinner',
    {
      reservations: 1,
      covers: 5,
      no_show_rate: null,
      cancellation_rate: 0,
      lead_time_count: 1,
      histogram: { [SIXTY_DAYS]: 1 },
      median: 129_600,
      p90: 129_600,
      guests: [0, 1, 0],
      outcomes: outcomes({ confirmed: 1 }),
    },
  ],
  [
    '2026-10-26',
    'shift_late',
    {
      reservations: 1,
      covers: 1,
      no_show_rate: null,
      cancellation_rate: 1,
      lead_time_count: 1,
      histogram: { [SIXTY_DAYS]: 1 },
      median: 129_600,
      p90: 129_600,
      guests: [0, 1, 0],
      outcomes: outcomes({ canceled: 1 }),
    },
  ],
  ['2026-10-27', 'shift_dinner', day('2026-10-27')],
];

function actual(row: Record<string, unknown>) {
  const lt = row.lead_time as Record<string, unknown>;
  const g = row.guests as Record<string, number>;
  const bo = row.by_outcome as Record<string, { reservations: number }>;
  return {
    reservations: row.reservations,
    covers: row.covers,
    no_show_rate: row.no_show_rate,
    cancellation_rate: row.cancellation_rate,
    lead_time_count: lt.count,
    histogram: lt.histogram,
    median: lt.median_minutes,
    p90: lt.p90_minutes,
    guests: [g.new, g.returning, g.unknown],
    outcomes: Object.fromEntries(
      ['pending', 'confirmed', 'honoured', 'no_show', 'canceled', 'rejected'].map((o) => [
        o,
        bo[o]?.reservations ?? 0,
      ]),
    ),
  };
}

t('a varied history: every figure per day and per shift equals the doc computed by hand', async (ctx) => {
  let svc = ctx.svc;
  const clock = svc.clock;
  const api = (m: string, p: string, body?: unknown) => svc.api(m, p, { token: TOKENS.full, body });
  const customer = async (name: string, phone: string) => {
    const r = await api('POST', '/customers', { name, phone_number: phone });
    assert.is(r.status, 201, r.text);
    return r.body.data.id as string;
  };
  const book = async (body: Record<string, unknown>) => {
    const r = await create(svc, body);
    assert.is(r.status, 201, r.text);
    return r.body.data.id as string;
  };
  const status = async (id: string, op: StatusOperation) =>
    svc.rt.settle((await changeStatus(svc.rt, null, id, op, operatorMeta('staff'))).position);

  const A = await customer('Ann', '+33612345001');
  const B = await customer('Bob', '+33612345002');
  const C = await customer('Cid', '+33612345003');
  const Dd = await customer('Dee', '+33612345004');
  const E = await customer('Eve', '+33612345005');
  // Long before (August for late October), different sources.
  const r1 = await book({ start_at: '2026-10-22T19:00:00+02:00', party_size: 2, customer: { id: A } });
  const r2 = await book({
    start_at: '2026-10-24T20:00:00+02:00',
    party_size: 4,
    source: 'PHONE',
    customer: { id: A },
  });
  await book({ start_at: '2026-10-25T00:30:00+02:00', shift_id: 'shift_late', party_size: 3 }); // r3
  const r4id = await book({ start_at: '2026-10-25T19:00:00+01:00', party_size: 6, customer: { id: B } });
  const r5 = await book({ start_at: '2026-10-25T21:00:00+01:00', party_size: 2, customer: { id: C } });
  const r6 = await book({
    start_at: '2026-10-26T23:30:00+01:00',
    shift_id: 'shift_late',
    party_size: 1,
    customer: { id: B },
  });
  await book({ start_at: '2026-10-23T19:30:00+02:00', party_size: 8, customer: { id: Dd } }); // r8
  await svc.rt.settle((await mergeCustomers(svc.rt, Dd, E, operatorMeta('staff'))).position);
  const r9 = await book({ start_at: '2026-10-23T20:30:00+02:00', party_size: 2, customer: { id: E } });
  const r10 = await book({ start_at: '2026-10-23T19:00:00+02:00', party_size: 2, source: 'PHONE' });

  // Moves: r2 across the DST change (and its party), r10 to the late shift of its day (past midnight).
  assert.is(
    (await api('PATCH', `/reservations/${r2}`, { start_at: '2026-10-26T19:30:00+01:00', party_size: 5 }))
      .status,
    200,
  );
  const mv = await api('PATCH', `/reservations/${r10}`, {
    start_at: '2026-10-24T00:00:00+02:00',
    shift_id: 'shift_late',
  });
  assert.is(mv.status, 200, mv.text);

  // Minutes before: a booking and a walk-in on the 23rd.
  clock.set('2026-10-23T18:50:00Z');
  await book({
    start_at: '2026-10-23T21:00:00+02:00',
    party_size: 2,
    source: 'WEBSITE',
    customer: { id: C },
  });
  const r12 = await book({ start_at: '2026-10-23T21:00:00+02:00', party_size: 4, source: 'WALK_IN' });
  // A reservation without a guest named later: decided then (B already booked: returning; F: new),
  // and never again (r12 given to F afterwards stays returning).
  const F = await customer('Fay', '+33612345006');
  const link = async (id: string, c: string) => {
    const res = await api('PATCH', `/reservations/${id}`, { customer: { id: c } });
    assert.is(res.status, 200, res.text);
  };
  await link(r12, B);
  await link(r10, F);
  await link(r12, F);

  // Outcomes.
  clock.set('2026-10-22T17:00:00Z');
  await status(r1, { kind: 'seat' });
  clock.set('2026-10-22T19:00:00Z');
  await status(r1, { kind: 'leave' });
  clock.set('2026-10-25T20:00:00Z');
  await status(r4id, { kind: 'no_show', graceMinutes: 15 });
  await status(r5, { kind: 'cancel_by_customer', reason: null });
  assert.is((await api('POST', `/reservations/${r6}/cancel`, {})).status, 200);
  await status(r9, { kind: 'seat' });

  // 27 Oct: lead times on bucket bounds (see the table above), booked at the clock's times.
  const leadBooking = async (bookedAt: string, start: string) => {
    clock.set(bookedAt);
    return book({ start_at: start, party_size: 2 });
  };
  await leadBooking('2026-08-01T10:00:00Z', '2026-10-27T20:00:00+01:00'); // r17
  await leadBooking('2025-09-01T00:00:00Z', '2026-10-27T21:30:00+01:00'); // r18
  await leadBooking('2026-10-20T18:00:00Z', '2026-10-27T19:00:00+01:00'); // r16
  await leadBooking('2026-10-25T20:00:00Z', '2026-10-27T21:00:00+01:00'); // r15
  await leadBooking('2026-10-27T17:45:00Z', '2026-10-27T19:00:00+01:00'); // r13
  await leadBooking('2026-10-27T18:29:00Z', '2026-10-27T20:30:00+01:00'); // r14

  const compare = async (label: string) => {
    const ndjson = (await runCli(svc, 'analytics export', { restaurant: 'rest_demo', format: 'ndjson' })).map(
      (l) => JSON.parse(l) as Record<string, unknown>,
    );
    assert.equal(
      ndjson.map((r) => r.service_date),
      Object.keys(BY_DAY),
      `${label}: the days`,
    );
    for (const row of ndjson)
      assert.equal(actual(row), BY_DAY[row.service_date as string], `${label}: ${row.service_date}`);
    const byShift = (
      await runCli(svc, 'analytics export', { restaurant: 'rest_demo', format: 'ndjson', by: 'shift' })
    ).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(
      byShift.map((r) => [r.service_date, r.shift_id]),
      BY_SHIFT.map(([d, shift]) => [d, shift]),
      `${label}: the shifts and days`,
    );
    byShift.forEach((row, i) => {
      assert.equal(actual(row), BY_SHIFT[i]?.[2], `${label}: ${row.service_date} ${row.shift_id}`);
    });
    return ndjson;
  };
  const before = await compare('live');
  // An erasure changes no figure.
  await runCli(svc, 'audit erase', { customer: C });
  const after = await compare('after erasure');
  assert.equal(after, before);
  // A restart replays the log into every read model: the same figures.
  const dataDir = svc.dataDir;
  await svc.close({ keepData: true });
  svc = Object.assign(await startTestService({ dataDir, clock }), { clock });
  ctx.svc = svc;
  assert.equal(await compare('after a rebuild'), before);

  // --from/--to are inclusive service days: the 00:30 start of the 25th is the 24th's.
  const csv = await runCli(svc, 'analytics export', {
    restaurant: 'rest_demo',
    from: '2026-10-24',
    to: '2026-10-25',
  });
  const header = (csv[0] as string).split(',');
  const rows = csv.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [header[i], v])));
  assert.equal(
    rows.map((r) => [
      r.service_date,
      r.reservations,
      r.covers,
      r.no_show_rate,
      r.cancellation_rate,
      r.lead_time_median_minutes,
      r.guests_unknown,
    ]),
    [
      ['2026-10-24', '1', '3', '', '0', '129600', '1'],
      ['2026-10-25', '2', '8', '1', '0.5', '129600', '0'],
    ],
    'CSV: the figures above, bounds inclusive, an empty cell for null',
  );
  // An empty period, a restaurant with no data: the header alone.
  assert.equal(await runCli(svc, 'analytics export', { restaurant: 'rest_demo', from: '2026-11-01' }), [
    csv[0],
  ]);
  assert.equal(
    await runCli(svc, 'analytics export', { restaurant: 'rest_demo', to: '2026-10-21', format: 'ndjson' }),
    [],
  );
});

t.run();
