// Delivery history and the publisher's work list: one document per delivery with its attempts, its
// status and when its next attempt is due. `sweep_after` says when the sweeper may (re)request an
// attempt nobody has made (see src/webhooks/publisher.ts).
import { type AttemptRecord, STORED_TEST_TYPE } from '../commands/webhook-deliveries/events';
import { applyOnce } from '../src/projection/idempotent';
import type { Projection } from '../src/projection/projection';
import { CLAIM_LEASE_SECONDS } from '../src/webhooks/schedule';

export const WEBHOOK_DELIVERIES = 'webhook_deliveries';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

export interface WebhookDeliveryDoc {
  _id: string;
  restaurant_id: string;
  endpoint_id: string;
  /** The `id` of the event sent (evt_…). */
  event_id: string;
  event_type: string;
  source_event_id: string;
  /** Where the body is: the fan-out stream and the payload key in it (null for test deliveries). */
  fanout_stream: string | null;
  payload: string | null;
  /**
   * The customer the body describes (the fan-out's `customer_id`); absent when none, or on documents
   * made before it was kept. Their erasure blanks the answers kept in `attempts` (below).
   */
  customer_id?: string;
  event_created: string;
  created_at: string;
  test: boolean;
  status: DeliveryStatus;
  attempts: AttemptRecord[];
  /**
   * When it was last attempted (the latest of its creation and every attempt's `at`), null while
   * never attempted: what the dashboard's failing warning orders finished deliveries by
   * (queries/webhooks.ts failingStreak), through the `finished` index. Absent on documents version 2
   * made before it was kept.
   */
  last_attempt_at?: string | null;
  attempt_count: number;
  last_status_code: number | null;
  /** Number of the next attempt, and when it is due (null once final). */
  next_attempt: number;
  next_attempt_at: string | null;
  /** First attempt of the current series (1, or the attempt a resend started) and when it ran. */
  series_start: number;
  series_started_at: string | null;
  sweep_after: string | null;
  /** Revision of the delivery stream (-1: none yet): the sweeper appends against it. */
  revision: number;
  [k: string]: unknown;
}

/** When a delivery was last attempted: the latest of its creation and its attempts. */
export const lastAttemptAt = (d: Pick<WebhookDeliveryDoc, 'created_at' | 'attempts'>): string =>
  d.attempts.reduce((max, a) => (a.at > max ? a.at : max), d.created_at);

const plus = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString();

/**
 * Version 1 writes `webhook_deliveries`; version 2 (below, the same code) writes `webhook_deliveries_v2`.
 * Version 2 exists because the documents changed without a new version: `customer_id` (and the
 * `by_customer` index that CustomerDeleted finds them by) was added to documents made from then on
 * only, so a store built before (MongoDB keeps its read models across restarts) held documents
 * without it, whose answers an erasure could not find and blank, and which differed from a replay
 * (`audit verify`). Version 2 is rebuilt from the whole log beside version 1, so every document has
 * its customer, and takes over once caught up. Version 1 keeps serving meanwhile with this same code
 * (documents made meanwhile carry `customer_id`, older ones keep lacking it): readers read either
 * layout, as no reader outside this projection reads `customer_id`. Remove it once every store has
 * switched.
 */
export const webhookDeliveriesProjectionV1: Projection = {
  name: 'webhook_deliveries',
  collections: [WEBHOOK_DELIVERIES],
  eventTypes: [
    'WebhookDeliveriesScheduled',
    'WebhookAttemptRecorded',
    'WebhookAttemptRequested',
    'WebhookDeliveryCanceled',
    'WebhookTestDeliverySent',
    'CustomerDeleted',
  ],
  async setup(docs) {
    const col = docs.collection(WEBHOOK_DELIVERIES);
    await col.createIndex({ keys: { endpoint_id: 1, created_at: -1 }, name: 'by_endpoint' });
    await col.createIndex({ keys: { status: 1, sweep_after: 1 }, name: 'work' });
    // The sweeper's due deliveries but those of the endpoints whose queue is full (`endpoint_id: {$nin}`),
    // oldest first: embedded, the endpoints' levels merged in sweep_after order, so a full endpoint's
    // backlog is never read (on `work` each due one was read and refused, every sweep); and one
    // endpoint's due backlog (the sweeper's end of an overflow: on MongoDB too). Partial: both read
    // pending ones only, so a delivered or failed delivery costs it no entry and its last write no
    // index write. Named anew: `due_by_endpoint` (22b95ca) held every delivery, and MongoDB refuses
    // one name with other options; a store that built it keeps it until dropped by hand.
    await col.createIndex({
      keys: { status: 1, endpoint_id: 1, sweep_after: 1 },
      name: 'pending_by_endpoint',
      partial: { status: 'pending' },
    });
    await col.createIndex({ keys: { created_at: 1 }, name: 'by_age' });
    await col.createIndex({ keys: { customer_id: 1 }, name: 'by_customer' });
    // An endpoint's finished deliveries by their last attempt: the failing warning reads the latest
    // success and the failures after it, not the endpoint's 30 days (every field keyed embedded too:
    // the warning pins the first three and reads last_attempt_at as a range).
    await col.createIndex({
      keys: { endpoint_id: 1, test: 1, status: 1, last_attempt_at: -1 },
      name: 'finished',
    });
  },
  async apply(event, docs) {
    const d = event.data as Record<string, unknown>;
    const col = docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
    switch (event.type) {
      case 'WebhookDeliveriesScheduled': {
        const types = d.event_types as Record<string, string>;
        const at = d.at as string;
        for (const del of d.deliveries as { delivery_id: string; endpoint_id: string; payload: string }[])
          await col.updateOne(
            { _id: del.delivery_id },
            {
              $setOnInsert: {
                restaurant_id: d.restaurant_id,
                endpoint_id: del.endpoint_id,
                event_id: `evt_${(d.source_event_id as string).replace(/-/g, '')}`,
                event_type: types[del.payload] ?? '',
                source_event_id: d.source_event_id,
                fanout_stream: event.stream,
                payload: del.payload,
                ...(typeof d.customer_id === 'string' ? { customer_id: d.customer_id } : {}),
                event_created: d.event_created,
                created_at: at,
                test: false,
                status: 'pending',
                attempts: [],
                last_attempt_at: null,
                attempt_count: 0,
                last_status_code: null,
                next_attempt: 1,
                next_attempt_at: at,
                series_start: 1,
                series_started_at: null,
                sweep_after: plus(at, CLAIM_LEASE_SECONDS),
                revision: -1,
              },
            },
            { upsert: true },
          );
        return;
      }
      case 'WebhookAttemptRecorded': {
        const attempt = d.attempt as number;
        const record: AttemptRecord = {
          attempt,
          log_id: d.log_id as string,
          at: d.at as string,
          duration_ms: d.duration_ms as number,
          status_code: (d.status_code as number | null) ?? null,
          error: (d.error as AttemptRecord['error']) ?? null,
          response_excerpt: (d.response_excerpt as string | null | undefined) ?? null,
          response_truncated: d.response_truncated === true,
        };
        const outcome = d.outcome as string;
        const doc = await col.findOne({ _id: d.delivery_id as string });
        const set: Record<string, unknown> = {
          status: outcome === 'retry' ? 'pending' : outcome,
          last_status_code: record.status_code,
          next_attempt: attempt + 1,
          next_attempt_at: (d.next_attempt_at as string | null) ?? null,
          sweep_after: (d.next_attempt_at as string | null) ?? null,
          revision: event.revision,
        };
        if (doc && doc.series_start === attempt) set.series_started_at = record.at;
        const before = doc ? lastAttemptAt(doc) : record.at;
        set.last_attempt_at = record.at > before ? record.at : before;
        await applyOnce(col, d.delivery_id as string, event.position, {
          $set: set,
          $push: { attempts: record },
          $inc: { attempt_count: 1 },
        });
        return;
      }
      case 'WebhookAttemptRequested': {
        const set: Record<string, unknown> = {
          next_attempt: d.attempt,
          next_attempt_at: d.at,
          sweep_after: plus(d.at as string, CLAIM_LEASE_SECONDS),
          revision: event.revision,
          status: 'pending',
        };
        if (d.reason === 'resend') {
          set.series_start = d.attempt;
          set.series_started_at = null;
        }
        await col.updateOne({ _id: d.delivery_id as string }, { $set: set });
        return;
      }
      case 'WebhookDeliveryCanceled':
        await col.updateOne(
          { _id: d.delivery_id as string },
          {
            $set: { status: 'canceled', next_attempt_at: null, sweep_after: null, revision: event.revision },
          },
        );
        return;
      case 'CustomerDeleted': {
        // Erasure (docs/AUDIT.md): what the endpoints answered to deliveries describing this customer
        // may echo them; it reads as a replay after the key's destruction shows it (sealed, erased).
        if (typeof d.customer_id !== 'string') return;
        for (const doc of await col.find({ customer_id: d.customer_id })) {
          if (doc.attempts.every((a) => a.response_excerpt === null || a.response_excerpt === undefined))
            continue;
          const attempts = doc.attempts.map((a) =>
            a.response_excerpt === undefined ? a : { ...a, response_excerpt: null },
          );
          await col.updateOne({ _id: doc._id }, { $set: { attempts } });
        }
        return;
      }
      case 'WebhookTestDeliverySent':
        await col.updateOne(
          { _id: d.delivery_id as string },
          {
            $set: {
              restaurant_id: d.restaurant_id,
              endpoint_id: d.endpoint_id,
              event_id: d.event_id,
              event_type: STORED_TEST_TYPE,
              source_event_id: '',
              fanout_stream: null,
              payload: null,
              event_created: d.at,
              created_at: d.at,
              test: true,
              status: d.outcome,
              attempts: [
                {
                  attempt: 1,
                  log_id: d.log_id,
                  at: d.at,
                  duration_ms: d.duration_ms,
                  status_code: d.status_code ?? null,
                  error: d.error ?? null,
                  response_excerpt: d.response_excerpt ?? null,
                  response_truncated: d.response_truncated === true,
                },
              ],
              last_attempt_at: d.at,
              attempt_count: 1,
              last_status_code: d.status_code ?? null,
              next_attempt: 2,
              next_attempt_at: null,
              series_start: 1,
              series_started_at: d.at,
              sweep_after: null,
              revision: event.revision,
            },
          },
          { upsert: true },
        );
        return;
    }
  },
};

/** Version 2 (see version 1 above): the same documents, each with its `customer_id`. */
export const webhookDeliveriesProjectionV2: Projection = { ...webhookDeliveriesProjectionV1, version: 2 };

/**
 * The served version: the same code again, each document with its `last_attempt_at` (the failing
 * warning's order, served by the `finished` index), which versions 1 and 2 keep only on the documents
 * attempted since it was added. Until it takes over, failingStreak reads the endpoints that still
 * have finished deliveries without it as before.
 */
export const webhookDeliveriesProjection: Projection = { ...webhookDeliveriesProjectionV1, version: 3 };
