// `analytics export` against a live service: reservations made, moved and canceled over HTTP show up
// in the figures per day and per shift, as CSV (documented columns) and NDJSON; bad flags are refused.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CSV_COLUMNS } from '../../queries/analytics';
import { CliUsageError } from '../../src/cli/registry';
import { runCli } from '../helpers/cli-in-process';
import { runCli as cliProcess } from '../helpers/cli-process';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';

const t = suite<{ svc: ReservationService }>('analytics: export');
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

const cli = (svc: ReservationService, flags: Record<string, string>) =>
  runCli(svc, 'analytics export', flags);

const parseCsv = (lines: string[]) => {
  const [header, ...rows] = lines;
  const names = (header as string).split(',');
  return rows.map((r) => Object.fromEntries(r.split(',').map((v, i) => [names[i], v])));
};

t('reservations made, moved and canceled over HTTP: the figures per day and per shift', async ({ svc }) => {
  const customer = { name: 'Ada', phone_number: '+33612345678' };
  const a = (await create(svc, { party_size: 2, customer })).body.data;
  const b = (await create(svc, { party_size: 4, start_at: '2026-06-03T20:00:00+02:00', customer })).body.data;
  const c = (await create(svc, { party_size: 3, start_at: '2026-06-03T21:30:00+02:00', source: 'PHONE' }))
    .body.data;
  assert.ok(a.id && b.id && c.id);
  // c moves to the next day; b is canceled.
  const moved = await svc.api('PATCH', `/reservations/${c.id}`, {
    token: TOKENS.full,
    body: { start_at: '2026-06-04T19:30:00+02:00' },
  });
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  assert.is(
    (await svc.api('POST', `/reservations/${b.id}/cancel`, { token: TOKENS.full, body: {} })).status,
    200,
  );

  const csv = await cli(svc, { restaurant: 'rest_demo', from: '2026-06-01', to: '2026-06-30' });
  assert.is(csv[0], CSV_COLUMNS.map(([n]) => n).join(','));
  const rows = parseCsv(csv);
  assert.equal(
    rows.map((r) => [r.service_date, r.reservations, r.covers]),
    [
      ['2026-06-03', '2', '6'],
      ['2026-06-04', '1', '3'],
    ],
  );
  const june3 = rows[0] as Record<string, string>;
  assert.is(june3.outcome_canceled_reservations, '1');
  assert.is(june3.cancellation_rate, '0.5');
  assert.is(june3.no_show_rate, '', 'no known outcome yet');
  assert.is(june3.guests_new, '1');
  assert.is(june3.guests_returning, '1', 'the second booking of the same customer');
  assert.is(june3.source_WEBSITE_reservations === '0', false);
  assert.is(june3.party_size_4_reservations, '1');
  // Booked on 2 June at noon for 3 June 19:00 and 20:00: [1 d, 2 d) → reported as 2 days.
  assert.is(june3.lead_time_median_minutes, '2880');
  const june4 = rows[1] as Record<string, string>;
  assert.is(june4.source_PHONE_reservations, '1');
  assert.is(june4.guests_unknown, '1');

  const nd = (await cli(svc, { restaurant: 'rest_demo', format: 'ndjson', by: 'shift' })).map((l) =>
    JSON.parse(l),
  );
  assert.equal(
    nd.map((d) => [d.service_date, d.shift_id, d.reservations]),
    [
      ['2026-06-03', 'shift_dinner', 2],
      ['2026-06-04', 'shift_dinner', 1],
    ],
  );
  assert.is(nd[0].schema_version, 1);
  assert.equal(nd[0].by_status.CANCELED_BY_RESTAURANT, { reservations: 1, covers: 4 });
  assert.is(nd[0]._pos, undefined, 'internal fields stay inside');
  assert.equal(
    await cli(svc, { restaurant: 'rest_other', format: 'ndjson' }),
    [],
    'another restaurant: none of these',
  );
  assert.equal(
    await cli(svc, { restaurant: 'rest_demo', from: '2026-06-04', format: 'ndjson' }).then((l) => l.length),
    1,
  );
});

t(
  'CSV as RFC 4180 says, as the real CLI prints it: every record ends with CRLF, NDJSON lines with LF',
  async ({ svc }) => {
    for (const dataset of ['reservations', 'webhooks', 'missed-calls']) {
      const run = await cliProcess(svc, [
        'analytics',
        'export',
        '--restaurant',
        'rest_demo',
        '--dataset',
        dataset,
      ]);
      assert.is(run.code, 0, run.stderr);
      const records = run.stdout.split('\r\n');
      assert.is(records.pop(), '', `${dataset}: the last record ends with CRLF too`);
      assert.ok(records.length >= (dataset === 'reservations' ? 3 : 1), `${dataset}: ${run.stdout}`);
      for (const r of records) assert.not.match(r, /[\r\n]/, `${dataset}: no bare LF or CR`);
    }
    const ndjson = await cliProcess(svc, [
      'analytics',
      'export',
      '--restaurant',
      'rest_demo',
      '--format',
      'ndjson',
    ]);
    assert.is(ndjson.code, 0, ndjson.stderr);
    assert.not.match(ndjson.stdout, /\r/, 'NDJSON: LF only');
    assert.ok(ndjson.stdout.endsWith('}\n'));
  },
);

t('bad flags are refused with a message', async ({ svc }) => {
  for (const flags of <Record<string, string>[]>[
    { restaurant: 'rest_demo', from: '2026-02-30' },
    { restaurant: 'rest_demo', from: '2026-06-05', to: '2026-06-01' },
    { restaurant: 'rest_demo', format: 'xml' },
    { restaurant: 'rest_demo', by: 'week' },
    { restaurant: 'rest_demo', form: '2026-01-01' },
  ]) {
    let err: unknown = null;
    try {
      await cli(svc, flags);
    } catch (e) {
      err = e;
    }
    assert.instance(err, CliUsageError, JSON.stringify(flags));
  }
  // A restaurant the log does not hold is not a usage mistake: it is named as not found (exit 1).
  let missing: unknown = null;
  try {
    await cli(svc, { restaurant: 'rest_nope' });
  } catch (e) {
    missing = e;
  }
  assert.not.instance(missing, CliUsageError);
  assert.match(String((missing as Error | null)?.message), 'restaurant rest_nope not found');
});

t.run();
