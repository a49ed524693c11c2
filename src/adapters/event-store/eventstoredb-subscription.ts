// A catch-up subscription to $all that survives dropped connections and leader changes: the
// client does not resubscribe by itself, so this loop does, from the last position it delivered
// (subscribeToAll's fromPosition is exclusive), with capped exponential backoff.
import type { AllStreamSubscription, EventStoreDBClient } from '@eventstore/db-client';
import {
  EventStoreError,
  matchesFilter,
  type RecordedEvent,
  type Subscription,
} from '../../ports/event-store';
import {
  isRetryable,
  isSystemEvent,
  toReadPosition,
  toRecordedEvent,
  toServerFilter,
} from './eventstoredb-mapping';
import type { CheckedSubscribe } from './validate';

export interface RetryPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  /** Told of every failure that will be retried (log it). */
  onError(error: unknown, attempt: number): void;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export class EsdbSubscription implements Subscription {
  private closed = false;
  private iterated = false;
  private current: AllStreamSubscription | null = null;
  private readonly abort = new AbortController();

  constructor(
    private readonly client: EventStoreDBClient,
    private readonly options: CheckedSubscribe,
    private readonly retry: RetryPolicy,
    private readonly onClose: (subscription: Subscription) => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    if (this.iterated) throw new EventStoreError('a subscription can be iterated only once');
    this.iterated = true;
    return this.run();
  }

  private delay(attempt: number): number {
    const { initialDelayMs, maxDelayMs } = this.retry;
    const capped = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt, 20));
    // Jitter spreads the reconnections of many workers after a leader change.
    return capped / 2 + Math.random() * (capped / 2);
  }

  private async *run(): AsyncGenerator<RecordedEvent> {
    const { filter } = this.options;
    let after = this.options.after;
    let attempt = 0;
    try {
      while (!this.closed) {
        const sub = this.client.subscribeToAll({
          fromPosition: toReadPosition(after),
          filter: toServerFilter(filter),
        });
        this.current = sub;
        try {
          for await (const resolved of sub) {
            const event = resolved.event;
            if (!event) continue;
            const position = event.position?.commit ?? resolved.commitPosition;
            // A resubscription may replay the boundary event: the cursor makes delivery exactly-once.
            if (position === undefined || (after !== null && position <= after)) continue;
            const wanted =
              !isSystemEvent(event) && matchesFilter({ stream: event.streamId, type: event.type }, filter);
            // Converted before the cursor moves: an event that cannot be converted fails the
            // subscription rather than being stepped over by the next resubscription.
            const recorded = wanted ? toRecordedEvent(event) : null;
            after = position;
            attempt = 0;
            if (recorded === null) continue;
            yield recorded;
            if (this.closed) return;
          }
        } catch (err) {
          if (this.closed) return;
          if (!isRetryable(err)) throw err;
          this.retry.onError(err, attempt);
        } finally {
          this.current = null;
          await sub.unsubscribe().catch(() => undefined);
        }
        if (this.closed) return;
        await sleep(this.delay(attempt++), this.abort.signal);
      }
    } finally {
      await this.close();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.onClose(this);
    await this.current?.unsubscribe().catch(() => undefined);
  }
}
