// Catch-up-then-live subscription for the stores that own their log in-process (memory, SQLite).
// It pages through the log from a position and, once caught up, sleeps until the store signals an
// append (or a poll interval passes, for writers this process cannot hear, such as another process
// on the same SQLite file). Reading the log itself, never a queue of pushed events, is what makes
// "no gap, no duplicate" hold: the cursor is the only state.
import {
  EventStoreError,
  matchesFilter,
  type RecordedEvent,
  type Subscription,
  type SubscriptionFilter,
} from '../../ports/event-store';

export interface LogRow {
  position: bigint | number;
  stream: string;
  type: string;
}

export interface LogSource<R extends LogRow> {
  /** Rows with a position strictly greater than `after`, in position order, at most `limit`. */
  readAfter(after: bigint | null, limit: number): R[];
  toEvent(row: R): RecordedEvent;
}

/** Wakes waiting subscriptions after an append. The version lets a reader notice an append it raced with. */
export class AppendSignal {
  version = 0;
  private readonly waiters = new Set<() => void>();

  notify(): void {
    this.version++;
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Resolves at the next append after `seenVersion`, after `timeoutMs` (if given), or on abort. */
  wait(seenVersion: number, timeoutMs: number | undefined, signal: AbortSignal): Promise<void> {
    if (this.version !== seenVersion || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }
}

export interface CatchUpOptions {
  after: bigint | null;
  filter: SubscriptionFilter;
  signal: AppendSignal;
  batchSize: number;
  /** Undefined: rely on the signal alone (nothing else writes this log). */
  pollIntervalMs: number | undefined;
  onClose(subscription: Subscription): void;
}

export class CatchUpSubscription<R extends LogRow> implements Subscription {
  private closed = false;
  private iterated = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly source: LogSource<R>,
    private readonly options: CatchUpOptions,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    if (this.iterated) throw new EventStoreError('a subscription can be iterated only once');
    this.iterated = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<RecordedEvent> {
    const { filter, signal, batchSize, pollIntervalMs } = this.options;
    let cursor = this.options.after;
    try {
      while (!this.closed) {
        const seen = signal.version;
        const rows = this.source.readAfter(cursor, batchSize);
        for (const row of rows) {
          cursor = BigInt(row.position);
          if (!matchesFilter(row, filter)) continue;
          yield this.source.toEvent(row);
          if (this.closed) return;
        }
        if (rows.length < batchSize) await signal.wait(seen, pollIntervalMs, this.abort.signal);
      }
    } finally {
      this.shut();
    }
  }

  private shut(): void {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.options.onClose(this);
  }

  async close(): Promise<void> {
    this.shut();
  }
}
