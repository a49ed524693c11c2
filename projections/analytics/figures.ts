// What the analytics read models hold, and the pure bookkeeping both the projection and a
// from-scratch computation use: a reservation's facts (what it counts as), how one event changes
// them, and how a day's figures gain or lose one reservation. Schema: docs/analytics.md.
import type {
  ReservationSnapshot,
  ReservationSource,
  ReservationStatus,
} from '../../commands/reservations/events';
import {
  bucketKey,
  cancellationRate,
  countsForLeadTime,
  type GuestKind,
  guestKind,
  histogramQuantile,
  leadTimeBucket,
  leadTimeMinutes,
  noShowRate,
  type Outcome,
  outcomeOf,
  partySizeGroup,
} from './rules';

/** Version of the documents' schema; a change to it is a new projection version (docs/analytics.md). */
export const ANALYTICS_SCHEMA_VERSION = 1;

/** What the figures need to know about one reservation, as of the last event applied. */
export interface ReservationFacts {
  restaurant_id: string;
  service_date: string;
  shift_id: string;
  status: ReservationStatus;
  source: ReservationSource;
  party_size: number;
  created_at: string;
  start_at: string;
  customer_id: string | null;
  guest: GuestKind;
}

export interface Tally {
  reservations: number;
  covers: number;
}

/** One document of `analytics_days` (no shift_id) or `analytics_shift_days`. */
export interface DayFigures {
  restaurant_id: string;
  service_date: string;
  shift_id?: string;
  schema_version: number;
  reservations: number;
  covers: number;
  by_status: Partial<Record<ReservationStatus, Tally>>;
  by_outcome: Partial<Record<Outcome, Tally>>;
  by_source: Partial<Record<ReservationSource, Tally>>;
  /** Reservations per party-size group ("1" … "10", "11-20", "21+"). */
  by_party_size: Record<string, number>;
  /** Reservations by guest kind. */
  guests: Record<GuestKind, number>;
  no_show_rate: number | null;
  cancellation_rate: number | null;
  lead_time: {
    /** Reservations counted (every source but WALK_IN). */
    count: number;
    /** Bucket lower bound in minutes → reservations. */
    histogram: Record<string, number>;
    median_minutes: number | null;
    p90_minutes: number | null;
  };
}

/** The facts of a reservation just created, given how many reservations its customer already had here. */
export function factsOfCreated(r: ReservationSnapshot, customerReservations: number): ReservationFacts {
  return {
    restaurant_id: r.restaurant_id,
    service_date: r.service_date,
    shift_id: r.shift_id,
    status: r.status,
    source: r.source,
    party_size: r.party_size,
    created_at: r.created_at,
    start_at: r.start_at,
    customer_id: r.customer_id,
    guest: r.customer_id ? guestKind(customerReservations) : 'unknown',
  };
}

/** The fields of ReservationUpdated.changes the figures follow. */
const FOLLOWED = ['service_date', 'shift_id', 'status', 'source', 'party_size', 'start_at'] as const;

/**
 * The facts after ReservationUpdated. `linkedCount` is how many reservations the newly named customer
 * had before (only read when the update names a customer the reservation did not have).
 */
export function factsOfUpdated(
  f: ReservationFacts,
  changes: Partial<ReservationSnapshot>,
  linkedCount: number,
): ReservationFacts {
  const next: ReservationFacts = { ...f };
  for (const k of FOLLOWED)
    if (changes[k] !== undefined) (next as unknown as Record<string, unknown>)[k] = changes[k];
  const linked = newlyLinkedCustomer(f, changes);
  if (linked !== null) {
    next.customer_id = linked;
    if (f.guest === 'unknown') next.guest = guestKind(linkedCount);
  } else if (changes.customer_id === null) next.customer_id = null;
  return next;
}

/**
 * Version 2: the most merges a walk from a customer to its survivor follows: a merge closes a customer for good,
 * so real chains are short, but the walk must end on any log (commands/customers/follow-merges.ts).
 */
export const MAX_GUEST_MERGE_HOPS = 32;

/**
 * Version 2: whether `from`'s reservations were folded into `into` by merges (directly or through a chain): a
 * reservation moved from `from` to `into` is then already in `into`'s count and is not counted again.
 * `mergedInto` answers the customer a customer was merged into, if any.
 */
export function foldedInto(
  from: string,
  into: string,
  mergedInto: (customer: string) => string | undefined,
): boolean {
  const seen = new Set([from]);
  let at = from;
  for (let hop = 0; hop < MAX_GUEST_MERGE_HOPS; hop++) {
    const next = mergedInto(at);
    if (next === undefined || seen.has(next)) return next === into;
    if (next === into) return true;
    seen.add(next);
    at = next;
  }
  return false;
}

/**
 * Version 3: the customer a reservation of `customer` counts for, the end of its merges (`mergedInto`
 * answers the customer a customer was merged into, if any). No hop limit: the projection never records
 * a merge that would close a cycle (mergeGuests in guest-counts.ts), so a chain ends; the walk also
 * stops at a customer it has been through, so that it ends on any input.
 */
export function survivorOf(customer: string, mergedInto: (customer: string) => string | undefined): string {
  const seen = new Set([customer]);
  let at = customer;
  for (let next = mergedInto(at); next !== undefined && !seen.has(next); next = mergedInto(at)) {
    seen.add(next);
    at = next;
  }
  return at;
}

/**
 * Version 3: the change of customer an update makes, if any: `to` is the customer it names (null: the
 * reservation no longer has one). Naming the customer it already has is no change.
 */
export function customerChange(
  f: ReservationFacts,
  changes: Partial<ReservationSnapshot>,
): { from: string | null; to: string | null } | null {
  const c = changes.customer_id;
  const to = typeof c === 'string' ? c : c === null ? null : undefined;
  return to === undefined || to === f.customer_id ? null : { from: f.customer_id, to };
}

/** The customer an update links the reservation to, when it names one the reservation did not have. */
export function newlyLinkedCustomer(
  f: ReservationFacts,
  changes: Partial<ReservationSnapshot>,
): string | null {
  const c = changes.customer_id;
  return typeof c === 'string' && c !== f.customer_id ? c : null;
}

export const dayKey = (f: Pick<ReservationFacts, 'restaurant_id' | 'service_date'>) =>
  `${f.restaurant_id}|${f.service_date}`;
export const shiftDayKey = (f: Pick<ReservationFacts, 'restaurant_id' | 'service_date' | 'shift_id'>) =>
  `${f.restaurant_id}|${f.service_date}|${f.shift_id}`;

export function emptyFigures(f: ReservationFacts, withShift: boolean): DayFigures {
  return {
    restaurant_id: f.restaurant_id,
    service_date: f.service_date,
    ...(withShift ? { shift_id: f.shift_id } : {}),
    schema_version: ANALYTICS_SCHEMA_VERSION,
    reservations: 0,
    covers: 0,
    by_status: {},
    by_outcome: {},
    by_source: {},
    by_party_size: {},
    guests: { new: 0, returning: 0, unknown: 0 },
    no_show_rate: null,
    cancellation_rate: null,
    lead_time: { count: 0, histogram: {}, median_minutes: null, p90_minutes: null },
  };
}

function bumpTally(map: Record<string, Tally | undefined>, key: string, covers: number, sign: 1 | -1) {
  const t = map[key] ?? { reservations: 0, covers: 0 };
  t.reservations += sign;
  t.covers += sign * covers;
  if (t.reservations === 0 && t.covers === 0) delete map[key];
  else map[key] = t;
}

function bumpCount(map: Record<string, number>, key: string, sign: 1 | -1) {
  const n = (map[key] ?? 0) + sign;
  if (n === 0) delete map[key];
  else map[key] = n;
}

/**
 * Adds (sign 1) or removes (sign -1) one reservation to a day's figures, in place, and recomputes
 * the derived fields (rates, quantiles). Zero entries are removed from the maps, so figures reached
 * by any order of additions and removals are equal to the figures of the final set.
 */
export function addFacts(d: DayFigures, f: ReservationFacts, sign: 1 | -1, leadTime = true): DayFigures {
  const covers = f.party_size;
  d.reservations += sign;
  d.covers += sign * covers;
  bumpTally(d.by_status as Record<string, Tally>, f.status, covers, sign);
  bumpTally(d.by_outcome as Record<string, Tally>, outcomeOf(f.status), covers, sign);
  bumpTally(d.by_source as Record<string, Tally>, f.source, covers, sign);
  bumpCount(d.by_party_size, partySizeGroup(f.party_size), sign);
  d.guests[f.guest] += sign;
  // leadTime false: the caller moves a reservation whose lead-time bucket stays the same (a
  // removal and an addition that cancel out), and the lead-time figures are left as they are.
  if (leadTime && countsForLeadTime(f.source)) {
    d.lead_time.count += sign;
    bumpCount(
      d.lead_time.histogram,
      bucketKey(leadTimeBucket(leadTimeMinutes(f.created_at, f.start_at))),
      sign,
    );
  }
  return derive(d, leadTime);
}

function copyTallies<K extends string>(m: Partial<Record<K, Tally>>): Partial<Record<K, Tally>> {
  const out: Partial<Record<K, Tally>> = {};
  for (const k in m) {
    const t = m[k] as Tally;
    out[k] = { reservations: t.reservations, covers: t.covers };
  }
  return out;
}

/**
 * A copy of a map of counts. Histogram keys are sparse integers ("0" … "525600"): copied in
 * ascending order, V8 grows a fast array towards the largest key on the way (~40 µs and a large
 * allocation per copy); inserted from the largest down, the copy is a dictionary at once (~6 µs).
 * The copy lists its keys in the same (ascending) order.
 */
function copyCounts(m: Record<string, number>): Record<string, number> {
  const keys = Object.keys(m);
  const out: Record<string, number> = {};
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i] as string;
    out[k] = m[k] as number;
  }
  return out;
}

/**
 * A copy addFacts may change without touching `d` (a document a projection read is shared with
 * the store: src/projection/write-back.ts). Fields keep their order. With `leadTime` false the
 * lead-time figures are shared, not copied: for addFacts calls that leave them alone.
 */
export function copyFigures<T extends DayFigures>(d: T, leadTime = true): T {
  return {
    ...d,
    by_status: copyTallies(d.by_status),
    by_outcome: copyTallies(d.by_outcome),
    by_source: copyTallies(d.by_source),
    by_party_size: copyCounts(d.by_party_size),
    guests: { ...d.guests },
    lead_time: leadTime ? { ...d.lead_time, histogram: copyCounts(d.lead_time.histogram) } : d.lead_time,
  };
}

/** The lead-time bucket a reservation counts in, or null when it does not count (walk-ins). */
export function leadTimeKey(f: ReservationFacts): string | null {
  return countsForLeadTime(f.source)
    ? bucketKey(leadTimeBucket(leadTimeMinutes(f.created_at, f.start_at)))
    : null;
}

/** Recomputes the fields derived from the counts (the quantiles only when `leadTime`). */
export function derive(d: DayFigures, leadTime = true): DayFigures {
  const o = d.by_outcome;
  d.no_show_rate = noShowRate(o.no_show?.reservations ?? 0, o.honoured?.reservations ?? 0);
  d.cancellation_rate = cancellationRate(o.canceled?.reservations ?? 0, d.reservations);
  if (leadTime) {
    d.lead_time.median_minutes = histogramQuantile(d.lead_time.histogram, 0.5);
    d.lead_time.p90_minutes = histogramQuantile(d.lead_time.histogram, 0.9);
  }
  return d;
}

/** Figures of many days merged into one (the export's per-period or per-day totals across shifts). */
export function mergeFigures(into: DayFigures, from: DayFigures): DayFigures {
  into.reservations += from.reservations;
  into.covers += from.covers;
  for (const [map, other] of [
    [into.by_status, from.by_status],
    [into.by_outcome, from.by_outcome],
    [into.by_source, from.by_source],
  ] as [Record<string, Tally>, Record<string, Tally>][])
    for (const [k, t] of Object.entries(other)) {
      const cur = map[k] ?? { reservations: 0, covers: 0 };
      map[k] = { reservations: cur.reservations + t.reservations, covers: cur.covers + t.covers };
    }
  for (const [k, n] of Object.entries(from.by_party_size))
    into.by_party_size[k] = (into.by_party_size[k] ?? 0) + n;
  for (const k of ['new', 'returning', 'unknown'] as const) into.guests[k] += from.guests[k];
  into.lead_time.count += from.lead_time.count;
  for (const [k, n] of Object.entries(from.lead_time.histogram))
    into.lead_time.histogram[k] = (into.lead_time.histogram[k] ?? 0) + n;
  return derive(into);
}

/**
 * From scratch: folds a log (in order) into every reservation's facts and every customer's count of
 * reservations, with the rules of the newest version (3) applied one event at a time: each reservation
 * counts once, for the survivor of its customer's merges; a re-attachment or a detachment takes it out
 * of its guest's count; a merge moves the absorbed customer's whole count to the survivor's. The
 * reference the projection is tested against, and what `audit`-style checks can compare with.
 */
export function foldFacts(events: Iterable<{ type: string; data: unknown }>): {
  facts: Map<string, ReservationFacts>;
  customers: Map<string, number>;
} {
  const facts = new Map<string, ReservationFacts>();
  const customers = new Map<string, number>();
  const merges = new Map<string, string>();
  const key = (restaurant: string, customer: string) => `${restaurant}|${customer}`;
  const count = (restaurant: string, customer: string) => customers.get(key(restaurant, customer)) ?? 0;
  const bump = (restaurant: string, customer: string, n: number) =>
    customers.set(key(restaurant, customer), count(restaurant, customer) + n);
  const survivor = (restaurant: string, customer: string) =>
    survivorOf(customer, (c) => merges.get(key(restaurant, c)));
  for (const e of events) {
    const d = e.data as Record<string, unknown>;
    switch (e.type) {
      case 'ReservationCreated': {
        const r = d.reservation as ReservationSnapshot;
        if (facts.has(r.reservation_id)) break;
        let earlier = 0;
        if (r.customer_id) {
          const guest = survivor(r.restaurant_id, r.customer_id);
          earlier = count(r.restaurant_id, guest);
          bump(r.restaurant_id, guest, 1);
        }
        facts.set(r.reservation_id, factsOfCreated(r, earlier));
        break;
      }
      case 'ReservationUpdated': {
        const f = facts.get(d.reservation_id as string);
        if (!f) break;
        const changes = d.changes as Partial<ReservationSnapshot>;
        const change = customerChange(f, changes);
        let earlier = 0;
        if (change) {
          const from = change.from === null ? null : survivor(f.restaurant_id, change.from);
          const to = change.to === null ? null : survivor(f.restaurant_id, change.to);
          if (from !== to) {
            if (from !== null) bump(f.restaurant_id, from, -1);
            if (to !== null) {
              earlier = count(f.restaurant_id, to);
              bump(f.restaurant_id, to, 1);
            }
          }
        }
        facts.set(d.reservation_id as string, factsOfUpdated(f, changes, earlier));
        break;
      }
      case 'ReservationStatusChanged': {
        const f = facts.get(d.reservation_id as string);
        if (f) facts.set(d.reservation_id as string, { ...f, status: d.to as ReservationStatus });
        break;
      }
      case 'CustomerMerged': {
        const restaurant = d.restaurant_id as string;
        const absorbed = d.merged_customer_id as string;
        // Merged before (into anyone): a repeat moves nothing. Into a customer merged into this one: no cycle.
        if (merges.has(key(restaurant, absorbed))) break;
        const into = survivor(restaurant, d.customer_id as string);
        if (into === absorbed) break;
        bump(restaurant, into, count(restaurant, absorbed));
        customers.set(key(restaurant, absorbed), 0);
        merges.set(key(restaurant, absorbed), d.customer_id as string);
        break;
      }
    }
  }
  return { facts, customers };
}

/** From scratch: the figures of every day (and shift and day) holding at least one reservation. */
export function figuresOf(facts: Iterable<ReservationFacts>): {
  days: Map<string, DayFigures>;
  shiftDays: Map<string, DayFigures>;
} {
  const days = new Map<string, DayFigures>();
  const shiftDays = new Map<string, DayFigures>();
  for (const f of facts) {
    const day = days.get(dayKey(f)) ?? emptyFigures(f, false);
    days.set(dayKey(f), addFacts(day, f, 1));
    const sd = shiftDays.get(shiftDayKey(f)) ?? emptyFigures(f, true);
    shiftDays.set(shiftDayKey(f), addFacts(sd, f, 1));
  }
  return { days, shiftDays };
}
