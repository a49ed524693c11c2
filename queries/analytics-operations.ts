// Reads of the operations analytics (projections/analytics/webhook-projection.ts and
// missed-call-projection.ts): a restaurant's webhook days (per endpoint) and missed-call days over a
// date range, with the rates read from the counters, and their CSV form (columns in docs/analytics.md;
// the order below is the contract).
import { RECORD_OUTCOMES } from '../commands/missed-calls/events';
import {
  ANALYTICS_MISSED_CALL_DAYS,
  type MissedCallDayDoc,
  missedCallDayOf,
} from '../projections/analytics/missed-call-projection';
import type { MissedCallDay } from '../projections/analytics/missed-call-rules';
import {
  ANALYTICS_WEBHOOK_DAYS,
  type WebhookDayDoc,
  webhookDayOf,
} from '../projections/analytics/webhook-projection';
import { type WebhookDay, webhookRates } from '../projections/analytics/webhook-rules';
import { csvRecord } from '../src/core/csv';
import type { DocumentStore, Filter } from '../src/ports/document-store';

export interface RangeQuery {
  restaurantId: string;
  /** Inclusive local dates (YYYY-MM-DD); absent: unbounded. */
  from?: string;
  to?: string;
}

/** A webhook day as exported: the counters and what is read from them. */
export type WebhookDayRow = WebhookDay & ReturnType<typeof webhookRates>;

async function* inRange<D>(
  docs: DocumentStore,
  collection: string,
  q: RangeQuery,
  nonEmpty: string,
  sort: Record<string, 1>,
): AsyncGenerator<D> {
  const filter: Filter = { restaurant_id: q.restaurantId, [nonEmpty]: { $gt: 0 } };
  if (q.from || q.to) {
    const date: Record<string, string> = {};
    if (q.from) date.$gte = q.from;
    if (q.to) date.$lte = q.to;
    filter.date = date;
  }
  const page = 200;
  for (let skip = 0; ; skip += page) {
    const rows = await docs.collection(collection).find(filter, { sort, limit: page, skip });
    for (const r of rows) yield r as D;
    if (rows.length < page) return;
  }
}

/** Webhook days in date order, then endpoint id, each with its rates. */
export async function* webhookDaysInRange(docs: DocumentStore, q: RangeQuery): AsyncGenerator<WebhookDayRow> {
  for await (const doc of inRange<WebhookDayDoc>(docs, ANALYTICS_WEBHOOK_DAYS, q, 'deliveries', {
    date: 1,
    endpoint_id: 1,
  })) {
    const day = webhookDayOf(doc);
    yield { ...day, ...webhookRates(day) };
  }
}

/** Missed-call days (with at least one call) in date order. */
export async function* missedCallDaysInRange(
  docs: DocumentStore,
  q: RangeQuery,
): AsyncGenerator<MissedCallDay> {
  for await (const doc of inRange<MissedCallDayDoc>(docs, ANALYTICS_MISSED_CALL_DAYS, q, 'reported', {
    date: 1,
  }))
    yield missedCallDayOf(doc);
}

type Column<D> = [string, (d: D) => string | number | null];

export const WEBHOOK_CSV_COLUMNS: readonly Column<WebhookDayRow>[] = [
  ['restaurant_id', (d) => d.restaurant_id],
  ['date', (d) => d.date],
  ['endpoint_id', (d) => d.endpoint_id],
  ['schema_version', (d) => d.schema_version],
  ['deliveries', (d) => d.deliveries],
  ['delivered', (d) => d.delivered],
  ['failed', (d) => d.failed],
  ['pending', (d) => d.pending],
  ['canceled', (d) => d.canceled],
  ['attempts', (d) => d.attempts],
  ['failed_attempts', (d) => d.failed_attempts],
  ['first_attempt_delivered', (d) => d.first_attempt_delivered],
  ['success_rate', (d) => d.success_rate],
  ['first_attempt_success_rate', (d) => d.first_attempt_success_rate],
  ['time_to_delivery_median_ms', (d) => d.median_ms],
  ['time_to_delivery_p90_ms', (d) => d.p90_ms],
];

export const MISSED_CALL_CSV_COLUMNS: readonly Column<MissedCallDay>[] = [
  ['restaurant_id', (d) => d.restaurant_id],
  ['date', (d) => d.date],
  ['schema_version', (d) => d.schema_version],
  ['reported', (d) => d.reported],
  ['matched', (d) => d.matched],
  ['known_customers', (d) => d.known_customers],
  ['new_customers', (d) => d.new_customers],
  ['with_upcoming_reservation', (d) => d.with_upcoming_reservation],
  ['messages_requested', (d) => d.messages_requested],
  ['followed_by_reservation', (d) => d.followed_by_reservation],
  ...RECORD_OUTCOMES.map((o): Column<MissedCallDay> => [`outcome_${o}`, (d) => d.by_outcome[o] ?? 0]),
];

export const csvHeaderOf = <D>(cols: readonly Column<D>[]) => cols.map(([name]) => name).join(',');
export const csvRowOf = <D>(cols: readonly Column<D>[], d: D) => csvRecord(cols.map(([, read]) => read(d)));
