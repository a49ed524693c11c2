// The webhooks module's hooks into the platform: the bootstrap section, operator commands and the
// pruning of delivery history. The publisher itself is the `webhooks` role (src/webhooks/runner.ts).
import { WEBHOOK_DELIVERIES } from '../projections/webhook-deliveries';
import { historyStart, shownInHistory } from '../queries/webhooks';
import { registerBootstrapSection } from './bootstrap';
import { registerWebhookCommands } from './cli/webhook-commands';
import type { Runtime } from './runtime';
import { registerScheduledJob } from './scheduler';
import { applyWebhookSections, checkWebhookSections } from './webhooks-bootstrap';

/**
 * Whether a delivery document is past the history's retention (what pruneDeliveries removes): a
 * replay of the log still builds it, so `audit verify` leaves it out of the comparison.
 */
export function deliveryPastRetention(
  doc: { created_at?: unknown; status?: unknown; attempts?: unknown },
  now: Date,
): boolean {
  return typeof doc.created_at === 'string' && !shownInHistory(doc, now);
}

/**
 * Drops delivery history past 30 days from the read model (the log keeps every event; the history
 * shown to partners stops at 30 days either way): deliveries created and last attempted before them,
 * finished (`inHistory`: a pending one still has work; a resent one is shown 30 days after its attempts).
 */
export async function pruneDeliveries(rt: Runtime): Promise<string | null> {
  await rt.refresh();
  const start = historyStart(rt.clock.now());
  const removed = await rt.docs.collection(WEBHOOK_DELIVERIES).deleteMany({
    created_at: { $lt: start },
    status: { $ne: 'pending' },
    $nor: [{ 'attempts.at': { $gte: start } }],
  });
  return removed ? `pruned ${removed} webhook deliveries older than 30 days` : null;
}

export function registerWebhooksModule(): void {
  registerBootstrapSection(applyWebhookSections, checkWebhookSections);
  registerWebhookCommands();
  registerScheduledJob({
    name: 'webhook-history-prune',
    schedule: '17 * * * *',
    run: (rt) => pruneDeliveries(rt),
  });
}
