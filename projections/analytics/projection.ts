// The `analytics` projection (version 3; versions 1 and 2 kept until replaced): per restaurant and service day, and per shift and day,
// reservations and covers by status, outcome, source and party size, no-show and cancellation rates,
// booking lead time (histogram, median, p90) and new vs returning guests. Written for BI tools to
// read directly (docs/analytics.md is the schema); queries/analytics.ts reads it for the CLI export.
//
// Every event is applied idempotently: each document keeps `_pos` (the last event applied to it) and
// is skipped when it has already seen the event; a reservation's facts are written last, so an event
// redelivered after a crash part-way redoes exactly the documents it had not reached.
//
// Version 2 keeps, on a merged-away customer's guest document, the customer it was merged into
// (`merged_into`): a reservation then re-attached from it to its survivor is already in the survivor's
// count (the merge folded it in), where version 1 counted it a second time. Version 3 counts each
// reservation once, for the guest it belongs to now (guest-counts.ts): version 2 still counted one
// moved between two customers for both, twice for a survivor of both, and kept counting a reservation
// for a customer it had left (a later booking of that customer then read `returning`).
import type { ReservationSnapshot, ReservationStatus } from '../../commands/reservations/events';
import type { Collection, Doc, DocumentStore } from '../../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { isOwning } from '../../src/projection/write-back';
import {
  addFacts,
  copyFigures,
  customerChange,
  type DayFigures,
  dayKey,
  emptyFigures,
  factsOfCreated,
  factsOfUpdated,
  foldedInto,
  leadTimeKey,
  MAX_GUEST_MERGE_HOPS,
  newlyLinkedCustomer,
  type ReservationFacts,
  shiftDayKey,
} from './figures';
import { countCreated, guestId, mergeGuests, moveReservation } from './guest-counts';

/** Logical collection names (version 1 uses them as they are; see src/projection/versions.ts). */
export const ANALYTICS_DAYS = 'analytics_days';
export const ANALYTICS_SHIFT_DAYS = 'analytics_shift_days';
export const ANALYTICS_RESERVATIONS = 'analytics_reservations';
export const ANALYTICS_GUESTS = 'analytics_guests';

export type FiguresDoc = DayFigures & Doc & { _pos: string };
export type FactsDoc = ReservationFacts & Doc & { _pos: string };
export type GuestDoc = Doc & {
  restaurant_id: string;
  customer_id: string;
  /**
   * Version 3: the reservations that belong to this guest now (naming it or a customer merged into
   * it), 0 once merged away. Versions 1 and 2: those that ever named it, plus the merged ones'.
   */
  reservations: number;
  /** Versions 2 and 3: the customer this one was merged into (its reservations were folded into that count). */
  merged_into?: string;
  _pos: string;
};

/** A count's rewrite keeps the merge the document records (a merged-away customer still counted for). */
const mergeMark = (g: GuestDoc | null) =>
  g?.merged_into === undefined ? {} : { merged_into: g.merged_into };

/**
 * How many reservations the customer had before this event, and counts this event's one (once).
 * A guest document already stamped with this position was counted by this event before a crash.
 */
async function countGuest(
  docs: DocumentStore,
  restaurant: string,
  customer: string,
  pos: string,
): Promise<number> {
  const col = docs.collection<GuestDoc>(ANALYTICS_GUESTS);
  const id = guestId(restaurant, customer);
  const g = await col.findOne({ _id: id });
  if (g && g._pos >= pos) return g.reservations - 1;
  const before = g?.reservations ?? 0;
  await col.replaceOne(
    { _id: id },
    {
      _id: id,
      restaurant_id: restaurant,
      customer_id: customer,
      reservations: before + 1,
      ...mergeMark(g),
      _pos: pos,
    },
    { upsert: true },
  );
  return before;
}

/** Moves one reservation's contribution in one figures collection: out of `before`'s document, into `after`'s. */
async function moveFigures(
  col: Collection<FiguresDoc>,
  key: (f: ReservationFacts) => string,
  withShift: boolean,
  before: ReservationFacts | null,
  after: ReservationFacts,
  pos: string,
): Promise<void> {
  const from = before ? key(before) : null;
  const to = key(after);
  const ids = from !== null && from !== to ? [from, to] : [to];
  for (const id of ids) {
    // In a catch-up's batch (the write-back cache), the day's document is changed in place: copied
    // once a batch, not once an event (hundreds of events of a batch change one day). Otherwise a
    // copy: the document read may be shared with the store (src/projection/write-back.ts).
    const owned = isOwning(col);
    const current = owned ? await col.ownOne(id, copyAll) : await col.findOne({ _id: id });
    if (current && current._pos >= pos) continue; // this event already reached it
    const leaving = before && key(before) === id ? before : null;
    const joining = key(after) === id ? after : null;
    // A status change moves a reservation within its day: out and back into the same lead-time
    // bucket, which cancels out. The lead-time figures are then neither copied nor touched.
    const leadTime = !(leaving && joining && leadTimeKey(leaving) === leadTimeKey(joining));
    const figures = current
      ? owned
        ? current
        : copyFigures(current, leadTime)
      : ({ ...emptyFigures(after, withShift), _id: id, _pos: '' } as FiguresDoc);
    if (leaving) addFacts(figures, leaving, -1, leadTime);
    if (joining) addFacts(figures, joining, 1, leadTime);
    figures._pos = pos;
    if (figures !== current) await col.replaceOne({ _id: id }, figures, { upsert: true });
  }
}

const copyAll = (d: FiguresDoc) => copyFigures(d);

/**
 * Whether moving a reservation from `from` to `into` keeps it in a count it is already in: `from` was
 * merged into `into` (directly or through a chain) after the reservation was counted for `from`.
 * Reads the guest documents' `merged_into` one by one (chains are short); the same walk as foldFacts'.
 */
async function alreadyCounted(
  docs: DocumentStore,
  restaurant: string,
  from: string,
  into: string,
): Promise<boolean> {
  const col = docs.collection<GuestDoc>(ANALYTICS_GUESTS);
  const chain = new Map<string, string | undefined>();
  let at = from;
  // foldedInto is synchronous: read the chain first (as far as it walks), then decide on it.
  for (let hop = 0; hop < MAX_GUEST_MERGE_HOPS && !chain.has(at); hop++) {
    const next = (await col.findOne({ _id: guestId(restaurant, at) }))?.merged_into;
    chain.set(at, next);
    if (next === undefined || next === into) break;
    at = next;
  }
  return foldedInto(from, into, (c) => chain.get(c));
}

async function applyReservationEvent(
  event: RecordedEvent,
  docs: DocumentStore,
  followsMerges: boolean,
  countsOnce: boolean,
): Promise<void> {
  const d = event.data as Record<string, unknown>;
  const id = d.reservation_id as string;
  const pos = positionToString(event.position);
  const factsCol = docs.collection<FactsDoc>(ANALYTICS_RESERVATIONS);
  const stored = await factsCol.findOne({ _id: id });
  if (stored && stored._pos >= pos) return; // redelivered
  // The stored facts with their _id and _pos (every use copies, and both are written anew).
  const before: ReservationFacts | null = stored;
  let after: ReservationFacts;
  if (event.type === 'ReservationCreated') {
    if (before) return; // a second creation of one id changes nothing (the fold ignores it too)
    const r = d.reservation as ReservationSnapshot;
    const earlier = !r.customer_id
      ? 0
      : countsOnce
        ? await countCreated(guestsOf(docs), r.restaurant_id, r.customer_id, pos)
        : await countGuest(docs, r.restaurant_id, r.customer_id, pos);
    after = factsOfCreated(r, earlier);
  } else if (!before) {
    return; // nothing known about this reservation
  } else if (event.type === 'ReservationUpdated' && countsOnce) {
    const changes = d.changes as Partial<ReservationSnapshot>;
    const change = customerChange(before, changes);
    const earlier = change
      ? await moveReservation(guestsOf(docs), before.restaurant_id, change.from, change.to, pos)
      : 0;
    after = factsOfUpdated(before, changes, earlier);
  } else if (event.type === 'ReservationUpdated') {
    const changes = d.changes as Partial<ReservationSnapshot>;
    const linked = newlyLinkedCustomer(before, changes);
    const counted =
      followsMerges &&
      linked !== null &&
      before.customer_id !== null &&
      (await alreadyCounted(docs, before.restaurant_id, before.customer_id, linked));
    const earlier = !linked
      ? 0
      : counted
        ? ((
            await docs
              .collection<GuestDoc>(ANALYTICS_GUESTS)
              .findOne({ _id: guestId(before.restaurant_id, linked) })
          )?.reservations ?? 0)
        : await countGuest(docs, before.restaurant_id, linked, pos);
    after = factsOfUpdated(before, changes, earlier);
  } else {
    after = { ...before, status: d.to as ReservationStatus };
  }
  await moveFigures(docs.collection<FiguresDoc>(ANALYTICS_DAYS), dayKey, false, before, after, pos);
  await moveFigures(docs.collection<FiguresDoc>(ANALYTICS_SHIFT_DAYS), shiftDayKey, true, before, after, pos);
  await factsCol.replaceOne({ _id: id }, { ...after, _id: id, _pos: pos } as FactsDoc, { upsert: true });
}

/** A merge folds the absorbed customer's reservations into the survivor's count (returning guests). */
async function applyMerge(event: RecordedEvent, docs: DocumentStore, followsMerges: boolean): Promise<void> {
  const d = event.data as { restaurant_id: string; customer_id: string; merged_customer_id: string };
  const pos = positionToString(event.position);
  const col = docs.collection<GuestDoc>(ANALYTICS_GUESTS);
  const id = guestId(d.restaurant_id, d.customer_id);
  const absorbedId = guestId(d.restaurant_id, d.merged_customer_id);
  const survivor = await col.findOne({ _id: id });
  const absorbed = await col.findOne({ _id: absorbedId });
  // The survivor's count first, then the mark: a redelivery after a crash between them adds nothing
  // twice (the survivor is stamped) and writes the mark.
  if (!survivor || survivor._pos < pos)
    await addMerged(col, d, id, survivor, absorbed?.reservations ?? 0, pos);
  if (followsMerges && !(absorbed && absorbed._pos >= pos))
    await col.replaceOne(
      { _id: absorbedId },
      {
        _id: absorbedId,
        restaurant_id: d.restaurant_id,
        customer_id: d.merged_customer_id,
        reservations: absorbed?.reservations ?? 0,
        merged_into: d.customer_id,
        _pos: pos,
      },
      { upsert: true },
    );
}

async function addMerged(
  col: Collection<GuestDoc>,
  d: { restaurant_id: string; customer_id: string },
  id: string,
  survivor: GuestDoc | null,
  n: number,
  pos: string,
): Promise<void> {
  await col.replaceOne(
    { _id: id },
    {
      _id: id,
      restaurant_id: d.restaurant_id,
      customer_id: d.customer_id,
      reservations: (survivor?.reservations ?? 0) + n,
      ...mergeMark(survivor),
      _pos: pos,
    },
    { upsert: true },
  );
}

const guestsOf = (docs: DocumentStore) => docs.collection<GuestDoc>(ANALYTICS_GUESTS);

function analyticsVersion(version: number): Projection {
  // Version 2 follows merges when a reservation is re-attached; version 3 counts each reservation once.
  const followsMerges = version >= 2;
  const countsOnce = version >= 3;
  return {
    name: 'analytics',
    version,
    collections: [ANALYTICS_DAYS, ANALYTICS_SHIFT_DAYS, ANALYTICS_RESERVATIONS, ANALYTICS_GUESTS],
    eventTypes: ['ReservationCreated', 'ReservationUpdated', 'ReservationStatusChanged', 'CustomerMerged'],
    async setup(docs) {
      for (const name of [ANALYTICS_DAYS, ANALYTICS_SHIFT_DAYS])
        await docs
          .collection(name)
          .createIndex({ keys: { restaurant_id: 1, service_date: 1 }, name: 'restaurant_service_date' });
      // For BI readers of MongoDB; this tree reads the facts by _id only (`audit as-of` lists a
      // scratch copy by restaurant), so the embedded store keeps no index for it (embeddedPrefix 0).
      await docs.collection(ANALYTICS_RESERVATIONS).createIndex({
        keys: { restaurant_id: 1, service_date: 1 },
        name: 'restaurant_service_date',
        embeddedPrefix: 0,
      });
    },
    async apply(event, docs) {
      if (event.type === 'CustomerMerged' && countsOnce) {
        const d = event.data as { restaurant_id: string; customer_id: string; merged_customer_id: string };
        await mergeGuests(
          guestsOf(docs),
          d.restaurant_id,
          d.customer_id,
          d.merged_customer_id,
          positionToString(event.position),
        );
      } else if (event.type === 'CustomerMerged') await applyMerge(event, docs, followsMerges);
      else await applyReservationEvent(event, docs, followsMerges, countsOnce);
    },
  };
}

/** Version 1: counted a reservation re-attached from a merged-away customer to its survivor twice. */
export const analyticsProjectionV1 = analyticsVersion(1);
/** Version 2: counted a reservation once per customer that named it (twice for a survivor of both). */
export const analyticsProjectionV2 = analyticsVersion(2);
export const analyticsProjection = analyticsVersion(3);
