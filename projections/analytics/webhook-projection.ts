// The `analytics_webhooks` projection (version 2; version 1 kept until replaced): per restaurant, endpoint and local day, webhook
// deliveries by where they stand, attempts, first-attempt successes and the time to delivery
// (histogram). Documents are counters moved by `$inc` (applyOnce: a redelivered event is a no-op), so
// an event costs one read of the delivery's facts and two writes. Rules: ./webhook-rules.ts; schema:
// docs/analytics.md.
import type { Doc, DocumentStore } from '../../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../../src/ports/event-store';
import { applyOnce } from '../../src/projection/idempotent';
import type { Projection } from '../../src/projection/projection';
import {
  addInc,
  attempted,
  canceled,
  type DeliveryFacts,
  emptyWebhookDay,
  type Inc,
  resent,
  scheduled,
  WEBHOOK_SCHEMA_VERSION,
  type WebhookDay,
  webhookDayId,
} from './webhook-rules';
import { applyZone, localDay, ZONE_EVENT_TYPES, zoneChange, zoneOf } from './zones';

export const ANALYTICS_WEBHOOK_DAYS = 'analytics_webhook_days';
export const ANALYTICS_WEBHOOK_DELIVERIES = 'analytics_webhook_deliveries';
export const ANALYTICS_WEBHOOK_ZONES = 'analytics_webhook_zones';

export type WebhookDayDoc = WebhookDay & Doc & { _pos: string };
type FactsDoc = DeliveryFacts & Doc & { _pos: string };

const DELIVERY_EVENTS_V1 = [
  'WebhookDeliveriesScheduled',
  'WebhookAttemptRecorded',
  'WebhookDeliveryCanceled',
];
/**
 * Version 2 also follows resend requests: version 1 kept a failed (or canceled) delivery that was resent
 * failed until the resend's attempt was recorded, where docs/analytics.md counts it pending (and the
 * API shows it so), and for good when that attempt was never made.
 */
const DELIVERY_EVENTS = [...DELIVERY_EVENTS_V1, 'WebhookAttemptRequested'];

interface Step {
  id: string;
  facts: DeliveryFacts;
  inc: Inc;
}

/**
 * What one event does to the deliveries it names, given their facts so far (`known`) and the
 * restaurant's zone: the new facts and each day's increments. Shared by the projection and the
 * from-scratch fold, so both count alike.
 */
export function webhookSteps(
  event: Pick<RecordedEvent, 'type' | 'data'>,
  known: (deliveryId: string) => DeliveryFacts | null,
  timezone: string | undefined,
): Step[] {
  const d = event.data as Record<string, unknown>;
  if (event.type === 'WebhookDeliveriesScheduled') {
    const at = d.at as string;
    const date = localDay(timezone, at);
    const steps: Step[] = [];
    const seen = new Set<string>();
    for (const del of d.deliveries as { delivery_id: string; endpoint_id: string }[]) {
      if (seen.has(del.delivery_id) || known(del.delivery_id)) continue; // a delivery is scheduled once
      seen.add(del.delivery_id);
      steps.push({ id: del.delivery_id, ...scheduled(d.restaurant_id as string, del.endpoint_id, date, at) });
    }
    return steps;
  }
  const id = d.delivery_id as string;
  const f = known(id);
  if (!f) return []; // a test delivery, or one this projection never saw scheduled
  if (event.type === 'WebhookAttemptRecorded')
    return [
      {
        id,
        ...attempted(f, {
          attempt: d.attempt as number,
          outcome: d.outcome as 'succeeded' | 'retry' | 'failed',
          at: d.at as string,
          duration_ms: (d.duration_ms as number) ?? 0,
        }),
      },
    ];
  if (event.type === 'WebhookDeliveryCanceled') return [{ id, ...canceled(f) }];
  if (event.type === 'WebhookAttemptRequested' && d.reason === 'resend') return [{ id, ...resent(f) }];
  return [];
}

/** The day documents computed from scratch over a log (for tests and checks). */
export function foldWebhookDays(
  events: readonly Pick<RecordedEvent, 'type' | 'data'>[],
  followed: readonly string[] = DELIVERY_EVENTS,
): Map<string, WebhookDay> {
  const zones = new Map<string, string>();
  const facts = new Map<string, DeliveryFacts>();
  const days = new Map<string, WebhookDay>();
  for (const e of events) {
    const z = zoneChange(e);
    if (z) zones.set(z.restaurant_id, z.timezone);
    if (!followed.includes(e.type)) continue;
    const tz = zones.get((e.data as { restaurant_id: string }).restaurant_id);
    for (const s of webhookSteps(e, (id) => facts.get(id) ?? null, tz)) {
      facts.set(s.id, s.facts);
      const key = webhookDayId(s.facts);
      const day = days.get(key) ?? emptyWebhookDay(s.facts);
      days.set(key, addInc(day, s.inc));
    }
  }
  return days;
}

async function applyDelivery(event: RecordedEvent, docs: DocumentStore): Promise<void> {
  const d = event.data as Record<string, unknown>;
  const pos = positionToString(event.position);
  const factsCol = docs.collection<FactsDoc>(ANALYTICS_WEBHOOK_DELIVERIES);
  const ids =
    event.type === 'WebhookDeliveriesScheduled'
      ? (d.deliveries as { delivery_id: string }[]).map((x) => x.delivery_id)
      : [d.delivery_id as string];
  const stored =
    ids.length === 1
      ? [await factsCol.findOne({ _id: ids[0] as string })].filter((x): x is FactsDoc => x !== null)
      : await factsCol.find({ _id: { $in: ids } });
  const byId = new Map(stored.map((s) => [s._id, s]));
  // Facts this very event wrote before a crash count as not yet known (their increments are redone,
  // and the day's own guard skips them if they landed); facts written later than this event mean it
  // was applied already.
  const known = (id: string): DeliveryFacts | null => {
    const s = byId.get(id);
    if (!s || s._pos === pos) return null;
    const { _id, _pos, ...facts } = s;
    return facts as DeliveryFacts;
  };
  if (event.type !== 'WebhookDeliveriesScheduled') {
    const s = byId.get(ids[0] as string);
    if (s && s._pos >= pos) return; // redelivered
  }
  const timezone =
    event.type === 'WebhookDeliveriesScheduled'
      ? await zoneOf(ANALYTICS_WEBHOOK_ZONES, docs, d.restaurant_id as string)
      : undefined;
  let steps = webhookSteps(event, known, timezone);
  // Redelivered after a crash while writing the facts: the day was decided then (a later zone change
  // must not move it), and every day's increment already landed.
  const decided = stored.find((x) => x._pos === pos);
  if (decided) steps = steps.map((x) => ({ ...x, facts: { ...x.facts, date: decided.date } }));
  // One $inc per day document (a fan-out's deliveries to one endpoint share it).
  const perDay = new Map<string, { key: DeliveryFacts; inc: Inc }>();
  for (const s of steps) {
    const id = webhookDayId(s.facts);
    const entry = perDay.get(id) ?? { key: s.facts, inc: {} };
    for (const [k, n] of Object.entries(s.inc)) entry.inc[k] = (entry.inc[k] ?? 0) + n;
    perDay.set(id, entry);
  }
  const days = docs.collection<WebhookDayDoc>(ANALYTICS_WEBHOOK_DAYS);
  for (const [id, { key, inc }] of perDay) {
    await applyOnce(
      days,
      id,
      event.position,
      {
        $setOnInsert: {
          restaurant_id: key.restaurant_id,
          endpoint_id: key.endpoint_id,
          date: key.date,
          schema_version: WEBHOOK_SCHEMA_VERSION,
        },
        ...(Object.keys(inc).length > 0 ? { $inc: inc } : {}),
      },
      { upsert: true },
    );
  }
  // The facts last: a crash before this point redoes the event.
  for (const s of steps)
    await factsCol.replaceOne({ _id: s.id }, { ...s.facts, _id: s.id, _pos: pos } as FactsDoc, {
      upsert: true,
    });
}

/** Version 1: resend requests not followed (a store built before may still serve it until the switch). */
export const webhookAnalyticsProjectionV1: Projection = {
  name: 'analytics_webhooks',
  version: 1,
  collections: [ANALYTICS_WEBHOOK_DAYS, ANALYTICS_WEBHOOK_DELIVERIES, ANALYTICS_WEBHOOK_ZONES],
  eventTypes: [...ZONE_EVENT_TYPES, ...DELIVERY_EVENTS_V1],
  async setup(docs) {
    await docs
      .collection(ANALYTICS_WEBHOOK_DAYS)
      .createIndex({ keys: { restaurant_id: 1, date: 1 }, name: 'restaurant_date' });
  },
  async apply(event, docs) {
    if (event.type === 'RestaurantCreated' || event.type === 'RestaurantUpdated')
      await applyZone(ANALYTICS_WEBHOOK_ZONES, event, docs);
    else await applyDelivery(event, docs);
  },
};

/** Version 2: a resent failed or canceled delivery is pending until its attempt is answered. */
export const webhookAnalyticsProjection: Projection = {
  ...webhookAnalyticsProjectionV1,
  version: 2,
  eventTypes: [...ZONE_EVENT_TYPES, ...DELIVERY_EVENTS],
};

/** A day document as the figures (no `_id`, `_pos`); counters absent on an old document read as 0. */
export function webhookDayOf(doc: WebhookDayDoc): WebhookDay {
  const { _id, _pos, ...rest } = doc;
  const day = { ...emptyWebhookDay(rest), ...rest } as WebhookDay;
  day.time_to_delivery = { ...(rest.time_to_delivery ?? {}) };
  return day;
}
