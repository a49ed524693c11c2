// The EventStore every part of the service uses: the real store, with the personal fields of
// customer events sealed with the customer's key on the way in and opened on the way out (seal.ts).
// Command handlers, projections, the webhook publisher and the audit tools read plain events
// through it; the log itself (and so exports, backups and the hash chain) holds only sealed data.
// Appending CustomerDeleted destroys the customer's key once the event is durable: from then on
// every reader, replays included, sees the customer's personal fields as erased.
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../ports/event-store';
import { type KeyStore, KeyStoreError, validateSubject } from '../ports/key-store';
import { customerSubject, isSealed, openData, sealData, sealSubject } from './seal';

/** How long an opened key is trusted before it is looked up again (another process may erase it). */
const KEY_TTL_MS = 30_000;
const KEY_CACHE = 50_000;

export class SealingEventStore implements EventStore {
  readonly kind: EventStore['kind'];
  private readonly cache = new Map<string, { key: Buffer | null; until: number }>();

  constructor(
    /** The store as it is: sealed data, hashes over it. */
    readonly inner: EventStore,
    readonly keys: KeyStore,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.kind = inner.kind;
  }

  private remember(subject: string, key: Buffer | null): void {
    this.cache.delete(subject);
    this.cache.set(subject, { key, until: Date.now() + KEY_TTL_MS });
    if (this.cache.size > KEY_CACHE) this.cache.delete(this.cache.keys().next().value as string);
  }

  /**
   * The key that seals a new event: created on first use; null once erased (nothing personal is
   * written). Keys not in the cache are asked for together: every miss until the next setImmediate
   * goes into one KeyStore.obtainMany (one durable write for a batch of new customers, e.g. an
   * import's batch or one event-loop turn of POST /customers), not one fsync each.
   */
  private sealingKey(subject: string): Promise<Buffer | null> | Buffer | null {
    const hit = this.cache.get(subject);
    if (hit !== undefined && hit.until > Date.now()) return hit.key;
    // A bad subject fails its own append only, not the others of the batch.
    validateSubject(subject);
    if (this.misses === null) {
      const subjects = new Set<string>();
      const keys = new Promise((r) => setImmediate(r)).then(async () => {
        this.misses = null;
        const got = await this.keys.obtainMany([...subjects]);
        for (const [s, key] of got) this.remember(s, key);
        return got;
      });
      this.misses = { subjects, keys };
    }
    this.misses.subjects.add(subject);
    return this.misses.keys.then((got) => {
      const key = got.get(subject);
      if (key === undefined) throw new KeyStoreError(`the key store did not answer for ${subject}`);
      return key;
    });
  }

  /** The subjects missing from the cache, asked for together at the next setImmediate. */
  private misses: { subjects: Set<string>; keys: Promise<Map<string, Buffer | null>> } | null = null;

  /**
   * Obtains the sealing keys of these customers before their events are appended, in one key-store
   * write for the lot (a caller writing a batch of customers: the CSV import). Their appends then
   * seal at once, so they reach the log's group commit together.
   */
  async prepareKeys(customerIds: readonly string[]): Promise<void> {
    await Promise.all(customerIds.map((id) => this.sealingKey(customerSubject(id))));
  }

  /** The key that opens a stored event: null when destroyed (or, which never happens, missing). */
  private async openingKey(subject: string): Promise<Buffer | null> {
    const hit = this.cache.get(subject);
    if (hit !== undefined && hit.until > Date.now()) return hit.key;
    const found = await this.keys.find(subject);
    const key = found.state === 'active' ? found.key : null;
    this.remember(subject, key);
    return key;
  }

  async seal(event: NewEvent): Promise<NewEvent> {
    const subject = sealSubject(event.type, event.data);
    if (subject === null) return event;
    return { ...event, data: sealData(event.type, event.data, await this.sealingKey(subject)) };
  }

  async open(event: RecordedEvent): Promise<RecordedEvent> {
    if (event.type === 'CustomerDeleted' && typeof event.data.customer_id === 'string')
      this.cache.delete(customerSubject(event.data.customer_id));
    if (!isSealed(event.data) || typeof event.data.customer_id !== 'string') return event;
    const key = await this.openingKey(customerSubject(event.data.customer_id));
    return { ...event, data: openData(event.type, event.data, key) };
  }

  /** Destroys a customer's key: every event sealed with it reads as erased from now on. */
  async erase(customerId: string): Promise<boolean> {
    const subject = customerSubject(customerId);
    const destroyed = await this.keys.destroy(subject, this.now().toISOString());
    this.remember(subject, null);
    return destroyed;
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const sealed = Array.isArray(events) ? await Promise.all(events.map((e) => this.sealSafely(e))) : events;
    const result = await this.inner.append(stream, sealed, expected);
    for (const e of sealed)
      if (e.type === 'CustomerDeleted' && typeof e.data?.customer_id === 'string')
        await this.erase(e.data.customer_id);
    return result;
  }

  /** Bad input is the inner store's to refuse, with its own error. */
  private async sealSafely(e: NewEvent): Promise<NewEvent> {
    if (
      typeof e !== 'object' ||
      e === null ||
      typeof e.type !== 'string' ||
      typeof e.data !== 'object' ||
      e.data === null
    )
      return e;
    return this.seal(e);
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    const events = await this.inner.readStream(stream, options);
    if (!events.some((e) => isSealed(e.data) || e.type === 'CustomerDeleted')) return events;
    const out: RecordedEvent[] = [];
    for (const e of events) out.push(await this.open(e));
    return out;
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    return opening(this.inner.readAll(options), (e) => this.open(e));
  }

  subscribe(options?: SubscribeOptions): Subscription {
    const sub = this.inner.subscribe(options);
    const iterable = opening(sub, (e) => this.open(e));
    return { [Symbol.asyncIterator]: () => iterable[Symbol.asyncIterator](), close: () => sub.close() };
  }

  headPosition(): Promise<bigint | null> {
    return this.inner.headPosition();
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}

/** Maps an async iterable without a generator (one promise per event, no generator queue). */
function opening(
  source: AsyncIterable<RecordedEvent>,
  open: (e: RecordedEvent) => Promise<RecordedEvent>,
): AsyncIterable<RecordedEvent> {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      const mapped: AsyncIterableIterator<RecordedEvent> = {
        [Symbol.asyncIterator]: () => mapped,
        next: () =>
          it.next().then((r) => {
            if (r.done) return r;
            const e = r.value;
            if (!isSealed(e.data) && e.type !== 'CustomerDeleted') return r;
            return open(e).then((value) => ({ done: false as const, value }));
          }),
        return: async () => (it.return ? it.return() : { done: true as const, value: undefined }),
      };
      return mapped;
    },
  };
}

/** The store under any sealing layer: what is written in the log. */
export function storedEvents(events: EventStore): EventStore {
  return events instanceof SealingEventStore ? events.inner : events;
}
