// The default MessageSender: no provider is configured, so a message is recorded in the outbox (an
// event on `message-outbox-<idempotency key>`, listed by `npm run cli -- messages list`) and counts as
// sent, with a log line saying nothing left the machine (and no number or text in it). The recipient,
// the text and the template's parameters are sealed with the customer's key by the sealing layer. Idempotent: the stream is created once per
// key, so asking twice records one message and answers the same id.
import type { Clock } from '../../core/clock';
import type { Logger } from '../../logger';
import { type EventStore, NO_STREAM, WrongExpectedRevisionError } from '../../ports/event-store';
import {
  isE164,
  type MessageSender,
  type OutgoingMessage,
  type SendResult,
} from '../../ports/message-sender';

export const outboxStream = (key: string) => `message-outbox-${key}`;
export const OUTBOX_EVENT = 'OutboxMessageRecorded';

export class OutboxMessageSender implements MessageSender {
  readonly name = 'outbox';
  readonly idempotent = true;

  constructor(
    private readonly events: EventStore,
    private readonly clock: Clock,
    private readonly logger?: Pick<Logger, 'info'>,
  ) {}

  async send(message: OutgoingMessage): Promise<SendResult> {
    if (!isE164(message.to))
      return {
        status: 'refused',
        kind: 'invalid_recipient',
        code: null,
        // Never the number itself: this text is recorded in the call's MessageFailed, which is not sealed.
        message: 'the recipient is not an E.164 number',
      };
    const id = `outbox_${message.idempotency_key}`;
    try {
      await this.events.append(
        outboxStream(message.idempotency_key),
        [
          {
            type: OUTBOX_EVENT,
            data: {
              outbox_message_id: id,
              restaurant_id: message.restaurant_id,
              idempotency_key: message.idempotency_key,
              to: message.to,
              template: message.template,
              text: message.text,
              // Whose key seals `to`, `text` and the template's parameters (src/privacy/seal.ts).
              ...(message.customer_id ? { customer_id: message.customer_id } : {}),
              at: this.clock.now().toISOString(),
            },
            metadata: { restaurant_id: message.restaurant_id, actor: 'system:outbox' },
          },
        ],
        NO_STREAM,
      );
      this.logger?.info(
        { outbox_message_id: id, restaurant_id: message.restaurant_id, template: message.template.name },
        'message recorded in the outbox: no provider is configured (WHATSAPP_ACCESS_TOKEN), nothing left the machine',
      );
    } catch (err) {
      // Recorded already under this key (a retry): the same message, not a second one.
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
    }
    return { status: 'accepted', provider: 'outbox', provider_message_id: id, left_machine: false };
  }
}
