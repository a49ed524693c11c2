// The EventStore every part of the service uses: the real store, with the personal fields of
// customer events, reservation events and webhook fan-outs sealed with the customer's key on the way
// in and opened on the way out (seal.ts). A reservation event after the creation does not name its
// customer: the layer knows it from the reservation's stream (learnt when a handler reads the stream
// before appending to it, or read once), and records it in the sealed box.
// Command handlers, projections, the webhook publisher and the audit tools read plain events
// through it; the log itself (and so exports, backups and the hash chain) holds only sealed data.
// They also read events an older version wrote in a shape since corrected as the current code writes
// them (commands/reservations/legacy-instants.ts: instants with fractional-minute offsets;
// commands/missed-calls/legacy-occurred-at.ts: a call's occurred_at outside years 0001-9998); the log
// keeps what was written.
// Appending CustomerDeleted destroys the customer's key once the event is durable: from then on
// every reader, replays included, sees the customer's personal fields as erased.
//
// Keys of new customers. A customer created here (CustomerCreated appended to a new stream
// `customer-<id>`) is sealed with a key taken from a pool this layer makes ahead, 256 at a time, as
// one key page (KeyStore.createPage: one row, one durable write; subjects `key:<page>.<slot>`), not
// with a key written for it on the request path (a durable write per new customer, or per batch of
// them, was most of sealing's cost). Pool keys made before pages (`key:<kid>`, one row each) read
// as before. The box
// names the key (`sealed.kid`, a v2 box); the customer's own subject (`customer:<id>`) gets no key.
// What keeps erasure whole: a pool key is only ever bound to a customer by that customer's
// CustomerCreated, in the customer's own stream, and the binding is learnt again from there (never
// kept only in memory): every later event of the customer sealed here uses the key the stream names,
// and erasing reads the customer's stream and destroys every key its boxes name, then tombstones
// `customer:<id>` as before. A pool key handed out but not used (the append failed, the process
// stopped) seals nothing; it stays in the key store unused.

import { missedCallStream } from '../../commands/missed-calls/events';
import { upcastOccurredAt } from '../../commands/missed-calls/legacy-occurred-at';
import { upcastProviderError } from '../../commands/missed-calls/legacy-provider-errors';
import { upcastLegacyInstants } from '../../commands/reservations/legacy-instants';
import { BoundedCache, trimOldest } from '../core/bounded-map';
import { deterministicUuid } from '../core/ids';
import {
  ANY,
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../ports/event-store';
import {
  type KeyLookup,
  type KeyStore,
  KeyStoreError,
  MAX_PAGE_KEYS,
  pageKid,
  validateSubject,
} from '../ports/key-store';
import {
  erasePreviousCustomers,
  isUncheckedFanout,
  previousCustomers,
  uncheckedMove,
} from './legacy-fanouts';
import { legacyMissedCallCustomer } from './missed-call-migration';
import {
  CALLER_ERASED,
  callOwner,
  linkMember,
  NumberIndex,
  needsNumberKey,
  numberSealing,
  parseLinkMember,
} from './number-keys';
import {
  foldTextOwners,
  NO_TEXT_OWNERS,
  ownerOf,
  TEXT_FIELDS,
  type TextOwnerMap,
  type TextOwnerState,
} from './reservation-text-owners';
import {
  customerSubject,
  eraseClearData,
  erasedCopy,
  erasePaths,
  hasPersonalFields,
  hasPreviousText,
  isSealed,
  isSealedType,
  kidSubject,
  moreSubjects,
  type OwnerKey,
  openData,
  openMore,
  openPlain,
  otherSubjects,
  personalFields,
  RESERVATION_SEALED_TYPES,
  SEAL_VERSION_KID,
  type Sealed,
  STAND_IN,
  sealCustomer,
  sealedKid,
  sealFields,
  sealSplit,
} from './seal';

/** How long an opened key is trusted before it is looked up again (another process may erase it). */
const KEY_TTL_MS = 30_000;
const KEY_CACHE = 50_000;
/** Reservation streams whose customer is remembered. */
const RESERVATION_CACHE = 50_000;
const RESERVATION_STREAM = 'reservation-';
/** A customer's stream (commands/customers/events.ts, customerStream). */
const CUSTOMER_STREAM = 'customer-';
/**
 * Pool keys made in one key page (one key-store write) at first, and the share of a page left when
 * the next is asked for. A take that finds the pool empty once a page was made (new customers coming
 * faster than a page is written: a CSV import) doubles the page, up to MAX_PAGE_KEYS: otherwise
 * every new customer of the moment waits for the page and they are all sealed in one turn when it
 * lands (an import held the event loop ~100 ms that way).
 */
const POOL_FIRST_PAGE = 256;
const POOL_LOW_SHARE = 0.5;
/**
 * Boxes this process sealed, with their plaintext, kept until this many newer ones: the read models
 * of this process read an event just after appending it, and open it from here without decrypting.
 */
const PLAIN_MEMO = 4096;

/**
 * A box sealed by one layer, handed to another over the same log (collectSealedPlains): the box, its
 * plaintext, whose it is, and the pool key's id that sealed it (null: the customer's own key).
 */
export type SealedPlain = [box: string, plaintext: string, customer: string, kid: string | null];

/** A sealing key: the customer's own (`kid` undefined) or a pool key, and whether it was destroyed. */
interface CachedKey {
  key: Buffer | null;
  destroyed: boolean;
  until: number;
  kid?: string;
}

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
  private readonly cache = new BoundedCache<string, CachedKey>(KEY_CACHE);
  /** Customer → the pool key their stream binds them to (learnt from their CustomerCreated). */
  private readonly kids = new BoundedCache<string, string>(KEY_CACHE);
  /** Pool keys made ahead and not handed out yet. */
  private spares: { kid: string; key: Buffer }[] = [];
  /** Keys the next page holds (POOL_FIRST_PAGE, doubled each time the pool ran dry). */
  private pageSize = POOL_FIRST_PAGE;
  private grewFor: Promise<void> | null = null;
  private pagesMade = 0;
  private refill: Promise<void> | null = null;
  /** Box → the plaintext sealed in it and whose it is (PLAIN_MEMO). */
  private readonly plains = new Map<string, { plaintext: string; customer: string }>();
  /**
   * Whether events written in clear before sealing (a log that could not be migrated in place:
   * EventStoreDB) read as erased once their customer's key is destroyed. Off on SQLite, whose log is
   * sealed in place at start (legacy.ts), so its reads pay nothing for it.
   */
  private readonly eraseLegacy: boolean;
  /** Reservation stream → its customer (null: none). */
  private readonly reservationCustomers = new BoundedCache<string, string | null>(RESERVATION_CACHE);
  /** Reservation stream → whose box holds each of its text fields (foldTextOwners). */
  private readonly textOwners = new BoundedCache<string, TextOwnerState>(RESERVATION_CACHE);
  /**
   * A ReservationUpdated being appended (its data) → whose box held each text field before it: its
   * `previous` values are sealed with those keys (otherSubjects), not in clear nor in the new box.
   */
  private readonly previousOwners = new WeakMap<object, TextOwnerMap>();
  /** The restaurants' keys that hash a number into its link label (number-keys.ts). */
  private readonly numbers: NumberIndex;

  constructor(
    /** The store as it is: sealed data, hashes over it. */
    readonly inner: EventStore,
    readonly keys: KeyStore,
    private readonly now: () => Date = () => new Date(),
    options: { eraseLegacy?: boolean } = {},
  ) {
    this.kind = inner.kind;
    this.eraseLegacy = options.eraseLegacy ?? inner.kind === 'eventstoredb';
    this.numbers = new NumberIndex(keys);
  }

  private remember(subject: string, key: Buffer | null, destroyed = key === null, kid?: string): void {
    const entry: CachedKey = { key, destroyed, until: Date.now() + KEY_TTL_MS };
    if (kid !== undefined) entry.kid = kid;
    this.cache.set(subject, entry);
  }

  /**
   * The event's data sealed with `key` (null: erased, the fields written erased), its plaintext
   * remembered for open() (PLAIN_MEMO). `fields`: personalFields of the data, not empty.
   */
  private sealWith(
    event: NewEvent,
    fields: [string, unknown][],
    key: Buffer | null,
    customer: string,
    kid: string | undefined,
    others?: SplitPlan,
  ): Record<string, unknown> {
    if (key === null) return erasedCopy(withoutStandIn(event.data), fields);
    const sealed =
      others === undefined
        ? sealFields(event.type, event.data, fields, key, customer, kid)
        : sealSplit(
            event.type,
            event.data,
            fields,
            kid === undefined ? { key, customer } : { key, customer, kid },
            others.groups,
            others.keys,
          );
    // A move written now names its other boxes even when there are none (`more: []`): only rows
    // written before (no `more`) are read by legacy-fanouts.ts's rule, the rest take openNow.
    const box = sealed.data.sealed as Sealed;
    if (box.more === undefined && event.type === 'ReservationUpdated') {
      const previous = (event.data as { previous?: unknown }).previous;
      if (isObject(previous) && typeof previous.customer_id === 'string') box.more = [];
    }
    this.plains.set(sealed.box, { plaintext: sealed.plaintext, customer });
    trimOldest(this.plains, PLAIN_MEMO);
    this.handOver?.push([sealed.box, sealed.plaintext, customer, kid ?? null]);
    return sealed.data;
  }

  /** Boxes sealed since the last takeSealedPlains(), when collecting (collectSealedPlains). */
  private handOver: SealedPlain[] | null = null;

  /**
   * From now on keeps every box this layer seals with its plaintext, for takeSealedPlains(): a CSV
   * import's thread hands them to the main thread, whose read models then open the import's events
   * without a key look-up or a decryption (rememberPlains there).
   */
  collectSealedPlains(): void {
    this.handOver ??= [];
  }

  takeSealedPlains(): SealedPlain[] {
    const out = this.handOver ?? [];
    if (this.handOver !== null) this.handOver = [];
    return out;
  }

  /**
   * Boxes another layer over the same log sealed (a CSV import's thread), with their plaintexts:
   * opened from here like this layer's own (PLAIN_MEMO). Their keys are asked of the key store, not
   * taken from the other layer, and nothing is kept of a customer whose subject is a tombstone or
   * whose pool key is not active: an erasure that came first (in any process) stays whole. An erasure
   * in this process while the key store answered makes it ask again; after a few, nothing is kept
   * (the events are then opened with a look-up and a decryption, as any other process's).
   */
  async rememberPlains(entries: readonly SealedPlain[]): Promise<void> {
    if (entries.length === 0) return;
    const subjects = new Set<string>();
    for (const [, , customer, kid] of entries) {
      subjects.add(customerSubject(customer));
      if (kid !== null) subjects.add(kidSubject(kid));
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = this.erasures;
      const found = await this.keys.findMany([...subjects]);
      if (this.erasures !== before) continue;
      for (const [box, plaintext, customer, kid] of entries) {
        if (found.get(customerSubject(customer))?.state === 'destroyed') continue;
        if (kid !== null) {
          const k = found.get(kidSubject(kid));
          if (k?.state !== 'active') continue;
          this.remember(kidSubject(kid), k.key);
        }
        this.plains.set(box, { plaintext, customer });
      }
      trimOldest(this.plains, PLAIN_MEMO);
      return;
    }
  }

  /** Erasures begun or read in this layer (rememberPlains asks again when it moved). */
  private erasures = 0;

  /**
   * How many erasures this layer has begun or read (a customer's, a call's number): a reader holding
   * something opened before (the webhook publisher's queued bodies) opens it again when it moved.
   */
  erasuresSeen(): number {
    return this.erasures;
  }

  /**
   * Which of these customers are erased, asked of the key store itself (this process's cache may
   * still hold a key another process has destroyed since: a second webhook worker, or this one before
   * it reads the deletion). A destroyed answer is kept (it is final); a live one is asked again next
   * time (one key-store read per customer), except within one read `scope` (ReadScope: one
   * readStream call, or one page of a readAll or a subscription): a rebuild from position 0 asks once
   * per customer a page, not once a legacy row. One found erased is forgotten here as a deletion read
   * would (its keys and plaintexts, erasuresSeen moves), so what is read next reads erased.
   */
  async erasedNow(customerIds: readonly string[], scope?: ReadScope): Promise<string[]> {
    const out: string[] = [];
    for (const id of new Set(customerIds)) {
      const subject = customerSubject(id);
      const hit = this.cache.get(subject);
      if (hit?.destroyed === true && hit.kid === undefined) {
        out.push(id);
        continue;
      }
      if (scope !== undefined && scope.live(id)) continue;
      if ((await this.keys.find(subject)).state !== 'destroyed') {
        scope?.add(id);
        continue;
      }
      out.push(id);
      this.erasures++;
      this.forgetPlains(id);
      for (const kid of await this.kidsOf(id)) this.cache.delete(kidSubject(kid));
      this.remember(subject, null, true);
    }
    return out;
  }

  /** Forgets the plaintexts of an erased customer's boxes. */
  private forgetPlains(customer: string): void {
    for (const [box, p] of this.plains) if (p.customer === customer) this.plains.delete(box);
  }

  /** Remembers that `customerId`'s stream binds them to pool key `kid`. */
  private bind(customerId: string, kid: string): void {
    this.kids.set(customerId, kid);
  }

  /**
   * About `count` new customers are on their way (a CSV import): pool pages of that many keys (up to
   * MAX_PAGE_KEYS) from now on, the first asked for at once, so that its first rows find keys ready.
   */
  expectNewCustomers(count: number): void {
    this.pageSize = Math.max(this.pageSize, Math.min(MAX_PAGE_KEYS, Math.ceil(count)));
    this.spareNow(true);
  }

  /**
   * A pool key, made durable before it is handed out (a key page: one durable write); the next page
   * is asked for in the background when the pool runs low.
   */
  private takeSpare(): Promise<{ kid: string; key: Buffer }> | { kid: string; key: Buffer } {
    const spare = this.spareNow();
    if (spare !== undefined) return spare;
    // Once per page waited for, however many takes wait for it; not for the first page (the pool
    // starts empty: that wait says nothing about demand).
    if (this.pagesMade > 0 && this.grewFor !== this.refill) {
      this.grewFor = this.refill;
      this.pageSize = Math.min(MAX_PAGE_KEYS, this.pageSize * 2);
    }
    return (this.refill as Promise<void>).then(() => this.takeSpare());
  }

  /**
   * A pool key if one is ready (a refill is started when the pool runs low), else undefined;
   * `peek`: only start the refill.
   */
  private spareNow(peek = false): { kid: string; key: Buffer } | undefined {
    if (this.spares.length <= this.pageSize * POOL_LOW_SHARE && this.refill === null) {
      this.refill = this.keys
        .createPage(this.pageSize)
        .then(({ page, keys }) => {
          this.pagesMade++;
          // Popped from the end: the page's slots are handed out last first.
          for (const [slot, key] of keys.entries()) this.spares.push({ kid: pageKid(page, slot), key });
        })
        .finally(() => {
          this.refill = null;
        });
      // A failed refill fails the appends waiting for it (below); the next take tries again.
      this.refill.catch(() => undefined);
    }
    return peek ? undefined : this.spares.pop();
  }

  /**
   * The key that seals the CustomerCreated of a new stream `customer-<id>`: the customer's own key if
   * they have one (a batch that prepared it) or null if their subject is tombstoned (nothing personal
   * is written), else a pool key, bound to them once the append succeeds (append, below).
   */
  private async newCustomerKey(
    customerId: string,
    minted = false,
  ): Promise<{ key: Buffer | null; kid?: string }> {
    // An id minted at random just now (AppendOptions.mintedId) has no key and no tombstone anywhere.
    if (minted) return this.takeSpare();
    const subject = customerSubject(customerId);
    const hit = this.cache.get(subject);
    if (hit !== undefined && hit.until > Date.now() && (hit.key !== null || hit.destroyed))
      return hit.kid === undefined ? { key: hit.key } : { key: hit.key, kid: hit.kid };
    validateSubject(subject);
    const found = await this.lookUp(subject);
    if (found.state === 'destroyed') {
      this.remember(subject, null);
      return { key: null };
    }
    if (found.state === 'active') {
      this.remember(subject, found.key);
      return { key: found.key };
    }
    return this.takeSpare();
  }

  /**
   * The key that seals a new event: created on first use; null once erased (nothing personal is
   * written). Keys not in the cache are asked for together: every miss until the next setImmediate
   * goes into one KeyStore.obtainMany (one durable write for a batch of new customers, e.g. an
   * import's batch or one event-loop turn of POST /customers), not one fsync each.
   */
  private sealingKey(
    subject: string,
  ): Promise<{ key: Buffer | null; kid?: string }> | { key: Buffer | null; kid?: string } {
    const hit = this.cache.get(subject);
    // A remembered "no key yet" (a read looked) is no answer here: the key is made.
    if (hit !== undefined && hit.until > Date.now() && (hit.key !== null || hit.destroyed))
      return hit.kid === undefined ? { key: hit.key } : { key: hit.key, kid: hit.kid };
    // A bad subject fails its own append only, not the others of the batch.
    validateSubject(subject);
    // A customer bound to a pool key keeps it (looked up again: another process may have erased it).
    const customer = subject.startsWith('customer:') ? subject.slice('customer:'.length) : null;
    const kid = customer === null ? undefined : this.kids.get(customer);
    if (kid !== undefined)
      return this.openingKey(kidSubject(kid)).then((key) => {
        const destroyed = this.cache.get(kidSubject(kid))?.destroyed === true;
        if (key === null && !destroyed) {
          // Never happens (pool keys are durable before use): the customer's own key seals instead.
          this.kids.delete(customer as string);
          return this.sealingKey(subject);
        }
        this.remember(subject, key, destroyed, kid);
        return { key, kid };
      });
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
      return { key };
    });
  }

  /**
   * The state of a new customer's own subject (a tombstone gets nothing personal written; a key a
   * batch prepared seals instead of a pool key). The look-ups of one event-loop turn go to the key
   * store together, in one findMany at the next setImmediate (one statement, or one MongoDB query,
   * for the turn's new customers instead of one each).
   */
  private lookUp(subject: string): Promise<KeyLookup> {
    if (this.lookups === null) {
      const subjects = new Set<string>();
      const found = new Promise((r) => setImmediate(r)).then(() => {
        this.lookups = null;
        return this.keys.findMany([...subjects]);
      });
      this.lookups = { subjects, found };
    }
    this.lookups.subjects.add(subject);
    return this.lookups.found.then((m) => m.get(subject) ?? { state: 'none' });
  }

  private lookups: { subjects: Set<string>; found: Promise<Map<string, KeyLookup>> } | null = null;

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
    if (hit !== undefined && hit.until > Date.now() && hit.kid === undefined) return hit.key;
    const found = await this.keys.find(subject);
    const key = found.state === 'active' ? found.key : null;
    this.remember(subject, key, found.state === 'destroyed');
    return key;
  }

  /** Whether a customer was erased (their key destroyed, or any pool key their stream names). */
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
    // Missed-call events name their call, whose stream names the customer (missed-call-migration.ts).
    if (customer === null) customer = await legacyMissedCallCustomer(event, this.inner);
    if (customer === null || !(await this.isErased(customer))) return event;
    return { ...event, data: eraseClearData(event.type, event.data) };
  }

  /**
   * An event as read from the store underneath (sealed fields stay sealed), as an export may show it:
   * on a log that cannot be rewritten, an event written in clear before sealing whose customer is
   * erased shows as erased, as it reads through the layer. Otherwise the event itself.
   */
  async storedAsShown(event: RecordedEvent): Promise<RecordedEvent> {
    return this.eraseLegacy && !isSealed(event.data) ? this.openLegacy(event) : event;
  }

  /** Whether a read event needs the layer: sealed, a deletion, or (on EventStoreDB) maybe legacy. */
  needsOpening(e: RecordedEvent): boolean {
    return (
      isSealed(e.data) ||
      e.type === 'CustomerDeleted' ||
      e.type === CALLER_ERASED ||
      (this.eraseLegacy && isSealedType(e.type))
    );
  }

  /**
   * The event with its personal fields sealed with `customerId`'s key (default: the customer its data
   * names); the event itself when it holds nothing personal or no customer is known.
   */
  async seal(event: NewEvent, customerId = sealCustomer(event.type, event.data)): Promise<NewEvent> {
    if (customerId === null || 'sealed' in event.data) return event;
    // The personal fields are looked for once: an event without any costs no key.
    const fields = personalFields(event.type, event.data);
    if (fields.length === 0) return event;
    const groups = otherSubjects(event.type, event.data, customerId, this.previousOwners.get(event.data));
    const { key, kid } = await this.sealingKey(customerSubject(customerId));
    if (groups.length === 0) return { ...event, data: this.sealWith(event, fields, key, customerId, kid) };
    const keys = new Map<string, OwnerKey>();
    for (const c of new Set(groups.flatMap((g) => g.customers))) {
      const got = await this.sealingKey(customerSubject(c));
      keys.set(c, got.kid === undefined ? { customer: c, key: got.key } : { customer: c, ...got });
    }
    return { ...event, data: this.sealWith(event, fields, key, customerId, kid, { groups, keys }) };
  }

  /** sealedForOthers once the other customer's key is looked up. */
  private async sealForOthersLater(event: NewEvent): Promise<NewEvent> {
    if (event?.type !== 'ReservationUpdated' || !isObject(event.data) || 'sealed' in event.data) return event;
    const groups = otherSubjects(event.type, event.data, null, this.previousOwners.get(event.data));
    const owners = new Map<string, OwnerKey>();
    for (const c of new Set(groups.flatMap((g) => g.customers))) {
      const k = await this.sealingKey(customerSubject(c));
      owners.set(
        c,
        k.kid === undefined ? { customer: c, key: k.key } : { customer: c, key: k.key, kid: k.kid },
      );
    }
    return this.sealedForOthers(event, (c) => owners.get(c)) ?? event;
  }

  /**
   * An event of a reservation without a customer that still holds another's data (a ReservationUpdated
   * taking it from them: its `previous` text was in their boxes): those fields sealed with their key,
   * the rest in clear as for any reservation without a customer. The event itself when there is none.
   */
  private sealedForOthers(
    event: NewEvent,
    keyOf: (customer: string) => OwnerKey | undefined,
  ): NewEvent | undefined {
    if ('sealed' in event.data || event.type !== 'ReservationUpdated') return event;
    const groups = otherSubjects(event.type, event.data, null, this.previousOwners.get(event.data));
    if (groups.length === 0) return event;
    const keys = new Map<string, OwnerKey>();
    for (const c of new Set(groups.flatMap((g) => g.customers))) {
      const k = keyOf(c);
      if (k === undefined) return undefined;
      keys.set(c, k);
    }
    const paths = new Set(groups.flatMap((g) => g.paths));
    const fields = personalFields(event.type, event.data).filter(([p]) => paths.has(p));
    if (fields.length === 0) return event;
    // The first owner's fields in the event's own box, each other owner's in a box of their own.
    const [first, ...rest] = groups as [(typeof groups)[number], ...typeof groups];
    const owner = keys.get(first.customers[0] as string) as OwnerKey;
    const others = rest.length === 0 ? undefined : { groups: rest, keys };
    return { ...event, data: this.sealWith(event, fields, owner.key, owner.customer, owner.kid, others) };
  }

  /** seal() for a new customer's CustomerCreated: a pool key unless they have a key already. */
  private async sealNew(
    event: NewEvent,
    customerId: string,
    handed: Map<string, Buffer>,
    minted = false,
  ): Promise<NewEvent> {
    if ('sealed' in event.data) return event;
    const fields = personalFields(event.type, event.data);
    if (fields.length === 0) return event;
    const { key, kid } = await this.newCustomerKey(customerId, minted);
    if (kid !== undefined && key !== null) this.handOut(handed, kid, key);
    return { ...event, data: this.sealWith(event, fields, key, customerId, kid) };
  }

  /**
   * The event as the current code reads it. `scope`: the read call it is part of, within which a
   * customer the key store said was not erased is not asked again (ReadScope); without it, asked.
   */
  async open(event: RecordedEvent, scope?: ReadScope): Promise<RecordedEvent> {
    if (event.type === 'CustomerDeleted' && typeof event.data.customer_id === 'string') {
      this.erasures++;
      const id = event.data.customer_id;
      scope?.forget(id);
      this.cache.delete(customerSubject(id));
      this.forgetPlains(id);
      const kid = this.kids.get(id);
      if (kid !== undefined) this.cache.delete(kidSubject(kid));
    }
    // A call whose number key an erasure destroyed (in this process or another): no longer trusted.
    if (event.type === CALLER_ERASED && typeof event.data.key_id === 'string') {
      this.erasures++;
      this.cache.delete(kidSubject(event.data.key_id));
      if (typeof event.data.missed_call_id === 'string')
        this.forgetPlains(callOwner(event.data.missed_call_id));
    }
    const data = event.data;
    if (!isSealed(data)) return this.eraseLegacy ? this.openLegacy(event) : event;
    const subject = this.openingSubject(event);
    if (subject === null) return event;
    const hit = this.cache.get(subject);
    // A hit naming a kid is the customer's sealing key (their pool key), not what opens a v1 box.
    const key =
      hit !== undefined && hit.until > Date.now() && hit.kid === undefined
        ? hit.key
        : await this.openingKey(subject);
    if (event.type === 'WebhookDeliveriesScheduled' && isUncheckedFanout(data))
      return this.openUncheckedFanout(this.openWith(event, key), scope);
    const moved = uncheckedMove(event.type, data);
    if (moved !== null) return this.openUncheckedMove(this.openWith(event, key), moved, key, scope);
    const others = moreSubjects(data);
    if (others.length === 0) return this.openWith(event, key);
    // Boxes of other customers (seal.ts, Sealed.more): their keys too.
    const keys = new Map<string, Buffer | null>();
    for (const s of others) keys.set(s, await this.openingKey(s));
    return this.openWith(event, key, (s) => keys.get(s) ?? null);
  }

  /**
   * open() without waiting, when it needs nothing it has to wait for: a sealed event whose key is
   * in the cache (the common case: what this process just appended, read by its read models).
   * Undefined when open() must run (a deletion, an event in clear, a key to look up). Saves the
   * promise and the turn of the microtask queue an async open costs every sealed event read.
   */
  openNow(event: RecordedEvent): RecordedEvent | undefined {
    if (event.type === 'CustomerDeleted' || !isSealed(event.data)) return undefined;
    const subject = this.openingSubject(event);
    if (subject === null) return event;
    const hit = this.cache.get(subject);
    if (hit === undefined || hit.until <= Date.now() || hit.kid !== undefined) return undefined;
    // A fan-out written before bodies of two customers were sealed with both keys: opened here when
    // its bodies name no previous customer (one scan each, no parse: most old rows), else open()
    // reads it, asking the key store whether that customer is erased (erasedNow): this process's
    // cache may not know yet of an erasure another process made (a CLI, a second server).
    if (event.type === 'WebhookDeliveriesScheduled' && isUncheckedFanout(event.data)) {
      const opened = this.openWith(event, hit.key);
      const data = opened.data;
      if (data.erased === true || typeof data.customer_id !== 'string') return opened;
      for (const _ of previousCustomers(data.payloads, data.customer_id)) return undefined;
      return opened;
    }
    // A move written before its previous text was sealed with the previous customer's key: the same.
    if (uncheckedMove(event.type, event.data) !== null) return undefined;
    const others = moreSubjects(event.data);
    if (others.length === 0) return this.openWith(event, hit.key);
    for (const s of others) {
      const h = this.cache.get(s);
      if (h === undefined || h.until <= Date.now() || h.kid !== undefined) return undefined;
    }
    return this.openWith(event, hit.key, (s) => this.cache.get(s)?.key ?? null);
  }

  /**
   * The key subject that opens a sealed event (sealedKeySubject, the box checked once; null when it
   * names no customer); a new customer's CustomerCreated in their own stream binds them to the pool
   * key it names.
   */
  private openingSubject(event: RecordedEvent): string | null {
    const data = event.data as Record<string, unknown> & { sealed: Sealed };
    const sealed = data.sealed;
    const owner = sealed.customer_id ?? data.customer_id;
    if (sealed.v === SEAL_VERSION_KID) {
      const kid = sealed.kid as string;
      if (
        event.type === 'CustomerCreated' &&
        typeof owner === 'string' &&
        event.stream === CUSTOMER_STREAM + owner &&
        this.kids.get(owner) !== kid
      )
        this.bind(owner, kid);
      return kidSubject(kid);
    }
    return typeof owner === 'string' ? customerSubject(owner) : null;
  }

  /**
   * A reservation's fan-out written before its bodies' other customers were sealed with their own
   * keys (legacy-fanouts.ts), opened: the previous customer its bodies name reads erased once they
   * are, on every read path (a resend sends it so).
   */
  private async openUncheckedFanout(event: RecordedEvent, scope?: ReadScope): Promise<RecordedEvent> {
    const data = event.data;
    if (data.erased === true || typeof data.customer_id !== 'string') return event;
    // Asked of the key store at each read call (not the cache, which another process's erasure does
    // not reach for KEY_TTL_MS), once a customer within one (ReadScope).
    const erased = new Set(
      await this.erasedNow([...previousCustomers(data.payloads, data.customer_id)], scope),
    );
    if (erased.size === 0) return event;
    return {
      ...event,
      data: {
        ...data,
        payloads: erasePreviousCustomers(data.payloads as Record<string, unknown>, erased),
        erased: true,
      },
    };
  }

  /**
   * A move's ReservationUpdated written before its previous text was sealed with the previous
   * customer's key (legacy-fanouts.ts, uncheckedMove), opened: that text reads erased once they are.
   */
  private async openUncheckedMove(
    event: RecordedEvent,
    previousCustomer: string,
    key: Buffer | null,
    scope?: ReadScope,
  ): Promise<RecordedEvent> {
    // Asked of the key store at each read call, as for a legacy fan-out (openUncheckedFanout).
    if (key === null || (await this.erasedNow([previousCustomer], scope)).length === 0) return event;
    const box = reservationCustomerAfter(event.type, event.data) ?? null;
    const paths = otherSubjects(event.type, event.data, box).flatMap((g) => g.paths);
    return { ...event, data: erasePaths(event.data, paths) };
  }

  /** A sealed event opened with its key (null: destroyed, read as erased). */
  private openWith(
    event: RecordedEvent,
    key: Buffer | null,
    keyOf?: (subject: string) => Buffer | null,
  ): RecordedEvent {
    const data = event.data as Record<string, unknown> & { sealed: Sealed };
    // A box this process sealed, its key not destroyed: the same values, without decrypting.
    const plain = key === null ? undefined : this.plains.get(data.sealed.box);
    const opened = plain !== undefined ? openPlain(data, plain.plaintext) : openData(event.type, data, key);
    if (keyOf === undefined) return { ...event, data: opened };
    return { ...event, data: openMore(event.type, data, opened, key, keyOf) };
  }

  private learn(stream: string, type: string, data: unknown): void {
    const c = reservationCustomerAfter(type, data);
    if (c === undefined) return;
    this.reservationCustomers.set(stream, c);
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
    return this.customersNow(stream, events) ?? this.customersRead(stream, events);
  }

  /**
   * customersOf without waiting: undefined when a reservation's customer must be read from its
   * stream first (not remembered). `remembered`: the reservation's customer before this append.
   */
  private customersNow(
    stream: string,
    events: readonly NewEvent[],
    remembered: string | null | undefined = this.reservationCustomers.get(stream),
  ): (string | null)[] | undefined {
    const out: (string | null)[] = [];
    let current: string | null | undefined;
    for (const e of events) {
      if (typeof e !== 'object' || e === null || typeof e.type !== 'string' || !isObject(e.data)) {
        out.push(null);
        continue;
      }
      // Most events of an append hold nothing sealed: no further look.
      if (!isSealedType(e.type)) {
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
        if (after !== undefined) current = after;
        else if (current === undefined) {
          current = remembered;
          if (current === undefined) return undefined;
        }
        out.push(current);
      } else {
        if (after !== undefined) current = after;
        out.push(named);
      }
    }
    return out;
  }

  /** customersOf reading the reservation's customer from its stream where it is not remembered. */
  private async customersRead(stream: string, events: readonly NewEvent[]): Promise<(string | null)[]> {
    return this.customersNow(stream, events, await this.reservationCustomer(stream)) as (string | null)[];
  }

  /**
   * The pool keys a customer is bound to: those their stream's boxes name (where a binding is made),
   * and the one this process knows.
   */
  private async kidsOf(customerId: string): Promise<Set<string>> {
    const kids = new Set<string>();
    const known = this.kids.get(customerId);
    if (known !== undefined) kids.add(known);
    for (const e of await this.inner.readStream(CUSTOMER_STREAM + customerId)) {
      const kid = sealedKid(e.data);
      if (kid !== null) kids.add(kid);
    }
    return kids;
  }

  /**
   * Destroys a customer's keys — every pool key their stream names, then their own subject (a
   * tombstone when they had no key of their own) — so every event sealed with them reads as erased
   * from now on. True when a key was destroyed by this call.
   */
  async erase(customerId: string, metadata?: NewEvent['metadata']): Promise<boolean> {
    this.erasures++;
    this.forgetPlains(customerId);
    const at = this.now().toISOString();
    // The calls of the customer's numbers that no customer owned (number-keys.ts), first: the numbers
    // are read from the customer's stream, which their keys below make unreadable.
    let destroyed = await this.eraseNumbers(customerId, at, metadata);
    // The customer's own subject first: once it is a tombstone nothing new is sealed for them and the
    // export shows them erased, and an erasure interrupted after it is still reported pending (the
    // pool keys below stay active until it is finished).
    const subject = customerSubject(customerId);
    if (await this.keys.destroy(subject, at)) destroyed = true;
    this.remember(subject, null);
    for (const kid of await this.kidsOf(customerId)) {
      if (await this.keys.destroy(kidSubject(kid), at)) destroyed = true;
      this.remember(kidSubject(kid), null);
    }
    // Again at the end: a hand-over (rememberPlains) that read the keys meanwhile asks again.
    this.erasures++;
    this.forgetPlains(customerId);
    return destroyed;
  }

  /** The restaurant of a customer and every phone number their stream ever gave them (opened). */
  private async numbersOf(
    customerId: string,
  ): Promise<{ restaurantId: string | null; numbers: Set<string> }> {
    const numbers = new Set<string>();
    let restaurantId: string | null = null;
    for (const e of await this.readStream(CUSTOMER_STREAM + customerId)) {
      const d = e.data as {
        restaurant_id?: unknown;
        profile?: { phone_number?: unknown };
        changes?: { phone_number?: unknown };
        previous?: { phone_number?: unknown };
      };
      if (typeof d.restaurant_id === 'string') restaurantId = d.restaurant_id;
      for (const n of [d.profile?.phone_number, d.changes?.phone_number, d.previous?.phone_number])
        if (typeof n === 'string' && n !== '') numbers.add(n);
    }
    return { restaurantId, numbers };
  }

  /**
   * Erasure by number: destroys the key of every call linked to one of the customer's numbers at
   * their restaurant, appends MissedCallCallerErased to each call, then deletes the links. Safe to run
   * again (an interrupted erasure): destroying is idempotent and the appended events have ids of
   * their own (a retry writes nothing). True when a key was destroyed by this call.
   */
  private async eraseNumbers(
    customerId: string,
    at: string,
    metadata: NewEvent['metadata'] | undefined,
  ): Promise<boolean> {
    const { restaurantId, numbers } = await this.numbersOf(customerId);
    if (restaurantId === null) return false;
    let destroyed = false;
    for (const number of numbers) {
      const label = await this.numbers.existingLabel(restaurantId, number);
      if (label === null) continue;
      for (const member of await this.keys.linked(label)) {
        const link = parseLinkMember(member);
        if (link === null) continue;
        if (await this.keys.destroy(kidSubject(link.kid), at)) destroyed = true;
        this.remember(kidSubject(link.kid), null);
        this.forgetPlains(callOwner(link.callId));
        if (link.callId !== null)
          await this.inner.append(
            missedCallStream(link.callId),
            [
              {
                id: deterministicUuid(`${CALLER_ERASED}\n${link.callId}\n${link.kid}`),
                type: CALLER_ERASED,
                data: {
                  missed_call_id: link.callId,
                  restaurant_id: restaurantId,
                  at,
                  key_id: link.kid,
                  reason: 'customer_erased',
                },
                metadata: { ...(metadata ?? { actor: 'system:erasure' }), restaurant_id: restaurantId },
              },
            ],
            ANY,
          );
      }
      await this.keys.unlink(label);
    }
    return destroyed;
  }

  /** Seals the events that need a number key (number-keys.ts); the others are returned as they are. */
  private async sealNumbers(events: NewEvent[]): Promise<NewEvent[]> {
    const out: NewEvent[] = [];
    for (const e of events) {
      const target = numberSealing(e.type, e.data);
      const fields = target === null ? [] : personalFields(e.type, e.data);
      if (target === null || fields.length === 0) {
        out.push(e);
        continue;
      }
      const label = await this.numbers.label(target.restaurantId, target.number);
      const { kid, key } = await this.takeSpare();
      // Durable before the event is appended: a sealed call the index lost could not be erased.
      await this.keys.link(label, linkMember(kid, target.callId));
      this.remember(kidSubject(kid), key);
      out.push({ ...e, data: this.sealWith(e, fields, key, callOwner(target.callId), kid) });
    }
    return out;
  }

  /**
   * Whether this deleted customer's erasure is unfinished (`audit erase --pending`): their own
   * subject not yet a tombstone, or a key of theirs still active.
   */
  async erasurePending(customerId: string): Promise<boolean> {
    if ((await this.keys.find(customerSubject(customerId))).state !== 'destroyed') return true;
    for (const kid of await this.kidsOf(customerId))
      if ((await this.keys.find(kidSubject(kid))).state === 'active') return true;
    return false;
  }

  /**
   * Seals the events and appends them. When every key it needs is at hand (cached, or a pool key
   * ready for a new customer) it seals synchronously (sealNow) and waits only for the store: no
   * promise or microtask turn of its own per event; otherwise (a key or a reservation's customer to
   * look up) it waits for those first (sealLater).
   */
  append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    options?: AppendOptions,
  ): Promise<AppendResult> {
    // Bad input (not an event) is the inner store's to refuse, with its own error.
    if (!Array.isArray(events) || typeof stream !== 'string')
      return this.inner.append(stream, events, expected, options);
    // A missed call's number no customer owns: sealed with a key of its own first (rare; async).
    if (needsNumberKey(events))
      return this.sealNumbers(events).then((sealed) => this.append(stream, sealed, expected, options));
    // A change restating a reservation's text (`previous`): whose boxes held it, folded from its stream.
    if (stream.startsWith(RESERVATION_STREAM) && events.some((e) => hasPreviousText(e?.type, e?.data))) {
      const known = this.textOwners.get(stream);
      if (known === undefined)
        return this.loadTextOwners(stream).then((state) => {
          this.notePreviousOwners(state, events);
          return this.appendReady(stream, events, expected, options);
        });
      this.notePreviousOwners(known, events);
    }
    return this.appendReady(stream, events, expected, options);
  }

  /** Reads whose box holds each text field of a reservation (foldTextOwners) and remembers it. */
  private async loadTextOwners(stream: string): Promise<TextOwnerState> {
    let state = NO_TEXT_OWNERS;
    for (const e of await this.inner.readStream(stream)) state = foldTextOwners(state, e.type, e.data);
    this.textOwners.set(stream, state);
    return state;
  }

  /** Tells each event of an append restating text whose boxes held it before it (previousOwners). */
  private notePreviousOwners(state: TextOwnerState, events: readonly NewEvent[]): void {
    let now = state;
    for (const e of events) {
      if (typeof e !== 'object' || e === null || !isObject(e.data)) continue;
      if (hasPreviousText(e.type, e.data)) {
        // Every field named (a field the state leaves out is its customer's); nothing folded (no
        // creation read): none, so otherSubjects gives the text to the previous customer.
        const owners: TextOwnerMap = {};
        if (now !== NO_TEXT_OWNERS) for (const f of TEXT_FIELDS) owners[f] = ownerOf(now, f);
        this.previousOwners.set(e.data, owners);
      }
      now = foldTextOwners(now, e.type, e.data);
    }
  }

  /** append() once the events' previous owners are known. */
  private appendReady(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    options?: AppendOptions,
  ): Promise<AppendResult> {
    /** Pool keys handed out to this append's new customer. */
    const handed = new Map<string, Buffer>();
    let now: NewEvent[] | undefined;
    try {
      now = this.sealNow(stream, events, expected, options, handed);
    } catch (err) {
      return Promise.reject(err);
    }
    if (now === undefined)
      return this.sealLater(stream, events, expected, options, handed).then((sealed) =>
        this.appendSealed(stream, sealed, expected, options, handed),
      );
    return this.appendSealed(stream, now, expected, options, handed);
  }

  /** Whether the event at `i` of an append is a new customer's CustomerCreated in their new stream. */
  private static isNewCustomer(
    stream: string,
    e: NewEvent,
    i: number,
    expected: ExpectedRevision,
    customer: string,
  ): boolean {
    return (
      i === 0 &&
      expected === NO_STREAM &&
      e.type === 'CustomerCreated' &&
      stream === CUSTOMER_STREAM + customer
    );
  }

  /**
   * The events sealed without waiting, or undefined when a key (or a reservation's customer) is not
   * at hand: nothing is changed then (a pool key taken is put back).
   */
  private sealNow(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    options: AppendOptions | undefined,
    handed: Map<string, Buffer>,
  ): NewEvent[] | undefined {
    const customers = this.customersNow(stream, events);
    if (customers === undefined) return undefined;
    let out: NewEvent[] | undefined;
    let spare: { kid: string; key: Buffer } | undefined;
    for (let i = 0; i < events.length; i++) {
      const customer = customers[i] as string | null;
      const e = events[i] as NewEvent;
      if (customer === null) {
        // Bad input included (not an event): the inner store refuses it.
        if (e?.type !== 'ReservationUpdated' || !isObject(e.data) || 'sealed' in e.data) continue;
        const sealed = this.sealedForOthers(e, (c) => this.cachedOwner(c));
        if (sealed === undefined) {
          if (spare !== undefined) this.spares.push(spare);
          handed.clear();
          return undefined;
        }
        if (sealed !== e) {
          out ??= events.slice();
          out[i] = sealed;
        }
        continue;
      }
      if ('sealed' in e.data) continue;
      const fields = personalFields(e.type, e.data);
      if (fields.length === 0) continue;
      let got: { key: Buffer | null; kid?: string } | undefined;
      if (SealingEventStore.isNewCustomer(stream, e, i, expected, customer)) {
        // A new customer: a pool key at once when their id was minted here (nothing to look up).
        if (options?.mintedId === true) {
          spare = this.spareNow();
          got = spare;
        } else got = this.cachedKey(customerSubject(customer));
        if (got?.kid !== undefined && got.key !== null) this.handOut(handed, got.kid, got.key);
      } else got = this.cachedKey(customerSubject(customer));
      if (got === undefined) {
        if (spare !== undefined) this.spares.push(spare);
        handed.clear();
        return undefined;
      }
      // Another customer's data beside this one's (otherSubjects: rare): their keys, from the cache.
      const groups = otherSubjects(e.type, e.data, customer, this.previousOwners.get(e.data));
      let others: SplitPlan | undefined;
      if (groups.length > 0) {
        const keys = new Map<string, OwnerKey>();
        for (const c of new Set(groups.flatMap((g) => g.customers))) {
          const k = this.cachedOwner(c);
          if (k === undefined) {
            if (spare !== undefined) this.spares.push(spare);
            handed.clear();
            return undefined;
          }
          keys.set(c, k);
        }
        others = { groups, keys };
      }
      out ??= events.slice();
      out[i] = { ...e, data: this.sealWith(e, fields, got.key, customer, got.kid, others) };
    }
    return out ?? events;
  }

  /** The sealing key of a customer if the cache has it (cachedKey), as an OwnerKey. */
  private cachedOwner(customer: string): OwnerKey | undefined {
    const got = this.cachedKey(customerSubject(customer));
    if (got === undefined) return undefined;
    return got.kid === undefined ? { customer, key: got.key } : { customer, key: got.key, kid: got.kid };
  }

  /** The sealing key of a subject if the cache has it (a key, or destroyed), else undefined. */
  private cachedKey(subject: string): { key: Buffer | null; kid?: string } | undefined {
    const hit = this.cache.get(subject);
    if (hit === undefined || hit.until <= Date.now() || (hit.key === null && !hit.destroyed))
      return undefined;
    return hit.kid === undefined ? { key: hit.key } : { key: hit.key, kid: hit.kid };
  }

  /** The events sealed once the keys (and reservations' customers) not at hand are looked up. */
  private async sealLater(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    options: AppendOptions | undefined,
    handed: Map<string, Buffer>,
  ): Promise<NewEvent[]> {
    const customers = await this.customersOf(stream, events);
    return Promise.all(
      events.map((e, i) => {
        const customer = customers[i] as string | null;
        if (customer === null) return this.sealForOthersLater(e);
        // A new customer's stream: where a pool key may be bound to them (the top of this file).
        if (SealingEventStore.isNewCustomer(stream, e, i, expected, customer))
          return this.sealNew(e, customer, handed, options?.mintedId === true);
        return this.seal(e, customer);
      }),
    );
  }

  /**
   * A pool key goes to this append's new customer. Its own subject's key is known from now on: the
   * read models' catch-up may read the event back before the append's answer is handled (the
   * writer thread's commit is visible to readers first), and would otherwise ask the key store for a
   * key this process holds. The customer is bound to it only once the log names it (afterAppend).
   */
  private handOut(handed: Map<string, Buffer>, kid: string, key: Buffer): void {
    handed.set(kid, key);
    this.remember(kidSubject(kid), key);
  }

  /** Appends sealed events, then binds the pool key handed out and destroys erased keys. */
  private appendSealed(
    stream: string,
    sealed: NewEvent[],
    expected: ExpectedRevision,
    options: AppendOptions | undefined,
    handed: Map<string, Buffer>,
  ): Promise<AppendResult> {
    return this.inner.append(stream, sealed, expected, options).then((result) => {
      const first = sealed[0];
      // Events with ids of their own may be answered as a retry of an append made before (the
      // import's deterministic ids): then the log names the key of that first append, not the one
      // handed out here, and only the key the log names may be bound (erasure finds keys there).
      // (The log may say it wrote them itself: nothing to read back then.)
      if (
        handed.size > 0 &&
        first !== undefined &&
        first.id !== undefined &&
        this.inner.wroteAnew?.(result) !== true
      )
        return this.inner.readStream(stream, { limit: 1 }).then(([stored]) => {
          const kid = sealedKid(first.data);
          this.afterAppend(
            stream,
            sealed,
            stored !== undefined && sealedKid(stored.data) === kid ? handed : null,
          );
          return this.erasing(sealed, result);
        });
      this.afterAppend(stream, sealed, handed);
      return this.erasing(sealed, result);
    });
  }

  /**
   * What an append teaches: the pool key the new customer's stream now names is bound to them (the
   * binding is made: the stream names it from now on; `handed` null: the log names another key), and
   * whose reservation it is.
   */
  private afterAppend(stream: string, sealed: NewEvent[], handed: Map<string, Buffer> | null): void {
    const first = sealed[0];
    if (handed !== null && handed.size > 0 && first !== undefined && isSealed(first.data)) {
      const box = first.data.sealed;
      const kid = box.v === SEAL_VERSION_KID ? (box.kid as string) : null;
      const owner = box.customer_id ?? first.data.customer_id;
      const key = kid === null ? undefined : handed.get(kid);
      if (kid !== null && typeof owner === 'string' && key !== undefined) {
        const subject = customerSubject(owner);
        const kidKey = kidSubject(kid);
        const kidHit = this.cache.get(kidKey);
        // An erasure in this process may have come between the commit and this answer (a request
        // read the committed stream meanwhile): its destroyed keys are not trusted again.
        if (this.cache.get(subject)?.destroyed !== true && kidHit?.destroyed !== true) {
          this.bind(owner, kid);
          this.remember(subject, key, false, kid);
          // handOut remembered it moments ago: again only if that entry is gone, another or stale.
          if (kidHit?.key !== key || kidHit.kid !== undefined || kidHit.until <= Date.now())
            this.remember(kidKey, key);
        }
      }
    }
    if (stream.startsWith(RESERVATION_STREAM)) {
      for (const e of sealed) this.learn(stream, e.type, e.data);
      const owners = this.textOwners.get(stream);
      if (owners !== undefined) {
        let now = owners;
        for (const e of sealed) now = foldTextOwners(now, e.type, e.data);
        this.textOwners.set(stream, now);
      }
    }
  }

  /** The result, once the keys of the customers this append deleted are destroyed. */
  private erasing(sealed: NewEvent[], result: AppendResult): AppendResult | Promise<AppendResult> {
    let chain: Promise<unknown> | null = null;
    for (const e of sealed)
      if (e.type === 'CustomerDeleted' && typeof e.data?.customer_id === 'string') {
        const id = e.data.customer_id;
        chain = (chain ?? Promise.resolve()).then(() => this.erase(id, e.metadata));
      }
    return chain === null ? result : chain.then(() => result);
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
      let owners = NO_TEXT_OWNERS;
      for (const e of events) owners = foldTextOwners(owners, e.type, e.data);
      this.textOwners.set(stream, owners);
    }
    if (!events.some((e) => this.needsOpening(e))) return upcastAll(events);
    const out: RecordedEvent[] = [];
    const scope = new ReadScope();
    for (const e of events) out.push(upcastLegacy(this.openNow(e) ?? (await this.open(e, scope))));
    return out;
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    return opening(this.inner.readAll(options), this);
  }

  subscribe(options?: SubscribeOptions): Subscription {
    const sub = this.inner.subscribe(options);
    const iterable = opening(sub, this);
    return { [Symbol.asyncIterator]: () => iterable[Symbol.asyncIterator](), close: () => sub.close() };
  }

  headPosition(): Promise<bigint | null> {
    return this.inner.headPosition();
  }

  /** The inner store's answer (its results pass through unchanged); false when it cannot tell. */
  wroteAnew(result: AppendResult): boolean {
    return this.inner.wroteAnew?.(result) === true;
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The other customers an event holds data of, and their keys (seal.ts, otherSubjects/sealSplit). */
interface SplitPlan {
  groups: ReturnType<typeof otherSubjects>;
  keys: ReadonlyMap<string, OwnerKey>;
}

/** A fan-out's data without its stand-in bodies (never written: seal.ts, sealSplit). */
function withoutStandIn(data: Record<string, unknown>): Record<string, unknown> {
  if (!(STAND_IN in data)) return data;
  const { [STAND_IN]: _, ...rest } = data;
  return rest;
}

/** Events of a readAll or a subscription within which one ReadScope serves (one page of it). */
const READ_SCOPE_EVENTS = 1000;
/** Nor for longer than this (ms): a subscription's page may wait long between its events. */
const READ_SCOPE_MS = 1000;

/**
 * The customers the key store said were not erased during one read call (a readStream, or one page
 * of READ_SCOPE_EVENTS events of a readAll or a subscription, READ_SCOPE_MS at most): not asked
 * again within it. An erasure
 * done in another process is read by the next read call (a new scope) at once; this bounds the cost
 * of rows that ask (legacy fan-outs and moves, erasedNow) to one key-store read per customer a call
 * or page, where it was one per row (a rebuild from position 0 reads every such row). Never shared
 * between calls, so concurrent reads do not lend each other an answer.
 */
export class ReadScope {
  private readonly notErased = new Set<string>();
  live(customerId: string): boolean {
    return this.notErased.has(customerId);
  }
  add(customerId: string): void {
    this.notErased.add(customerId);
  }
  /** A CustomerDeleted read in this scope: its "not erased" no longer holds. */
  forget(customerId: string): void {
    this.notErased.delete(customerId);
  }
}

/**
 * Maps an async iterable without a generator (one promise per event, no generator queue); an event
 * the layer can open at once (openNow) costs no promise of its own.
 */
function opening(
  source: AsyncIterable<RecordedEvent>,
  layer: SealingEventStore,
): AsyncIterable<RecordedEvent> {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      let scope = new ReadScope();
      let read = 0;
      let since = Date.now();
      const mapped: AsyncIterableIterator<RecordedEvent> = {
        [Symbol.asyncIterator]: () => mapped,
        next: () =>
          it.next().then((r) => {
            if (r.done) return r;
            const e = r.value;
            // A new page every READ_SCOPE_EVENTS events read.
            if (++read % READ_SCOPE_EVENTS === 0) {
              scope = new ReadScope();
              since = Date.now();
            }
            if (!layer.needsOpening(e)) {
              const read = upcastLegacy(e);
              return read === e ? r : { done: false as const, value: read };
            }
            const now = layer.openNow(e);
            if (now !== undefined) return { done: false as const, value: upcastLegacy(now) };
            // Nor older than READ_SCOPE_MS (a subscription waiting between its events): the clock is
            // read here only, on the few events open() reads.
            if (Date.now() - since > READ_SCOPE_MS) {
              scope = new ReadScope();
              since = Date.now();
            }
            return layer
              .open(e, scope)
              .then((value) => ({ done: false as const, value: upcastLegacy(value) }));
          }),
        return: async () => (it.return ? it.return() : { done: true as const, value: undefined }),
      };
      return mapped;
    },
  };
}

/**
 * An event in the shape the current code writes: reservation instants with fractional-minute offsets
 * (commands/reservations/legacy-instants.ts), missed calls' occurred_at outside years 0001-9998
 * (commands/missed-calls/legacy-occurred-at.ts). The same object when nothing changes.
 */
const upcastLegacy = (e: RecordedEvent): RecordedEvent =>
  upcastProviderError(upcastOccurredAt(upcastLegacyInstants(e)));

/** The events read in the current shape (upcastLegacy); the same array when none changes. */
function upcastAll(events: RecordedEvent[]): RecordedEvent[] {
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as RecordedEvent;
    const read = upcastLegacy(e);
    if (read === e) continue;
    const out = events.slice();
    out[i] = read;
    for (let j = i + 1; j < out.length; j++) out[j] = upcastLegacy(out[j] as RecordedEvent);
    return out;
  }
  return events;
}

/** The store under any sealing layer: what is written in the log. */
export function storedEvents(events: EventStore): EventStore {
  return events instanceof SealingEventStore ? events.inner : events;
}
