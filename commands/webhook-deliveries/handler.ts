// Resend and test, for partners, managers (dashboard) and operators alike: the actor is in `meta`.
import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import type { WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import type { WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { newId } from '../../src/core/ids';
import type { WriteDeps } from '../../src/core/write-deps';
import type { DocumentStore } from '../../src/ports/document-store';
import { NO_STREAM, WrongExpectedRevisionError } from '../../src/ports/event-store';
import type { Secrets } from '../../src/secrets';
import { type AttemptResponse, sendAttempt } from '../../src/webhooks/deliver';
import { previousSecretSigns } from '../webhook-endpoints/decide';
import { deliveryStream } from './events';

/**
 * Sends a finished delivery again (a new series of attempts, numbered after the last one, retried on
 * the same schedule). A delivery still being retried answers 409: it is already on its way.
 */
export async function resendDelivery(deps: WriteDeps, doc: WebhookDeliveryDoc, meta: CommandMeta) {
  if (doc.test)
    throw new ApiError(409, 'RESOURCE_CONFLICT', 'A test delivery cannot be resent; send a new test');
  if (doc.status === 'pending')
    throw new ApiError(
      409,
      'RESOURCE_CONFLICT',
      'This delivery is still being attempted; resend it once it has succeeded or failed',
    );
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
      throw new ApiError(409, 'RESOURCE_CONFLICT', 'The delivery changed meanwhile; read it again');
    throw err;
  }
}

export interface TestDeps extends WriteDeps {
  docs: DocumentStore;
  secrets: Secrets;
  config: { webhookAllowPrivateTargets: boolean };
}

/** One signed attempt now, with `X-Service-Test: true`, never retried; recorded in the history. */
export async function testWebhookEndpoint(deps: TestDeps, endpoint: WebhookEndpointDoc, meta: CommandMeta) {
  const key = await deps.docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: endpoint.credential_id });
  if (!key || key.revoked_at)
    throw new ApiError(409, 'RESOURCE_CONFLICT', "The endpoint's credential is revoked");
  const now = deps.clock.now();
  const deliveryId = newId('whd');
  const logId = newId('whl');
  const eventId = `evt_test_${deliveryId.slice(4)}`;
  // In the endpoint's own format: a legacy payload has no api_version field.
  const body = JSON.stringify({
    id: eventId,
    type: 'webhook_endpoint.test',
    ...(endpoint.api_version === 'legacy' ? {} : { api_version: endpoint.api_version }),
    created: now.toISOString(),
    restaurant_id: endpoint.restaurant_id,
    data: { object: { endpoint_id: endpoint._id, message: 'A test delivery: nothing happened.' } },
  });
  const secrets = [deps.secrets.open(endpoint.secret)];
  if (endpoint.previous_secret && previousSecretSigns(endpoint, now))
    secrets.push(deps.secrets.open(endpoint.previous_secret.secret));
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
    customHeaders: endpoint.headers,
    allowPrivate: deps.config.webhookAllowPrivateTargets,
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
