// Reads of the `reservations` read model for the partner routes. Always within the caller's
// restaurant: another restaurant's reservation is simply not found.

import { addDays, localDateOf } from '../commands/availability/zone-time';
import { CUSTOMER_MERGES } from '../projections/customer-docs';
import { RESERVATION_DAYS, type ReservationDayDoc } from '../projections/reservation-days';
import { RESERVATIONS, type ReservationDoc } from '../projections/reservations';
import { instantBound } from '../src/core/datetime';
import { notFound } from '../src/core/errors';
import type { DocumentStore, Filter } from '../src/ports/document-store';
import { loadLookups } from './reservation-lookups';
import { type PresentOptions, presentReservation, type ReservationView } from './reservation-presenter';

export interface ReservationListQuery {
  page: number;
  per_page: number;
  external_id?: string;
  customer_id?: string;
  statuses?: string[];
  /** Inclusive bounds on start_at (any offset). */
  start_at_from?: string;
  start_at_to?: string;
  /** Inclusive lower bound on updated_at. */
  updated_since?: string;
}

export interface Pagination {
  page: number;
  per_page: number;
  total: number;
  total_pages: number;
  has_more: boolean;
}

/** Longest start window narrowed through service days (beyond it, the list of days costs more than it saves). */
const MAX_WINDOW_DAYS = 93;

/**
 * The service days a start window can touch: a start belongs to its local day, or to the day before
 * when its shift runs past midnight. Null when the window is open-ended or long.
 */
export function serviceDaysOf(timezone: string, from?: string, to?: string): string[] | null {
  if (!from || !to) return null;
  const first = addDays(localDateOf(timezone, Date.parse(from)), -1);
  const last = localDateOf(timezone, Date.parse(to));
  const days: string[] = [];
  for (let d = first; d <= last; d = addDays(d, 1)) {
    if (days.length >= MAX_WINDOW_DAYS) return null;
    days.push(d);
  }
  return days;
}

export function listFilter(
  restaurantId: string,
  timezone: string,
  q: Omit<ReservationListQuery, 'page' | 'per_page'>,
): Filter {
  const f: Filter = { restaurant_id: restaurantId };
  if (q.external_id !== undefined) f.external_id = q.external_id;
  if (q.customer_id !== undefined) f.customer_id = q.customer_id;
  if (q.statuses?.length) f.status = { $in: q.statuses };
  const start: Record<string, string> = {};
  if (q.start_at_from) start.$gte = instantBound(q.start_at_from);
  if (q.start_at_to) start.$lte = instantBound(q.start_at_to);
  if (Object.keys(start).length) f.start_at_utc = start;
  // The same window as equality on an indexed field: the embedded store's indexes answer equality
  // only, and even MongoDB then reads one index range per day instead of the restaurant's whole list.
  const days = serviceDaysOf(timezone, q.start_at_from, q.start_at_to);
  if (days) f.service_date = { $in: days };
  if (q.updated_since) f.updated_at = { $gte: instantBound(q.updated_since) };
  return f;
}

/**
 * A customer's id and the ids merged into it: reservations keep the id they were made with, and a
 * merge makes them the surviving customer's (the presenter shows that customer too).
 */
async function customerAndMerged(docs: DocumentStore, restaurantId: string, id: string): Promise<string[]> {
  const merged = await docs
    .collection<{ _id: string; restaurant_id: string; into: string }>(CUSTOMER_MERGES)
    .find({ restaurant_id: restaurantId, into: id });
  return [id, ...merged.map((m) => m._id)];
}

/** Only the page asked for: no filter at all (the default listing, the one that grows with time). */
const unfiltered = (q: ReservationListQuery) =>
  q.external_id === undefined &&
  q.customer_id === undefined &&
  !q.statuses?.length &&
  !q.start_at_from &&
  !q.start_at_to &&
  !q.updated_since;

/**
 * One page, ordered by service day, then start, then id: a stable order, so pages neither repeat nor
 * skip (the service day only differs from the start's own day for seatings after midnight).
 */
export async function listReservations(
  docs: DocumentStore,
  restaurant: { _id: string; timezone: string },
  q: ReservationListQuery,
  o: PresentOptions,
): Promise<{ data: ReservationView[]; pagination: Pagination }> {
  const restaurantId = restaurant._id;
  const { total, page } = unfiltered(q)
    ? await pageByDays(docs, restaurantId, q)
    : await pageByFilter(docs, restaurantId, restaurant.timezone, q);
  const lookups = await loadLookups(docs, restaurantId, page);
  const totalPages = Math.ceil(total / q.per_page);
  return {
    data: page.map((r) => presentReservation(r, lookups, o)),
    pagination: {
      page: q.page,
      per_page: q.per_page,
      total,
      total_pages: totalPages,
      has_more: q.page < totalPages,
    },
  };
}

async function pageByFilter(
  docs: DocumentStore,
  restaurantId: string,
  timezone: string,
  q: ReservationListQuery,
) {
  const col = docs.collection<ReservationDoc>(RESERVATIONS);
  const filter = listFilter(restaurantId, timezone, q);
  if (q.customer_id !== undefined)
    filter.customer_id = { $in: await customerAndMerged(docs, restaurantId, q.customer_id) };
  const [total, page] = await Promise.all([
    col.count(filter),
    col.find(filter, { sort: { sort_key: 1 }, skip: (q.page - 1) * q.per_page, limit: q.per_page }),
  ]);
  return { total, page };
}

/** The days the page covers, from the per-day counts; then only those days' reservations. */
async function pageByDays(docs: DocumentStore, restaurantId: string, q: ReservationListQuery) {
  const days = await docs
    .collection<ReservationDayDoc>(RESERVATION_DAYS)
    .find({ restaurant_id: restaurantId, count: { $gt: 0 } }, { sort: { service_date: 1 } });
  const total = days.reduce((n, d) => n + d.count, 0);
  const skip = (q.page - 1) * q.per_page;
  const covered: string[] = [];
  let before = 0; // reservations on the days before the first covered day
  let seen = 0;
  for (const d of days) {
    if (seen + d.count <= skip) {
      seen += d.count;
      before = seen;
      continue;
    }
    if (seen >= skip + q.per_page) break;
    covered.push(d.service_date);
    seen += d.count;
  }
  if (covered.length === 0) return { total, page: [] };
  // The store sorts the covered days' reservations and hands over the page alone (the embedded one
  // copies only what it returns; a busy day's hundreds were all copied to keep 25).
  const page = await docs
    .collection<ReservationDoc>(RESERVATIONS)
    .find(
      { restaurant_id: restaurantId, service_date: { $in: covered } },
      { sort: { sort_key: 1 }, skip: skip - before, limit: q.per_page },
    );
  return { total, page };
}

export async function getReservation(
  docs: DocumentStore,
  restaurantId: string,
  id: string,
  o: PresentOptions,
): Promise<ReservationView> {
  const r = await docs
    .collection<ReservationDoc>(RESERVATIONS)
    .findOne({ _id: id, restaurant_id: restaurantId });
  if (!r) throw notFound(`reservation ${id}`);
  return presentReservation(r, await loadLookups(docs, restaurantId, [r]), o);
}
