// The Insights page's SVG chart helpers and figures in words, pure: axis tops and ticks, linear
// scales, band geometry, which labels show, the markup's accessible names and escaping.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { emptyMissedCallDay } from '../../projections/analytics/missed-call-rules';
import {
  bucketKey,
  histogramQuantile,
  histogramQuantileBucket,
  isOpenBucket,
  LEAD_TIME_BUCKETS,
} from '../../projections/analytics/rules';
import { emptyWebhookDay, webhookRates } from '../../projections/analytics/webhook-rules';
import { datesBetween, type Insights } from '../../queries/insights';
import { periodRange } from '../../src/http/routes/dashboard-insights';
import {
  bands,
  barRows,
  CHART_WIDTH,
  dataTable,
  labelEvery,
  linear,
  niceMax,
  percent,
  rateColumns,
  stackedColumns,
  ticks,
} from '../../src/web/charts';
import { markup } from '../../src/web/html';
import {
  insightsPage,
  LEAD_GROUPS,
  leadGroups,
  leadSummary,
  medianTile,
  minutesInWords,
  msInWords,
} from '../../src/web/pages/insights-pages';

test('niceMax: the smallest 1, 2 or 5 × 10^k at or above the maximum', () => {
  assert.equal(
    [0, -3, 0.3, 1, 3, 7, 10, 11, 76, 100, 101, 4200].map(niceMax),
    [1, 1, 0.5, 1, 5, 10, 10, 20, 100, 100, 200, 5000],
  );
  fc.assert(
    fc.property(fc.double({ min: 1e-6, max: 1e9, noNaN: true }), (max) => {
      const top = niceMax(max);
      return top >= max - 1e-9 && top < max * 5.0001;
    }),
  );
});

test('ticks: from 0 to the top, evenly spaced, whole numbers on count axes', () => {
  assert.equal(ticks(76), [0, 25, 50, 75, 100]);
  assert.equal(ticks(3), [0, 5]);
  assert.equal(ticks(0), [0, 1]);
  assert.equal(ticks(150), [0, 50, 100, 150, 200]);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), (max) => {
      const t = ticks(max);
      const step = (t[1] as number) - (t[0] as number);
      return (
        t[0] === 0 &&
        (t[t.length - 1] as number) >= max &&
        t.every((v, i) => v === i * step && Number.isInteger(v))
      );
    }),
  );
});

test('linear maps the domain onto the range (inverted y axes too); a point domain maps to r0', () => {
  const y = linear(0, 100, 180, 10);
  assert.is(y(0), 180);
  assert.is(y(100), 10);
  assert.is(y(50), 95);
  assert.is(linear(5, 5, 1, 9)(5), 1);
});

test('bands: n equal bands filling the span, gaps between, in order', () => {
  assert.equal(bands(0, 0, 100), []);
  const b = bands(4, 0, 100, 0.2);
  assert.equal(
    b.map((x) => Math.round(x.x * 10) / 10),
    [2.5, 27.5, 52.5, 77.5],
  );
  assert.ok(b.every((x) => Math.abs(x.width - 20) < 1e-9));
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 0.9, noNaN: true }), (n, gap) => {
      const bs = bands(n, 10, 350, gap);
      for (let i = 0; i < n; i++) {
        const cur = bs[i] as { x: number; width: number };
        if (cur.x < 10 - 1e-9 || cur.x + cur.width > 350 + 1e-9) return false;
        const next = bs[i + 1];
        if (next && next.x < cur.x + cur.width - 1e-9) return false;
      }
      return true;
    }),
  );
});

test('labelEvery: at most about `max` labels, always the last, never one crowding it', () => {
  const shown = (n: number, max: number) => Array.from({ length: n }, (_, i) => i).filter(labelEvery(n, max));
  assert.equal(shown(7, 6), [0, 2, 4, 6]);
  assert.equal(shown(3, 6), [0, 1, 2]);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 2, max: 10 }), (n, max) => {
      const s = shown(n, max);
      return s.includes(n - 1) && s.length <= max + 1;
    }),
  );
});

test('a stacked column chart: title and desc named by aria-labelledby, segments stacked, labels escaped', () => {
  const svg = markup(
    stackedColumns({
      id: 'c',
      title: 'Covers <by> day',
      desc: 'A & B',
      labels: ['1 Jun', '<b>2 Jun</b>'],
      series: [
        { key: 'a', label: 'Honoured', cls: 's-honoured' },
        { key: 'b', label: 'No-show', cls: 's-no-show' },
      ],
      values: [
        [3, 1],
        [0, 2],
      ],
    }),
  );
  assert.match(svg, `viewBox="0 0 ${CHART_WIDTH} 200"`);
  assert.match(svg, 'role="img" aria-labelledby="c-t c-d"');
  assert.match(svg, '<title id="c-t">Covers &lt;by&gt; day</title>');
  assert.match(svg, '<desc id="c-d">A &amp; B</desc>');
  assert.not.match(svg, '<b>');
  assert.match(svg, '&lt;b&gt;2 Jun&lt;/b&gt;: No-show 2');
  const rects = [
    ...svg.matchAll(
      /<rect class="(s-[a-z-]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/g,
    ),
  ].map((m) => ({
    cls: m[1],
    y: Number(m[3]),
    h: Number(m[5]),
  }));
  assert.is(rects.length, 3, 'a zero segment draws nothing');
  const [a, b] = rects as unknown as [{ y: number; h: number }, { y: number; h: number }];
  assert.ok(Math.abs(b.y + b.h - a.y) < 0.2, 'the second segment sits on the first');
  assert.ok(Math.abs(a.h / b.h - 3) < 0.05, 'heights proportional to values');
});

test('a rate chart: null days are gaps; the axis reads in percent', () => {
  const svg = markup(
    rateColumns({ id: 'r', title: 'No-show', desc: 'd', labels: ['a', 'b', 'c'], values: [0.1, null, 0.2] }),
  );
  assert.is([...svg.matchAll(/<rect /g)].length, 2);
  assert.match(svg, '>20%</text>');
  assert.match(svg, '>5%</text>');
  assert.match(svg, 'c: 20%');
});

test('bar rows: lengths proportional to value against max; text at the end; labels escaped', () => {
  const svg = markup(
    barRows({
      id: 'b',
      title: 't',
      desc: 'd',
      items: [
        { label: 'https://x.test/?a=1&b=<2>', value: 1, text: '100%' },
        { label: 'half', value: 0.5, text: '50%' },
        { label: 'none', value: 0, text: '0%' },
      ],
      max: 1,
    }),
  );
  const widths = [...svg.matchAll(/<rect class="s-bar" x="0" y="[\d.]+" width="([\d.]+)"/g)].map((m) =>
    Number(m[1]),
  );
  assert.equal(widths, [CHART_WIDTH - 110, (CHART_WIDTH - 110) / 2, 0]);
  assert.match(svg, 'https://x.test/?a=1&amp;b=&lt;2&gt;');
});

test('percent and the data table', () => {
  assert.is(percent(0.1234), '12.3%');
  assert.is(percent(0.5), '50%');
  assert.is(percent(1), '100%');
  assert.is(percent(null), '—');
  assert.is(percent(0.25, 0), '25%');
  const t = markup(dataTable('Sources', ['Source', 'N'], [['<script>', 3]]));
  assert.match(t, '<summary>Sources: the numbers</summary>');
  assert.match(t, '<th scope="row">&lt;script&gt;</th><td class="num">3</td>');
});

test('lead-time groups cover every bucket exactly once', () => {
  const histogram = Object.fromEntries(LEAD_TIME_BUCKETS.map((b) => [String(b), 1]));
  const groups = leadGroups(histogram);
  assert.is(groups.length, LEAD_GROUPS.length);
  assert.is(
    groups.reduce((a, b) => a + b, 0),
    LEAD_TIME_BUCKETS.length,
  );
  assert.equal(leadGroups({ 0: 2, 15: 1, 60: 4, 525600: 1 }), [3, 4, 0, 0, 0, 0, 0, 0, 1]);
});

test('durations in words', () => {
  assert.equal([1, 15, 60, 120, 1440, 2880, 14400].map(minutesInWords), [
    '1 minute',
    '15 minutes',
    '1 hour',
    '2 hours',
    '1 day',
    '2 days',
    '10 days',
  ]);
  assert.equal([250, 1000, 30_000, 300_000, 14_400_000].map(msInWords), [
    '250 ms',
    '1 s',
    '30 s',
    '5 min',
    '4 h',
  ]);
});

test('a period: the last n local days ending today, n dates', () => {
  assert.equal(periodRange('2026-03-31', 7), { from: '2026-03-25', to: '2026-03-31' });
  assert.is(datesBetween(periodRange('2026-03-31', 90).from, '2026-03-31').length, 90);
  assert.equal(datesBetween('2026-02-27', '2026-03-01'), ['2026-02-27', '2026-02-28', '2026-03-01']);
});

test('lead time: a median or p90 in the open last bucket reads "365 days or more", never "at most"', () => {
  const last = LEAD_TIME_BUCKETS.length - 1;
  // As queries/insights.ts reads them from the summed histogram.
  const lead = (histogram: Record<string, number>) => ({
    histogram,
    count: Object.values(histogram).reduce((a, b) => a + b, 0),
    median: histogramQuantile(histogram, 0.5),
    p90: histogramQuantile(histogram, 0.9),
    median_open: isOpenBucket(histogramQuantileBucket(histogram, 0.5)),
    p90_open: isOpenBucket(histogramQuantileBucket(histogram, 0.9)),
  });
  const text = (h: ReturnType<typeof leadSummary>) => (typeof h === 'string' ? h : markup(h));
  // [180, 365) days: its upper bound, "at most 365 days".
  const below = lead({ [bucketKey(last - 1)]: 4 });
  assert.match(
    text(leadSummary(below)),
    'Half the bookings were made at most <strong>365 days</strong> ahead',
  );
  assert.is(medianTile(below), '≤ 365 days');
  // 365 days or more: both quantiles are lower bounds, said once (not "at least 1 in 10 365 days").
  const open = lead({ [bucketKey(last)]: 4 });
  assert.is(
    text(leadSummary(open)),
    'At least half the bookings were made <strong>365 days or more</strong> ahead (4 bookings, walk-ins left out).',
  );
  assert.is(medianTile(open), '≥ 365 days');
  // Only the p90 in the open bucket.
  const tail = lead({ '0': 8, [bucketKey(last)]: 2 });
  const mixed = text(leadSummary(tail));
  assert.match(mixed, 'Half the bookings were made at most <strong>15 minutes</strong> ahead');
  assert.match(mixed, 'and at least 1 in 10 were made <strong>365 days or more</strong> ahead');
  assert.not.match(mixed, 'at most <strong>365');
  assert.is(medianTile(tail), '≤ 15 minutes');
});

test('the webhook table accounts for every delivery: delivered, failed, pending and canceled', () => {
  // An endpoint deleted with deliveries still being retried: those are canceled (docs/analytics.md:
  // deliveries = delivered + failed + pending + canceled). The table listed the first three only.
  const totals = {
    ...emptyWebhookDay({ restaurant_id: 'r', endpoint_id: 'we_x', date: '2026-06-01..2026-06-07' }),
    deliveries: 28,
    failed: 15,
    canceled: 13,
    attempts: 189,
    failed_attempts: 189,
  };
  const insights: Insights = {
    from: '2026-06-01',
    to: '2026-06-07',
    days: [],
    reservations: 0,
    covers: 0,
    no_show_rate: null,
    sources: [],
    lead_time: { histogram: {}, count: 0, median: null, p90: null, median_open: false, p90_open: false },
    guests: { new: 0, returning: 0, unknown: 0 },
    endpoints: [{ endpoint_id: 'we_x', url: null, totals, rates: webhookRates(totals) }],
    missed_calls: emptyMissedCallDay({ restaurant_id: 'r', date: '2026-06-01..2026-06-07' }),
    missed_call_days: 0,
  };
  const page = insightsPage(
    {
      restaurants: [{ id: 'r', name: 'R' }],
      restaurant: { id: 'r', name: 'R', timezone: 'Europe/Paris' },
      account: { email: 'm@x.test', csrf: 'c' },
    },
    { insights, period: 7 },
  );
  const table = page.slice(page.indexOf('Webhook deliveries: the numbers'));
  const headers = [
    ...table.slice(0, table.indexOf('</thead>')).matchAll(/<th scope="col"[^>]*>([^<]*)<\/th>/g),
  ].map((m) => m[1]);
  const row = table.slice(
    table.indexOf('<th scope="row">'),
    table.indexOf('</tr>', table.indexOf('<th scope="row">')),
  );
  const cells = [...row.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((m) => m[1]);
  const at = (h: string) => Number(cells[headers.indexOf(h) - 1]);
  assert.ok(headers.includes('Canceled'), `headers: ${headers.join(', ')}`);
  assert.is(at('Deliveries'), 28);
  assert.is(at('Delivered') + at('Failed') + at('Pending') + at('Canceled'), 28, 'the columns add up');
});

test('the no-show summary counts reservations, as the rate does, never guests (party sizes differ)', () => {
  // One no-show of 8 and one honoured couple: 50 % of the reservations, but 8 of 10 guests. The
  // summary said "50 % of the guests expected did not come".
  const day = (date: string, no_show: number, honoured: number) => ({
    date,
    covers: {
      pending: 0,
      confirmed: 0,
      honoured: honoured * 2,
      no_show: no_show * 8,
      canceled: 0,
      rejected: 0,
    },
    reservations: no_show + honoured,
    no_show,
    honoured,
    no_show_rate: no_show + honoured ? no_show / (no_show + honoured) : null,
  });
  const insights: Insights = {
    from: '2026-06-01',
    to: '2026-06-02',
    days: [day('2026-06-01', 1, 0), day('2026-06-02', 0, 1)],
    reservations: 2,
    covers: 10,
    no_show_rate: 0.5,
    sources: [],
    lead_time: { histogram: {}, count: 0, median: null, p90: null, median_open: false, p90_open: false },
    guests: { new: 0, returning: 0, unknown: 2 },
    endpoints: [],
    missed_calls: emptyMissedCallDay({ restaurant_id: 'r', date: '2026-06-01..2026-06-02' }),
    missed_call_days: 0,
  };
  const page = insightsPage(
    {
      restaurants: [{ id: 'r', name: 'R' }],
      restaurant: { id: 'r', name: 'R', timezone: 'Europe/Paris' },
      account: { email: 'm@x.test', csrf: 'c' },
    },
    { insights, period: 7 },
  );
  assert.not.match(page, 'guests expected');
  assert.match(
    page,
    '<strong>50%</strong> of the reservations whose guests were due (honoured or no-show) were no-shows (1 no-show out of 2).',
  );
});

test.run();
