// The dashboard's Insights page: a period's reservations, covers, no-shows, sources, lead time and
// guests, webhook deliveries per endpoint and missed calls, as server-rendered SVG charts, each with
// a sentence a manager reads at a glance and its numbers in a table (queries/insights.ts gathers them).
import type { RecordOutcome } from '../../../commands/missed-calls/events';
import type { Outcome } from '../../../projections/analytics/rules';
import { LEAD_TIME_BUCKETS } from '../../../projections/analytics/rules';
import type { Insights } from '../../../queries/insights';
import {
  type BarItem,
  barRows,
  dataTable,
  legend,
  percent,
  rateColumns,
  type Series,
  stackedColumns,
} from '../charts';
import { judgeDeliveries } from '../delivery-judgement';
import { type Html, html } from '../html';
import { dashboardPage, type ShellContext } from './dashboard-shell';

export const PERIODS = [7, 30, 90] as const;
export type Period = (typeof PERIODS)[number];

const OUTCOME_SERIES: (Series & { key: Outcome })[] = [
  { key: 'honoured', label: 'Honoured', cls: 's-honoured' },
  { key: 'confirmed', label: 'Confirmed', cls: 's-confirmed' },
  { key: 'pending', label: 'Pending', cls: 's-pending' },
  { key: 'no_show', label: 'No-show', cls: 's-no-show' },
  { key: 'canceled', label: 'Canceled', cls: 's-canceled' },
  { key: 'rejected', label: 'Rejected', cls: 's-rejected' },
];

const SOURCE_LABELS: Record<string, string> = {
  WALK_IN: 'Walk-in',
  WEBSITE: 'Website',
  PHONE: 'Phone',
  EMAIL: 'Email',
  RESERVE_WITH_GOOGLE: 'Reserve with Google',
  TRAVEL_AGENCIES: 'Travel agencies',
  OTHER: 'Other',
  INSTAGRAM: 'Instagram',
  FACEBOOK: 'Facebook',
  TIKTOK: 'TikTok',
  SNAPCHAT: 'Snapchat',
  WHATSAPP: 'WhatsApp',
  TRIPADVISOR: 'Tripadvisor',
  PRIVATIZATION: 'Privatization',
  MISSED_CALL: 'Missed call',
};

export const CALL_OUTCOME_LABELS: Record<RecordOutcome, string> = {
  SENT: 'Message sent',
  SEND_UNCONFIRMED: 'Unconfirmed: WhatsApp did not answer',
  SKIPPED_COOLDOWN: 'Skipped: messaged recently',
  SKIPPED_OPTED_OUT: 'Skipped: opted out',
  SKIPPED_BLACKLISTED: 'Skipped: blocked number',
  SKIPPED_FEATURE_DISABLED: 'Skipped: feature off',
  SKIPPED_NO_TEMPLATE: 'Skipped: no template',
  SKIPPED_INVALID_RECIPIENT: 'Refused: not reachable',
  SKIPPED_TEMPLATE_UNAVAILABLE: 'Refused: template unavailable',
  SKIPPED_CUSTOMER_DELETED: 'Skipped: customer deleted',
  SKIPPED_TOO_OLD: 'Skipped: call too old',
  FAILED: 'Failed, will retry',
  PENDING: 'In progress',
};

/** Lead-time buckets grouped for the chart (lower bounds in minutes, as in the histogram). */
const D = 24 * 60;
export const LEAD_GROUPS: { label: string; from: number; to: number }[] = [
  { label: '< 1 h', from: 0, to: 60 },
  { label: '1–4 h', from: 60, to: 240 },
  { label: '4–24 h', from: 240, to: D },
  { label: '1–3 d', from: D, to: 3 * D },
  { label: '3–7 d', from: 3 * D, to: 7 * D },
  { label: '1–2 wk', from: 7 * D, to: 14 * D },
  { label: '2–4 wk', from: 14 * D, to: 30 * D },
  { label: '1–3 mo', from: 30 * D, to: 90 * D },
  { label: '3 mo +', from: 90 * D, to: Number.POSITIVE_INFINITY },
];

/** The histogram (bucket lower bound → count) summed into LEAD_GROUPS. */
export function leadGroups(histogram: Readonly<Record<string, number>>): number[] {
  return LEAD_GROUPS.map((g) =>
    LEAD_TIME_BUCKETS.filter((b) => b >= g.from && b < g.to).reduce(
      (s, b) => s + (histogram[String(b)] ?? 0),
      0,
    ),
  );
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Minutes in words: "45 minutes", "4 hours", "3 days". */
export function minutesInWords(m: number): string {
  if (m < 60) return plural(m, 'minute');
  if (m < D) return plural(Math.round(m / 60), 'hour');
  return plural(Math.round(m / D), 'day');
}

/** Milliseconds in words: "250 ms", "2 s", "5 min", "4 h". */
export function msInWords(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

const shortDate = (date: string) =>
  new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(
    new Date(`${date}T12:00:00Z`),
  );
const longDate = (date: string) =>
  new Intl.DateTimeFormat('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  }).format(new Date(`${date}T12:00:00Z`));

const share = (n: number, total: number) => (total > 0 ? percent(n / total) : '—');

function periodNav(restaurantId: string, current: Period): Html {
  return html`<nav class="periods" aria-label="Period"><ul>${PERIODS.map(
    (p) =>
      html`<li><a href="/dashboard/insights?restaurant=${encodeURIComponent(restaurantId)}&amp;period=${p}"${p === current ? html` aria-current="page"` : ''}>Last ${p} days</a></li>`,
  )}</ul></nav>`;
}

function tile(label: string, value: string, note?: string): Html {
  return html`<div class="tile"><p class="tile-label">${label}</p><p class="tile-value">${value}</p>${note ? html`<p class="tile-note">${note}</p>` : ''}</div>`;
}

function card(
  id: string,
  title: string,
  summary: Html | string,
  chart: Html,
  table: Html,
  wide = false,
): Html {
  return html`<section class="card insight${wide ? ' wide' : ''}" aria-labelledby="${id}-h"><h2 id="${id}-h">${title}</h2>
<p class="insight-summary">${summary}</p>
${chart}
${table}
</section>`;
}

const empty = (text: string) => html`<p class="empty">${text}</p>`;

function coversCard(ins: Insights): Html {
  const labels = ins.days.map((d) => shortDate(d.date));
  const best = ins.days.reduce(
    (a, d) => (d.covers.honoured > (a?.covers.honoured ?? -1) ? d : a),
    ins.days[0],
  );
  const summary =
    ins.reservations === 0
      ? 'No reservations in this period.'
      : html`${plural(ins.covers, 'cover')} over ${plural(ins.reservations, 'reservation')}; the busiest day was ${
          best ? longDate(best.date) : '—'
        } with ${plural(best?.covers.honoured ?? 0, 'honoured cover')}.`;
  return card(
    'covers',
    'Covers per day',
    summary,
    ins.reservations === 0
      ? empty('Nothing to chart yet.')
      : html`${stackedColumns({
          id: 'covers-chart',
          title: 'Covers per day, by outcome',
          desc: `Stacked columns, one per day from ${ins.from} to ${ins.to}: covers honoured, confirmed, pending, no-show, canceled and rejected.`,
          labels,
          series: OUTCOME_SERIES,
          values: ins.days.map((d) => OUTCOME_SERIES.map((s) => d.covers[s.key])),
        })}${legend(OUTCOME_SERIES)}`,
    dataTable(
      'Covers per day',
      ['Day', ...OUTCOME_SERIES.map((s) => s.label), 'Reservations'],
      ins.days.map((d) => [longDate(d.date), ...OUTCOME_SERIES.map((s) => d.covers[s.key]), d.reservations]),
    ),
  );
}

function noShowCard(ins: Insights): Html {
  const known = ins.days.filter((d) => d.no_show_rate !== null);
  const noShows = ins.days.reduce((s, d) => s + d.no_show, 0);
  const summary =
    ins.no_show_rate === null
      ? 'No reservation of this period has come to pass yet.'
      : // The rate counts reservations (docs/analytics.md), not guests: a no-show of 8 weighs as a couple.
        html`<strong>${percent(ins.no_show_rate)}</strong> of the reservations whose guests were due (honoured or no-show) were no-shows (${plural(noShows, 'no-show')} out of ${
          noShows + ins.days.reduce((s, d) => s + d.honoured, 0)
        }).`;
  return card(
    'noshow',
    'No-show rate',
    summary,
    known.length === 0
      ? empty('Nothing to chart yet.')
      : rateColumns({
          id: 'noshow-chart',
          title: 'No-show rate per day',
          desc: 'Columns, one per day: no-shows among the reservations whose guests were due (honoured or no-show). Days without any are left empty.',
          labels: ins.days.map((d) => shortDate(d.date)),
          values: ins.days.map((d) => d.no_show_rate),
        }),
    dataTable(
      'No-show rate per day',
      ['Day', 'No-shows', 'Honoured', 'Rate'],
      ins.days.map((d) => [longDate(d.date), d.no_show, d.honoured, percent(d.no_show_rate)]),
    ),
  );
}

function sourcesCard(ins: Insights): Html {
  const top = ins.sources[0];
  const label = (s: string) => SOURCE_LABELS[s] ?? s;
  const items: BarItem[] = ins.sources.map((s) => ({
    label: label(s.source),
    value: s.reservations,
    text: `${s.reservations} · ${share(s.reservations, ins.reservations)}`,
  }));
  return card(
    'sources',
    'Reservations by source',
    top
      ? html`Most reservations came from <strong>${label(top.source)}</strong> (${share(top.reservations, ins.reservations)}).`
      : 'No reservations in this period.',
    top
      ? barRows({
          id: 'sources-chart',
          title: 'Reservations by source',
          desc: `Horizontal bars, one per source, longest first: ${ins.sources.map((s) => `${label(s.source)} ${s.reservations}`).join(', ')}.`,
          items,
        })
      : empty('Nothing to chart yet.'),
    dataTable(
      'Reservations by source',
      ['Source', 'Reservations', 'Share', 'Covers'],
      ins.sources.map((s) => [
        label(s.source),
        s.reservations,
        share(s.reservations, ins.reservations),
        s.covers,
      ]),
    ),
  );
}

/**
 * The lead-time card's sentence. A quantile in the last, open bucket (365 days or more) is a lower
 * bound, not an upper one: the median there means at least half were booked that far ahead, the p90
 * at least 1 in 10.
 */
export function leadSummary(l: Insights['lead_time']): Html | string {
  const { median, p90, count, median_open, p90_open } = l;
  if (count === 0 || median === null || p90 === null)
    return 'No booking made ahead in this period (walk-ins are left out).';
  const counted = `(${plural(count, 'booking')}, walk-ins left out).`;
  // The p90 is at least the median: with the median in the open bucket, it says nothing more.
  if (median_open && p90_open)
    return html`At least half the bookings were made <strong>${minutesInWords(median)} or more</strong> ahead ${counted}`;
  return html`${
    median_open
      ? html`At least half the bookings were made <strong>${minutesInWords(median)} or more</strong> ahead`
      : html`Half the bookings were made at most <strong>${minutesInWords(median)}</strong> ahead`
  }, and ${
    p90_open
      ? html`at least 1 in 10 were made <strong>${minutesInWords(p90)} or more</strong> ahead`
      : html`9 in 10 at most <strong>${minutesInWords(p90)}</strong> ahead`
  } ${counted}`;
}

/** The "Booked ahead (median)" tile: ≤ its bucket's upper bound, ≥ 365 days in the open last bucket. */
export const medianTile = (l: Insights['lead_time']) =>
  l.median === null ? '—' : `${l.median_open ? '≥' : '≤'} ${minutesInWords(l.median)}`;

function leadCard(ins: Insights): Html {
  const groups = leadGroups(ins.lead_time.histogram);
  const { count } = ins.lead_time;
  const summary = leadSummary(ins.lead_time);
  return card(
    'lead',
    'Booking lead time',
    summary,
    count === 0
      ? empty('Nothing to chart yet.')
      : stackedColumns({
          id: 'lead-chart',
          title: 'How far ahead bookings were made',
          desc: `A histogram of bookings by lead time: ${LEAD_GROUPS.map((g, i) => `${g.label} ${groups[i]}`).join(', ')}.`,
          labels: LEAD_GROUPS.map((g) => g.label),
          series: [{ key: 'n', label: 'Bookings', cls: 's-bar' }],
          values: groups.map((n) => [n]),
          height: 170,
        }),
    dataTable(
      'Booking lead time',
      ['Booked ahead', 'Bookings', 'Share'],
      LEAD_GROUPS.map((g, i) => [g.label, groups[i] ?? 0, share(groups[i] ?? 0, count)]),
    ),
  );
}

function guestsCard(ins: Insights): Html {
  const g = ins.guests;
  const total = g.new + g.returning + g.unknown;
  const items: BarItem[] = [
    { label: 'New guests', value: g.new, text: `${g.new} · ${share(g.new, total)}`, cls: 's-new' },
    {
      label: 'Returning guests',
      value: g.returning,
      text: `${g.returning} · ${share(g.returning, total)}`,
      cls: 's-returning',
    },
    {
      label: 'No guest named',
      value: g.unknown,
      text: `${g.unknown} · ${share(g.unknown, total)}`,
      cls: 's-pending',
    },
  ];
  return card(
    'guests',
    'New and returning guests',
    total === 0
      ? 'No reservations in this period.'
      : html`<strong>${share(g.returning, g.new + g.returning)}</strong> of the reservations naming a guest were from a returning guest.`,
    total === 0
      ? empty('Nothing to chart yet.')
      : barRows({
          id: 'guests-chart',
          title: 'Reservations by new or returning guest',
          desc: `Horizontal bars: new ${g.new}, returning ${g.returning}, no guest named ${g.unknown}.`,
          items,
          max: total,
        }),
    dataTable(
      'New and returning guests',
      ['Guest', 'Reservations', 'Share'],
      items.map((i) => [i.label, i.value, share(i.value, total)]),
    ),
  );
}

function webhooksCard(ins: Insights): Html {
  const name = (e: Insights['endpoints'][number]) => e.url ?? `${e.endpoint_id} (deleted)`;
  // Deliveries being retried after failed attempts count as not delivered yet (delivery-judgement.ts):
  // an endpoint failing every attempt has no finished delivery, and was said to be well.
  const judged = ins.endpoints.map((e) => ({ e, j: judgeDeliveries(e.totals) }));
  const retryingWords = (n: number) => (n > 0 ? `, ${n} being retried after failed attempts` : '');
  const failing = judged.filter(({ j }) => j.short);
  const summary =
    ins.endpoints.length === 0
      ? 'No webhook deliveries in this period.'
      : failing.length === 0
        ? html`Every endpoint received at least 95% of its deliveries.`
        : html`<strong>${plural(failing.length, 'endpoint')}</strong> did not receive 95% of ${failing.length === 1 ? 'its' : 'their'} deliveries: ${failing
            .map(({ e, j }) => `${name(e)} (${percent(j.rate)}${retryingWords(j.retrying)})`)
            .join(', ')}.`;
  return card(
    'webhooks',
    'Webhook deliveries',
    summary,
    ins.endpoints.length === 0
      ? empty('Nothing to chart yet.')
      : barRows({
          id: 'webhooks-chart',
          title: 'Webhook delivery success rate per endpoint',
          desc: `Horizontal bars, one per endpoint, of the share delivered among the deliveries finished or being retried after failed attempts: ${judged
            .map(({ e, j }) => `${name(e)} ${percent(j.rate)}`)
            .join(', ')}.`,
          items: judged.map(({ e, j }) => ({
            label: name(e),
            value: j.rate ?? 0,
            text: `${percent(j.rate)} · ${j.delivered}/${j.judged}`,
            cls: j.short ? 's-no-show' : 's-honoured',
          })),
          max: 1,
        }),
    dataTable(
      'Webhook deliveries',
      [
        'Endpoint',
        'Deliveries',
        'Delivered',
        'Failed',
        'Pending',
        'Canceled',
        'Attempts',
        'First try',
        'Median time',
        '90% within',
      ],
      ins.endpoints.map((e) => [
        name(e),
        e.totals.deliveries,
        e.totals.delivered,
        e.totals.failed,
        e.totals.pending,
        e.totals.canceled,
        e.totals.attempts,
        percent(e.rates.first_attempt_success_rate),
        e.rates.median_ms === null ? '—' : msInWords(e.rates.median_ms),
        e.rates.p90_ms === null ? '—' : msInWords(e.rates.p90_ms),
      ]),
    ),
    true,
  );
}

function missedCallsCard(ins: Insights): Html {
  const m = ins.missed_calls;
  const outcomes = (Object.keys(CALL_OUTCOME_LABELS) as RecordOutcome[])
    .map((o) => ({ o, n: m.by_outcome[o] ?? 0 }))
    .filter((x) => x.n > 0);
  const sent = m.by_outcome.SENT ?? 0;
  return card(
    'calls',
    'Missed calls',
    m.reported === 0
      ? 'No missed calls in this period.'
      : html`${plural(m.reported, 'missed call')}: a message was sent after ${sent} (${share(sent, m.reported)}); ${
          m.followed_by_reservation
        } ${m.followed_by_reservation === 1 ? 'was' : 'were'} followed by a booking within 7 days.`,
    m.reported === 0
      ? empty('Nothing to chart yet.')
      : barRows({
          id: 'calls-chart',
          title: 'Missed calls by outcome',
          desc: `Horizontal bars, one per outcome: ${outcomes.map((x) => `${CALL_OUTCOME_LABELS[x.o]} ${x.n}`).join(', ')}.`,
          items: outcomes.map((x) => ({
            label: CALL_OUTCOME_LABELS[x.o],
            value: x.n,
            text: `${x.n} · ${share(x.n, m.reported)}`,
            cls: x.o === 'SENT' ? 's-honoured' : x.o.startsWith('SKIPPED') ? 's-canceled' : 's-pending',
          })),
          max: m.reported,
        }),
    dataTable(
      'Missed calls',
      ['Outcome', 'Calls', 'Share'],
      [
        ...outcomes.map((x) => [CALL_OUTCOME_LABELS[x.o], x.n, share(x.n, m.reported)]),
        ['Callers already known', m.known_customers, share(m.known_customers, m.reported)],
        ['New callers', m.new_customers, share(m.new_customers, m.reported)],
        ['Booked within 7 days', m.followed_by_reservation, share(m.followed_by_reservation, m.reported)],
      ],
    ),
  );
}

export function insightsPage(c: ShellContext, o: { insights: Insights; period: Period }): string {
  const ins = o.insights;
  const anything = ins.reservations > 0 || ins.endpoints.length > 0 || ins.missed_calls.reported > 0;
  // Judged as the webhook card judges each endpoint (deliveries being retried count as not yet delivered).
  const webhookTotals = ins.endpoints.reduce(
    (a, e) => {
      const j = judgeDeliveries(e.totals);
      return { delivered: a.delivered + j.delivered, judged: a.judged + j.judged };
    },
    { delivered: 0, judged: 0 },
  );
  const webhookRate = webhookTotals.judged > 0 ? webhookTotals.delivered / webhookTotals.judged : null;
  return dashboardPage(c, {
    section: 'insights',
    title: 'Insights',
    lead: html`${longDate(ins.from)} – ${longDate(ins.to)}, by service day in the restaurant’s time (${c.restaurant.timezone}).`,
    switcherAction: '/dashboard/insights',
    switcherKeep: { period: String(o.period) },
    body: html`${periodNav(c.restaurant.id, o.period)}
${
  anything
    ? html`<div class="tiles">
${tile('Reservations', String(ins.reservations))}
${tile('Covers', String(ins.covers))}
${tile('No-show rate', percent(ins.no_show_rate))}
${tile('Booked ahead (median)', medianTile(ins.lead_time))}
${tile('Webhooks delivered', percent(webhookRate))}
${tile('Missed calls', String(ins.missed_calls.reported))}
</div>
<div class="insights-grid">
${coversCard(ins)}
${noShowCard(ins)}
${sourcesCard(ins)}
${leadCard(ins)}
${guestsCard(ins)}
${missedCallsCard(ins)}
${webhooksCard(ins)}
</div>`
    : html`<div class="card empty-state"><h2>Nothing to show for these ${o.period} days yet</h2>
<p>Insights appear here once reservations, webhook deliveries or missed calls come in. Try a longer period, or come back after a service.</p></div>`
}`,
  });
}
