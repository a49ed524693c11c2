// The Insights page's headline figures computed straight from the seeded events (src/insights-demo.ts),
// independently of the projections and queries the page reads: what the tests compare the page with.
import { localDateOf } from '../../commands/availability/zone-time';
import { type InsightsSeed, insightsDemoEvents } from '../../src/insights-demo';

export const INSIGHTS_NOW = '2026-06-15T10:00:00Z';
export const INSIGHTS_SEED: InsightsSeed = {
  days: 30,
  timezone: 'Europe/Paris',
  endpoints: ['we_pos', 'we_crm'],
};

export function expectedInsights(restaurantId: string, from: string, to: string, seed = INSIGHTS_SEED) {
  const inRange = (d: string) => d >= from && d <= to;
  const day = (iso: string) => localDateOf(seed.timezone, Date.parse(iso));
  let reservations = 0;
  let covers = 0;
  let calls = 0;
  let noShows = 0;
  let honoured = 0;
  const finals = new Map<string, string>();
  const scheduledIn = new Set<string>();
  const status = new Map<string, { date: string; status: string }>();
  for (const { events } of insightsDemoEvents(restaurantId, new Date(INSIGHTS_NOW), seed))
    for (const e of events) {
      const d = e.data as {
        reservation_id: string;
        reservation: { service_date: string; party_size: number; status: string };
        occurred_at: string;
        at: string;
        to: string;
        deliveries: { delivery_id: string }[];
        delivery_id: string;
        outcome: string;
      };
      if (e.type === 'ReservationCreated') {
        status.set(d.reservation_id, { date: d.reservation.service_date, status: d.reservation.status });
        if (inRange(d.reservation.service_date)) {
          reservations++;
          covers += d.reservation.party_size;
        }
      } else if (e.type === 'ReservationStatusChanged') {
        const s = status.get(d.reservation_id);
        if (s) s.status = d.to;
      } else if (e.type === 'MissedCallReported') {
        if (inRange(day(d.occurred_at))) calls++;
      } else if (e.type === 'WebhookDeliveriesScheduled') {
        if (inRange(day(d.at))) for (const x of d.deliveries) scheduledIn.add(x.delivery_id);
      } else if (e.type === 'WebhookAttemptRecorded') finals.set(d.delivery_id, d.outcome);
    }
  for (const s of status.values())
    if (inRange(s.date)) {
      if (s.status === 'NO_SHOW') noShows++;
      if (s.status === 'DONE') honoured++;
    }
  let delivered = 0;
  let failed = 0;
  for (const id of scheduledIn) {
    if (finals.get(id) === 'succeeded') delivered++;
    if (finals.get(id) === 'failed') failed++;
  }
  return { reservations, covers, calls, deliveries: scheduledIn.size, delivered, failed, noShows, honoured };
}

/** As the page prints a rate: one decimal, no trailing ".0". */
export const asPercent = (a: number, b: number) => `${((a / b) * 100).toFixed(1).replace(/\.0$/, '')}%`;
