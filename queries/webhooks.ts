// Reading webhook endpoints and their deliveries. Partners see the endpoints of their own credential
// (or, for OAuth tokens, of their application) in their restaurant: anything else answers 404.

import { deliveryType, TEST_EVENT_TYPE } from '../commands/webhook-deliveries/events';
import { previousSecretSigns } from '../commands/webhook-endpoints/decide';
import {
  defaultOwner,
  type EndpointViewer,
  V1_EVENT_TYPES,
  visibleTo,
} from '../commands/webhook-endpoints/events';
import { maskedHeaders } from '../commands/webhook-endpoints/header-secrets';
import {
  lastAttemptAt,
  WEBHOOK_DELIVERIES,
  type WebhookDeliveryDoc,
} from '../projections/webhook-deliveries';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../projections/webhook-endpoints';
import { notFound } from '../src/core/errors';
import type { Collection, DocumentStore, Filter } from '../src/ports/document-store';
import { LEGACY_TYPE } from '../src/webhooks/payloads';
import { HISTORY_DAYS } from '../src/webhooks/schedule';

/** Who may see an endpoint: the restaurant, and the owner unless null (a manager, an operator). */
export type EndpointScope = EndpointViewer;

export function ownerOf(credential: {
  _id: string;
  type?: string;
  application?: { id: string } | null;
}): string {
  return credential.type === 'OAUTH' && credential.application
    ? `app:${credential.application.id}`
    : defaultOwner(credential._id);
}

const endpoints = (docs: DocumentStore) => docs.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS);

export async function getEndpoint(
  docs: DocumentStore,
  scope: EndpointScope,
  id: string,
): Promise<WebhookEndpointDoc> {
  const doc = await endpoints(docs).findOne({ _id: id });
  if (!doc || !visibleTo(doc, scope)) throw notFound(`webhook endpoint ${id}`);
  return doc;
}

export async function listEndpoints(
  docs: DocumentStore,
  scope: EndpointScope,
  page: { page: number; perPage: number },
): Promise<{ items: WebhookEndpointDoc[]; total: number }> {
  const filter: Filter = {};
  if (scope.restaurantId !== null) filter.restaurant_id = scope.restaurantId;
  if (scope.owner !== null) filter.owner = scope.owner;
  const [items, total] = await Promise.all([
    endpoints(docs).find(filter, {
      sort: { created_at: 1, _id: 1 },
      skip: (page.page - 1) * page.perPage,
      limit: page.perPage,
    }),
    endpoints(docs).count(filter),
  ]);
  return { items, total };
}

/**
 * The partner representation: never the secret. `secret_rotation` only while the previous secret still
 * signs (a rotation's grace period, `previousSecretSigns`): past it, deliveries carry one v1= again.
 */
export function presentEndpoint(doc: WebhookEndpointDoc, now: Date) {
  return {
    id: doc._id,
    url: doc.url,
    description: doc.description,
    enabled_events: doc.enabled_events,
    // Names only: the values are secrets, sealed since 2026-11-28 (header-secrets.ts).
    headers: maskedHeaders(doc.headers),
    disabled: doc.disabled,
    api_version: doc.api_version,
    secret_rotation:
      doc.previous_secret && previousSecretSigns(doc, now)
        ? { previous_secret_expires_at: doc.previous_secret.expires_at }
        : null,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}

export const historyStart = (now: Date) => new Date(now.getTime() - HISTORY_DAYS * 86_400_000).toISOString();

/**
 * The deliveries the 30-day history shows (docs/WEBHOOKS.md: every attempt of every series is shown for
 * 30 days): created in the last 30 days, attempted in them (a resend of an older delivery), or still
 * being attempted (a resend asked for and not made yet). Keyed on its creation alone, a delivery resent
 * near the end of its 30 days left the history (404, unlisted, pruned) while its resend was retried.
 */
export const inHistory = (now: Date): Filter => {
  const start = historyStart(now);
  return {
    $or: [{ created_at: { $gte: start } }, { 'attempts.at': { $gte: start } }, { status: 'pending' }],
  };
};

/** inHistory for one document (the same rule). */
export function shownInHistory(
  doc: { created_at?: unknown; status?: unknown; attempts?: unknown },
  now: Date,
): boolean {
  const start = historyStart(now);
  if (doc.status === 'pending') return true;
  if (typeof doc.created_at === 'string' && doc.created_at >= start) return true;
  return (
    Array.isArray(doc.attempts) &&
    doc.attempts.some((a: { at?: unknown }) => typeof a?.at === 'string' && a.at >= start)
  );
}

export async function listDeliveries(
  docs: DocumentStore,
  endpointId: string,
  q: {
    status?: string;
    event_type?: string;
    event_id?: string;
    limit: number;
    after?: { created_at: string; id: string };
  },
  now: Date,
): Promise<{ items: WebhookDeliveryDoc[]; hasMore: boolean }> {
  const filter: Filter = { endpoint_id: endpointId, $and: [inHistory(now)] };
  if (q.status) filter.status = q.status;
  // A test delivery is kept as `test`; its body's type (what the API shows, and documents) finds it too.
  if (q.event_type) filter.event_type = deliveryType(q.event_type, 'stored');
  if (q.event_id) filter.event_id = q.event_id;
  if (q.after)
    (filter.$and as Filter[]).push({
      $or: [
        { created_at: { $lt: q.after.created_at } },
        { created_at: q.after.created_at, _id: { $lt: q.after.id } },
      ],
    });
  const items = await docs
    .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
    .find(filter, { sort: { created_at: -1, _id: -1 }, limit: q.limit + 1 });
  return { items: items.slice(0, q.limit), hasMore: items.length > q.limit };
}

/**
 * The endpoint's latest finished deliveries that failed in a row (tests and canceled ones aside), in
 * the 30-day history (inHistory: a resent one is in it 30 days after its last attempt), ordered by
 * their last attempt: how many (at most `cap`, `more` when there are more) and the oldest one's
 * creation. Null when the delivery attempted last of them succeeded, or none finished. A delivery
 * resent and succeeded recently ends a streak, whenever it was created (ordered by creation, it sat
 * below the failures and did not); one resent and failed again joins it. What the dashboard warns a
 * manager with: retries end after about 4 hours, and nothing else tells that an endpoint is down.
 * It reads the latest success and the failures attempted after it (the `finished` index, by
 * `last_attempt_at`), not the endpoint's 30 days, once every finished delivery of the endpoint keeps
 * its `last_attempt_at` (version 3 of webhook_deliveries; before, the ones attempted since).
 */
export async function failingStreak(
  docs: DocumentStore,
  endpointId: string,
  now: Date,
  cap = 100,
): Promise<{ count: number; more: boolean; since: string } | null> {
  const col = docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
  // The history's own rule: a delivery resent near its 30th day that failed again is listed, and
  // counted here as it is listed.
  const shown = (status: string, extra: Filter = {}): Filter => ({
    endpoint_id: endpointId,
    test: false,
    status,
    $and: [inHistory(now), extra],
  });
  // A finished delivery without last_attempt_at (versions 1 and 2, made before it was kept) would be
  // missed by its order: such an endpoint is read as before. One index look-up, which finds none once
  // version 3 serves.
  const unordered = await col.findOne(
    { endpoint_id: endpointId, test: false, status: { $in: ['failed', 'succeeded'] }, last_attempt_at: null },
    { projection: { _id: 1 } },
  );
  const lastSuccess = unordered
    ? await lastSuccessScanning(col, shown)
    : await lastSuccessOrdered(col, shown);
  // A failure attempted after the last success. last_attempt_at is at or after every attempt, so its
  // range keeps every such failure (the rule is still 'attempts.at') and narrows by the index.
  const after: Filter = !lastSuccess
    ? {}
    : unordered
      ? { 'attempts.at': { $gt: lastSuccess } }
      : { $and: [{ last_attempt_at: { $gt: lastSuccess } }, { 'attempts.at': { $gt: lastSuccess } }] };
  const streak = await col.find(shown('failed', after), {
    sort: { created_at: -1, _id: -1 },
    limit: cap + 1,
  });
  const kept = streak.slice(0, cap);
  const first = kept.at(-1);
  if (!first) return null;
  return { count: kept.length, more: streak.length > cap, since: first.created_at };
}

type Shown = (status: string, extra?: Filter) => Filter;

/** The last attempt of any success ('' when none), by the `finished` index: one document. */
async function lastSuccessOrdered(col: Collection<WebhookDeliveryDoc>, shown: Shown): Promise<string> {
  const [latest] = await col.find(shown('succeeded'), { sort: { last_attempt_at: -1 }, limit: 1 });
  return latest ? lastAttemptAt(latest) : '';
}

/**
 * The same where finished deliveries lack `last_attempt_at` (made before it was kept): the latest
 * created success's last attempt (by the `by_endpoint` index), then any attempted after it (resent
 * since: few), each read through the endpoint's deliveries.
 */
async function lastSuccessScanning(col: Collection<WebhookDeliveryDoc>, shown: Shown): Promise<string> {
  const [latest] = await col.find(shown('succeeded'), { sort: { created_at: -1, _id: -1 }, limit: 1 });
  let lastSuccess = latest ? lastAttemptAt(latest) : '';
  if (latest)
    for (const d of await col.find(shown('succeeded', { 'attempts.at': { $gt: lastSuccess } })))
      if (lastAttemptAt(d) > lastSuccess) lastSuccess = lastAttemptAt(d);
  return lastSuccess;
}

export async function getDelivery(
  docs: DocumentStore,
  endpointId: string,
  id: string,
  now: Date,
): Promise<WebhookDeliveryDoc> {
  const doc = await docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).findOne({ _id: id });
  if (!doc || doc.endpoint_id !== endpointId || !shownInHistory(doc, now)) throw notFound(`delivery ${id}`);
  return doc;
}

/**
 * The types a delivery is of, as the API and the pages name them: the v1 types, the legacy format's,
 * and a test's. The list both the API's filter (400 invalid_enum) and the dashboard's (a message on the
 * page) accept, with `test` (what the history showed for a test before).
 */
export const DELIVERY_EVENT_TYPES: readonly string[] = [...V1_EVENT_TYPES, LEGACY_TYPE, TEST_EVENT_TYPE];

export function presentDelivery(doc: WebhookDeliveryDoc) {
  return {
    id: doc._id,
    endpoint_id: doc.endpoint_id,
    event_id: doc.event_id,
    // The type the body carried: a test delivery's is webhook_endpoint.test (kept as `test`).
    event_type: doc.test ? TEST_EVENT_TYPE : deliveryType(doc.event_type, 'shown'),
    test: doc.test,
    status: doc.status,
    created_at: doc.created_at,
    next_attempt_at: doc.next_attempt_at,
    attempts: doc.attempts.map((a) => ({
      attempt: a.attempt,
      log_id: a.log_id,
      at: a.at,
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error,
    })),
  };
}
