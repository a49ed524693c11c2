// The analytics figures checked against docs/analytics.md by a fold of their own: a varied history
// (moves across days, shifts and a DST change, a shift past midnight, party sizes changed, statuses
// of every outcome, sources, lead times from minutes to months, new and returning guests, a merge, an
// erasure) is driven through the service, then the figures the doc defines are computed from the
// reservations the API shows (not from the projection's rules) and compared with `analytics export`
// (CSV and NDJSON), after the erasure and after a rebuild.
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

const SHIFTS: Record<string, string> = {
  shift_dinner: '19:00',
  shift_lunch: '12:00',
  shift_brunch: '10:00',
  shift_late: '23:00',
  shift_tasting: '17:00',
};
const PAST_MIDNIGHT = new Set(['shift_late']);

const localParts = (instant: string) => {
  const f = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'Europe/Paris',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const p = Object.fromEntries(f.formatToParts(new Date(instant)).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}` };
};
const dayBefore = (d: string) =>
  new Date(Date.parse(`${d}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
/** The doc's service day: the local date, or the evening before for a start past midnight of a shift begun then. */
function serviceDay(startAt: string, shift: string): string {
  const { date, time } = localParts(startAt);
  return PAST_MIDNIGHT.has(shift) && time < (SHIFTS[shift] as string) ? dayBefore(date) : date;
}

const OUTCOME: Record<string, string> = {
  PENDING: 'pending',
  PENDING_PAYMENT: 'pending',
  CONFIRMED: 'confirmed',
  CONFIRMED_PENDING_PAYMENT: 'confirmed',
  MANUALLY_CONFIRMED: 'confirmed',
  DOUBLE_CONFIRMED: 'confirmed',
  SHOWED_UP: 'honoured',
  SEATED: 'honoured',
  PARTIALLY_SEATED: 'honoured',
  SEATED_FOR_DRINKS: 'honoured',
  DONE: 'honoured',
  NO_SHOW: 'no_show',
  CANCELED_BY_CUSTOMER: 'canceled',
  CANCELED_BY_RESTAURANT: 'canceled',
  REJECTED: 'rejected',
};
const M = 1;
const H = 60;
const D = 1440;
const BOUNDS = [
  0,
  15 * M,
  30 * M,
  H,
  2 * H,
  4 * H,
  8 * H,
  12 * H,
  D,
  2 * D,
  3 * D,
  4 * D,
  5 * D,
  6 * D,
  7 * D,
  10 * D,
  14 * D,
  21 * D,
  30 * D,
  45 * D,
  60 * D,
  90 * D,
  180 * D,
  365 * D,
];
/** Nearest rank over the raw lead times, reported as the upper bound of the bucket holding it. */
function quantile(leads: number[], q: number): number | null {
  if (!leads.length) return null;
  const sorted = [...leads].sort((a, b) => a - b);
  const v = sorted[Math.ceil(q * sorted.length) - 1] as number;
  let i = 0;
  while (i + 1 < BOUNDS.length && (BOUNDS[i + 1] as number) <= v) i++;
  return (BOUNDS[i + 1] ?? BOUNDS[i]) as number;
}
const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

interface Res {
  id: string;
  status: string;
  source: string;
  party_size: number;
  created_at: string;
  start_at: string;
  shift_id: string;
  service_date: string;
}

/** The doc's figures of one group of reservations (a day, or a shift and day). */
function expected(rs: Res[], guest: Map<string, string>) {
  const outcome = (o: string) => rs.filter((r) => OUTCOME[r.status] === o).length;
  const leads = rs
    .filter((r) => r.source !== 'WALK_IN')
    .map((r) => Math.max(0, Math.floor((Date.parse(r.start_at) - Date.parse(r.created_at)) / 60_000)));
  const known = outcome('no_show') + outcome('honoured');
  return {
    reservations: rs.length,
    covers: rs.reduce((a, r) => a + r.party_size, 0),
    no_show_rate: known ? r4(outcome('no_show') / known) : null,
    cancellation_rate: rs.length ? r4(outcome('canceled') / rs.length) : null,
    lead_time_count: leads.length,
    median: quantile(leads, 0.5),
    p90: quantile(leads, 0.9),
    guests: ['new', 'returning', 'unknown'].map((k) => rs.filter((r) => guest.get(r.id) === k).length),
    outcomes: Object.fromEntries(
      ['pending', 'confirmed', 'honoured', 'no_show', 'canceled', 'rejected'].map((o) => [o, outcome(o)]),
    ),
  };
}

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
  const guest = new Map<string, string>();

  const A = await customer('Ann', '+33612345001');
  const B = await customer('Bob', '+33612345002');
  const C = await customer('Cid', '+33612345003');
  const Dd = await customer('Dee', '+33612345004');
  const E = await customer('Eve', '+33612345005');
  // Long before (August for late October), different sources.
  const r1 = await book({ start_at: '2026-10-22T19:00:00+02:00', party_size: 2, customer: { id: A } });
  guest.set(r1, 'new');
  const r2 = await book({
    start_at: '2026-10-24T20:00:00+02:00',
    party_size: 4,
    source: 'PHONE',
    customer: { id: A },
  });
  guest.set(r2, 'returning');
  const r3 = await book({ start_at: '2026-10-25T00:30:00+02:00', shift_id: 'shift_late', party_size: 3 });
  guest.set(r3, 'unknown');
  const r4id = await book({ start_at: '2026-10-25T19:00:00+01:00', party_size: 6, customer: { id: B } });
  guest.set(r4id, 'new');
  const r5 = await book({ start_at: '2026-10-25T21:00:00+01:00', party_size: 2, customer: { id: C } });
  guest.set(r5, 'new');
  const r6 = await book({
    start_at: '2026-10-26T23:30:00+01:00',
    shift_id: 'shift_late',
    party_size: 1,
    customer: { id: B },
  });
  guest.set(r6, 'returning');
  const r8 = await book({ start_at: '2026-10-23T19:30:00+02:00', party_size: 8, customer: { id: Dd } });
  guest.set(r8, 'new');
  await svc.rt.settle((await mergeCustomers(svc.rt, Dd, E, operatorMeta('staff'))).position);
  const r9 = await book({ start_at: '2026-10-23T20:30:00+02:00', party_size: 2, customer: { id: E } });
  guest.set(r9, 'returning');
  const r10 = await book({ start_at: '2026-10-23T19:00:00+02:00', party_size: 2, source: 'PHONE' });
  guest.set(r10, 'unknown');

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
  const r11 = await book({
    start_at: '2026-10-23T21:00:00+02:00',
    party_size: 2,
    source: 'WEBSITE',
    customer: { id: C },
  });
  guest.set(r11, 'returning');
  const r12 = await book({ start_at: '2026-10-23T21:00:00+02:00', party_size: 4, source: 'WALK_IN' });
  guest.set(r12, 'unknown');
  // A reservation without a guest named later: decided then (B already booked: returning; F: new),
  // and never again (r12 given to F afterwards stays returning).
  const F = await customer('Fay', '+33612345006');
  const link = async (id: string, c: string) => {
    const res = await api('PATCH', `/reservations/${id}`, { customer: { id: c } });
    assert.is(res.status, 200, res.text);
  };
  await link(r12, B);
  guest.set(r12, 'returning');
  await link(r10, F);
  guest.set(r10, 'new');
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

  const all = [r1, r2, r3, r4id, r5, r6, r8, r9, r10, r11, r12];
  const compare = async (label: string) => {
    const rs: Res[] = [];
    for (const id of all) {
      const r = (await api('GET', `/reservations/${id}`)).body.data;
      assert.ok(r.shift?.id && r.created_at && r.source, JSON.stringify(r));
      rs.push({ ...r, id, shift_id: r.shift.id, service_date: serviceDay(r.start_at, r.shift.id) });
    }
    const ndjson = (await runCli(svc, 'analytics export', { restaurant: 'rest_demo', format: 'ndjson' })).map(
      (l) => JSON.parse(l) as Record<string, unknown>,
    );
    const days = [...new Set(rs.map((r) => r.service_date))].sort();
    assert.equal(
      ndjson.map((r) => r.service_date),
      days,
      `${label}: the days`,
    );
    for (const row of ndjson)
      assert.equal(
        actual(row),
        expected(
          rs.filter((r) => r.service_date === row.service_date),
          guest,
        ),
        `${label}: ${row.service_date}`,
      );
    const byShift = (
      await runCli(svc, 'analytics export', { restaurant: 'rest_demo', format: 'ndjson', by: 'shift' })
    ).map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const row of byShift)
      assert.equal(
        actual(row),
        expected(
          rs.filter((r) => r.service_date === row.service_date && r.shift_id === row.shift_id),
          guest,
        ),
        `${label}: ${row.service_date} ${row.shift_id}`,
      );
    assert.is(
      byShift.reduce((a, r) => a + (r.reservations as number), 0),
      rs.length,
    );
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
  const nd = before.filter((r) => r.service_date === '2026-10-24' || r.service_date === '2026-10-25');
  assert.equal(
    rows.map((r) => [
      r.service_date,
      r.reservations,
      r.covers,
      r.no_show_rate,
      r.cancellation_rate,
      r.lead_time_median_minutes,
    ]),
    nd.map((r) => {
      const lt = r.lead_time as { median_minutes: number | null };
      const cell = (v: unknown) => (v === null ? '' : String(v));
      return [
        r.service_date,
        cell(r.reservations),
        cell(r.covers),
        cell(r.no_show_rate),
        cell(r.cancellation_rate),
        cell(lt.median_minutes),
      ];
    }),
    'CSV equals NDJSON, bounds inclusive',
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
