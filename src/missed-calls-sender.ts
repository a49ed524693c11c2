// Which MessageSender a runtime uses: the WhatsApp Business Cloud API when WHATSAPP_ACCESS_TOKEN is
// set, the outbox otherwise. One per runtime, made on first use.
import { OutboxMessageSender } from './adapters/message-sender/outbox';
import { WhatsAppCloudSender } from './adapters/message-sender/whatsapp-cloud';
import type { MessageSender } from './ports/message-sender';
import type { Runtime } from './runtime';

const senders = new WeakMap<Runtime, MessageSender>();

export function messageSenderFor(rt: Runtime): MessageSender {
  let sender = senders.get(rt);
  if (!sender) {
    const w = rt.config.whatsapp;
    sender = w
      ? new WhatsAppCloudSender({ ...w, retryBaseMs: 250, logger: rt.logger, signal: rt.stopping.signal })
      : new OutboxMessageSender(rt.events, rt.clock, rt.logger);
    senders.set(rt, sender);
  }
  return sender;
}

/** Tests: make this runtime send through `sender`. */
export function useMessageSender(rt: Runtime, sender: MessageSender): void {
  senders.set(rt, sender);
}
