// The `analytics_missed_calls` projection (version 1): per restaurant and local day, missed calls by
// outcome, callers matched (known or new customers), messages requested, and calls followed by a
// reservation. Counters moved by `$inc` (applyOnce); each call's facts and each caller's latest call
// are small documents of their own. Rules: ./missed-call-rules.ts; schema: docs/analytics.md.
import { MISSED_CALL_EVENT_TYPES } from '../../commands/missed-calls/events';
import type { Doc, DocumentStore } from '../../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../../src/ports/event-store';
import { applyOnce } from '../../src/projection/idempotent';
import type { Projection } from '../../src/projection/projection';
import {
  type CallerFacts,
  type CallFacts,
  callStep,
  emptyMissedCallDay,
  follows,
  latestCall,
  MISSED_CALL_SCHEMA_VERSION,
  type MissedCallDay,
  missedCallDayId,
  reported,
} from './missed-call-rules';
import { addInc, type Inc } from './webhook-rules';
import { applyZone, localDay, ZONE_EVENT_TYPES, zoneChange, zoneOf } from './zones';

export const ANALYTICS_MISSED_CALL_DAYS = 'analytics_missed_call_days';
export const ANALYTICS_MISSED_CALLS = 'analytics_missed_calls';
export const ANALYTICS_MISSED_CALL_CALLERS = 'analytics_missed_call_callers';
export const ANALYTICS_MISSED_CALL_ZONES = 'analytics_missed_call_zones';

export type MissedCallDayDoc = MissedCallDay & Doc & { _pos: string };
type CallDoc = CallFacts & Doc & { _pos: string };
type CallerDoc = CallerFacts & Doc & { _pos: string };

const callerId = (restaurant: string, customer: string) => `${restaurant}|${customer}`;

interface CallOutcome {
  facts: CallFacts;
  inc: Inc;
  /** The caller's latest call after a match (null: unchanged). */
  caller: CallerFacts | null;
}

/** What a call event does, given the call's facts so far (null: not reported yet) and the caller's latest call. */
export function missedCallStep(
  event: Pick<RecordedEvent, 'type' | 'data'>,
  facts: CallFacts | null,
  timezone: string | undefined,
  callerOf: (customerId: string) => CallerFacts | null,
): CallOutcome | null {
  const d = event.data as Record<string, unknown>;
  if (event.type === 'MissedCallReported') {
    if (facts) return null;
    const occurred = (d.occurred_at as string) ?? (d.at as string);
    return { ...reported(d.restaurant_id as string, localDay(timezone, occurred), occurred), caller: null };
  }
  if (!facts) return null;
  const step = callStep(facts, event.type, d);
  let caller: CallerFacts | null = null;
  if (event.type === 'MissedCallMatched' && facts.customer_id === null)
    caller = latestCall(
      callerOf(d.customer_id as string),
      d.missed_call_id as string,
      facts,
      d.customer_id as string,
    );
  return { ...step, caller };
}

/** Day documents computed from scratch over a log (for tests and checks). */
export function foldMissedCallDays(
  events: readonly Pick<RecordedEvent, 'type' | 'data'>[],
): Map<string, MissedCallDay> {
  const zones = new Map<string, string>();
  const calls = new Map<string, CallFacts>();
  const callers = new Map<string, CallerFacts>();
  const days = new Map<string, MissedCallDay>();
  const add = (key: Pick<CallFacts, 'restaurant_id' | 'date'>, inc: Inc) => {
    const id = missedCallDayId(key);
    days.set(id, addInc(days.get(id) ?? emptyMissedCallDay(key), inc));
  };
  for (const e of events) {
    const z = zoneChange(e);
    if (z) zones.set(z.restaurant_id, z.timezone);
    const d = e.data as Record<string, unknown>;
    if (e.type === 'ReservationCreated') {
      const r = d.reservation as { restaurant_id: string; customer_id: string | null; created_at: string };
      if (!r.customer_id) continue;
      const c = callers.get(callerId(r.restaurant_id, r.customer_id)) ?? null;
      if (c && follows(c, r.created_at)) {
        add(c, { followed_by_reservation: 1 });
        callers.set(callerId(c.restaurant_id, c.customer_id), { ...c, followed: true });
      }
      continue;
    }
    if (!(MISSED_CALL_EVENT_TYPES as readonly string[]).includes(e.type)) continue;
    const id = d.missed_call_id as string;
    const out = missedCallStep(
      e,
      calls.get(id) ?? null,
      zones.get(d.restaurant_id as string),
      (customer) => callers.get(callerId(d.restaurant_id as string, customer)) ?? null,
    );
    if (!out) continue;
    calls.set(id, out.facts);
    add(out.facts, out.inc);
    if (out.caller) callers.set(callerId(out.caller.restaurant_id, out.caller.customer_id), out.caller);
  }
  return days;
}

const strip = <T extends { _id: string; _pos: string }>(doc: T | null) => {
  if (!doc) return null;
  const { _id, _pos, ...rest } = doc;
  return rest;
};

async function addToDay(
  docs: DocumentStore,
  key: Pick<CallFacts, 'restaurant_id' | 'date'>,
  inc: Inc,
  position: bigint,
) {
  await applyOnce(
    docs.collection<MissedCallDayDoc>(ANALYTICS_MISSED_CALL_DAYS),
    missedCallDayId(key),
    position,
    {
      $setOnInsert: {
        restaurant_id: key.restaurant_id,
        date: key.date,
        schema_version: MISSED_CALL_SCHEMA_VERSION,
      },
      ...(Object.keys(inc).length > 0 ? { $inc: inc } : {}),
    },
    { upsert: true },
  );
}

async function applyCallEvent(event: RecordedEvent, docs: DocumentStore): Promise<void> {
  const d = event.data as Record<string, unknown>;
  const pos = positionToString(event.position);
  const id = d.missed_call_id as string;
  const callsCol = docs.collection<CallDoc>(ANALYTICS_MISSED_CALLS);
  const stored = await callsCol.findOne({ _id: id });
  if (stored && stored._pos >= pos) return; // redelivered
  const restaurant = d.restaurant_id as string;
  const timezone =
    event.type === 'MissedCallReported'
      ? await zoneOf(ANALYTICS_MISSED_CALL_ZONES, docs, restaurant)
      : undefined;
  const callersCol = docs.collection<CallerDoc>(ANALYTICS_MISSED_CALL_CALLERS);
  let callerDoc: CallerDoc | null = null;
  if (event.type === 'MissedCallMatched' && typeof d.customer_id === 'string')
    callerDoc = await callersCol.findOne({ _id: callerId(restaurant, d.customer_id) });
  const out = missedCallStep(
    event,
    strip(stored) as CallFacts | null,
    timezone,
    () => strip(callerDoc) as CallerFacts | null,
  );
  if (!out) return;
  if (Object.keys(out.inc).length > 0) await addToDay(docs, out.facts, out.inc, event.position);
  if (out.caller) {
    const cid = callerId(out.caller.restaurant_id, out.caller.customer_id);
    await applyOnce(callersCol, cid, event.position, { $set: { ...out.caller } }, { upsert: true });
  }
  await callsCol.replaceOne({ _id: id }, { ...out.facts, _id: id, _pos: pos } as CallDoc, { upsert: true });
}

async function applyReservation(event: RecordedEvent, docs: DocumentStore): Promise<void> {
  const r = (
    event.data as { reservation?: { restaurant_id: string; customer_id: string | null; created_at: string } }
  ).reservation;
  if (!r?.customer_id) return;
  const pos = positionToString(event.position);
  const callersCol = docs.collection<CallerDoc>(ANALYTICS_MISSED_CALL_CALLERS);
  const cid = callerId(r.restaurant_id, r.customer_id);
  const caller = await callersCol.findOne({ _id: cid });
  if (!caller || caller._pos >= pos) return;
  const facts = strip(caller) as unknown as CallerFacts;
  if (!follows(facts, r.created_at)) return;
  await addToDay(docs, facts, { followed_by_reservation: 1 }, event.position);
  await applyOnce(callersCol, cid, event.position, { $set: { followed: true } });
}

export const missedCallAnalyticsProjection: Projection = {
  name: 'analytics_missed_calls',
  version: 1,
  collections: [
    ANALYTICS_MISSED_CALL_DAYS,
    ANALYTICS_MISSED_CALLS,
    ANALYTICS_MISSED_CALL_CALLERS,
    ANALYTICS_MISSED_CALL_ZONES,
  ],
  eventTypes: [...ZONE_EVENT_TYPES, ...MISSED_CALL_EVENT_TYPES, 'ReservationCreated'],
  async setup(docs) {
    await docs
      .collection(ANALYTICS_MISSED_CALL_DAYS)
      .createIndex({ keys: { restaurant_id: 1, date: 1 }, name: 'restaurant_date' });
  },
  async apply(event, docs) {
    if (event.type === 'RestaurantCreated' || event.type === 'RestaurantUpdated')
      await applyZone(ANALYTICS_MISSED_CALL_ZONES, event, docs);
    else if (event.type === 'ReservationCreated') await applyReservation(event, docs);
    else await applyCallEvent(event, docs);
  },
};

export function missedCallDayOf(doc: MissedCallDayDoc): MissedCallDay {
  const { _id, _pos, ...rest } = doc;
  return { ...emptyMissedCallDay(rest), ...rest, by_outcome: { ...(rest.by_outcome ?? {}) } };
}
