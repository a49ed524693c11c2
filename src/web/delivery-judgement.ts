// How the Insights page judges an endpoint's webhook deliveries over a period. The analytics figures'
// success rate (docs/analytics.md) judges finished deliveries only (delivered or failed for good), so
// an endpoint whose every attempt fails while its deliveries wait for their next retry (8 attempts
// over days) has none finished and no rate: the page said all was well. The day documents do not say
// which pending deliveries had a failed attempt, only how many attempts failed, so the page counts as
// not (yet) delivered the pending deliveries those failed attempts can belong to: at most the failed
// attempts left once each failed delivery and each one delivered after its first attempt is given one
// of them. An upper bound: an endpoint is never called well while one of its deliveries is being
// retried, at the price of calling one short when a delivery needed several retries before it went
// through and a new one waits for its first attempt.
import type { WebhookDay } from '../../projections/analytics/webhook-rules';

export interface DeliveryJudgement {
  delivered: number;
  /** Pending deliveries counted as not delivered yet: being retried after a failed attempt. */
  retrying: number;
  /** delivered + failed + retrying: the deliveries judged. */
  judged: number;
  /** delivered / judged, null when none is judged. */
  rate: number | null;
  /** Under 95% delivered. */
  short: boolean;
}

export const DELIVERED_ENOUGH = 0.95;

export function judgeDeliveries(
  t: Pick<WebhookDay, 'delivered' | 'failed' | 'pending' | 'failed_attempts' | 'first_attempt_delivered'>,
): DeliveryJudgement {
  const spent = t.failed + Math.max(0, t.delivered - t.first_attempt_delivered);
  const retrying = Math.min(t.pending, Math.max(0, t.failed_attempts - spent));
  const judged = t.delivered + t.failed + retrying;
  const rate = judged === 0 ? null : t.delivered / judged;
  return { delivered: t.delivered, retrying, judged, rate, short: rate !== null && rate < DELIVERED_ENOUGH };
}
