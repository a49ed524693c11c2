// Missed-call events. Each call is a stream `missed-call-<id>`:
//   MissedCallReported → MissedCallSkipped (an outcome, final)
//                      → MissedCallMatched → MissedCallSkipped
//                                          → MessageRequested → MessageSent | MessageFailed | MessageUnconfirmed
//   after MessageFailed, a retry (same external_call_id) appends MessageRequested again (attempt + 1).
// The cooldown of a caller is decided on `missed-call-caller-<restaurant>-<caller id>` (MessageSlotTaken,
// MessageSlotFreed), the caller id a keyed hash of the E.164 number (src/privacy/caller-ids.ts: a stream
// id cannot be sealed, so it never holds the number); an external_call_id is claimed on `missed-call-external-call-<restaurant, its - escaped>-<value>`
// (`missed-call-external-id-<restaurant>-<value>` before, still read: legacyExternalCallClaimStream).
// The WhatsApp settings of a restaurant live on `missed-call-settings-<restaurant>`.

import { restaurantStreamPart } from '../reservations/events';

export const OUTCOMES = [
  'SENT',
  'SKIPPED_DUPLICATE',
  'SKIPPED_COOLDOWN',
  'SKIPPED_FEATURE_DISABLED',
  'SKIPPED_OPTED_OUT',
  'SKIPPED_BLACKLISTED',
  'SKIPPED_NO_TEMPLATE',
  'SKIPPED_INVALID_RECIPIENT',
  'SKIPPED_TEMPLATE_UNAVAILABLE',
  'SEND_UNCONFIRMED',
  'SKIPPED_CUSTOMER_DELETED',
  'SKIPPED_TOO_OLD',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What a call record shows: a final outcome, or where it stands. */
// In the analytics CSV's column order (docs/analytics.md): an outcome added later goes after FAILED.
export const RECORD_OUTCOMES = [
  ...OUTCOMES.filter(
    (o) => o !== 'SKIPPED_DUPLICATE' && o !== 'SKIPPED_CUSTOMER_DELETED' && o !== 'SKIPPED_TOO_OLD',
  ),
  'PENDING',
  'FAILED',
  'SKIPPED_CUSTOMER_DELETED',
  'SKIPPED_TOO_OLD',
] as const;
export type RecordOutcome = (typeof RECORD_OUTCOMES)[number];

/** Outcomes a call is skipped with (stored on MissedCallSkipped). */
export type SkipReason = Exclude<Outcome, 'SENT' | 'SKIPPED_DUPLICATE' | 'SEND_UNCONFIRMED'>;

export type TemplateType = 'MISSED_CALL' | 'MISSED_CALL_WITH_RESERVATION';

interface Base {
  missed_call_id: string;
  restaurant_id: string;
  at: string;
}

/**
 * The customer whose key seals an event's personal fields (the caller's number, the message): the
 * call's matched or created customer (src/privacy/seal.ts). On MissedCallReported, also the customer
 * a call with the feature off found by the number (it is not matched: the record's customer_id stays
 * null); absent when no customer has the number, and on events written before sealing.
 */
interface SealedFor {
  customer_id?: string;
}

export interface SentMessage {
  message_id: string;
  attempt: number;
  idempotency_key: string;
  to: string;
  template_id: string;
  template_name: string;
  template_type: TemplateType;
  language: string;
  form: 'named' | 'positional' | 'none';
  parameters: { name: string; value: string }[];
  text: string;
  /** The adapter asked (outbox, whatsapp-cloud). */
  sender: string;
}

export type MissedCallEvent =
  | {
      type: 'MissedCallReported';
      data: Base &
        SealedFor & {
          /** E.164 when the number could be read (always, for a number the route accepted). */
          caller_phone_number: string;
          external_call_id: string | null;
          occurred_at: string;
        };
    }
  | {
      type: 'MissedCallMatched';
      data: Base & {
        customer_id: string;
        /** True when this call created the customer (origin MISSED_CALL). */
        customer_created: boolean;
        reservation_id: string | null;
      };
    }
  | { type: 'MissedCallSkipped'; data: Base & { outcome: SkipReason; detail: string | null } }
  | { type: 'MessageRequested'; data: Base & SentMessage & SealedFor }
  | {
      type: 'MessageSent';
      data: Base & {
        message_id: string;
        attempt: number;
        provider: string;
        provider_message_id: string;
        left_machine: boolean;
      };
    }
  | {
      type: 'MessageFailed';
      data: Base & {
        message_id: string;
        attempt: number;
        kind: string;
        code: string | null;
        error: string;
        /** True: the call waits for a retry (502); false: the call is finished with `outcome`. */
        retryable: boolean;
        outcome: Outcome | null;
      };
    }
  /** The process asked the provider and no answer was recorded: it may have left. Never resent. */
  | { type: 'MessageUnconfirmed'; data: Base & { message_id: string; attempt: number; reason: string } };

export const MISSED_CALL_EVENT_TYPES = [
  'MissedCallReported',
  'MissedCallMatched',
  'MissedCallSkipped',
  'MessageRequested',
  'MessageSent',
  'MessageFailed',
  'MessageUnconfirmed',
] as const;

/**
 * Appended by the sealing layer to a call whose number no customer owned when an erasure destroyed
 * the key that sealed it (src/privacy/number-keys.ts): the call's number reads as erased from then
 * on. Data: missed_call_id, restaurant_id, at, key_id, reason. Not one of MISSED_CALL_EVENT_TYPES
 * (no outcome, nothing the analytics count).
 */
export const CALLER_ERASED_EVENT = 'MissedCallCallerErased';

export const missedCallStream = (id: string) => `missed-call-${id}`;
export const MISSED_CALL_STREAM_PREFIX = 'missed-call-';
/** A caller's cooldown stream; `callerId` is the keyed hash of their number (src/privacy/caller-ids.ts). */
export const callerStream = (restaurantId: string, callerId: string) =>
  `missed-call-caller-${restaurantId}-${callerId}`;
export const CALLER_STREAM_PREFIX = 'missed-call-caller-';
/**
 * The claim of an external_call_id within its restaurant. The restaurant id's own `-` and `%` are
 * escaped, so the first `-` after it ends it: restaurant `rest` with `a-1` and restaurant `rest-a` with
 * `1` are two streams. Under the former name (`legacyExternalCallClaimStream`) they were one, and the
 * second call was answered with, or carried on, the other restaurant's call.
 */
export const externalCallClaimStream = (restaurantId: string, externalCallId: string) =>
  `missed-call-external-call-${restaurantStreamPart(restaurantId)}-${encodeURIComponent(externalCallId)}`;
/**
 * The name claims had before, ambiguous when a restaurant id has a `-`: read so that a replay of a call
 * reported before the change still finds it, and trusted only when the claim's metadata names the
 * restaurant. Only claims: nothing is written there any more.
 */
export const legacyExternalCallClaimStream = (restaurantId: string, externalCallId: string) =>
  `missed-call-external-id-${restaurantId}-${encodeURIComponent(externalCallId)}`;
export const settingsStream = (restaurantId: string) => `missed-call-settings-${restaurantId}`;

/** Messages to one caller are at most one per this period (the service clock). */
export const COOLDOWN_MS = 6 * 60 * 60 * 1000;
