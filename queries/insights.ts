// What the dashboard's Insights page shows for one restaurant over a range of local days: the
// reservation figures per day (analytics_days), and the period's totals of sources, lead time, guests,
// webhook deliveries per endpoint and missed calls. Every read is filtered on the restaurant.
import type { ReservationSource } from '../commands/reservations/events';
import type { DayFigures } from '../projections/analytics/figures';
import type { MissedCallDay } from '../projections/analytics/missed-call-rules';
import { emptyMissedCallDay } from '../projections/analytics/missed-call-rules';
import {
  histogramQuantile,
  histogramQuantileBucket,
  isOpenBucket,
  type Outcome,
} from '../projections/analytics/rules';
import {
  addInc,
  sumWebhookDays,
  type WebhookDay,
  webhookRates,
} from '../projections/analytics/webhook-rules';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../projections/webhook-endpoints';
import type { DocumentStore } from '../src/ports/document-store';
import { figuresInRange } from './analytics';
import { missedCallDaysInRange, webhookDaysInRange } from './analytics-operations';

export interface InsightsDay {
  date: string;
  covers: Record<Outcome, number>;
  reservations: number;
  no_show: number;
  honoured: number;
  no_show_rate: number | null;
}

export interface EndpointInsight {
  endpoint_id: string;
  /** The endpoint's URL, or null when it is gone. */
  url: string | null;
  totals: WebhookDay;
  rates: ReturnType<typeof webhookRates>;
}

export interface Insights {
  from: string;
  to: string;
  days: InsightsDay[];
  reservations: number;
  covers: number;
  no_show_rate: number | null;
  sources: { source: ReservationSource; reservations: number; covers: number }[];
  lead_time: {
    histogram: Record<string, number>;
    count: number;
    median: number | null;
    p90: number | null;
    /** The median (p90) fell in the last, open bucket: it is at least, not at most, its value. */
    median_open: boolean;
    p90_open: boolean;
  };
  guests: { new: number; returning: number; unknown: number };
  endpoints: EndpointInsight[];
  missed_calls: MissedCallDay;
  missed_call_days: number;
}

const OUTCOMES: readonly Outcome[] = ['pending', 'confirmed', 'honoured', 'no_show', 'canceled', 'rejected'];

/** Every date from `from` to `to` inclusive (YYYY-MM-DD). */
export function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

const rate = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);

export async function insightsOf(
  docs: DocumentStore,
  restaurantId: string,
  from: string,
  to: string,
): Promise<Insights> {
  const byDate = new Map<string, DayFigures>();
  for await (const f of figuresInRange(docs, { restaurantId, from, to, by: 'day' }))
    byDate.set(f.service_date, f);
  const days: InsightsDay[] = [];
  const sources = new Map<ReservationSource, { reservations: number; covers: number }>();
  const histogram: Record<string, number> = {};
  const guests = { new: 0, returning: 0, unknown: 0 };
  let reservations = 0;
  let covers = 0;
  let noShow = 0;
  let honoured = 0;
  for (const date of datesBetween(from, to)) {
    const f = byDate.get(date);
    const c = Object.fromEntries(OUTCOMES.map((o) => [o, f?.by_outcome[o]?.covers ?? 0])) as Record<
      Outcome,
      number
    >;
    const ns = f?.by_outcome.no_show?.reservations ?? 0;
    const ho = f?.by_outcome.honoured?.reservations ?? 0;
    days.push({
      date,
      covers: c,
      reservations: f?.reservations ?? 0,
      no_show: ns,
      honoured: ho,
      no_show_rate: rate(ns, ns + ho),
    });
    if (!f) continue;
    reservations += f.reservations;
    covers += f.covers;
    noShow += ns;
    honoured += ho;
    for (const [s, t] of Object.entries(f.by_source)) {
      const cur = sources.get(s as ReservationSource) ?? { reservations: 0, covers: 0 };
      cur.reservations += t?.reservations ?? 0;
      cur.covers += t?.covers ?? 0;
      sources.set(s as ReservationSource, cur);
    }
    for (const [b, n] of Object.entries(f.lead_time.histogram)) histogram[b] = (histogram[b] ?? 0) + n;
    guests.new += f.guests.new;
    guests.returning += f.guests.returning;
    guests.unknown += f.guests.unknown;
  }
  const perEndpoint = new Map<string, WebhookDay[]>();
  for await (const d of webhookDaysInRange(docs, { restaurantId, from, to })) {
    const list = perEndpoint.get(d.endpoint_id) ?? [];
    list.push(d);
    perEndpoint.set(d.endpoint_id, list);
  }
  const known = perEndpoint.size
    ? await docs
        .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
        .find({ restaurant_id: restaurantId, _id: { $in: [...perEndpoint.keys()] } })
    : [];
  const urls = new Map(known.map((e) => [e._id, e.url as string]));
  const endpoints = [...perEndpoint].map(([id, list]): EndpointInsight => {
    const totals = sumWebhookDays(list, {
      restaurant_id: restaurantId,
      endpoint_id: id,
      date: `${from}..${to}`,
    });
    return { endpoint_id: id, url: urls.get(id) ?? null, totals, rates: webhookRates(totals) };
  });
  endpoints.sort(
    (a, b) => b.totals.deliveries - a.totals.deliveries || a.endpoint_id.localeCompare(b.endpoint_id),
  );
  const missed = emptyMissedCallDay({ restaurant_id: restaurantId, date: `${from}..${to}` });
  let missedDays = 0;
  for await (const d of missedCallDaysInRange(docs, { restaurantId, from, to })) {
    missedDays++;
    const inc: Record<string, number> = {};
    for (const k of [
      'reported',
      'matched',
      'known_customers',
      'new_customers',
      'with_upcoming_reservation',
      'messages_requested',
      'followed_by_reservation',
    ] as const)
      inc[k] = d[k];
    for (const [o, n] of Object.entries(d.by_outcome)) inc[`by_outcome.${o}`] = n ?? 0;
    addInc(missed, inc);
  }
  const leadCount = Object.values(histogram).reduce((a, b) => a + b, 0);
  return {
    from,
    to,
    days,
    reservations,
    covers,
    no_show_rate: rate(noShow, noShow + honoured),
    sources: [...sources]
      .map(([source, t]) => ({ source, ...t }))
      .filter((s) => s.reservations > 0)
      .sort((a, b) => b.reservations - a.reservations || a.source.localeCompare(b.source)),
    lead_time: {
      histogram,
      count: leadCount,
      median: histogramQuantile(histogram, 0.5),
      p90: histogramQuantile(histogram, 0.9),
      median_open: isOpenBucket(histogramQuantileBucket(histogram, 0.5)),
      p90_open: isOpenBucket(histogramQuantileBucket(histogram, 0.9)),
    },
    guests,
    endpoints,
    missed_calls: missed,
    missed_call_days: missedDays,
  };
}
