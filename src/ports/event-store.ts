// The EventStore port: the only source of truth. Every adapter (memory, SQLite, EventStoreDB)
// passes test/contracts/event-store.contract.ts.

export const NO_STREAM = 'no_stream' as const;
export const STREAM_EXISTS = 'stream_exists' as const;
export const ANY = 'any' as const;

/** A revision number (the revision of the last event expected in the stream), or a state. */
export type ExpectedRevision = number | typeof NO_STREAM | typeof STREAM_EXISTS | typeof ANY;

export interface EventMetadata {
  restaurant_id?: string | null;
  actor?: string;
  request_id?: string;
  correlation_id?: string;
  causation_id?: string;
  [key: string]: unknown;
}

export interface NewEvent<D = Record<string, unknown>> {
  /** UUID. Deterministic ids make a retried append a no-op (the store deduplicates ids). */
  id?: string;
  type: string;
  data: D;
  metadata?: EventMetadata;
}

export interface RecordedEvent<D = Record<string, unknown>> {
  id: string;
  type: string;
  data: D;
  metadata: EventMetadata;
  /** ISO 8601 instant the store recorded the event. */
  created: string;
  stream: string;
  /** 0-based revision within the stream. */
  revision: number;
  /** Global position in the ordered log ($all); strictly increasing in commit order. */
  position: bigint;
  /**
   * Tamper evidence: SHA-256 chained to the previous event of the stream (chain.ts), computed by the
   * store on append. Absent only on events written before the chain existed (EventStoreDB keeps
   * those as they were; the SQLite store computes them when it upgrades a log).
   */
  hash?: string;
}

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextRevision: number;
  /** Position of the last event of this append in the global log. */
  position: bigint;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive. Defaults to the start (forwards) or the end (backwards). */
  fromRevision?: number;
  limit?: number;
}

export interface ReadAllOptions {
  /** Exclusive: only events with a position strictly greater are returned. Omit for the start. */
  after?: bigint | null;
  limit?: number;
  /** Batch size adapters use internally while paging. */
  batchSize?: number;
}

export interface SubscriptionFilter {
  streamPrefixes?: string[];
  eventTypePrefixes?: string[];
}

export interface SubscribeOptions extends SubscriptionFilter {
  /** Exclusive, as readAll. Omit to start at the beginning of the log. */
  after?: bigint | null;
}

/** Catch-up then live. Iterate with for-await; close() ends the iteration. */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

/** How an append is made; adapters that have no use for an option ignore it. */
export interface AppendOptions {
  /**
   * The caller brings the read models up to date itself once it needs to (a CSV import settles each
   * slice it wrote): an embedded request arriving meanwhile need not wait for these events to be
   * applied (src/runtime.ts refresh). Without it, a request arriving after the commit sees the events.
   */
  settledByCaller?: boolean;
  /**
   * The stream's id was minted at random by this process just now (`newId`): nothing can exist for it
   * anywhere yet — no event, no key, no erasure tombstone. The sealing layer then seals a new
   * customer's CustomerCreated without looking their key up (src/privacy/sealing-event-store.ts).
   * Never set it for an id a caller chose or derived (an import's deterministic ids, a legacy id).
   */
  mintedId?: boolean;
}

export interface EventStore {
  readonly kind: 'memory' | 'sqlite' | 'eventstoredb';
  append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    options?: AppendOptions,
  ): Promise<AppendResult>;
  /** An unknown stream reads as an empty array. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;
  subscribe(options?: SubscribeOptions): Subscription;
  /** Position of the last event in the log, or null when the log is empty. */
  headPosition(): Promise<bigint | null>;
  /**
   * Optional: true when `result` was answered by an append of this store that wrote its events
   * itself, false when it was answered as the retry of an append committed before (its event ids were
   * stored already) or is not this store's. Lets a layer above skip reading the stream back to tell.
   */
  wroteAnew?(result: AppendResult): boolean;
  close(): Promise<void>;
}

export class EventStoreError extends Error {
  override name = 'EventStoreError';
}

/** The expected revision did not match. The single conflict error every adapter throws. */
export class WrongExpectedRevisionError extends EventStoreError {
  override name = 'WrongExpectedRevisionError';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** Revision of the last event, or 'no_stream'. */
    readonly actual: number | typeof NO_STREAM,
  ) {
    super(`wrong expected revision on ${stream}: expected ${String(expected)}, actual ${String(actual)}`);
  }
}

/** Bad input to the store (empty stream name, unserialisable payload, bad revision type…). */
export class InvalidEventStoreInputError extends EventStoreError {
  override name = 'InvalidEventStoreInputError';
}

/** Positions as fixed-width strings, so one string comparison orders them in any store. */
// Every projection applying an event asks for the same string: the last one is remembered.
let lastPosition: bigint | undefined;
let lastPositionString = '';

export function positionToString(position: bigint): string {
  if (position !== lastPosition) {
    lastPositionString = position.toString().padStart(20, '0');
    lastPosition = position;
  }
  return lastPositionString;
}
export function positionFromString(value: string): bigint {
  return BigInt(value);
}

export function matchesFilter(
  event: Pick<RecordedEvent, 'stream' | 'type'>,
  filter: SubscriptionFilter,
): boolean {
  const { streamPrefixes, eventTypePrefixes } = filter;
  if (streamPrefixes?.length && !streamPrefixes.some((p) => event.stream.startsWith(p))) return false;
  if (eventTypePrefixes?.length && !eventTypePrefixes.some((p) => event.type.startsWith(p))) return false;
  return true;
}
