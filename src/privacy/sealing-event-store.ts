// The EventStore every part of the service uses: the real store, with the personal fields of
// customer events, reservation events and webhook fan-outs sealed with the customer's key on the way
// in and opened on the way out (seal.ts). A reservation event after the creation does not name its
// customer: the layer knows it from the reservation's stream (learnt when a handler reads the stream
// before appending to it, or read once), and records it in the sealed box.
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
import {
  customerSubject,
  eraseClearData,
  hasPersonalFields,
  isSealed,
  isSealedType,
  openData,
  RESERVATION_SEALED_TYPES,
  sealCustomer,
  sealData,
  sealedCustomer,
} from './seal';

/** How long an opened key is trusted before it is looked up again (another process may erase it). */
const KEY_TTL_MS = 30_000;
const KEY_CACHE = 50_000;
/** Reservation streams whose customer is remembered. */
const RESERVATION_CACHE = 50_000;
const RESERVATION_STREAM = 'reservation-';
/**
 * Events this process sealed moments ago, in clear, so the readers that follow every append (the
 * projections' catch-up, the webhook publisher) do not decrypt what was just encrypted. Short-lived
 * (an erasure by another process is seen within the key cache's TTL anyway) and cleared by every
 * erasure here.
 */
const PLAIN_TTL_MS = 5_000;
const PLAIN_CACHE = 20_000;

/** The reservation's customer after this event of its stream, or undefined when it does not say. */
export function reservationCustomerAfter(type: string, data: unknown): string | null | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const d = data as { reservation?: { customer_id?: unknown }; changes?: { customer_id?: unknown } };
  const c =
    type === 'ReservationCreated'
      ? d.reservation?.customer_id
      : type === 'ReservationUpdated'
        ? d.changes?.customer_id
        : undefined;
  return c === undefined ? undefined : typeof c === 'string' ? c : null;
}

export class SealingEventStore implements EventStore {
  readonly kind: EventStore['kind'];
  private readonly cache = new Map<string, { key: Buffer | null; destroyed: boolean; until: number }>();
  /**
   * Whether events written in clear before sealing (a log that could not be migrated in place:
   * EventStoreDB) read as erased once their customer's key is destroyed. Off on SQLite, whose log is
   * sealed in place at start (legacy.ts), so its reads pay nothing for it.
   */
  private readonly eraseLegacy: boolean;
  /** Reservation stream → its customer (null: none). */
  private readonly reservationCustomers = new Map<string, string | null>();
  /** Event id → its data in clear, for events sealed here moments ago (see PLAIN_TTL_MS). */
  private readonly plain = new Map<string, { data: Record<string, unknown>; until: number }>();

  constructor(
    /** The store as it is: sealed data, hashes over it. */
    readonly inner: EventStore,
    readonly keys: KeyStore,
    private readonly now: () => Date = () => new Date(),
    options: { eraseLegacy?: boolean } = {},
  ) {
    this.kind = inner.kind;
    this.eraseLegacy = options.eraseLegacy ?? inner.kind === 'eventstoredb';
  }

  private remember(subject: string, key: Buffer | null, destroyed = key === null): void {
    this.cache.delete(subject);
    this.cache.set(subject, { key, destroyed, until: Date.now() + KEY_TTL_MS });
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
    // A remembered "no key yet" (a read looked) is no answer here: the key is made.
    if (hit !== undefined && hit.until > Date.now() && (hit.key !== null || hit.destroyed)) return hit.key;
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
    this.remember(subject, key, found.state === 'destroyed');
    return key;
  }

  /** Whether a customer was erased (their key destroyed). */
  private async isErased(customerId: string): Promise<boolean> {
    const subject = customerSubject(customerId);
    await this.openingKey(subject);
    return this.cache.get(subject)?.destroyed === true;
  }

  /** An event written in clear before sealing: erased on read once its customer is. */
  private async openLegacy(event: RecordedEvent): Promise<RecordedEvent> {
    if (!isSealedType(event.type) || !hasPersonalFields(event.type, event.data)) return event;
    let customer = sealCustomer(event.type, event.data);
    if (
      customer === null &&
      event.stream.startsWith(RESERVATION_STREAM) &&
      event.type.startsWith('Reservation')
    )
      customer = await this.reservationCustomer(event.stream);
    if (customer === null || !(await this.isErased(customer))) return event;
    return { ...event, data: eraseClearData(event.type, event.data) };
  }

  /** Whether a read event needs the layer: sealed, a deletion, or (on EventStoreDB) maybe legacy. */
  private needsOpening(e: RecordedEvent): boolean {
    return isSealed(e.data) || e.type === 'CustomerDeleted' || (this.eraseLegacy && isSealedType(e.type));
  }

  /**
   * The event with its personal fields sealed with `customerId`'s key (default: the customer its data
   * names); the event itself when it holds nothing personal or no customer is known.
   */
  async seal(event: NewEvent, customerId = sealCustomer(event.type, event.data)): Promise<NewEvent> {
    if (customerId === null || 'sealed' in event.data || !hasPersonalFields(event.type, event.data))
      return event;
    const key = await this.sealingKey(customerSubject(customerId));
    return { ...event, data: sealData(event.type, event.data, key, customerId) };
  }

  async open(event: RecordedEvent): Promise<RecordedEvent> {
    if (event.type === 'CustomerDeleted' && typeof event.data.customer_id === 'string')
      this.cache.delete(customerSubject(event.data.customer_id));
    const clear = this.plain.get(event.id);
    if (clear !== undefined && clear.until > Date.now()) return { ...event, data: clear.data };
    const customer = sealedCustomer(event.data);
    if (customer === null) return this.eraseLegacy && !isSealed(event.data) ? this.openLegacy(event) : event;
    const key = await this.openingKey(customerSubject(customer));
    return { ...event, data: openData(event.type, event.data, key) };
  }

  private learn(stream: string, type: string, data: unknown): void {
    const c = reservationCustomerAfter(type, data);
    if (c === undefined) return;
    this.reservationCustomers.delete(stream);
    this.reservationCustomers.set(stream, c);
    if (this.reservationCustomers.size > RESERVATION_CACHE)
      this.reservationCustomers.delete(this.reservationCustomers.keys().next().value as string);
  }

  /** The customer of a reservation stream as the log has it (read once, then remembered). */
  private async reservationCustomer(stream: string): Promise<string | null> {
    const known = this.reservationCustomers.get(stream);
    if (known !== undefined) return known;
    let customer: string | null = null;
    for (const e of await this.inner.readStream(stream)) {
      const c = reservationCustomerAfter(e.type, e.data);
      if (c !== undefined) customer = c;
    }
    this.learn(stream, 'ReservationUpdated', { changes: { customer_id: customer } });
    return customer;
  }

  /** Whose key seals each event of an append (null: nothing to seal, or no customer). */
  private async customersOf(stream: string, events: readonly NewEvent[]): Promise<(string | null)[]> {
    const out: (string | null)[] = [];
    let current: string | null | undefined;
    for (const e of events) {
      if (typeof e !== 'object' || e === null || typeof e.type !== 'string' || !isObject(e.data)) {
        out.push(null);
        continue;
      }
      const named = sealCustomer(e.type, e.data);
      const after = reservationCustomerAfter(e.type, e.data);
      if (
        named === null &&
        stream.startsWith(RESERVATION_STREAM) &&
        RESERVATION_SEALED_TYPES.includes(e.type) &&
        !('sealed' in e.data) &&
        (after !== undefined || hasPersonalFields(e.type, e.data))
      ) {
        current = after !== undefined ? after : (current ?? (await this.reservationCustomer(stream)));
        out.push(current);
      } else {
        if (after !== undefined) current = after;
        out.push(named);
      }
    }
    return out;
  }

  /** Destroys a customer's key: every event sealed with it reads as erased from now on. */
  async erase(customerId: string): Promise<boolean> {
    const subject = customerSubject(customerId);
    const destroyed = await this.keys.destroy(subject, this.now().toISOString());
    this.remember(subject, null);
    this.plain.clear();
    return destroyed;
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    let sealed = events;
    if (Array.isArray(events) && typeof stream === 'string') {
      const customers = await this.customersOf(stream, events);
      // Bad input (not an event) is the inner store's to refuse, with its own error.
      sealed = await Promise.all(
        events.map((e, i) => (customers[i] === null ? e : this.seal(e, customers[i] as string))),
      );
    }
    const result = await this.inner.append(stream, sealed, expected);
    const until = Date.now() + PLAIN_TTL_MS;
    sealed.forEach((e, i) => {
      const id = e.id;
      if (e === events[i] || typeof id !== 'string') return;
      this.plain.set(id, { data: (events[i] as NewEvent).data, until });
      if (this.plain.size > PLAIN_CACHE) this.plain.delete(this.plain.keys().next().value as string);
    });
    for (const e of sealed) {
      if (e.type === 'CustomerDeleted' && typeof e.data?.customer_id === 'string')
        await this.erase(e.data.customer_id);
      if (stream.startsWith(RESERVATION_STREAM)) this.learn(stream, e.type, e.data);
    }
    return result;
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    const events = await this.inner.readStream(stream, options);
    // A handler reads a reservation before it appends to it: what it read says whose it is now.
    if (
      typeof stream === 'string' &&
      stream.startsWith(RESERVATION_STREAM) &&
      options?.direction !== 'backwards' &&
      (options?.fromRevision ?? 0) === 0 &&
      options?.limit === undefined
    ) {
      let customer: string | null | undefined;
      for (const e of events) {
        const c = reservationCustomerAfter(e.type, e.data);
        if (c !== undefined) customer = c;
      }
      if (customer !== undefined)
        this.learn(stream, 'ReservationUpdated', { changes: { customer_id: customer } });
    }
    if (!events.some((e) => this.needsOpening(e))) return events;
    const out: RecordedEvent[] = [];
    for (const e of events) out.push(await this.open(e));
    return out;
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    return opening(
      this.inner.readAll(options),
      (e) => this.open(e),
      (e) => this.needsOpening(e),
    );
  }

  subscribe(options?: SubscribeOptions): Subscription {
    const sub = this.inner.subscribe(options);
    const iterable = opening(
      sub,
      (e) => this.open(e),
      (e) => this.needsOpening(e),
    );
    return { [Symbol.asyncIterator]: () => iterable[Symbol.asyncIterator](), close: () => sub.close() };
  }

  headPosition(): Promise<bigint | null> {
    return this.inner.headPosition();
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Maps an async iterable without a generator (one promise per event, no generator queue). */
function opening(
  source: AsyncIterable<RecordedEvent>,
  open: (e: RecordedEvent) => Promise<RecordedEvent>,
  needed: (e: RecordedEvent) => boolean,
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
            if (!needed(e)) return r;
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
