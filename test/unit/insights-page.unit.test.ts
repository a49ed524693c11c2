// The Insights page's markup, rendered directly from a period's figures: what its webhook card says of
// an endpoint whose every attempt fails while its deliveries wait for a retry (it said "Every endpoint
// received at least 95% of its deliveries" beside "— · 0/0"), and the order of its cards.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { emptyMissedCallDay } from '../../projections/analytics/missed-call-rules';
import { emptyWebhookDay, type WebhookDay, webhookRates } from '../../projections/analytics/webhook-rules';
import type { EndpointInsight, Insights } from '../../queries/insights';
import type { ShellContext } from '../../src/web/pages/dashboard-shell';
import { insightsPage } from '../../src/web/pages/insights-pages';

const t = suite('insights page: markup');

const shell: ShellContext = {
  restaurants: [{ id: 'rest_demo', name: 'Le Demo' }] as ShellContext['restaurants'],
  restaurant: { id: 'rest_demo', name: 'Le Demo', timezone: 'Europe/Paris' } as ShellContext['restaurant'],
  account: { email: 'manager@demo.test', csrf: 'csrf' },
};

const endpoint = (id: string, url: string, counts: Partial<WebhookDay>): EndpointInsight => {
  const totals = {
    ...emptyWebhookDay({ restaurant_id: 'rest_demo', endpoint_id: id, date: '2026-11-01..2026-11-28' }),
    ...counts,
  };
  return { endpoint_id: id, url, totals, rates: webhookRates(totals) };
};

const insights = (endpoints: EndpointInsight[]): Insights => ({
  from: '2026-11-01',
  to: '2026-11-28',
  days: [],
  reservations: 0,
  covers: 0,
  no_show_rate: null,
  sources: [],
  lead_time: { histogram: {}, count: 0, median: null, p90: null, median_open: false, p90_open: false },
  guests: { new: 0, returning: 0, unknown: 0 },
  endpoints,
  missed_calls: emptyMissedCallDay({ restaurant_id: 'rest_demo', date: '2026-11-01..2026-11-28' }),
  missed_call_days: 0,
});

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ');
const webhookCard = (page: string) =>
  text(
    /<section class="card insight wide" aria-labelledby="webhooks-h">([\s\S]*?)<\/section>/.exec(page)?.[1] ??
      '',
  );

const ok = endpoint('we_ok', 'https://crm.example.test/hooks', {
  deliveries: 25,
  delivered: 25,
  first_attempt_delivered: 25,
  attempts: 25,
});
const failing = endpoint('we_fail', 'http://127.0.0.1:47691/v1fail', {
  deliveries: 2,
  pending: 2,
  attempts: 8,
  failed_attempts: 8,
});

t('an endpoint failing every attempt, its deliveries pending for a retry, is said to be failing', () => {
  const card = webhookCard(insightsPage(shell, { insights: insights([ok, failing]), period: 30 }));
  assert.not.match(card, /Every endpoint received/);
  assert.match(
    card,
    /1 endpoint did not receive 95% of its deliveries: http:\/\/127\.0\.0\.1:47691\/v1fail \(0%, 2 being retried after failed attempts\)/,
  );
  assert.match(card, /http:\/\/127\.0\.0\.1:47691\/v1fail: 0% · 0\/2 /, card);
  assert.not.match(card, /— · 0\/0/, card);
});

t('all delivered, a new delivery waiting for its first attempt: all is well', () => {
  const fresh = endpoint('we_new', 'https://pos.example.test/hooks', { deliveries: 1, pending: 1 });
  const card = webhookCard(insightsPage(shell, { insights: insights([ok, fresh]), period: 30 }));
  assert.match(card, /Every endpoint received at least 95% of its deliveries/);
});

t('the tile counts deliveries being retried as not delivered too', () => {
  const page = insightsPage(shell, { insights: insights([ok, failing]), period: 30 });
  assert.match(text(page), /Webhooks delivered 92\.6%/);
});

t.run();
