import type { SettingsRefusal } from '../webhook-endpoints/decide';

// Webhook deliveries. The publisher writes one fan-out per source event (stream
// `webhook-fanout-<source event id>`, appended once: a second publisher handling the same event gets
// a conflict and sends nothing), then each delivery's attempts on `webhook-delivery-<id>`.
// Everything a retry, a resend or the history needs is in the log, so a restart loses nothing.

/**
 * The type a test delivery's body carries (`POST /webhook-endpoints/{id}/test`). The history's read
 * model keeps `test` for it (the dashboard's filter); the partner API shows and filters it by this one.
 */
export const TEST_EVENT_TYPE = 'webhook_endpoint.test';

/** How the history's read model keeps a test delivery's type (and what the history showed for it before). */
export const STORED_TEST_TYPE = 'test';

/**
 * The one mapping between the type the API and the pages name (TEST_EVENT_TYPE for a test) and the one
 * the read model keeps (STORED_TEST_TYPE): `stored` for a filter's value (either spelling of the test
 * type finds it), `shown` for a type asked for or read back (`test` reads as TEST_EVENT_TYPE).
 */
export function deliveryType(type: string, as: 'stored' | 'shown'): string {
  const test = type === TEST_EVENT_TYPE || type === STORED_TEST_TYPE;
  if (!test) return type;
  return as === 'stored' ? STORED_TEST_TYPE : TEST_EVENT_TYPE;
}

export type AttemptError = 'timeout' | 'network' | 'blocked_target' | 'endpoint_gone' | 'credential_revoked';

export interface ScheduledDelivery {
  delivery_id: string;
  endpoint_id: string;
  /** Key into the fan-out's `payloads`: endpoints that see the same thing share one body. */
  payload: string;
}

export interface AttemptRecord {
  attempt: number;
  /** X-Service-Delivery-Log-Id of this attempt. */
  log_id: string;
  /** Service clock. */
  at: string;
  duration_ms: number;
  status_code: number | null;
  error: AttemptError | null;
  /**
   * What the endpoint answered, bounded (src/webhooks/excerpt.ts); absent on attempts recorded before
   * excerpts were kept, null when the answer had no body or there was no answer.
   */
  response_excerpt?: string | null;
  /** The answer was longer than its excerpt. */
  response_truncated?: boolean;
}

export type WebhookDeliveryEvent =
  | {
      type: 'WebhookDeliveriesScheduled';
      data: {
        restaurant_id: string;
        /** The customer the bodies describe: `payloads` is sealed with their key (absent: none). */
        customer_id?: string;
        source_event_id: string;
        /** Zero-padded log position of the source event. */
        source_position: string;
        /** v1 type (reservation.updated…) or the legacy RESERVATION_UPDATED. */
        event_types: Record<string, string>;
        /** The event's time: X-Service-Timestamp. */
        event_created: string;
        payloads: Record<string, string>;
        /**
         * Other customers the bodies describe (a reservation's previous customer, feedback given under
         * another): `payloads` is sealed with their keys and `customer_id`'s together; erased, the
         * bodies read as `payloads_without_others` was written (their data erased), which is sealed
         * with `customer_id`'s key alone and never read as such (src/privacy/seal.ts, sealSplit).
         */
        other_customer_ids?: string[];
        payloads_without_others?: Record<string, string>;
        deliveries: ScheduledDelivery[];
        at: string;
      };
    }
  | {
      type: 'WebhookAttemptRecorded';
      data: AttemptRecord & {
        delivery_id: string;
        endpoint_id: string;
        restaurant_id: string;
        /**
         * Added after the first contract: the customer the delivery's body describes (absent: none, or
         * recorded before). `response_excerpt` is then sealed with their key (src/privacy/seal.ts).
         */
        customer_id?: string;
        outcome: 'succeeded' | 'retry' | 'failed';
        next_attempt_at: string | null;
      };
    }
  /** An attempt is due (a retry, a resend, or a first attempt nobody made): whoever receives this event makes it. */
  | {
      type: 'WebhookAttemptRequested';
      data: {
        delivery_id: string;
        endpoint_id: string;
        restaurant_id: string;
        attempt: number;
        /** `queue_full`: a first attempt left in the log past its endpoint's in-memory queue (2026-11-28). */
        reason: 'retry' | 'resend' | 'recovery' | 'queue_full';
        at: string;
      };
    }
  /**
   * The endpoint was deleted or its credential revoked before the delivery succeeded, the credential
   * lost the scope that reads the body, or the customer its body describes was erased (the body can
   * no longer be read): nothing more is sent.
   */
  | {
      type: 'WebhookDeliveryCanceled';
      data: {
        delivery_id: string;
        endpoint_id: string;
        restaurant_id: string;
        /**
         * `scope_removed`: the credential no longer reads the body (a scope taken away since the fan-out).
         * `api_option_off`: a third-party application's credential, and the restaurant turned its API option off.
         * `endpoint_disabled`, `event_type_disabled`, `endpoint_migrated`: the endpoint's settings no
         * longer take it (`refusedBySettings` in commands/webhook-endpoints/decide.ts). `endpoint_gone`:
         * the endpoint was deleted.
         */
        reason: AttemptError | 'customer_erased' | 'scope_removed' | 'api_option_off' | SettingsRefusal;
        at: string;
      };
    }
  /** POST /webhook-endpoints/{id}/test: one signed attempt, never retried. */
  | {
      type: 'WebhookTestDeliverySent';
      data: AttemptRecord & {
        delivery_id: string;
        endpoint_id: string;
        restaurant_id: string;
        event_id: string;
        outcome: 'succeeded' | 'failed';
      };
    };

export const fanoutStream = (sourceEventId: string) => `webhook-fanout-${sourceEventId}`;
export const deliveryStream = (deliveryId: string) => `webhook-delivery-${deliveryId}`;
