// `analytics export --dataset webhooks|missed-calls` against a live service holding a month of seeded
// activity: the rows add up to what the events say, CSV and NDJSON agree, bad flags are refused.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MISSED_CALL_CSV_COLUMNS, WEBHOOK_CSV_COLUMNS } from '../../queries/analytics-operations';
import { CliUsageError } from '../../src/cli/registry';
import { FixedClock } from '../../src/core/clock';
import { seedInsightsDemo } from '../../src/insights-demo';
import { runCli } from '../helpers/cli-in-process';
import { expectedInsights, INSIGHTS_NOW, INSIGHTS_SEED } from '../helpers/insights';
import { oauthBootstrap } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('analytics: export webhooks and missed calls', {} as never);
t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap(), clock: new FixedClock(INSIGHTS_NOW) });
  await ctx.svc.rt.settle(await seedInsightsDemo(ctx.svc.rt, 'rest_demo', INSIGHTS_SEED));
});
t.after(async ({ svc }) => svc?.close());

const cli = (svc: TestService, flags: Record<string, string>) => runCli(svc, 'analytics export', flags);

const parseCsv = (lines: string[]) => {
  const names = (lines[0] as string).split(',');
  return lines.slice(1).map((r) => Object.fromEntries(r.split(',').map((v, i) => [names[i], v])));
};

t('webhooks: one row per endpoint and day; sums equal the events; CSV and NDJSON agree', async ({ svc }) => {
  const range = { restaurant: 'rest_demo', from: '2026-05-20', to: '2026-06-10' };
  const csv = await cli(svc, { ...range, dataset: 'webhooks' });
  assert.is(csv[0], WEBHOOK_CSV_COLUMNS.map(([n]) => n).join(','));
  const rows = parseCsv(csv);
  const want = expectedInsights('rest_demo', range.from, range.to);
  const sum = (k: string) => rows.reduce((s, r) => s + Number(r[k]), 0);
  assert.is(sum('deliveries'), want.deliveries);
  assert.is(sum('delivered'), want.delivered);
  assert.is(sum('failed'), want.failed);
  assert.is(sum('pending'), 0);
  assert.ok(rows.every((r) => r.date >= range.from && r.date <= range.to));
  assert.equal(
    rows.map((r) => `${r.date}|${r.endpoint_id}`),
    rows.map((r) => `${r.date}|${r.endpoint_id}`).sort(),
    'date order, then endpoint',
  );
  for (const r of rows) {
    assert.ok(Number(r.attempts) >= Number(r.delivered) + Number(r.failed));
    assert.ok(Number(r.first_attempt_delivered) <= Number(r.delivered));
    const rate = Number(r.delivered) / (Number(r.delivered) + Number(r.failed));
    assert.is(Number(r.success_rate), Math.round(rate * 10_000) / 10_000);
    assert.ok(
      r.time_to_delivery_median_ms !== '' &&
        Number(r.time_to_delivery_p90_ms) >= Number(r.time_to_delivery_median_ms),
    );
  }
  const nd = (await cli(svc, { ...range, dataset: 'webhooks', format: 'ndjson' })).map((l) => JSON.parse(l));
  assert.is(nd.length, rows.length);
  assert.is(nd[0].schema_version, 1);
  assert.is(nd[0].deliveries, Number(rows[0]?.deliveries));
  assert.type(nd[0].time_to_delivery, 'object');
});

t('missed calls: one row per day with calls; outcomes add up to the calls', async ({ svc }) => {
  const csv = await cli(svc, { restaurant: 'rest_demo', dataset: 'missed-calls' });
  assert.is(csv[0], MISSED_CALL_CSV_COLUMNS.map(([n]) => n).join(','));
  const rows = parseCsv(csv);
  const want = expectedInsights('rest_demo', '2000-01-01', '2999-12-31');
  assert.is(
    rows.reduce((s, r) => s + Number(r.reported), 0),
    want.calls,
  );
  for (const r of rows) {
    const outcomes = Object.entries(r)
      .filter(([k]) => k.startsWith('outcome_'))
      .reduce((s, [, v]) => s + Number(v), 0);
    assert.is(outcomes, Number(r.reported), `${r.date}: every call has one outcome`);
    assert.is(r.outcome_PENDING, '0', 'the demo leaves nothing in flight');
    assert.ok(Number(r.followed_by_reservation) <= Number(r.outcome_SENT));
  }
  assert.ok(rows.some((r) => Number(r.followed_by_reservation) > 0));
});

t('bad flags are refused', async ({ svc }) => {
  for (const [flags, message] of [
    [{ restaurant: 'rest_demo', dataset: 'nope' }, /--dataset takes/],
    [
      { restaurant: 'rest_demo', dataset: 'webhooks', by: 'shift' },
      /--by shift is for --dataset reservations/,
    ],
  ] as const) {
    try {
      await cli(svc, flags);
      assert.unreachable('refused');
    } catch (err) {
      assert.instance(err, CliUsageError);
      assert.match((err as Error).message, message);
    }
  }
  // A mistyped restaurant is not a usage error: "restaurant X not found" (exit 1, platform-cli e2e).
  const unknown = await cli(svc, { restaurant: 'rest_nope', dataset: 'missed-calls' }).then(
    () => null,
    (e: unknown) => e as Error,
  );
  assert.not.instance(unknown, CliUsageError);
  assert.is(unknown?.message, 'restaurant rest_nope not found');
});

t.run();
