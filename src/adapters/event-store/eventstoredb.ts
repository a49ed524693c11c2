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
import { trimOldest } from '../../core/bounded-map';
import { type Clock, systemClock } from '../../core/clock';
import { maskCredentials } from '../../core/urls';
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
  STREAM_EXISTS,
  type SubscribeOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from '../../ports/event-store';
import { resolveExistingIds } from './append-rules';
import { chainHash, GENESIS, tipOf } from './chain';
import {
  appendTooLarge,
  isNotLeader,
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
  type PreparedAppend,
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
  /** The service's clock: an event's `created` (carried in its metadata, CREATED_KEY). Default: the system's. */
  clock?: Clock;
}

/**
 * Stream reads and the head position are served by the leader whatever the connection string's
 * nodePreference: decisions rely on a read of another stream seeing every acknowledged append (the
 * race between two service days, docs/RESERVATIONS.md), and a follower may lag behind, which could
 * silently overbook. A client connected to a follower is answered "not leader" and reconnects to the
 * leader; the read is then tried once more (onLeader), so a leader election or a follower preference
 * costs a retry, not a failed request. The client has one connection: once redirected, its catch-up
 * reads and subscriptions are served by the leader too, until that connection drops.
 */
const ON_LEADER = { requiresLeader: true } as const;

/** `attempt`, tried once more when it reached a follower (the client has moved to the leader since). */
export async function onLeader<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (!isNotLeader(err)) throw err;
    return attempt();
  }
}

const HEAD_PAGE = 64;
/** Streams whose chain tip an instance remembers (the last append of each). */
const TIP_CACHE = 10_000;
/** any / stream_exists appends retried when another writer appended between the read and the append. */
const OBSERVED_RETRIES = 50;
/** How many of a stream's last events an any / stream_exists append looks through for a retry of its ids. */
const RETRY_WINDOW = 64;

export class EsdbEventStore implements EventStore {
  readonly kind = 'eventstoredb' as const;
  private readonly subscriptions = new Set<Subscription>();
  private readonly retry: RetryPolicy;
  private readonly clock: Clock;
  private closed = false;

  private constructor(
    private readonly client: EventStoreDBClient,
    options: EsdbEventStoreOptions,
  ) {
    this.clock = options.clock ?? systemClock;
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
          // Never the user and password EVENTSTORE_URL may carry: this message reaches stderr and the logs.
          throw new EventStoreError(
            `cannot reach EventStoreDB at ${maskCredentials(connectionString)}: ${String(err)}`,
            { cause: err },
          );
        }
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)));
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreError('the event store is closed');
  }

  /**
   * The chain (chain.ts) needs the hash of the event the append goes after. With a revision (what
   * command handlers use), that event is known and its hash usually cached from this process's last
   * append to the stream; any/stream_exists read the stream's last event and append after it with
   * that revision, retrying when another writer got there first, so the chain never forks.
   */
  async append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    _options?: AppendOptions,
  ): Promise<AppendResult> {
    this.assertOpen();
    const batch = prepareAppend(stream, events, expected);
    for (let attempt = 1; ; attempt++) {
      const tip = await this.tipFor(batch);
      if ('done' in tip) return tip.done;
      // One instant for the batch, as the SQLite log writes one per append: the clock now, at each
      // attempt, and never before the event it goes after (a retry, or API processes whose clocks
      // differ, gave revision N+1 an earlier created than N; `audit as-of` cuts streams by time).
      const now = this.clock.now().toISOString();
      const created = tip.created !== undefined && tip.created > now ? tip.created : now;
      let prev = tip.prev;
      let revision = tip.first - 1;
      const data = batch.events.map((e) => {
        revision++;
        prev = chainHash(prev, { ...e, stream: batch.stream, revision });
        return toEventData(e, prev, created);
      });
      let result: Awaited<ReturnType<EventStoreDBClient['appendToStream']>>;
      try {
        result = await this.client.appendToStream(batch.stream, data, {
          expectedRevision: toEsdbExpected(tip.expected),
        });
      } catch (err) {
        this.tips.delete(batch.stream);
        if (isWrongExpectedVersion(err)) {
          if (tip.observed && attempt < OBSERVED_RETRIES) continue;
          throw toWrongExpectedRevision(err, batch.stream, batch.expected);
        }
        const tooLarge = appendTooLarge(err, batch.stream);
        if (tooLarge) throw tooLarge;
        throw err;
      }
      const nextRevision = Number(result.nextExpectedRevision);
      // An idempotent retry is answered without a position: it is the position of the stored event.
      const position = result.position?.commit ?? (await this.positionOf(batch.stream, nextRevision));
      if (result.position !== undefined) this.remember(batch.stream, nextRevision, prev, created);
      return { nextRevision, position };
    }
  }

  private readonly tips = new Map<string, { revision: number; hash: string; created: string }>();

  private remember(stream: string, revision: number, hash: string, created: string): void {
    this.tips.delete(stream);
    this.tips.set(stream, { revision, hash, created });
    trimOldest(this.tips, TIP_CACHE);
  }

  /** The hash of `event`, or for an event written before the chain, the tip recomputed up to it. */
  private async hashAt(event: RecordedEvent): Promise<string> {
    if (event.hash !== undefined) return event.hash;
    return tipOf(await this.readStream(event.stream, { limit: event.revision + 1 }));
  }

  private async tipFor(
    batch: PreparedAppend,
  ): Promise<
    | { expected: ExpectedRevision; prev: string; first: number; observed: boolean; created?: string }
    | { done: AppendResult }
  > {
    const { stream, expected } = batch;
    if (expected === NO_STREAM) return { expected, prev: GENESIS, first: 0, observed: false };
    if (typeof expected === 'number') {
      const cached = this.tips.get(stream);
      if (cached?.revision === expected)
        return { expected, prev: cached.hash, first: expected + 1, observed: false, created: cached.created };
      const [at] = await this.readStream(stream, { fromRevision: expected, limit: 1 });
      // No event there yet: refused here. Sent, it would be taken if another writer reached that
      // revision meanwhile, after an event its chain hash never saw (a retry of this append has an
      // event there: its ids follow it).
      if (at?.revision !== expected) throw await this.conflict(stream, expected);
      return {
        expected,
        prev: await this.hashAt(at),
        first: expected + 1,
        observed: false,
        created: at.created,
      };
    }
    // any / stream_exists: after whatever is last. The append goes to the server with that revision,
    // for which the server only recognises a retry written right there: a retry of an append others
    // appended after (an erasure's deterministic CallerErased, resumed) would be written twice. So ids
    // of the batch found in the stream's last events are decided as the embedded stores decide them
    // (append-rules.ts): the whole batch in order answers the original result, part of it conflicts.
    const window = Math.max(batch.events.length, RETRY_WINDOW);
    const tail = await this.readStream(stream, { direction: 'backwards', limit: window });
    const last = tail[0];
    if (last === undefined) {
      // As above: sent as stream_exists, it would be taken after a writer creating the stream meanwhile.
      if (expected === STREAM_EXISTS) throw new WrongExpectedRevisionError(stream, expected, NO_STREAM);
      return { expected: NO_STREAM, prev: GENESIS, first: 0, observed: true };
    }
    const byId = new Map(tail.map((e) => [e.id, e]));
    if (batch.events.some((e) => byId.has(e.id))) {
      const found = batch.events.map((e) => byId.get(e.id));
      return { done: resolveExistingIds(stream, expected, last.revision, found) };
    }
    return {
      expected: last.revision,
      prev: await this.hashAt(last),
      first: last.revision + 1,
      observed: true,
      created: last.created,
    };
  }

  /** The conflict of an append expecting `expected`, with the stream's last revision as it is now. */
  private async conflict(stream: string, expected: number): Promise<WrongExpectedRevisionError> {
    const [last] = await this.readStream(stream, { direction: 'backwards', limit: 1 });
    return new WrongExpectedRevisionError(stream, expected, last === undefined ? NO_STREAM : last.revision);
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

  private read(
    stream: string,
    direction: 'forwards' | 'backwards',
    fromRevision: number | undefined,
    limit: number | undefined,
  ): Promise<RecordedEvent[]> {
    return onLeader(() => this.readOnce(stream, direction, fromRevision, limit));
  }

  private async readOnce(
    stream: string,
    direction: 'forwards' | 'backwards',
    fromRevision: number | undefined,
    limit: number | undefined,
  ): Promise<RecordedEvent[]> {
    const read = this.client.readStream(stream, {
      ...ON_LEADER,
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
    return onLeader(() => this.headPositionOnce());
  }

  private async headPositionOnce(): Promise<bigint | null> {
    let from: ReadPosition = END;
    let boundary: bigint | null = null;
    for (;;) {
      let received = 0;
      for await (const resolved of this.client.readAll({
        ...ON_LEADER,
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
