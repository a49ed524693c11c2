// Reads of the analytics read models (projections/analytics/projection.ts): a restaurant's figures
// per service day or per shift and day over a date range, and their CSV form (columns documented in
// docs/analytics.md; the order below is the contract).
import { RESERVATION_SOURCES, RESERVATION_STATUSES } from '../commands/reservations/events';
import type { DayFigures } from '../projections/analytics/figures';
import { ANALYTICS_DAYS, ANALYTICS_SHIFT_DAYS, type FiguresDoc } from '../projections/analytics/projection';
import { type Outcome, PARTY_SIZE_GROUPS } from '../projections/analytics/rules';
import { csvRecord } from '../src/core/csv';
import type { DocumentStore, Filter, Sort } from '../src/ports/document-store';

export type Granularity = 'day' | 'shift';

export interface FiguresQuery {
  restaurantId: string;
  /** Inclusive service dates (YYYY-MM-DD); absent: unbounded. */
  from?: string;
  to?: string;
  by: Granularity;
}

/**
 * The figures of every day (or shift and day) in the range that holds at least one reservation, in
 * date order (then shift id). A day whose reservations all moved away is left out, as if it never held any.
 */
export async function* figuresInRange(docs: DocumentStore, q: FiguresQuery): AsyncGenerator<DayFigures> {
  const col = docs.collection<FiguresDoc>(q.by === 'day' ? ANALYTICS_DAYS : ANALYTICS_SHIFT_DAYS);
  const date: Record<string, string> = {};
  if (q.from) date.$gte = q.from;
  if (q.to) date.$lte = q.to;
  const filter: Filter = { restaurant_id: q.restaurantId, reservations: { $gt: 0 } };
  if (q.from || q.to) filter.service_date = date;
  const sort: Sort = q.by === 'day' ? { service_date: 1 } : { service_date: 1, shift_id: 1 };
  // Pages of a month or so, so a year of shifts is never one array.
  const page = 100;
  for (let skip = 0; ; skip += page) {
    const rows = await col.find(filter, { sort, limit: page, skip });
    for (const { _id, _pos, ...figures } of rows) yield figures as DayFigures;
    if (rows.length < page) return;
  }
}

const OUTCOMES: readonly Outcome[] = ['pending', 'confirmed', 'honoured', 'no_show', 'canceled', 'rejected'];

/** The CSV columns, in order, each with how it is read from a day's figures. */
export const CSV_COLUMNS: readonly [string, (d: DayFigures) => string | number | null][] = [
  ['restaurant_id', (d) => d.restaurant_id],
  ['service_date', (d) => d.service_date],
  ['shift_id', (d) => d.shift_id ?? ''],
  ['schema_version', (d) => d.schema_version],
  ['reservations', (d) => d.reservations],
  ['covers', (d) => d.covers],
  ['no_show_rate', (d) => d.no_show_rate],
  ['cancellation_rate', (d) => d.cancellation_rate],
  ['lead_time_count', (d) => d.lead_time.count],
  ['lead_time_median_minutes', (d) => d.lead_time.median_minutes],
  ['lead_time_p90_minutes', (d) => d.lead_time.p90_minutes],
  ['guests_new', (d) => d.guests.new],
  ['guests_returning', (d) => d.guests.returning],
  ['guests_unknown', (d) => d.guests.unknown],
  ...OUTCOMES.flatMap((o): [string, (d: DayFigures) => number][] => [
    [`outcome_${o}_reservations`, (d) => d.by_outcome[o]?.reservations ?? 0],
    [`outcome_${o}_covers`, (d) => d.by_outcome[o]?.covers ?? 0],
  ]),
  ...RESERVATION_STATUSES.flatMap((s): [string, (d: DayFigures) => number][] => [
    [`status_${s}_reservations`, (d) => d.by_status[s]?.reservations ?? 0],
    [`status_${s}_covers`, (d) => d.by_status[s]?.covers ?? 0],
  ]),
  ...RESERVATION_SOURCES.flatMap((s): [string, (d: DayFigures) => number][] => [
    [`source_${s}_reservations`, (d) => d.by_source[s]?.reservations ?? 0],
    [`source_${s}_covers`, (d) => d.by_source[s]?.covers ?? 0],
  ]),
  ...PARTY_SIZE_GROUPS.map((g): [string, (d: DayFigures) => number] => [
    `party_size_${g}_reservations`,
    (d) => d.by_party_size[g] ?? 0,
  ]),
];

export const csvHeader = () => CSV_COLUMNS.map(([name]) => name).join(',');
export const csvRow = (d: DayFigures) => csvRecord(CSV_COLUMNS.map(([, read]) => read(d)));
