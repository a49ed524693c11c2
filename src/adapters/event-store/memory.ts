// In-memory EventStore for unit tests. Same rules as the SQLite store (validation, idempotency,
// conflicts, positions from 1), so a test that passes here means something on the real stores.
// Events are kept as JSON text and parsed on every read: callers get fresh objects, as from a
// database, and mutating one can never change the log.
import { type Clock, systemClock } from '../../core/clock';
import {
  type AppendOptions,
  type AppendResult,
  type EventStore,
  EventStoreError,
  type ExpectedRevision,
  type NewEvent,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store';
import { type CurrentRevision, expectationHolds, resolveExistingIds } from './append-rules';
import { AppendSignal, CatchUpSubscription, type LogSource } from './catch-up-subscription';
import { chainHash, GENESIS } from './chain';
import {
  prepareAppend,
  validateReadAll,
  validateReadStream,
  validateStream,
  validateSubscribe,
} from './validate';

interface StoredEvent {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  created: string;
  position: bigint;
  hash: string;
}

function toEvent(row: StoredEvent): RecordedEvent {
  return {
    id: row.id,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    created: row.created,
    stream: row.stream,
    revision: row.revision,
    position: row.position,
    hash: row.hash,
  };
}

export interface MemoryEventStoreOptions {
  clock?: Clock;
}

export class MemoryEventStore implements EventStore {
  readonly kind = 'memory' as const;
  private readonly clock: Clock;
  /** Index i holds position i + 1. */
  private readonly log: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly ids = new Map<string, StoredEvent>();
  private readonly signal = new AppendSignal();
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  private readonly source: LogSource<StoredEvent> = {
    readAfter: (after, limit) => {
      const start = after === null ? 0 : Number(after);
      return this.log.slice(start, start + limit);
    },
    toEvent,
  };

  constructor(options: MemoryEventStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreError('the event store is closed');
  }

  async append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    _options?: AppendOptions,
  ): Promise<AppendResult> {
    this.assertOpen();
    const batch = prepareAppend(stream, events, expected);
    const existing = this.streams.get(batch.stream) ?? [];
    const current: CurrentRevision = existing.length === 0 ? NO_STREAM : existing.length - 1;
    const found = batch.events.map((e) => this.ids.get(e.id));
    if (found.some((f) => f !== undefined) || !expectationHolds(batch.expected, current))
      return resolveExistingIds(batch.stream, batch.expected, current, found);
    const created = this.clock.now().toISOString();
    let revision = existing.length - 1;
    let stored: StoredEvent | undefined;
    let prev = existing.at(-1)?.hash ?? GENESIS;
    for (const e of batch.events) {
      revision++;
      prev = chainHash(prev, { ...e, stream: batch.stream, revision });
      stored = {
        id: e.id,
        stream: batch.stream,
        revision,
        type: e.type,
        data: e.dataJson,
        metadata: e.metadataJson,
        created,
        position: BigInt(this.log.length + 1),
        hash: prev,
      };
      this.log.push(stored);
      existing.push(stored);
      this.ids.set(e.id, stored);
    }
    this.streams.set(batch.stream, existing);
    this.signal.notify();
    return { nextRevision: revision, position: stored!.position };
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    const name = validateStream(stream);
    const { direction, fromRevision, limit } = validateReadStream(options);
    const events = this.streams.get(name) ?? [];
    let slice: StoredEvent[];
    if (direction === 'forwards') {
      const from = fromRevision ?? 0;
      slice = events.slice(from, limit === undefined ? undefined : from + limit);
    } else {
      const end = Math.min(fromRevision ?? events.length - 1, events.length - 1) + 1;
      slice = events.slice(limit === undefined ? 0 : Math.max(0, end - limit), end).reverse();
    }
    return slice.map(toEvent);
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    this.assertOpen();
    const { after, limit } = validateReadAll(options);
    const start = after === null ? 0 : Number(after);
    const end = limit === undefined ? undefined : start + limit;
    const log = this.log;
    return (async function* () {
      // Bounds are re-read per step so events appended while iterating are included, as in SQLite.
      for (let i = start; i < log.length && (end === undefined || i < end); i++) yield toEvent(log[i]!);
    })();
  }

  subscribe(options?: SubscribeOptions): Subscription {
    this.assertOpen();
    const { after, filter } = validateSubscribe(options);
    const subscription = new CatchUpSubscription(this.source, {
      after,
      filter,
      signal: this.signal,
      batchSize: 500,
      pollIntervalMs: undefined,
      onClose: (s) => this.subscriptions.delete(s),
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<bigint | null> {
    this.assertOpen();
    return this.log.length === 0 ? null : BigInt(this.log.length);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
  }
}
