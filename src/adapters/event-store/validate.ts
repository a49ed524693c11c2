// Input checks shared by every EventStore adapter. They run before anything is written, so a bad
// event anywhere in a batch rejects the whole append, and every adapter rejects the same inputs.
import { randomView } from '../../core/random-pool';
import {
  ANY,
  type ExpectedRevision,
  InvalidEventStoreInputError,
  type NewEvent,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  STREAM_EXISTS,
  type SubscribeOptions,
  type SubscriptionFilter,
} from '../../ports/event-store';

/** An event checked and serialised once, ready for any adapter to store. */
export interface PreparedEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** JSON text of data and metadata, exactly what a reader gets back. */
  dataJson: string;
  metadataJson: string;
}

export interface PreparedAppend {
  stream: string;
  expected: ExpectedRevision;
  events: PreparedEvent[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Deep enough for any real event; stops a pathological payload before JSON.stringify overflows the stack.
const MAX_DEPTH = 64;
const STRING_METADATA = ['actor', 'request_id', 'correlation_id', 'causation_id'] as const;

/**
 * A version 7 UUID: 48 bits of Unix milliseconds, then random bits. Ids the store generates are thus
 * roughly in insertion order, which keeps the unique index on ids append-mostly: with random v4
 * ids, every append dirties pages all over that index, about three times slower on a large log.
 */
export function uuidv7(now = Date.now()): string {
  // Random bytes from the shared pool (src/core/random-pool.ts), the time written over the first six.
  const b = randomView(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function fail(message: string): never {
  throw new InvalidEventStoreInputError(message);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return `${typeof value} ${typeof value === 'bigint' ? `${value}n` : String(value)}`;
}

/** `$` names belong to EventStoreDB (system streams and events); reserving them everywhere keeps adapters alike. */
export function isSystemName(name: string): boolean {
  return name.startsWith('$');
}

export function validateStream(stream: unknown): string {
  if (typeof stream !== 'string' || stream.length === 0)
    fail(`stream name must be a non-empty string, got ${describe(stream)}`);
  if (isSystemName(stream)) fail(`stream name ${JSON.stringify(stream)}: names starting with $ are reserved`);
  return stream;
}

function nonNegativeInteger(value: unknown, what: string): number {
  if (typeof value === 'bigint') {
    if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) fail(`${what} out of range: ${value}n`);
    return Number(value);
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    fail(`${what} must be a non-negative integer, got ${describe(value)}`);
  return value;
}

/** Accepts a bigint revision for convenience (stores and ESDB speak bigint) and returns a number. */
export function validateExpected(expected: unknown): ExpectedRevision {
  if (expected === NO_STREAM || expected === STREAM_EXISTS || expected === ANY) return expected;
  if (typeof expected === 'string')
    fail(`expected revision must be a number, ${NO_STREAM}, ${STREAM_EXISTS} or ${ANY}, got "${expected}"`);
  return nonNegativeInteger(expected, 'expected revision');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Throws unless `value` survives JSON.stringify/JSON.parse unchanged, with one tolerance: an object
 * property whose value is undefined is dropped, as JSON and the MongoDB driver do.
 */
/** Where assertJson is: the path is only spelled out when a check fails (most appends never fail). */
interface JsonWalk {
  root: string;
  keys: (string | number)[];
  ancestors: Set<object>;
}

const pathOf = (w: JsonWalk) =>
  w.root + w.keys.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');

function assertJsonAt(value: unknown, root: string): void {
  assertJson(value, { root, keys: [], ancestors: new Set() });
}

function assertJson(value: unknown, w: JsonWalk): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) fail(`${pathOf(w)} is ${value}, which JSON cannot represent`);
      return;
    case 'object':
      break;
    default:
      fail(`${pathOf(w)} is ${describe(value)}, which JSON cannot represent`);
  }
  if (value === null) return;
  if (w.ancestors.has(value)) fail(`${pathOf(w)} refers back to one of its parents (a cycle)`);
  if (w.ancestors.size >= MAX_DEPTH) fail(`${pathOf(w)} is nested deeper than ${MAX_DEPTH} levels`);
  w.ancestors.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      w.keys.push(i);
      if (value[i] === undefined) fail(`${pathOf(w)} is undefined (JSON would turn it into null)`);
      assertJson(value[i], w);
      w.keys.pop();
    }
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      const child = value[key];
      if (child === undefined) continue;
      w.keys.push(key);
      assertJson(child, w);
      w.keys.pop();
    }
  } else {
    fail(`${pathOf(w)} is ${describe(value)}: only plain objects, arrays and primitives are stored`);
  }
  w.ancestors.delete(value);
}

function prepareMetadata(metadata: unknown, path: string): Record<string, unknown> {
  if (metadata === undefined) return {};
  if (!isPlainObject(metadata)) fail(`${path} must be a plain object, got ${describe(metadata)}`);
  for (const key of Object.keys(metadata)) {
    if (key.startsWith('$')) fail(`${path}.${key}: metadata keys starting with $ are reserved for the store`);
  }
  const restaurant = metadata.restaurant_id;
  if (restaurant !== undefined && restaurant !== null && typeof restaurant !== 'string')
    fail(`${path}.restaurant_id must be a string or null, got ${describe(restaurant)}`);
  for (const key of STRING_METADATA) {
    const v = metadata[key];
    if (v !== undefined && typeof v !== 'string') fail(`${path}.${key} must be a string, got ${describe(v)}`);
  }
  assertJsonAt(metadata, path);
  return metadata;
}

function prepareEvent(event: unknown, index: number, seen: Set<string>): PreparedEvent {
  const path = `events[${index}]`;
  if (!isPlainObject(event)) fail(`${path} must be an object, got ${describe(event)}`);
  const { id, type, data, metadata } = event as Partial<NewEvent> & Record<string, unknown>;
  if (typeof type !== 'string' || type.length === 0)
    fail(`${path}.type must be a non-empty string, got ${describe(type)}`);
  if (isSystemName(type)) fail(`${path}.type ${JSON.stringify(type)}: types starting with $ are reserved`);
  let eventId: string;
  if (id === undefined) eventId = uuidv7();
  else if (typeof id === 'string' && UUID.test(id)) eventId = id.toLowerCase();
  else fail(`${path}.id must be a UUID string, got ${describe(id)}`);
  if (seen.has(eventId)) fail(`${path}.id ${eventId} appears twice in the same append`);
  seen.add(eventId);
  if (!isPlainObject(data)) fail(`${path}.data must be a plain object, got ${describe(data)}`);
  assertJsonAt(data, `${path}.data`);
  const meta = prepareMetadata(metadata, `${path}.metadata`);
  return {
    id: eventId,
    type,
    data,
    metadata: meta,
    dataJson: JSON.stringify(data),
    metadataJson: JSON.stringify(meta),
  };
}

/** Checks a whole append (stream, every event, expected revision) before anything is written. */
export function prepareAppend(stream: unknown, events: unknown, expected: unknown): PreparedAppend {
  const name = validateStream(stream);
  const revision = validateExpected(expected);
  if (!Array.isArray(events) || events.length === 0) fail('events must be a non-empty array');
  const seen = new Set<string>();
  return { stream: name, expected: revision, events: events.map((e, i) => prepareEvent(e, i, seen)) };
}

export interface CheckedReadStream {
  direction: 'forwards' | 'backwards';
  fromRevision: number | undefined;
  limit: number | undefined;
}

export function validateReadStream(options: ReadStreamOptions | undefined): CheckedReadStream {
  const o = options ?? {};
  if (!isPlainObject(o)) fail(`read options must be an object, got ${describe(o)}`);
  const direction = o.direction ?? 'forwards';
  if (direction !== 'forwards' && direction !== 'backwards')
    fail(`direction must be "forwards" or "backwards", got ${describe(direction)}`);
  return {
    direction,
    fromRevision:
      o.fromRevision === undefined ? undefined : nonNegativeInteger(o.fromRevision, 'fromRevision'),
    limit: o.limit === undefined ? undefined : nonNegativeInteger(o.limit, 'limit'),
  };
}

function validatePosition(value: unknown, what: string): bigint | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value !== 'bigint' || value < 0n)
    fail(`${what} must be a non-negative bigint or null, got ${describe(value)}`);
  return value;
}

export interface CheckedReadAll {
  after: bigint | null;
  limit: number | undefined;
  batchSize: number;
}

export function validateReadAll(options: ReadAllOptions | undefined, defaultBatch = 500): CheckedReadAll {
  const o = options ?? {};
  if (!isPlainObject(o)) fail(`readAll options must be an object, got ${describe(o)}`);
  const batchSize = o.batchSize === undefined ? defaultBatch : nonNegativeInteger(o.batchSize, 'batchSize');
  if (batchSize === 0) fail('batchSize must be at least 1');
  return {
    after: validatePosition(o.after, 'after'),
    limit: o.limit === undefined ? undefined : nonNegativeInteger(o.limit, 'limit'),
    batchSize,
  };
}

function prefixes(value: unknown, what: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string'))
    fail(`${what} must be an array of strings, got ${describe(value)}`);
  return value as string[];
}

export interface CheckedSubscribe {
  after: bigint | null;
  filter: Required<SubscriptionFilter>;
}

export function validateSubscribe(options: SubscribeOptions | undefined): CheckedSubscribe {
  const o = options ?? {};
  if (!isPlainObject(o)) fail(`subscribe options must be an object, got ${describe(o)}`);
  return {
    after: validatePosition(o.after, 'after'),
    filter: {
      streamPrefixes: prefixes(o.streamPrefixes, 'streamPrefixes'),
      eventTypePrefixes: prefixes(o.eventTypePrefixes, 'eventTypePrefixes'),
    },
  };
}
