// The dashboard's Insights page over HTTP: a month of activity (reservations, webhook deliveries,
// missed calls) appended as events, projected, and read back by a signed-in manager: the tiles show
// the numbers computed independently from the same events; every chart has its title, description
// and table; the period selector works; a restaurant with nothing shows the empty state; another
// restaurant's insights answer 404; a bad period is refused.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SEATING_SYNC } from '../../projections/seating-sync';
import { FixedClock } from '../../src/core/clock';
import { seedInsightsDemo } from '../../src/insights-demo';
import { repairSeatings } from '../../src/jobs/reservation-jobs';
import { asPercent, expectedInsights, INSIGHTS_NOW as NOW, INSIGHTS_SEED as SEED } from '../helpers/insights';
import { Browser, oauthBootstrap, pageText, signIn } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

interface Ctx {
  svc: TestService;
  b: Browser;
}
const t = suite<Ctx>('insights page', {} as Ctx);

t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap(), clock: new FixedClock(NOW) });
  await ctx.svc.rt.settle(await seedInsightsDemo(ctx.svc.rt, 'rest_demo', SEED));
  await ctx.svc.rt.settle(await seedInsightsDemo(ctx.svc.rt, 'rest_two', { ...SEED, seed: 99 }));
  ctx.b = new Browser(ctx.svc.url);
  const res = await signIn(ctx.b, await ctx.b.get('/sign-in'), 'solo@demo.test');
  assert.is(res.status, 303);
});
t.after(async (ctx) => ctx.svc?.close());

const tile = (text: string, label: string) =>
  new RegExp(`<p class="tile-label">${label}</p><p class="tile-value">([^<]*)</p>`).exec(text)?.[1];

t('signed out: to the sign-in page', async ({ svc }) => {
  const res = await new Browser(svc.url).get('/dashboard/insights');
  assert.is(res.status, 303);
  assert.is(res.location, '/sign-in?next=%2Fdashboard%2Finsights');
});

t('the last 7 and 30 days: tiles equal the figures computed from the events', async ({ b }) => {
  for (const [period, from] of [
    ['7', '2026-06-09'],
    ['30', '2026-05-17'],
  ] as const) {
    const res = await b.get(`/dashboard/insights?restaurant=rest_demo&period=${period}`);
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src/);
    assert.not.match(res.headers.get('content-security-policy') ?? '', /unsafe-inline/);
    const want = expectedInsights('rest_demo', from, '2026-06-15');
    if (period === '30')
      assert.ok(want.reservations > 100 && want.calls > 0 && want.failed > 0, 'the seed covers every case');
    assert.is(tile(res.text, 'Reservations'), String(want.reservations), `reservations, ${period} days`);
    assert.is(tile(res.text, 'Covers'), String(want.covers));
    assert.is(tile(res.text, 'Missed calls'), String(want.calls));
    assert.is(tile(res.text, 'Webhooks delivered'), asPercent(want.delivered, want.delivered + want.failed));
    assert.is(tile(res.text, 'No-show rate'), asPercent(want.noShows, want.noShows + want.honoured));
    assert.match(res.text, `aria-current="page">Last ${period} days</a>`);
    // Every chart: an accessible name and description, and its numbers in a table.
    const charts = [...res.text.matchAll(/<svg class="chart"[^>]*aria-labelledby="([^" ]+) ([^"]+)"/g)];
    assert.is(charts.length, 7, 'seven charts');
    for (const [, titleId, descId] of charts) {
      assert.match(res.text, `<title id="${titleId}">`);
      assert.match(res.text, `<desc id="${descId}">`);
    }
    assert.is([...res.text.matchAll(/<details class="chart-data">/g)].length, 7);
    assert.not.match(res.text, /style=/, 'no inline style');
    assert.not.match(res.text, /<script/, 'no script');
    // The covers table has one row per day of the period.
    const coversTable = res.text.slice(
      res.text.indexOf('Covers per day: the numbers'),
      res.text.indexOf('id="noshow-h"'),
    );
    assert.is([...coversTable.matchAll(/<th scope="row">/g)].length, Number(period));
    // Endpoints named by id when they are not (or no longer) registered.
    assert.match(res.text, 'we_crm (deleted)');
  }
});

t('the default period is 30 days; a bad period is refused', async ({ b }) => {
  const res = await b.get('/dashboard/insights?restaurant=rest_demo');
  assert.is(res.status, 200);
  assert.match(res.text, 'aria-current="page">Last 30 days</a>');
  const bad = await b.get('/dashboard/insights?restaurant=rest_demo&period=5');
  assert.is(bad.status, 400);
  assert.not.match(bad.text, 'tile-value');
  // The page says what was wrong: the period and the values it takes, not only "the query string".
  assert.match(bad.text, /<li>period must be one of 7, 30 or 90<\/li>/);
  // In a manager's words: a link they opened, not the API's "query string" (nor its JSON quoting).
  assert.match(pageText(bad.text), /The link to this page holds a value the page does not take:/);
  assert.not.match(bad.text, /query string/i);
  // A link's own parameters (a newsletter's utm_source) are ignored, as on every page.
  const linked = await b.get('/dashboard/insights?restaurant=rest_demo&period=7&utm_source=newsletter');
  assert.is(linked.status, 200);
  assert.match(linked.text, 'aria-current="page">Last 7 days</a>');
});

t('switching restaurant keeps the period shown', async ({ svc }) => {
  const b = new Browser(svc.url);
  assert.is((await signIn(b, await b.get('/sign-in'), 'manager@demo.test')).status, 303);
  const page = await b.get('/dashboard/insights?restaurant=rest_demo&period=7');
  assert.is(page.status, 200);
  // The switcher is a GET form: what it sends is its hidden fields and the restaurant chosen.
  const form = /<form class="switcher" method="get" action="\/dashboard\/insights">([\s\S]*?)<\/form>/.exec(
    page.text,
  )?.[1];
  assert.ok(form, 'the switcher');
  const hidden = Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );
  assert.equal(hidden, { period: '7' });
  const switched = await b.get(
    `/dashboard/insights?${new URLSearchParams({ ...hidden, restaurant: 'rest_two' })}`,
  );
  assert.is(switched.status, 200);
  assert.match(switched.text, '<title>Insights · Chez Deux · Couvert</title>');
  assert.match(switched.text, 'aria-current="page">Last 7 days</a>');
});

t('another restaurant’s insights: 404, and nothing of it shown', async ({ svc, b }) => {
  const res = await b.get('/dashboard/insights?restaurant=rest_two&period=30');
  assert.is(res.status, 404);
  assert.not.match(res.text, 'tile-value');
  // The manager of all three sees rest_two's, and the empty state for rest_three.
  const m = new Browser(svc.url);
  await signIn(m, await m.get('/sign-in'), 'manager@demo.test');
  const two = await m.get('/dashboard/insights?restaurant=rest_two&period=30');
  assert.is(two.status, 200);
  assert.ok(Number(tile(two.text, 'Reservations')) > 0);
  const three = await m.get('/dashboard/insights?restaurant=rest_three&period=7');
  assert.is(three.status, 200);
  assert.match(three.text, 'Nothing to show for these 7 days yet');
  assert.not.match(three.text, '<svg class="chart"');
});

t('the demo activity agrees with its capacity: no seating for the repair job to report', async ({ svc }) => {
  const out = await svc.rt.docs
    .collection(SEATING_SYNC)
    .find({ restaurant_id: { $in: ['rest_demo', 'rest_two'] }, in_sync: false });
  assert.equal(
    out.map((d) => d._id),
    [],
    'every demo reservation that holds capacity (done, no-show, upcoming) holds its seating',
  );
  const reported: unknown[] = [];
  const error = svc.rt.logger.error.bind(svc.rt.logger);
  svc.rt.logger.error = ((...args: unknown[]) => {
    reported.push(args);
  }) as typeof svc.rt.logger.error;
  try {
    const r = await repairSeatings(svc.rt, 0);
    assert.equal([r.changed, reported], [[], []], 'nothing repaired, no operator alarm');
  } finally {
    svc.rt.logger.error = error;
  }
});

t('seeding again appends nothing', async ({ svc }) => {
  assert.is(await seedInsightsDemo(svc.rt, 'rest_demo', SEED), null);
});

t.run();
