// What the sweep-cost suites share: a pending delivery as the read model holds one (its request refused
// when appended: no stream at its revision, so nothing else moves), and the counting of the documents a
// run's own finds examine and copy, whatever else reads the collection meanwhile (the runner's start,
// askForUnfinished, may page through the pending deliveries at the same time); and a world whose
// endpoint's queue is full, held while a sweep is counted.
import { AsyncLocalStorage } from 'node:async_hooks';
import * as assert from 'uvu/assert';
import type { WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import type { EmbeddedCollection } from '../../src/adapters/document-store/embedded';
import { FixedClock } from '../../src/core/clock';
import type { Filter, FindOptions } from '../../src/ports/document-store';
import type { RunningWebhooks } from '../../src/webhooks/runner';
import { hold } from './webhook-receiver';
import {
  demoCustomer,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
  type WorldOptions,
} from './webhooks-world';

export function pendingDelivery(
  id: string,
  endpointId: string,
  now: string,
  sweepAfter: string,
): WebhookDeliveryDoc {
  return {
    _id: `wd_${id}`,
    endpoint_id: endpointId,
    restaurant_id: 'rest_demo',
    event_id: `ev_${id}`,
    event_type: 'customer.created',
    source_event_id: `ev_${id}`,
    fanout_stream: null,
    payload: null,
    event_created: now,
    created_at: now,
    test: false,
    status: 'pending',
    attempts: [],
    attempt_count: 1,
    last_status_code: 503,
    next_attempt: 2,
    next_attempt_at: sweepAfter,
    series_start: 1,
    series_started_at: now,
    sweep_after: sweepAfter,
    // No stream at this revision: each request is refused, nothing else moves.
    revision: 7,
  };
}

/**
 * Runs `run`, counting the documents the finds it makes on `col` examine (the embedded find works
 * synchronously when called) and copy out, in all and in the largest single find; finds made
 * meanwhile by anything else are not counted.
 */
export async function countFinds<R>(
  col: EmbeddedCollection<WebhookDeliveryDoc>,
  run: () => Promise<R>,
): Promise<{ result: R; copied: number; examined: number; mostCopied: number; mostExamined: number }> {
  const mine = new AsyncLocalStorage<boolean>();
  let copied = 0;
  let examined = 0;
  let mostCopied = 0;
  let mostExamined = 0;
  const find = col.find.bind(col);
  col.find = (filter: Filter, options?: FindOptions) => {
    const before = col.examined;
    const found = find(filter, options);
    if (!mine.getStore()) return found;
    examined += col.examined - before;
    mostExamined = Math.max(mostExamined, col.examined - before);
    return found.then((docs) => {
      copied += docs.length;
      mostCopied = Math.max(mostCopied, docs.length);
      return docs;
    });
  };
  try {
    const result = await mine.run(true, run);
    return { result, copied, examined, mostCopied, mostExamined };
  } finally {
    col.find = find;
  }
}

/** The suites' clock: frozen, so no retry falls due but those a suite writes. */
export const SWEEP_NOW = '2026-06-02T10:00:00.000Z';

/**
 * A webhooks world whose endpoint `we_hung` (path `/hung`) takes 1 delivery in flight and 3 queued,
 * with no sweep of the publisher's own (the suite calls `publisher.sweep`).
 */
export const startHungEndpointWorld = (name: string, key: WorldOptions<FixedClock>['key'], secret: string) =>
  startWebhooksWorld({
    name,
    clock: new FixedClock(SWEEP_NOW),
    key,
    endpoint: { id: 'we_hung', path: '/hung', secret },
    publisher: {
      concurrencyPerEndpoint: 1,
      maxWaitingPerEndpoint: 3,
      sweepIntervalMs: 3_600_000,
      timeoutMs: 600_000,
    },
  });

/**
 * Runs `check` while `we_hung` answers nothing: four customers' deliveries held by the publisher (1 in
 * flight, 3 queued: the endpoint's queue full); the endpoint is let go after, whatever `check` did.
 */
export async function withFullQueue(
  w: WebhooksWorld,
  check: (publisher: RunningWebhooks['publisher']) => Promise<void>,
): Promise<void> {
  const gate = hold();
  w.rx.on('/hung', { until: gate.held });
  const publisher = w.running?.publisher;
  assert.ok(publisher);
  try {
    for (let i = 0; i < 4; i++) await demoCustomer(w.rt, `Hung ${i}`);
    await w.rx.waitFor('/hung', 1);
    await until('four held', 120_000, async () => (publisher.pending === 4 ? true : null));
    await check(publisher);
  } finally {
    gate.release();
  }
}
