// The scaled-out EventStore: EventStoreDB / KurrentDB through @eventstore/db-client 6.
// Port positions are $all commit positions. System streams and events ($-prefixed) never reach
// callers: the port's log is the application's events only.
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  type ReadPosition,
  START,
} from '@eventstore/db-client';
import {
  type AppendResult,
  type EventStore,
  EventStoreError,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../ports/event-store';
import {
  isStreamNotFound,
  isSystemEvent,
  isWrongExpectedVersion,
  toEsdbExpected,
  toEventData,
  toReadPosition,
  toRecordedEvent,
  toWrongExpectedRevision,
} from './eventstoredb-mapping';
import { EsdbSubscription, type RetryPolicy } from './eventstoredb-subscription';
import {
  prepareAppend,
  validateReadAll,
  validateReadStream,
  validateStream,
  validateSubscribe,
} from './validate';

export interface EsdbEventStoreOptions {
  /** How long connect() keeps retrying a server that is not answering yet (starting, electing). Default 30 s. */
  connectTimeoutMs?: number;
  /** Backoff of subscriptions re-established after a drop. Defaults: 200 ms doubling up to 10 s. */
  subscriptionRetry?: Partial<RetryPolicy>;
}

const HEAD_PAGE = 64;

export class EsdbEventStore implements EventStore {
  readonly kind = 'eventstoredb' as const;
  private readonly subscriptions = new Set<Subscription>();
  private readonly retry: RetryPolicy;
  private closed = false;

  private constructor(
    private readonly client: EventStoreDBClient,
    options: EsdbEventStoreOptions,
  ) {
    this.retry = {
      initialDelayMs: options.subscriptionRetry?.initialDelayMs ?? 200,
      maxDelayMs: options.subscriptionRetry?.maxDelayMs ?? 10_000,
      onError:
        options.subscriptionRetry?.onError ??
        ((error, attempt) =>
          console.warn(`eventstoredb subscription dropped (attempt ${attempt}), resubscribing:`, error)),
    };
  }

  /** `esdb://host:2113?tls=false` or `esdb+discover://…`. Resolves once the server answers a read. */
  static async connect(
    connectionString: string,
    options: EsdbEventStoreOptions = {},
  ): Promise<EsdbEventStore> {
    const store = new EsdbEventStore(EventStoreDBClient.connectionString(connectionString), options);
    const deadline = Date.now() + (options.connectTimeoutMs ?? 30_000);
    for (let attempt = 0; ; attempt++) {
      try {
        await store.headPosition();
        return store;
      } catch (err) {
        if (Date.now() >= deadline) {
          await store.close();
          throw new EventStoreError(`cannot reach EventStoreDB at ${connectionString}: ${String(err)}`, {
            cause: err,
          });
        }
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)));
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreError('the event store is closed');
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    const batch = prepareAppend(stream, events, expected);
    let result: Awaited<ReturnType<EventStoreDBClient['appendToStream']>>;
    try {
      result = await this.client.appendToStream(batch.stream, batch.events.map(toEventData), {
        expectedRevision: toEsdbExpected(batch.expected),
      });
    } catch (err) {
      if (isWrongExpectedVersion(err)) throw toWrongExpectedRevision(err, batch.stream, batch.expected);
      throw err;
    }
    const nextRevision = Number(result.nextExpectedRevision);
    // An idempotent retry is answered without a position: it is the position of the stored event.
    const position = result.position?.commit ?? (await this.positionOf(batch.stream, nextRevision));
    return { nextRevision, position };
  }

  private async positionOf(stream: string, revision: number): Promise<bigint> {
    const [event] = await this.readStream(stream, {
      direction: 'backwards',
      fromRevision: revision,
      limit: 1,
    });
    if (!event || event.revision !== revision)
      throw new EventStoreError(`${stream} has no event at revision ${revision} after appending it`);
    return event.position;
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    const name = validateStream(stream);
    const { direction, fromRevision, limit } = validateReadStream(options);
    if (limit === 0) return [];
    const events = await this.read(name, direction, fromRevision, limit);
    // The server reads backwards over the revision window [from - limit + 1, from] without clamping
    // `from` to the stream's end, so a start past the end comes back short: read from the end instead.
    const short = events.length === 0 || events[0]!.revision !== fromRevision;
    if (direction === 'backwards' && fromRevision !== undefined && limit !== undefined && short)
      return this.read(name, direction, undefined, limit);
    return events;
  }

  private async read(
    stream: string,
    direction: 'forwards' | 'backwards',
    fromRevision: number | undefined,
    limit: number | undefined,
  ): Promise<RecordedEvent[]> {
    const read = this.client.readStream(stream, {
      direction: direction === 'forwards' ? FORWARDS : BACKWARDS,
      fromRevision:
        fromRevision === undefined ? (direction === 'forwards' ? START : END) : BigInt(fromRevision),
      ...(limit === undefined ? {} : { maxCount: limit }),
    });
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of read) if (resolved.event) out.push(toRecordedEvent(resolved.event));
    } catch (err) {
      if (isStreamNotFound(err)) return [];
      throw err;
    }
    return out;
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    this.assertOpen();
    const { after, limit, batchSize } = validateReadAll(options);
    const client = this.client;
    return (async function* () {
      let cursor = after;
      let remaining = limit ?? Number.POSITIVE_INFINITY;
      while (remaining > 0) {
        // readAll starts at its position inclusively: one more than a page, the first being `cursor` itself.
        const pageSize = batchSize + 1;
        let received = 0;
        for await (const resolved of client.readAll({
          fromPosition: toReadPosition(cursor),
          maxCount: pageSize,
        })) {
          received++;
          const event = resolved.event;
          const position = event?.position.commit;
          if (!event || position === undefined || (cursor !== null && position <= cursor)) continue;
          cursor = position;
          if (isSystemEvent(event)) continue;
          yield toRecordedEvent(event);
          if (--remaining === 0) return;
        }
        if (received < pageSize) return;
      }
    })();
  }

  subscribe(options?: SubscribeOptions): Subscription {
    this.assertOpen();
    const subscription = new EsdbSubscription(this.client, validateSubscribe(options), this.retry, (s) =>
      this.subscriptions.delete(s),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Pages backwards from the end past system events ($all also holds the server's own). */
  async headPosition(): Promise<bigint | null> {
    this.assertOpen();
    let from: ReadPosition = END;
    let boundary: bigint | null = null;
    for (;;) {
      let received = 0;
      for await (const resolved of this.client.readAll({
        direction: BACKWARDS,
        fromPosition: from,
        maxCount: HEAD_PAGE,
      })) {
        received++;
        const event = resolved.event;
        if (!event) continue;
        const position = event.position.commit;
        if (boundary !== null && position >= boundary) continue;
        boundary = position;
        if (!isSystemEvent(event)) return position;
      }
      if (received < HEAD_PAGE || boundary === null) return null;
      from = toReadPosition(boundary);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}
