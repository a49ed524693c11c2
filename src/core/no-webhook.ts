// The one mark that keeps an event out of webhooks (spec §6: "a CSV import publishes no events; the
// incremental sync is the source of truth"). Any command may set it through its CommandMeta; the
// webhook publisher tests each event on its own, with nothing else to read:
//   if (!publishesWebhook(event)) skip it (and still move its checkpoint past it).
// Read models ignore it: the customer sync feed shows marked changes like any other.
import type { EventMetadata } from '../ports/event-store';

/** Metadata of every event that must publish no webhook. */
export const NO_WEBHOOK = { no_webhook: true } as const;

/** False for an event marked `metadata.no_webhook === true`; true otherwise. */
export function publishesWebhook(event: { metadata?: EventMetadata | null }): boolean {
  return event.metadata?.no_webhook !== true;
}
