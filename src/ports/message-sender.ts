// The MessageSender port: hands one template message to a provider (or to the local outbox). Every
// adapter passes test/contracts/message-sender.contract.ts.
//
// An adapter never throws for what the provider answered: it returns a SendResult that says whether
// the message was accepted, refused (and whether trying again later can succeed), or whether nobody
// can tell (the request left and no answer came back). Throwing is for bugs only.

export interface OutgoingMessage {
  /**
   * Deterministic per send attempt of a missed call (`<missed_call_id>.<attempt>`). An idempotent
   * adapter sends a key once however often it is asked; others pass it to the provider as a reference.
   */
  idempotency_key: string;
  restaurant_id: string;
  /** The restaurant's sending number at the provider (WhatsApp phone number id); null if none is set. */
  from_phone_number_id: string | null;
  /** E.164. */
  to: string;
  template: {
    name: string;
    language: string;
    /** named: each parameter carries its name; positional: order only. */
    form: 'named' | 'positional' | 'none';
    parameters: { name: string; value: string }[];
  };
  /** The rendered body, for the outbox and operators. */
  text: string;
  /**
   * The customer the message is for, when known: whose key seals what an adapter keeps of it (the
   * outbox's event; src/privacy/seal.ts). Not sent to any provider.
   */
  customer_id?: string | null;
}

export type RefusalKind =
  /** The recipient cannot receive it (not on WhatsApp, not a valid number). Final. */
  | 'invalid_recipient'
  /** The template is missing, paused, disabled or does not fit its parameters at the provider. Final. */
  | 'template_unavailable'
  /** Too many messages (to this recipient, or overall): later may succeed. */
  | 'rate_limited'
  /** The access token is invalid or expired, or lacks a permission. */
  | 'auth'
  /** The restaurant has no sending number configured, or the provider account cannot send. */
  | 'not_configured'
  /** The provider failed or could not be reached (nothing was accepted). */
  | 'unavailable';

export type SendResult =
  | {
      status: 'accepted';
      provider: string;
      provider_message_id: string;
      /** False for the outbox: the message was recorded and nothing left the machine. */
      left_machine: boolean;
    }
  | {
      status: 'refused';
      kind: RefusalKind;
      /** The provider's error code when it gave one (131026, 190…). */
      code: string | null;
      /**
       * Kept in the log in clear (`MessageFailed.error`): the adapter's own words (an HTTP status,
       * the provider's codes), never the provider's free text, which may echo the number or message.
       */
      message: string;
    }
  | {
      /** The request was sent and no answer came back (timeout, connection cut): it may have been accepted. */
      status: 'unknown';
      message: string;
    };

export interface MessageSender {
  readonly name: string;
  /** Sending the same idempotency_key again never sends a second message. */
  readonly idempotent: boolean;
  send(message: OutgoingMessage): Promise<SendResult>;
}

/** Refusals after which the call is finished (an outcome), not failed (502, retry later). */
export const FINAL_REFUSALS: readonly RefusalKind[] = ['invalid_recipient', 'template_unavailable'];

const E164 = /^\+[1-9]\d{6,14}$/;
export const isE164 = (to: string) => E164.test(to);
