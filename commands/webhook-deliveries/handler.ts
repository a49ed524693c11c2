// Resend and test, for partners, managers (dashboard) and operators alike: the actor is in `meta`.

import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import { CUSTOMERS } from '../../projections/customer-docs';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import type { WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { keyWithdrawn } from '../../queries/api-keys';
import { barredByApiOption } from '../../queries/oauth';
import { findRestaurant } from '../../queries/restaurants';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { newId } from '../../src/core/ids';
import type { WriteDeps } from '../../src/core/write-deps';
import type { DocumentStore } from '../../src/ports/document-store';
import { NO_STREAM, WrongExpectedRevisionError } from '../../src/ports/event-store';
import type { Secrets } from '../../src/secrets';
import { type AttemptResponse, sendAttempt } from '../../src/webhooks/deliver';
import { deliveryBodyErased } from '../../src/webhooks/payloads';
import { oldSecretsSigning, refusedBySettings, scopesReadDelivery } from '../webhook-endpoints/decide';
import type { EndpointSettings } from '../webhook-endpoints/events';
import { openHeaders } from '../webhook-endpoints/header-secrets';
import { deliveryStream, TEST_EVENT_TYPE } from './events';

/**
 * Resends one delivery may have (`RESEND_LIMIT` in docs/WEBHOOKS.md): each starts a series of up to 9
 * attempts, each kept in the delivery's history document, so without a bound resends alone (a partner's
 * script, the dashboard, the CLI) would grow one document without end — past MongoDB's 16 MB a
 * projection's write is refused and the scaled-out projector stops every read model. 20 resends (at most
 * 189 attempts, under a megabyte even with every answer's excerpt at its longest) leave far more than a
 * receiver being repaired needs; beyond them a test delivery or a new event is the way to check it.
 */
export const RESEND_LIMIT = 20;

/** Resends the delivery's own stream holds (never the read model: CONTRIBUTING, decisions). */
export async function resendsMade(events: WriteDeps['events'], deliveryId: string): Promise<number> {
  let n = 0;
  for (const e of await events.readStream(deliveryStream(deliveryId)))
    if (e.type === 'WebhookAttemptRequested' && (e.data as { reason?: unknown }).reason === 'resend') n++;
  return n;
}

/**
 * Sends a finished delivery again (a new series of attempts, numbered after the last one, retried on
 * the same schedule). A delivery still being retried answers 409 (details.reason `delivery_pending`):
 * it is already on its way. So does a test delivery (`test_delivery`), one the endpoint's settings
 * refuse now (`endpoint_disabled`, `event_type_disabled`, `endpoint_migrated`), one
 * resent `RESEND_LIMIT` times already (details.reason `resend_limit_reached`), one of an endpoint
 * paused by the restaurant's API option (details.reason `api_option_off`), and one the endpoint's
 * credential no longer sends (details.reason `credential_revoked`, `scope_removed`). A resend that
 * loses the race with another (the stream moved on since the read) answers `delivery_changed`.
 */
export async function resendDelivery(
  deps: WriteDeps & { docs: DocumentStore },
  doc: WebhookDeliveryDoc,
  endpoint: Pick<WebhookEndpointDoc, 'disabled' | 'api_version' | 'enabled_events' | 'credential_id'>,
  meta: CommandMeta,
) {
  // Every refusal names its reason in details.reason: a partner acts on a code, not on a message.
  if (doc.test)
    throw new ApiError(409, 'RESOURCE_CONFLICT', 'A test delivery cannot be resent; send a new test', {
      reason: 'test_delivery',
    });
  // Refused at once rather than accepted and canceled at its attempt: the endpoint takes it no more.
  const refused = refusedBySettings(endpoint, doc.event_type);
  if (refused)
    throw new ApiError(409, 'RESOURCE_CONFLICT', RESEND_REFUSALS[refused].replace('{type}', doc.event_type), {
      reason: refused,
    });
  // Refused at once too: the publisher would cancel it at its attempt (credential_revoked, scope_removed).
  const byCredential = refusedByCredential(await credentialOf(deps.docs, endpoint), doc);
  if (byCredential)
    throw new ApiError(409, 'RESOURCE_CONFLICT', CREDENTIAL_REFUSALS[byCredential], { reason: byCredential });
  // Refused at once too: the publisher would cancel it at its attempt (api_option_off).
  const paused = await pausedByApiOption(deps.docs, endpoint);
  if (paused)
    throw new ApiError(409, 'RESOURCE_CONFLICT', resendPausedText(paused), {
      reason: 'api_option_off',
    });
  // Refused at once too: the publisher would find its body erased and cancel it (docs/AUDIT.md).
  if (await deliveryBodyErased(deps.events, doc))
    throw new ApiError(409, 'RESOURCE_CONFLICT', RESEND_ERASED, { reason: 'customer_erased' });
  if (doc.status === 'pending')
    throw new ApiError(
      409,
      'RESOURCE_CONFLICT',
      'This delivery is still being attempted; resend it once it has succeeded or failed',
      { reason: 'delivery_pending' },
    );
  const made = await resendsMade(deps.events, doc._id);
  if (made >= RESEND_LIMIT)
    throw new ApiError(409, 'RESOURCE_CONFLICT', resendLimitText(made), {
      reason: 'resend_limit_reached',
      limit: RESEND_LIMIT,
      resends: made,
    });
  try {
    const result = await deps.events.append(
      deliveryStream(doc._id),
      [
        {
          type: 'WebhookAttemptRequested',
          data: {
            delivery_id: doc._id,
            endpoint_id: doc.endpoint_id,
            restaurant_id: doc.restaurant_id,
            attempt: doc.attempt_count + 1,
            reason: 'resend',
            at: deps.clock.now().toISOString(),
          },
          metadata: { ...meta, restaurant_id: doc.restaurant_id },
        },
      ],
      doc.revision < 0 ? NO_STREAM : doc.revision,
    );
    return { position: result.position };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError)
      throw new ApiError(409, 'RESOURCE_CONFLICT', 'The delivery changed meanwhile; read it again', {
        reason: 'delivery_changed',
      });
    throw err;
  }
}

/**
 * The application whose endpoint this is, when the restaurant's API option pauses it (a third-party
 * application while the option is off: queries/oauth.ts barredByApiOption, read as the publisher reads
 * it, through the endpoint's credential and that credential's restaurant); else null.
 */
export async function pausedByApiOption(
  docs: DocumentStore,
  endpoint: Pick<WebhookEndpointDoc, 'credential_id'>,
): Promise<string | null> {
  const key = await docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: endpoint.credential_id });
  if (key?.type !== 'OAUTH') return null;
  return (await barredByApiOption(docs, key, await findRestaurant(docs, key.restaurant_id)))
    ? (key.application?.name ?? key.name)
    : null;
}

const credentialOf = (docs: DocumentStore, endpoint: Pick<WebhookEndpointDoc, 'credential_id'>) =>
  docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: endpoint.credential_id });

/**
 * Whether the endpoint's credential, now, no longer sends this delivery, as the publisher checks it
 * before each attempt (src/webhooks/publisher.ts): revoked (its endpoints' deletion, which follows the
 * revocation, may not have landed yet), or without a scope the body needs (scopesReadDelivery: a scope
 * taken away since the fan-out). Null when it sends it, or when the read models show no such credential.
 */
export function refusedByCredential(
  key: Pick<ApiKeyDoc, 'revoked_at' | 'cut_off_at' | 'scopes'> | null,
  d: Pick<WebhookDeliveryDoc, 'event_type' | 'payload'>,
): 'credential_revoked' | 'scope_removed' | null {
  // No document for it (read models behind the log, scaled out): the publisher decides at the attempt.
  if (!key) return null;
  if (keyWithdrawn(key)) return 'credential_revoked';
  return scopesReadDelivery(key.scopes, d.event_type, d.payload) ? null : 'scope_removed';
}

/** Why the credential no longer sends a delivery (the API's message, the page's words). */
const CREDENTIAL_REFUSALS = {
  credential_revoked:
    "The endpoint's credential has been revoked: nothing is sent on its behalf any more (its endpoints are deleted)",
  scope_removed:
    "This delivery's body needs a scope the endpoint's credential no longer has (its event type's read scope, or RESERVATIONS_READ_SENSITIVE for contact details): it cannot be sent again",
} as const;

/** Why a delivery of a paused endpoint is not resent (the API's message, the page's words). */
const resendPausedText = (app: string) =>
  `The endpoint is paused: ${app} is a third-party application and the restaurant's API option is off, so nothing is sent to it, resends included, until the option is on again`;

/** Why a delivery describing an erased customer is not resent (the API's message, the page's alert). */
export const RESEND_ERASED =
  'This delivery described a customer who has since been erased: its body is erased with them and it cannot be sent again';

/**
 * Why the dashboard offers no Resend for each of these deliveries (id → the reason in a manager's
 * words), for those resendDelivery would refuse: tests, the endpoint's settings, its credential
 * (revoked, a scope taken away), a body erased with its customer (deliveryBodyErased, as the command),
 * the resend limit. Pending ones are left out (they are on their way: no button, nothing to explain).
 */
export async function resendRefusals(
  deps: WriteDeps & { docs: DocumentStore },
  endpoint: Pick<WebhookEndpointDoc, 'disabled' | 'api_version' | 'enabled_events' | 'credential_id'>,
  docs: readonly WebhookDeliveryDoc[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const open = docs.filter((d) => !d.test && d.status !== 'pending');
  const key = open.length ? await credentialOf(deps.docs, endpoint) : null;
  const paused = open.length ? await pausedByApiOption(deps.docs, endpoint) : null;
  for (const d of open) {
    const refused = refusedBySettings(endpoint, d.event_type);
    const byCredential = refusedByCredential(key, d);
    if (refused) out.set(d._id, PAGE_REFUSALS[refused].replace('{type}', d.event_type));
    else if (byCredential) out.set(d._id, CREDENTIAL_REFUSALS[byCredential]);
    else if (paused) out.set(d._id, resendPausedText(paused));
    // The command's own test (the fan-out, not the customer's key): a body sealed under another
    // customer than d.customer_id reads erased with that one, and the page must say what the API does.
    else if (await deliveryBodyErased(deps.events, d)) out.set(d._id, RESEND_ERASED);
    // Only a delivery resent before has started a later series: the others need no read of their stream.
    else if (d.series_start > 1) {
      const made = await resendsMade(deps.events, d._id);
      if (made >= RESEND_LIMIT) out.set(d._id, resendLimitText(made));
    }
  }
  return out;
}

/**
 * The attempts of these deliveries whose answer was erased with the customer it was sealed for
 * (delivery id → attempt numbers): their record reads erased in the log (`erased: true`,
 * src/privacy/seal.ts), which only an answer with a body can (a blank one is not sealed). The read model
 * keeps such an answer as null, as it does an answer without a body: the dashboard says which it was.
 * Only deliveries describing a customer who is gone, with an answer kept as null, are read: one query
 * of the customers read model first finds which of the page's customers are no longer there (an
 * erasure deletes the document), so the deliveries of live customers (an endpoint answering 204 or
 * an empty 200 keeps every answer as null) cost no read of their stream. A customer.deleted delivery
 * always describes an erased customer (its fan-out names them; the document keeps no customer_id).
 */
export async function erasedAnswers(
  deps: { events: WriteDeps['events']; docs: DocumentStore },
  docs: readonly WebhookDeliveryDoc[],
): Promise<Map<string, Set<number>>> {
  const out = new Map<string, Set<number>>();
  const candidates = docs.filter(
    (d) =>
      !d.test &&
      (typeof d.customer_id === 'string' || d.event_type === 'customer.deleted') &&
      d.attempts.some((a) => a.status_code !== null && a.response_excerpt === null),
  );
  const ids = [
    ...new Set(candidates.flatMap((d) => (typeof d.customer_id === 'string' ? [d.customer_id] : []))),
  ];
  const live = new Set(
    ids.length === 0
      ? []
      : (
          await deps.docs
            .collection<{ _id: string }>(CUSTOMERS)
            .find({ _id: { $in: ids } }, { projection: { _id: 1 } })
        ).map((c) => c._id),
  );
  for (const d of candidates) {
    if (typeof d.customer_id === 'string' && live.has(d.customer_id)) continue;
    const erased = new Set<number>();
    for (const e of await deps.events.readStream(deliveryStream(d._id)))
      if (e.type === 'WebhookAttemptRecorded' && e.data.erased === true && typeof e.data.attempt === 'number')
        erased.add(e.data.attempt);
    if (erased.size) out.set(d._id, erased);
  }
  return out;
}

const resendLimitText = (made: number) =>
  `This delivery has been resent ${made} times, the limit for one delivery; send a test delivery to check the endpoint`;

const RESEND_REFUSALS: Record<ReturnType<typeof refusedBySettings> & string, string> = {
  endpoint_disabled: 'The endpoint is disabled; enable it before resending its deliveries',
  event_type_disabled:
    'The endpoint no longer receives {type} (its enabled_events); add it back before resending this delivery',
  endpoint_migrated:
    'This delivery is in the legacy format, which the endpoint no longer receives since its migration to v1',
};

/** The same, on the endpoint's dashboard page, whose form names enabled_events "Events". */
const PAGE_REFUSALS: typeof RESEND_REFUSALS = {
  ...RESEND_REFUSALS,
  event_type_disabled:
    'The endpoint no longer receives {type}: tick it under Events (Edit, below) before resending this delivery',
};

/** Deliveries canceled by one append each; at most this many appended at once. */
const CANCEL_BATCH = 50;

/**
 * After an endpoint's settings change (disabled, fewer `enabled_events`, migrated) or its deletion
 * (`settings` null): its pending deliveries it no longer takes are canceled now, each against the
 * revision the read model shows, so the history says so at once and nothing of them is sent again, even
 * if the endpoint takes that event again later (a resend does). A delivery that moved meanwhile (an
 * attempt recorded, a request) is left to the publisher, which checks the same rule before each attempt
 * (`refusedBySettings`), as it does for deliveries fanned out before the change and read here too late.
 * Returns the position to settle, or null when nothing was canceled.
 */
export async function cancelDeliveriesNotTaken(
  deps: WriteDeps & { docs: DocumentStore },
  endpointId: string,
  settings: (Pick<EndpointSettings, 'disabled' | 'enabled_events'> & { api_version: 'v1' | 'legacy' }) | null,
  meta: CommandMeta,
): Promise<bigint | null> {
  const pending = await deps.docs
    .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
    .find({ endpoint_id: endpointId, status: 'pending' });
  const refused = pending.flatMap((d) => {
    const reason = settings === null ? ('endpoint_gone' as const) : refusedBySettings(settings, d.event_type);
    return reason ? [{ d, reason }] : [];
  });
  let last: bigint | null = null;
  const at = deps.clock.now().toISOString();
  for (let i = 0; i < refused.length; i += CANCEL_BATCH) {
    const results = await Promise.all(
      refused.slice(i, i + CANCEL_BATCH).map(async ({ d, reason }) => {
        try {
          const out = await deps.events.append(
            deliveryStream(d._id),
            [
              {
                type: 'WebhookDeliveryCanceled',
                data: {
                  delivery_id: d._id,
                  endpoint_id: d.endpoint_id,
                  restaurant_id: d.restaurant_id,
                  reason,
                  at,
                },
                metadata: { ...meta, restaurant_id: d.restaurant_id },
              },
            ],
            d.revision < 0 ? NO_STREAM : d.revision,
          );
          return out.position;
        } catch (err) {
          if (err instanceof WrongExpectedRevisionError) return null;
          throw err;
        }
      }),
    );
    for (const p of results) if (p !== null && (last === null || p > last)) last = p;
  }
  return last;
}

export interface TestDeps extends WriteDeps {
  docs: DocumentStore;
  secrets: Secrets;
  config: { webhookAllowPrivateTargets: boolean };
  /** The service stopping: a test still waiting for its answer is cut and recorded as such (src/runtime.ts). */
  stopping?: AbortController;
}

/** One signed attempt now, with `X-Service-Test: true`, never retried; recorded in the history. */
export async function testWebhookEndpoint(deps: TestDeps, endpoint: WebhookEndpointDoc, meta: CommandMeta) {
  const key = await deps.docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: endpoint.credential_id });
  if (!key || keyWithdrawn(key))
    throw new ApiError(409, 'RESOURCE_CONFLICT', "The endpoint's credential is revoked", {
      reason: 'credential_revoked',
    });
  const now = deps.clock.now();
  const deliveryId = newId('whd');
  const logId = newId('whl');
  const eventId = `evt_test_${deliveryId.slice(4)}`;
  // In the endpoint's own format: a legacy payload has no api_version field.
  const body = JSON.stringify({
    id: eventId,
    type: TEST_EVENT_TYPE,
    ...(endpoint.api_version === 'legacy' ? {} : { api_version: endpoint.api_version }),
    created: now.toISOString(),
    restaurant_id: endpoint.restaurant_id,
    data: { object: { endpoint_id: endpoint._id, message: 'A test delivery: nothing happened.' } },
  });
  const secrets = [endpoint.secret, ...oldSecretsSigning(endpoint, now)].map((s) => deps.secrets.open(s));
  const response: AttemptResponse = await sendAttempt({
    url: endpoint.url,
    body,
    secrets,
    timestamp: Math.floor(now.getTime() / 1000),
    attempt: 1,
    deliveryId,
    logId,
    eventTime: now.toISOString(),
    test: true,
    customHeaders: openHeaders(endpoint.headers, deps.secrets),
    allowPrivate: deps.config.webhookAllowPrivateTargets,
    signal: deps.stopping?.signal,
  });
  const succeeded = response.status !== null && response.status >= 200 && response.status < 300;
  const result = await deps.events.append(
    deliveryStream(deliveryId),
    [
      {
        type: 'WebhookTestDeliverySent',
        data: {
          delivery_id: deliveryId,
          endpoint_id: endpoint._id,
          restaurant_id: endpoint.restaurant_id,
          event_id: eventId,
          attempt: 1,
          log_id: logId,
          at: now.toISOString(),
          duration_ms: response.durationMs,
          status_code: response.status,
          error: response.error,
          response_excerpt: response.bodyExcerpt,
          response_truncated: response.excerptTruncated,
          outcome: succeeded ? 'succeeded' : 'failed',
        },
        metadata: { ...meta, restaurant_id: endpoint.restaurant_id },
      },
    ],
    NO_STREAM,
  );
  return { deliveryId, eventId, response, succeeded, position: result.position };
}
