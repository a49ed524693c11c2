// The webhook publisher: one more subscriber of the log (DESIGN.md §1). For each reservation or
// customer event it appends one fan-out (the deliveries, with their bodies) and hands the first
// attempts to per-endpoint queues; it deletes the endpoints of a revoked credential; it makes the
// attempts the log asks for (WebhookAttemptRequested: retries, resends, recoveries). A sweeper asks
// for attempts that are due, on the service clock. Every step is an append with an expected revision,
// so two publishers (scaled out) or a replay after a crash never send the same attempt twice on their
// own initiative; what is durable is in the log, so a restart loses nothing.

import { randomUUID } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import {
  type AttemptError,
  deliveryStream,
  fanoutStream,
  type ScheduledDelivery,
} from '../../commands/webhook-deliveries/events';
import {
  oldSecretsSigning,
  readableTypes,
  refusedBySettings,
  type SettingsRefusal,
  scopesReadDelivery,
} from '../../commands/webhook-endpoints/decide';
import { deleteWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { openHeaders } from '../../commands/webhook-endpoints/header-secrets';
import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { keyWithdrawn } from '../../queries/api-keys';
import { barredByApiOption } from '../../queries/oauth';
import { findRestaurant } from '../../queries/restaurants';
import { systemMeta } from '../core/command-meta';
import { deterministicUuid } from '../core/ids';
import { manyListeners } from '../core/stop-signal';
import {
  type AppendResult,
  NO_STREAM,
  positionToString,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../ports/event-store';
import type { Runtime } from '../runtime';
import { type AttemptRequest, type AttemptResponse, sendAttempt } from './deliver';
import { deliveryBodyErased, LEGACY_TYPE, publishedEvent, storedBody, type Variant } from './payloads';
import { nextStep } from './schedule';
import { othersData } from './stand-ins';

/** Event types the publisher follows (prefixes, as subscriptions filter them). */
export const PUBLISHER_EVENT_PREFIXES = [
  'Reservation',
  'Customer',
  // A customer's marketing opt-outs (MarketingOptOutAdded/Removed, on the customer's stream): customer.updated.
  'MarketingOptOut',
  'ApiKeyRevoked',
  'WebhookAttemptRequested',
];

export interface PublisherOptions {
  /** Attempts in flight per endpoint (default 8): a slow endpoint fills its own slots, never another's. */
  concurrencyPerEndpoint?: number;
  /**
   * Attempts queued in memory per endpoint behind those in flight (default 1,000: 25 minutes of an
   * endpoint that hangs until the timeout). Past it an attempt is left to the log: its delivery stays
   * pending and the sweeper asks for it once its lease ran out and the queue has room, so an endpoint
   * slower than its events does not grow this process's memory with every event.
   */
  maxWaitingPerEndpoint?: number;
  sweepIntervalMs?: number;
  timeoutMs?: number;
  resolver?: AttemptRequest['resolver'];
}

interface Job {
  deliveryId: string;
  endpointId: string;
  restaurantId: string;
  attempt: number;
  seriesStart: number;
  seriesStartedAt: string | null;
  /** Revision of the delivery stream this attempt's record is appended against (-1: none). */
  expectedRevision: number;
  body: string;
  eventTime: string;
  /**
   * The customer the body describes (the fan-out's `customer_id`), or null: the attempt's record names
   * them, so the endpoint's answer (which may echo the body) is sealed with their key and erased with
   * them.
   */
  customerId: string | null;
  /** What the body holds of other customers than `customerId`: redacted from the answer (stand-ins.ts). */
  othersData: string[];
  /** The other customers the body describes (the fan-out's `other_customer_ids`; [] for none). */
  otherCustomerIds: string[];
  /**
   * The sealing layer's erasure count before the body was read (erasuresSeen): when it moved before
   * the attempt, the body is read again from the log, where an erasure meanwhile has erased it.
   */
  erasures: number;
}

interface EndpointQueue {
  active: number;
  waiting: Job[];
}

const meta = systemMeta('webhooks');

/** Pending deliveries a start reads at a time (askForUnfinished): one read's copies and loop hold. */
export const UNFINISHED_PAGE = 1_000;

/** What a start keeps of a delivery it asks for. */
type Asked = Pick<
  WebhookDeliveryDoc,
  '_id' | 'endpoint_id' | 'restaurant_id' | 'revision' | 'next_attempt' | 'attempt_count'
>;

/**
 * How long a stop lets attempts in flight finish (most endpoints answer in milliseconds: cutting them
 * at once would send each again after every restart) before it cuts the rest and hands them back.
 */
export const STOP_GRACE_MS = 1_000;

/** 96 random bits like newId, from randomUUID's pooled entropy (newId's randomBytes is a system call per id: two per delivery here). */
const fastId = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 24)}`;

export class WebhookPublisher {
  private readonly queues = new Map<string, EndpointQueue>();
  /** Deliveries queued or in flight in this process. */
  private readonly held = new Set<string>();
  /**
   * Endpoints whose queue overflowed and whose backlog in the log is not yet all asked for: their new
   * fan-outs wait in the log too (else every freed slot goes to a new event and the backlog waits as
   * long as the endpoint stays slower than its events); the sweeper feeds the queue oldest first.
   */
  private readonly overflowed = new Set<string>();
  /** Per endpoint, the attempts left to the log since its last warning, and that warning's time (ms). */
  private readonly leftToLog = new Map<string, { count: number; warnedAt: number }>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  /** Cuts the attempts in flight: a stop's grace ran out, or the service began to stop (rt.stopping). */
  private readonly cut = new AbortController();
  private readonly stopSignal: AbortSignal;
  private readonly concurrency: number;
  private readonly maxWaiting: number;
  /** Attempts finished since start (benchmarks, tests). */
  attemptsMade = 0;
  onAttempt?: (deliveryId: string, response: AttemptResponse) => void;

  constructor(
    private readonly rt: Runtime,
    private readonly options: PublisherOptions = {},
  ) {
    this.concurrency = options.concurrencyPerEndpoint ?? 8;
    this.maxWaiting = options.maxWaitingPerEndpoint ?? 1_000;
    this.stopSignal = manyListeners(AbortSignal.any([this.cut.signal, rt.stopping.signal]));
  }

  private get embedded() {
    return this.rt.config.store === 'embedded';
  }

  /** The read models include the log up to `position` (embedded: apply now; scaled: wait for the projector). */
  private async readModelsAt(position: bigint): Promise<void> {
    const at = this.rt.projections.position;
    if (at !== null && at >= position) return;
    if (this.embedded) await this.rt.projections.catchUp();
    else await this.rt.projections.waitFor(position, 30_000);
  }

  /** Handles one event of the log. Resolves once what it decided is durable (attempts may still be running). */
  async handle(event: RecordedEvent): Promise<void> {
    if (this.stopped) return;
    if (event.type === 'ApiKeyRevoked') return this.credentialRevoked(event);
    if (event.type === 'WebhookAttemptRequested') return this.attemptRequested(event);
    return this.fanOut(event);
  }

  private async fanOut(event: RecordedEvent): Promise<void> {
    const restaurantId = (event.data as { restaurant_id?: string }).restaurant_id;
    if (!restaurantId) return;
    await this.readModelsAt(event.position);
    const pos = positionToString(event.position);
    const endpoints = (
      await this.rt.docs
        .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
        .find({ restaurant_id: restaurantId })
    ).filter((e) => e.created_position < pos && !e.disabled);
    if (!endpoints.length) return;
    const erasures = this.erasuresSeen();
    const published = await publishedEvent(this.rt.events, this.rt.docs, event);
    if (!published) return;
    const keys = new Map(
      (
        await this.rt.docs
          .collection<ApiKeyDoc>(API_KEYS)
          .find({ _id: { $in: [...new Set(endpoints.map((e) => e.credential_id))] } })
      ).map((k) => [k._id, k]),
    );
    const deliveries: ScheduledDelivery[] = [];
    const payloads: Record<string, string> = {};
    // Bodies describing other customers too: the same without their data (PublishedEvent.others).
    const others =
      published.customerId !== null && !published.erased && published.others?.length
        ? published.others
        : null;
    const standIns: Record<string, string> | null = others === null ? null : {};
    const eventTypes: Record<string, string> = {};
    // A third-party application's endpoints receive nothing while the restaurant's API option is off.
    const restaurant = [...keys.values()].some((k) => k.type === 'OAUTH')
      ? await findRestaurant(this.rt.docs, restaurantId)
      : null;
    for (const e of endpoints) {
      const key = keys.get(e.credential_id);
      if (!key || keyWithdrawn(key) || key.restaurant_id !== restaurantId) continue;
      if (await barredByApiOption(this.rt.docs, key, restaurant)) continue;
      const scopes = new Set(key.scopes);
      const sensitive = published.kind === 'reservation' && scopes.has('RESERVATIONS_READ_SENSITIVE');
      let variant: Variant;
      if (e.api_version === 'legacy') {
        if (published.kind !== 'reservation' || !scopesReadDelivery(scopes, LEGACY_TYPE, null)) continue;
        variant = sensitive ? 'legacy_sensitive' : 'legacy';
        eventTypes[variant] = LEGACY_TYPE;
      } else {
        if (!readableTypes(scopes).includes(published.v1Type)) continue;
        if (e.enabled_events[0] !== '*' && !e.enabled_events.includes(published.v1Type)) continue;
        variant = sensitive ? 'v1_sensitive' : 'v1';
        eventTypes[variant] = published.v1Type;
      }
      payloads[variant] ??= published.body(variant);
      if (standIns !== null) standIns[variant] ??= published.standIn?.(variant) as string;
      deliveries.push({ delivery_id: fastId('whd'), endpoint_id: e._id, payload: variant });
    }
    if (!deliveries.length) return;
    const at = this.rt.clock.now().toISOString();
    const stream = fanoutStream(event.id);
    let appended: AppendResult;
    try {
      appended = await this.rt.events.append(
        stream,
        [
          {
            id: deterministicUuid(`webhook-fanout:${event.id}`),
            type: 'WebhookDeliveriesScheduled',
            data: {
              restaurant_id: restaurantId,
              // Whose key seals `payloads` (the bodies hold their personal data): erasing the
              // customer makes the stored bodies unreadable, and they are never resent. A deletion's
              // bodies hold them erased: unsealed, so they are retried and resent (the partner must
              // learn of it), naming the customer for the attempts' records only.
              ...(published.customerId === null
                ? {}
                : published.erased
                  ? { erased_customer_id: published.customerId }
                  : { customer_id: published.customerId }),
              source_event_id: event.id,
              source_position: pos,
              event_types: eventTypes,
              event_created: published.created,
              payloads,
              // Other customers the bodies describe: the bodies are sealed with their keys and the
              // customer's together, the stand-ins (not written) with the customer's alone. A
              // reservation's fan-out always says (`[]`: none), so one written before this code (which
              // sealed such bodies with the customer's key alone) is told apart on read
              // (src/privacy/legacy-fanouts.ts).
              ...(others !== null
                ? { other_customer_ids: others, payloads_without_others: standIns }
                : published.kind === 'reservation' && published.customerId !== null && !published.erased
                  ? { other_customer_ids: [] }
                  : {}),
              deliveries,
              at,
            },
            metadata: { ...meta, restaurant_id: restaurantId, causation_id: event.id },
          },
        ],
        NO_STREAM,
      );
    } catch (err) {
      // Another publisher (or this one before a restart) fanned this event out already: its deliveries are its own.
      if (err instanceof WrongExpectedRevisionError) return;
      throw err;
    }
    // The same, answered as a success: the fan-out's id is derived from the event's, so a store (SQLite,
    // EventStoreDB) takes an event handled again (a replay from a checkpoint a kill left behind it, a
    // persistent subscription's redelivery) for the retry of the append stored then. The log holds
    // that append's deliveries, not the ones made here: sending these would send the event again
    // under new delivery ids. Those deliveries are settled or, never attempted, asked for at the
    // start (askForUnfinished, embedded) or by the sweeper once their lease runs out.
    if (!(await this.wroteFanOut(stream, appended, deliveries[0] as ScheduledDelivery))) return;
    for (const d of deliveries)
      this.enqueue(
        {
          deliveryId: d.delivery_id,
          endpointId: d.endpoint_id,
          restaurantId,
          attempt: 1,
          seriesStart: 1,
          seriesStartedAt: null,
          expectedRevision: -1,
          body: payloads[d.payload] as string,
          eventTime: published.created,
          customerId: published.customerId,
          othersData: othersData(payloads[d.payload] as string, standIns?.[d.payload]),
          otherCustomerIds: published.others ?? [],
          erasures,
        },
        'fan-out',
      );
  }

  /** Whether `result` is this fan-out's own append, not the answer of a retry of one stored before. */
  private async wroteFanOut(
    stream: string,
    result: AppendResult,
    first: ScheduledDelivery,
  ): Promise<boolean> {
    if (this.rt.events.wroteAnew?.(result) === true) return true;
    // The store cannot tell (or says it did not write it): the log can.
    const [stored] = await this.rt.events.readStream(stream, { limit: 1 });
    const deliveries = (stored?.data as { deliveries?: ScheduledDelivery[] } | undefined)?.deliveries;
    return deliveries?.[0]?.delivery_id === first.delivery_id;
  }

  /** A revoked credential's endpoints are deleted (spec §5), whatever revoked it; deleting twice appends nothing. */
  private async credentialRevoked(event: RecordedEvent): Promise<void> {
    const keyId = (event.data as { key_id: string }).key_id;
    await this.readModelsAt(event.position);
    const endpoints = await this.rt.docs
      .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
      .find({ credential_id: keyId });
    // On behalf of whoever revoked the credential (a manager disconnecting an application, an
    // operator): an auditor sees them as the actor; `performed_by` says this worker appended it.
    for (const e of endpoints)
      await deleteWebhookEndpoint(this.rt, null, e._id, 'CREDENTIAL_REVOKED', {
        ...meta,
        actor: typeof event.metadata.actor === 'string' ? event.metadata.actor : meta.actor,
        performed_by: meta.actor,
        causation_id: event.id,
        ...(event.metadata.request_id ? { request_id: event.metadata.request_id } : {}),
      }).catch((err) => {
        if ((err as { status?: number }).status !== 404) throw err;
      });
  }

  private async attemptRequested(event: RecordedEvent): Promise<void> {
    const d = event.data as { delivery_id: string; attempt: number };
    if (this.held.has(d.delivery_id)) {
      // Already queued here (a slow endpoint's backlog outlived the lease): that job will record against this request.
      for (const q of this.queues.values())
        for (const j of q.waiting) if (j.deliveryId === d.delivery_id) j.expectedRevision = event.revision;
      return;
    }
    await this.readModelsAt(event.position);
    const erasures = this.erasuresSeen();
    const doc = await this.rt.docs
      .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
      .findOne({ _id: d.delivery_id });
    // Replayed after the attempt it asked for was made (a restart): nothing to do.
    if (!doc?.fanout_stream || !doc.payload || doc.revision !== event.revision || doc.status !== 'pending')
      return;
    const [fanout] = await this.rt.events.readStream(doc.fanout_stream, { limit: 1 });
    const body = (fanout?.data as { payloads?: Record<string, string> } | undefined)?.payloads?.[doc.payload];
    if (body === undefined) {
      // The customer it describes was erased: its body is gone for good, so the delivery is over
      // (else the sweeper would ask for it again and again).
      if (fanout?.data.erased === true) await this.cancelErased(doc, event.revision);
      return;
    }
    this.enqueue({
      deliveryId: doc._id,
      endpointId: doc.endpoint_id,
      restaurantId: doc.restaurant_id,
      attempt: d.attempt,
      seriesStart: doc.series_start,
      seriesStartedAt: doc.series_started_at,
      expectedRevision: event.revision,
      body,
      eventTime: doc.event_created,
      customerId:
        typeof fanout?.data.customer_id === 'string'
          ? fanout.data.customer_id
          : typeof fanout?.data.erased_customer_id === 'string'
            ? fanout.data.erased_customer_id
            : null,
      othersData: othersData(
        body,
        (fanout?.data as { payloads_without_others?: Record<string, string> } | undefined)
          ?.payloads_without_others?.[doc.payload],
      ),
      otherCustomerIds: Array.isArray(fanout?.data.other_customer_ids)
        ? (fanout.data.other_customer_ids as unknown[]).filter((c): c is string => typeof c === 'string')
        : [],
      erasures,
    });
  }

  /** The sealing layer's erasure count (NaN when the store does not seal: always read again). */
  private erasuresSeen(): number {
    const events = this.rt.events as { erasuresSeen?: () => number };
    return typeof events.erasuresSeen === 'function' ? events.erasuresSeen() : Number.NaN;
  }

  /**
   * Whether the job's body, read before an erasure that came since, now reads erased in the log. An
   * erasure this process began or read moves erasuresSeen; one made by another process (a second
   * webhook worker, an operator's CLI) before this one reads the deletion is found by asking the key
   * store about the body's customer and the others it describes (erasedNow).
   */
  private async erasedMeanwhile(job: Job, delivery: WebhookDeliveryDoc): Promise<boolean> {
    const events = this.rt.events as { erasedNow?: (ids: readonly string[]) => Promise<string[]> };
    const ids = job.customerId === null ? job.otherCustomerIds : [job.customerId, ...job.otherCustomerIds];
    if (
      this.erasuresSeen() === job.erasures &&
      (typeof events.erasedNow !== 'function' || (await events.erasedNow(ids)).length === 0)
    )
      return false;
    if (await deliveryBodyErased(this.rt.events, delivery)) return true;
    // Another customer the body describes may be the one erased: the body as the log reads it now
    // (their data erased in it), not the one read before.
    const body = await storedBody(this.rt.events, delivery);
    if (body !== undefined) job.body = body;
    return false;
  }

  private async cancelErased(doc: WebhookDeliveryDoc, revision: number): Promise<void> {
    try {
      await this.rt.events.append(
        deliveryStream(doc._id),
        [
          {
            type: 'WebhookDeliveryCanceled',
            data: {
              delivery_id: doc._id,
              endpoint_id: doc.endpoint_id,
              restaurant_id: doc.restaurant_id,
              reason: 'customer_erased',
              at: this.rt.clock.now().toISOString(),
            },
            metadata: { ...meta, restaurant_id: doc.restaurant_id },
          },
        ],
        revision,
      );
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
    }
  }

  private enqueue(job: Job, from: 'fan-out' | 'request' = 'request'): void {
    if (this.stopped) return;
    // Behind the endpoint's backlog in the log, which the sweeper feeds to the queue oldest first.
    if (from === 'fan-out' && this.overflowed.has(job.endpointId)) {
      this.leaveToLog(job.endpointId);
      return;
    }
    let q = this.queues.get(job.endpointId);
    if (!q) {
      q = { active: 0, waiting: [] };
      this.queues.set(job.endpointId, q);
    }
    // Left to the sweeper (the delivery's lease runs out): a job holds its body, and a hung endpoint
    // takes 8 attempts in 12 s whatever the rate of events.
    if (q.waiting.length >= this.maxWaiting) {
      if (!q.active) this.queues.delete(job.endpointId);
      this.overflowed.add(job.endpointId);
      this.leaveToLog(job.endpointId);
      return;
    }
    this.held.add(job.deliveryId);
    q.waiting.push(job);
    this.pump(job.endpointId, q);
  }

  /** Counts an attempt left to the log; warns at most once a minute per endpoint, with the count since. */
  private leaveToLog(endpointId: string): void {
    const now = Date.now();
    const left = this.leftToLog.get(endpointId) ?? { count: 0, warnedAt: Number.NEGATIVE_INFINITY };
    left.count++;
    if (this.leftToLog.size > 10_000) this.leftToLog.clear();
    this.leftToLog.set(endpointId, left);
    if (now - left.warnedAt < 60_000) return;
    this.rt.logger.warn(
      { endpoint: endpointId, left_to_log: left.count, max_waiting: this.maxWaiting },
      'webhook endpoint slower than its events: attempts past its queue wait in the log (still pending), asked for when the queue has room',
    );
    left.count = 0;
    left.warnedAt = now;
  }

  /** The request reason for a delivery the sweeper (or a start) asks for. */
  private reasonFor(
    d: Pick<WebhookDeliveryDoc, 'attempt_count' | 'endpoint_id'>,
  ): 'retry' | 'recovery' | 'queue_full' {
    if (d.attempt_count > 0) return 'retry';
    return this.overflowed.has(d.endpoint_id) ? 'queue_full' : 'recovery';
  }

  private pump(endpointId: string, q: EndpointQueue): void {
    while (!this.stopped && q.active < this.concurrency && q.waiting.length) {
      const job = q.waiting.shift() as Job;
      q.active++;
      const run = this.attempt(job)
        .catch((err: Error) =>
          this.rt.logger.error(
            { err: { message: err.message }, delivery: job.deliveryId },
            'webhook attempt failed to record',
          ),
        )
        .finally(() => {
          q.active--;
          this.held.delete(job.deliveryId);
          this.running.delete(run);
          if (!q.active && !q.waiting.length) this.queues.delete(endpointId);
          else this.pump(endpointId, q);
        });
      this.running.add(run);
    }
  }

  /** Opened secrets, by sealed value (in memory only; a rotation seals a new value). */
  private readonly opened = new Map<string, string>();
  private open(sealed: string): string {
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      plain = this.rt.secrets.open(sealed);
      if (this.opened.size > 10_000) this.opened.clear();
      this.opened.set(sealed, plain);
    }
    return plain;
  }

  private async attempt(job: Job): Promise<void> {
    await this.rt.refresh();
    const docs = this.rt.docs;
    const endpoint = await docs
      .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
      .findOne({ _id: job.endpointId });
    const key = endpoint
      ? await docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: endpoint.credential_id })
      : null;
    const delivery = await docs
      .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
      .findOne({ _id: job.deliveryId });
    // Someone else moved this delivery on (another publisher, a replay): not ours to send.
    if (delivery && (delivery.revision !== job.expectedRevision || delivery.status !== 'pending')) return;
    // Embedded, refresh() above has applied every append of this process, the fan-out or request this
    // job comes from included: a delivery the log holds has its document. Without one, the log never
    // held this delivery (a second guard behind fanOut's wroteFanOut): never sent, nor recorded.
    // Scaled out, MongoDB's read models may lag behind the log: a delivery without one yet is sent.
    if (!delivery && this.embedded) {
      this.rt.logger.error(
        { delivery: job.deliveryId, endpoint: job.endpointId },
        'webhook delivery not sent: no document for it after refresh (if the log holds it, the sweeper asks for it once its lease runs out)',
      );
      return;
    }
    let cancel:
      | AttemptError
      | 'scope_removed'
      | 'api_option_off'
      | 'customer_erased'
      | SettingsRefusal
      | null = null;
    // Disabled, no longer subscribed to this type, or migrated past this legacy body: the endpoint's
    // settings now refuse it (changing them cancels what is pending; this catches what that missed).
    const refused = endpoint && delivery ? refusedBySettings(endpoint, delivery.event_type) : null;
    if (!endpoint) cancel = 'endpoint_gone';
    else if (refused) cancel = refused;
    else if (endpoint.disabled) cancel = 'endpoint_disabled';
    // Never sent on behalf of a revoked credential, even before its endpoints' deletion lands (nor of a
    // token its application's cut-off bars, before its sweep revokes it).
    else if (!key || keyWithdrawn(key)) cancel = 'credential_revoked';
    // Nor to a third-party application's endpoint while the restaurant has its API option off.
    else if (await barredByApiOption(docs, key, await findRestaurant(docs, key.restaurant_id)))
      cancel = 'api_option_off';
    // Nor a body built with scopes the credential no longer holds (a retry or a resend after a scope
    // was taken away). Scaled out, a first attempt whose document MongoDB does not show yet was
    // checked at its fan-out, moments ago.
    else if (delivery && !scopesReadDelivery(key.scopes, delivery.event_type, delivery.payload))
      cancel = 'scope_removed';
    // A body describing a customer waited here (a slow endpoint's backlog) while an erasure came:
    // read again from the log, it is erased, and the delivery is over.
    else if (job.customerId !== null && delivery && (await this.erasedMeanwhile(job, delivery)))
      cancel = 'customer_erased';
    if (cancel || !endpoint) {
      await this.record(job, {
        type: 'WebhookDeliveryCanceled',
        data: {
          delivery_id: job.deliveryId,
          endpoint_id: job.endpointId,
          restaurant_id: job.restaurantId,
          reason: cancel,
          at: this.rt.clock.now().toISOString(),
        },
      });
      return;
    }
    const now = this.rt.clock.now();
    const secrets = [endpoint.secret, ...oldSecretsSigning(endpoint, now)].map((s) => this.open(s));
    const logId = fastId('whl');
    const response = await sendAttempt({
      url: endpoint.url,
      body: job.body,
      secrets,
      timestamp: Math.floor(now.getTime() / 1000),
      attempt: job.attempt,
      deliveryId: job.deliveryId,
      logId,
      eventTime: job.eventTime,
      othersData: job.othersData,
      customHeaders: openHeaders(endpoint.headers, { open: (v) => this.open(v) }),
      allowPrivate: this.rt.config.webhookAllowPrivateTargets,
      timeoutMs: this.options.timeoutMs,
      resolver: this.options.resolver,
      signal: this.stopSignal,
    });
    if (response.stopped) {
      // Cut by a stop before an answer came: nothing is recorded (the endpoint may have it or not), and
      // the same attempt is asked for again in the log, so the next start (or, scaled out, another
      // process) makes it at once (docs/WEBHOOKS.md: at least once, same attempt number).
      await this.handBack(job, now.toISOString());
      return;
    }
    this.attemptsMade++;
    this.onAttempt?.(job.deliveryId, response);
    const seriesStartedAt =
      job.attempt === job.seriesStart || !job.seriesStartedAt ? now : new Date(job.seriesStartedAt);
    const step = nextStep(response, job.attempt, seriesStartedAt, job.deliveryId, job.seriesStart);
    await this.record(job, {
      type: 'WebhookAttemptRecorded',
      data: {
        delivery_id: job.deliveryId,
        endpoint_id: job.endpointId,
        restaurant_id: job.restaurantId,
        attempt: job.attempt,
        log_id: logId,
        at: now.toISOString(),
        duration_ms: response.durationMs,
        status_code: response.status,
        error: response.error,
        response_excerpt: response.bodyExcerpt,
        response_truncated: response.excerptTruncated,
        ...(job.customerId === null ? {} : { customer_id: job.customerId }),
        outcome: step.outcome,
        next_attempt_at: step.nextAt?.toISOString() ?? null,
      },
    });
  }

  /**
   * Appends against the revision the attempt was made for. A conflict caused only by a request for this
   * very attempt (the sweeper's lease ran out while the attempt was queued) is absorbed; anything else
   * means another worker owns the delivery now, and this record is dropped.
   */
  private async record(job: Job, event: { type: string; data: Record<string, unknown> }): Promise<void> {
    const stream = deliveryStream(job.deliveryId);
    let expected = job.expectedRevision;
    for (let i = 0; i < 3; i++) {
      try {
        await this.rt.events.append(
          stream,
          [{ ...event, metadata: { ...meta, restaurant_id: job.restaurantId } }],
          expected < 0 ? NO_STREAM : expected,
        );
        return;
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        const after = (await this.rt.events.readStream(stream)).filter((e) => e.revision > expected);
        const onlyRequests = after.every(
          (e) =>
            e.type === 'WebhookAttemptRequested' && (e.data as { attempt: number }).attempt === job.attempt,
        );
        if (!after.length || !onlyRequests) return;
        expected = (after.at(-1) as RecordedEvent).revision;
      }
    }
  }

  /**
   * Asks for every attempt that is due and that nobody holds: retries whose time has come (service
   * clock, so TEST_CLOCK moves them), and first or requested attempts whose worker let the lease run out
   * (it crashed). Each request is appended against the delivery's revision: one sweeper wins.
   */
  async sweep(limit = 500): Promise<number> {
    if (this.stopped) return 0;
    if (this.embedded) await this.rt.projections.catchUp();
    const now = this.rt.clock.now().toISOString();
    // An endpoint's queue takes what it has room for; the rest stays due for a later sweep.
    const room = new Map<string, number>();
    for (const [id, q] of this.queues) room.set(id, this.maxWaiting - q.waiting.length);
    const full = new Set([...room].filter(([, n]) => n <= 0).map(([id]) => id));
    // The batch counts only the deliveries asked for: one an endpoint's queue has no room for (an
    // endpoint's overflow, left in the log) or one this process holds (queued behind a slow endpoint,
    // its lease run out) takes no place, or a large backlog on one endpoint hides every other
    // endpoint's retry until it drains. Read a page at a time, leaving out each endpoint found full.
    const seen = new Set<string>();
    let requested = 0;
    let asked = 0;
    for (let page = 0; asked < limit && !this.stopped && page < 100; page++) {
      // Room for the held ones the query can return: a full endpoint's are left out with it.
      let held = 0;
      for (const [id, q] of this.queues) if (!full.has(id)) held += q.active + q.waiting.length;
      const size = limit - asked + held + seen.size;
      const due = await this.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).find(
        {
          status: 'pending',
          sweep_after: { $lte: now },
          ...(full.size ? { endpoint_id: { $nin: [...full] } } : {}),
        },
        { sort: { sweep_after: 1 }, limit: size },
      );
      let filled = false;
      for (const d of due) {
        if (asked >= limit || this.stopped) break;
        if (this.held.has(d._id) || seen.has(d._id) || full.has(d.endpoint_id)) continue;
        seen.add(d._id);
        const left = room.get(d.endpoint_id) ?? this.maxWaiting;
        if (left <= 0) {
          full.add(d.endpoint_id);
          filled = true;
          continue;
        }
        room.set(d.endpoint_id, left - 1);
        asked++;
        if (await this.ask(d, d.next_attempt, this.reasonFor(d), now)) requested++;
      }
      // A short page is the last; a full one without an endpoint newly full held only what was asked for.
      if (due.length < size || !filled) break;
    }
    if (requested && this.embedded) await this.rt.projections.catchUp();
    await this.endOverflows(now);
    return requested;
  }

  /**
   * An overflowed endpoint whose backlog due in the log is all asked for (or held here) takes its new
   * fan-outs in its queue again. One asked for in this sweep but not yet queued keeps the endpoint
   * overflowed until the next sweep; one still in its lease (a fan-out left to the log moments ago) is
   * asked for by a later sweep, in age order, so a new event overtakes it by at most a queue and a lease.
   */
  private async endOverflows(now: string): Promise<void> {
    for (const id of [...this.overflowed]) {
      if (this.stopped) return;
      const q = this.queues.get(id);
      const backlog = await this.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .find(
          { endpoint_id: id, status: 'pending', sweep_after: { $lte: now } },
          { limit: (q ? q.active + q.waiting.length : 0) + 1 },
        );
      if (backlog.every((d) => this.held.has(d._id))) this.overflowed.delete(id);
    }
  }

  /**
   * Embedded, before the publisher follows the log: the attempts a previous run of this process handed
   * out (a fan-out's first, a requested one) and never recorded are asked for at once, rather than
   * when their lease runs out. A stop drops the attempts still queued (stop() asks for them again as it
   * stops, but a kill, or a store that refused that, leaves them), and the checkpoint may already be
   * past the event that asked for them, so no replay makes them. Embedded, one process runs the
   * `webhooks` role on a DATA_DIR (its checkpoint is that process's), so a lease nobody holds in this
   * process is held by nobody: asking again cannot double an attempt in flight. Each request is
   * appended against the delivery's revision, so a request replayed from the log after it finds the
   * delivery moved on and makes nothing (publisher.attemptRequested), and only this new one is
   * attempted. A lease is an attempt due now with `sweep_after` later (a scheduled retry has both at
   * its time); the clock is not compared, as a restart resets TEST_CLOCK's offset. Scaled out, leases
   * are shared by several live processes: not done (there, a killed process's lease runs out).
   */
  async askForUnfinished(): Promise<number> {
    if (this.stopped || !this.embedded) return 0;
    await this.rt.projections.catchUp();
    const now = this.rt.clock.now().toISOString();
    // Each endpoint's queue takes what it has room for, oldest first, as the sweeper gives it; the rest
    // wait for the sweeper (their lease runs out), the endpoint's new fan-outs behind them.
    const room = new Map<string, number>();
    for (const [id, q] of this.queues) room.set(id, this.maxWaiting - q.waiting.length);
    const asking: Asked[] = [];
    const chosen = new Set<string>();
    for await (const page of this.pendingByAge()) {
      for (const d of page) {
        if (
          chosen.has(d._id) ||
          this.held.has(d._id) ||
          d.next_attempt_at === null ||
          d.sweep_after === null ||
          d.next_attempt_at >= d.sweep_after
        )
          continue;
        const left = room.get(d.endpoint_id) ?? this.maxWaiting;
        if (left <= 0) {
          this.overflowed.add(d.endpoint_id);
          this.leaveToLog(d.endpoint_id);
          continue;
        }
        room.set(d.endpoint_id, left - 1);
        chosen.add(d._id);
        // What the request needs, not the document (its attempts, their excerpts): a hung endpoint's
        // tens of thousands are held here until asked for.
        asking.push({
          _id: d._id,
          endpoint_id: d.endpoint_id,
          restaurant_id: d.restaurant_id,
          revision: d.revision,
          next_attempt: d.next_attempt,
          attempt_count: d.attempt_count,
        });
      }
    }
    let requested = 0;
    for (let i = 0; i < asking.length && !this.stopped; i += 500) {
      const asked = await Promise.all(
        asking.slice(i, i + 500).map((d) => this.ask(d, d.next_attempt, this.reasonFor(d), now)),
      );
      requested += asked.filter(Boolean).length;
    }
    if (requested) await this.rt.projections.catchUp();
    return requested;
  }

  /**
   * Every pending delivery, oldest `sweep_after` first, a page of UNFINISHED_PAGE at a time, the event
   * loop free between pages: a hung endpoint's tens of thousands were one read (each document copied
   * at once) and one hold of the loop at every start. A full page gives back its trailing run of one
   * `sweep_after` value, whose documents are then read by `_id` (`_id > the last read`: the embedded
   * store reads those of one key in _id order), then the next page starts after that value; so a page
   * costs about its size, however many share a value. Every delivery one start asks for gets the same
   * `sweep_after` (now + lease): a restart within the lease paged through them by skip, re-reading the
   * run before each page (30,000 ties: 495,000 documents examined). Documents moved meanwhile (the
   * sweeper runs beside a start) may be read twice (the caller skips those it took) or, one moved
   * behind where the reads are, left unread: its lease runs out and the sweeper asks for it.
   */
  private async *pendingByAge(): AsyncGenerator<WebhookDeliveryDoc[]> {
    const col = this.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
    // Every string is at or after '' (a pending delivery's sweep_after always is one).
    let after: { $gte: string } | { $gt: string } = { $gte: '' };
    while (!this.stopped) {
      const page = await col.find(
        { status: 'pending', sweep_after: after },
        { sort: { sweep_after: 1 }, limit: UNFINISHED_PAGE },
      );
      if (page.length < UNFINISHED_PAGE) {
        if (page.length) yield page;
        return;
      }
      const last = (page.at(-1) as WebhookDeliveryDoc).sweep_after as string;
      const before = page.filter((d) => d.sweep_after !== last);
      if (before.length) yield before;
      await setImmediate();
      // The run of `last`, whole, by _id.
      let lastId: string | undefined;
      while (!this.stopped) {
        const run = await col.find(
          { status: 'pending', sweep_after: last, ...(lastId === undefined ? {} : { _id: { $gt: lastId } }) },
          { sort: { _id: 1 }, limit: UNFINISHED_PAGE },
        );
        if (run.length) yield run;
        await setImmediate();
        if (run.length < UNFINISHED_PAGE) break;
        lastId = (run.at(-1) as WebhookDeliveryDoc)._id;
      }
      after = { $gt: last };
    }
  }

  /** Appends a request for `attempt` against the delivery's revision; false when it moved meanwhile. */
  private async ask(
    d: { _id: string; endpoint_id: string; restaurant_id: string; revision: number },
    attempt: number,
    reason: 'retry' | 'recovery' | 'queue_full',
    at: string,
  ): Promise<boolean> {
    try {
      await this.rt.events.append(
        deliveryStream(d._id),
        [
          {
            type: 'WebhookAttemptRequested',
            data: {
              delivery_id: d._id,
              endpoint_id: d.endpoint_id,
              restaurant_id: d.restaurant_id,
              attempt,
              reason,
              at,
            },
            metadata: { ...meta, restaurant_id: d.restaurant_id },
          },
        ],
        d.revision < 0 ? NO_STREAM : d.revision,
      );
      return true;
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) return false;
      throw err;
    }
  }

  /** One endpoint's attempts queued or in flight (tests). */
  pendingFor(endpointId: string): number {
    const q = this.queues.get(endpointId);
    return q ? q.active + q.waiting.length : 0;
  }

  /** Attempts queued or in flight (benchmarks, tests). */
  get pending(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.active + q.waiting.length;
    return n;
  }

  /**
   * Stops taking work and waits for attempts in flight to be recorded, at most STOP_GRACE_MS (or less,
   * when the service's stop cuts them first through rt.stopping): an attempt still waiting for its
   * answer then is cut and handed back (asked for again in the log, nothing recorded), so a stop never
   * waits out an attempt's 12 s timeout. The attempts still queued are not made here: each is asked
   * for again in the log too (against the revision it was for, so never over another worker's), where
   * whoever follows the log makes it at once (scaled out, another process; embedded, the next start,
   * as the checkpoint is saved before these requests) instead of when its lease runs out.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    const dropped: Job[] = [];
    for (const q of this.queues.values()) dropped.push(...q.waiting.splice(0));
    for (const job of dropped) this.held.delete(job.deliveryId);
    const grace = setTimeout(() => this.cut.abort(), STOP_GRACE_MS);
    try {
      await Promise.all(this.running);
    } finally {
      clearTimeout(grace);
    }
    const at = this.rt.clock.now().toISOString();
    await Promise.all(dropped.map((job) => this.handBack(job, at)));
  }

  /** Asks again in the log for an attempt this process will not make (a stop); logged, never thrown. */
  private async handBack(job: Job, at: string): Promise<void> {
    await this.ask(
      {
        _id: job.deliveryId,
        endpoint_id: job.endpointId,
        restaurant_id: job.restaurantId,
        revision: job.expectedRevision,
      },
      job.attempt,
      job.attempt === 1 ? 'recovery' : 'retry',
      at,
    ).catch((err: Error) =>
      // Left to its lease (or, embedded, to the next start): a stop does not fail for it.
      this.rt.logger.error(
        { err: { message: err.message }, delivery: job.deliveryId },
        'webhook attempt not handed back at stop',
      ),
    );
  }
}
