// Missed-call events written before their sealing (docs/AUDIT.md, "Migration of existing events"):
// MissedCallReported (the caller's number), MessageRequested (number, text, parameters), MessageSlotTaken
// (the number) and the outbox's OutboxMessageRecorded (number, text, parameters) held the number in
// clear, and each caller's cooldown stream was named `missed-call-caller-<restaurant>-<E.164>`.
// - Embedded (schema 4 → 5, at the first start of this code, after the steps of legacy.ts): one read of
//   the log finds each call's customer (its MissedCallMatched); their keys are fetched (a deleted
//   customer's are destroyed already: their rows are written erased); then in one write transaction the
//   rows are sealed in place, naming their customer in `customer_id` as the handler now writes them,
//   each caller stream is renamed to the keyed hash of its number (src/privacy/caller-ids.ts: with the
//   key of its last slot's period while that slot may be in its cooldown, else a key never kept), and the
//   changed streams are re-chained (SqliteEventStore.upgradeStreams).
// - EventStoreDB cannot rewrite its log: the sealing layer asks `legacyMissedCallCustomer` whose a
//   missed-call event in clear is, and reads it erased once that customer is (sealing-event-store.ts).
// A call reported before this change to a restaurant without the feature names no customer: the step
// above leaves it (counted as `missed_call_rows_unowned`), and the next one (schema 5 → 6,
// sealUnownedCallsInPlace) seals it as the sealing layer now seals such a call (number-keys.ts): each
// row with a key of its own from a key page, linked from its number's label before its row is
// rewritten, so erasing a customer who has that number at that restaurant erases it. Rows an old
// process appended in clear after the first step are sealed there too when no customer owns them.

import { randomBytes } from 'node:crypto';
import { CALLER_STREAM_PREFIX, callerStream, missedCallStream } from '../../commands/missed-calls/events';
import type { SqliteEventStore } from '../adapters/event-store/sqlite';
import { trimOldest } from '../core/bounded-map';
import type { EventStore, RecordedEvent } from '../ports/event-store';
import { type KeyStore, MAX_PAGE_KEYS, pageKid } from '../ports/key-store';
import { CALLER_PERIOD_MS, callerHash, callerKeySubject, callerPeriod, periodCallerId } from './caller-ids';
import { untilPlanHolds } from './migration-plan';
import { callOwner, linkMember, NumberIndex, numberSealing } from './number-keys';
import { customerSubject, sealData } from './seal';

/** The missed-call event types that hold personal fields, and how each names its call. */
const CALL_OF: Record<string, (data: Record<string, unknown>) => string | null> = {
  MissedCallReported: (d) => str(d.missed_call_id),
  MessageRequested: (d) => str(d.missed_call_id),
  MessageSlotTaken: (d) => str(d.missed_call_id),
  // The outbox's idempotency key is `<missed_call_id>.<attempt>`.
  OutboxMessageRecorded: (d) => {
    const key = str(d.idempotency_key);
    const dot = key?.lastIndexOf('.') ?? -1;
    return key && dot > 0 ? key.slice(0, dot) : null;
  },
};

export const MISSED_CALL_SEALED_TYPES: readonly string[] = Object.keys(CALL_OF);

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const E164_SUFFIX = /-(\+[1-9]\d{6,14})$/;

export interface MissedCallMigration {
  missed_call_rows_sealed: number;
  missed_call_rows_unowned: number;
  caller_streams_renamed: number;
  rows_rechained: number;
}

const NOTHING: MissedCallMigration = {
  missed_call_rows_sealed: 0,
  missed_call_rows_unowned: 0,
  caller_streams_renamed: 0,
  rows_rechained: 0,
};

/**
 * The id a caller stream named after the number gets: the caller id of its last slot's period when
 * that slot may still be in its cooldown (the handler reads it there), else a hash with a key made for
 * it and never kept (the id is opaque from the start; nothing will read that stream again).
 */
async function migratedCallerId(
  keys: KeyStore,
  restaurantId: string,
  e164: string,
  lastAt: number | undefined,
  now: number,
): Promise<string> {
  const readable = lastAt !== undefined && Number.isFinite(lastAt);
  const period = readable ? Math.floor(lastAt / CALLER_PERIOD_MS) : 0;
  // This period's or the previous one's (not one from a clock far ahead): the handler reads it there.
  const inCooldown =
    readable && period >= callerPeriod(new Date(now)) - 1 && lastAt <= now + CALLER_PERIOD_MS;
  const key = inCooldown ? await keys.obtain(callerKeySubject(restaurantId, period)) : randomBytes(32);
  return periodCallerId(period, callerHash(key, e164));
}

/** Embedded, schema 4 → 5: seals missed-call rows in place and renames caller streams (see above). */
export async function sealMissedCallsInPlace(
  store: SqliteEventStore,
  keys: KeyStore,
  now: () => Date = () => new Date(),
): Promise<MissedCallMigration> {
  if (store.schemaVersion !== 4) return { ...NOTHING };
  // Planned again if another process appends before the transaction (a call the plan missed would be
  // sealed with no key: as if erased).
  return untilPlanHolds(store, (plannedAt) => sealWithPlan(store, keys, plannedAt, now().getTime()));
}

async function sealWithPlan(
  store: SqliteEventStore,
  keys: KeyStore,
  plannedAt: number | null,
  now: number,
): Promise<MissedCallMigration> {
  // One read: each call's customer, each caller stream's restaurant, and the customers to fetch keys of.
  const callCustomer = new Map<string, string>();
  const pending: { call: string; named: string | null }[] = [];
  const callerRestaurant = new Map<string, string>();
  /** Each caller stream's last slot time (ms; NaN when unreadable). */
  const callerLastAt = new Map<string, number>();
  for await (const e of store.readAll({ batchSize: 5000 })) {
    if (e.type === 'MissedCallMatched') {
      const call = str(e.data.missed_call_id);
      const customer = str(e.data.customer_id);
      if (call && customer) callCustomer.set(call, customer);
    }
    if (e.stream.startsWith(CALLER_STREAM_PREFIX) && !callerRestaurant.has(e.stream)) {
      const r = str(e.data.restaurant_id);
      if (r) callerRestaurant.set(e.stream, r);
    }
    if (e.stream.startsWith(CALLER_STREAM_PREFIX)) callerLastAt.set(e.stream, Date.parse(String(e.data.at)));
    const callOf = CALL_OF[e.type];
    if (callOf && !('sealed' in e.data) && e.data.erased !== true) {
      const call = callOf(e.data);
      if (call) pending.push({ call, named: str(e.data.customer_id) });
    }
  }
  const customers = new Set<string>();
  for (const p of pending) {
    const c = p.named ?? callCustomer.get(p.call);
    if (c) customers.add(c);
  }
  const byCustomer = customers.size
    ? await keys.obtainMany([...customers].map(customerSubject))
    : new Map<string, Buffer | null>();
  const renames = new Map<string, string>();
  for (const [stream, restaurant] of callerRestaurant) {
    const prefix = `${CALLER_STREAM_PREFIX}${restaurant}-`;
    const m = E164_SUFFIX.exec(stream);
    if (!stream.startsWith(prefix) || !m || stream.length !== prefix.length + (m[1] as string).length)
      continue;
    renames.set(
      stream,
      callerStream(
        restaurant,
        await migratedCallerId(keys, restaurant, m[1] as string, callerLastAt.get(stream), now),
      ),
    );
  }
  const streams = [
    ...store.streamsStartingWith('missed-call-'),
    ...store.streamsStartingWith('message-outbox-'),
  ];
  let sealed = 0;
  let unowned = 0;
  const done = store.upgradeStreams(
    streams,
    renames,
    (row) => {
      const callOf = CALL_OF[row.type];
      if (!callOf) return null;
      const data = JSON.parse(row.data) as Record<string, unknown>;
      if ('sealed' in data || data.erased === true) return null;
      const call = callOf(data);
      const customer = str(data.customer_id) ?? (call ? callCustomer.get(call) : undefined);
      if (!customer) {
        unowned++;
        return null;
      }
      const named = { ...data, customer_id: customer };
      const out = sealData(row.type, named, byCustomer.get(customerSubject(customer)) ?? null, customer);
      if (out === named) return null;
      sealed++;
      return JSON.stringify(out);
    },
    plannedAt,
  );
  return {
    missed_call_rows_sealed: sealed,
    missed_call_rows_unowned: unowned,
    caller_streams_renamed: done.renamed,
    rows_rechained: done.rehashed,
  };
}

/** Embedded, schema 5 → 6: seals in place the missed-call rows whose number no customer owns (above). */
export async function sealUnownedCallsInPlace(
  store: SqliteEventStore,
  keys: KeyStore,
): Promise<{ missed_call_rows_number_sealed: number; rows_rechained: number }> {
  if (store.schemaVersion !== 5) return { missed_call_rows_number_sealed: 0, rows_rechained: 0 };
  return untilPlanHolds(store, (plannedAt) => sealUnownedWithPlan(store, keys, plannedAt));
}

async function sealUnownedWithPlan(
  store: SqliteEventStore,
  keys: KeyStore,
  plannedAt: number | null,
): Promise<{ missed_call_rows_number_sealed: number; rows_rechained: number }> {
  // One read: the calls a customer was matched to, and the rows in clear that no customer owns.
  const matched = new Set<string>();
  const pending: { id: string; stream: string; label: [string, string]; call: string | null }[] = [];
  for await (const e of store.readAll({ batchSize: 5000 })) {
    if (e.type === 'MissedCallMatched') {
      const call = str(e.data.missed_call_id);
      if (call && str(e.data.customer_id)) matched.add(call);
    }
    const target = CALL_OF[e.type] && e.data.erased !== true ? numberSealing(e.type, e.data) : null;
    if (target !== null)
      pending.push({
        id: e.id,
        stream: e.stream,
        label: [target.restaurantId, target.number],
        call: CALL_OF[e.type]?.(e.data) ?? target.callId,
      });
  }
  const unowned = pending.filter((p) => p.call === null || !matched.has(p.call));
  if (unowned.length === 0) {
    const done = store.sealUnownedInPlace([], () => null, plannedAt);
    return { missed_call_rows_number_sealed: 0, rows_rechained: done.rehashed };
  }
  // A key of its own for each row, in pages; each linked from its number's label, durably, before
  // the row is rewritten (a sealed row the index lost could never be erased by its number). A plan
  // made again leaves the keys and links of the first unused: they seal nothing.
  const numbers = new NumberIndex(keys);
  const sealing = new Map<string, { key: Buffer; kid: string; call: string | null }>();
  for (let at = 0; at < unowned.length; at += MAX_PAGE_KEYS) {
    const chunk = unowned.slice(at, at + MAX_PAGE_KEYS);
    const { page, keys: made } = await keys.createPage(chunk.length);
    for (const [slot, row] of chunk.entries()) {
      const kid = pageKid(page, slot);
      await keys.link(await numbers.label(...row.label), linkMember(kid, row.call));
      sealing.set(row.id, { key: made[slot] as Buffer, kid, call: row.call });
    }
  }
  let sealed = 0;
  const done = store.sealUnownedInPlace(
    [...new Set(unowned.map((p) => p.stream))],
    (row) => {
      const how = sealing.get(row.id);
      if (how === undefined) return null;
      const data = JSON.parse(row.data) as Record<string, unknown>;
      const out = sealData(row.type, data, how.key, callOwner(how.call), how.kid);
      if (out === data) return null;
      sealed++;
      return JSON.stringify(out);
    },
    plannedAt,
  );
  return { missed_call_rows_number_sealed: sealed, rows_rechained: done.rehashed };
}

/** Call → its customer (null: none), learnt from the call's stream; bounded. */
const CACHE = 50_000;
const known = new WeakMap<EventStore, Map<string, string | null>>();

/**
 * Whose a missed-call event written in clear is (EventStoreDB, read through the sealing layer): the
 * customer its call was matched to; null for other events, and for a call no customer was matched to.
 */
export async function legacyMissedCallCustomer(
  event: Pick<RecordedEvent, 'type' | 'data'>,
  store: EventStore,
): Promise<string | null> {
  const callOf = CALL_OF[event.type];
  if (!callOf) return null;
  const named = str(event.data.customer_id);
  if (named) return named;
  const call = callOf(event.data);
  if (!call) return null;
  let calls = known.get(store);
  if (!calls) {
    calls = new Map();
    known.set(store, calls);
  }
  const hit = calls.get(call);
  if (hit !== undefined) return hit;
  let customer: string | null = null;
  for (const e of await store.readStream(missedCallStream(call)))
    if (e.type === 'MissedCallMatched') customer = str(e.data.customer_id);
  // A call is matched in the append that reports it (or never): what the stream says now holds.
  calls.set(call, customer);
  trimOldest(calls, CACHE);
  return customer;
}
