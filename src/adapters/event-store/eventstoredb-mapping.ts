// Translation between the port's types and @eventstore/db-client 6's.
import {
  type AppendExpectedRevision,
  ErrorType,
  ANY as ESDB_ANY,
  NO_STREAM as ESDB_NO_STREAM,
  STREAM_EXISTS as ESDB_STREAM_EXISTS,
  type RecordedEvent as EsdbRecordedEvent,
  type EventData,
  eventTypeFilter,
  excludeSystemEvents,
  type Filter,
  jsonEvent,
  type ReadPosition,
  START,
  streamNameFilter,
} from '@eventstore/db-client';
import {
  ANY,
  EventStoreError,
  type ExpectedRevision,
  NO_STREAM,
  type RecordedEvent,
  STREAM_EXISTS,
  type SubscriptionFilter,
  WrongExpectedRevisionError,
} from '../../ports/event-store';
import type { PreparedEvent } from './validate';

export function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case NO_STREAM:
      return ESDB_NO_STREAM;
    case STREAM_EXISTS:
      return ESDB_STREAM_EXISTS;
    case ANY:
      return ESDB_ANY;
    default:
      return BigInt(expected);
  }
}

/** Where the chain hash (chain.ts) travels in an event's metadata; stripped from metadata on read. */
export const HASH_KEY = '$hash';

/**
 * Where the service's clock at the append travels (an ISO instant), read back as RecordedEvent.created,
 * as the SQLite log stores its own clock's: the server's clock would make audit times and webhook
 * `created` ignore TEST_CLOCK (and any skew between the two). Events written before it carry none:
 * their created is the server's.
 */
export const CREATED_KEY = '$created';

/**
 * $correlationId and $causationId feed EventStoreDB's own correlation projections; they, the chain
 * hash ($hash) and the service's time ($created) are stripped from metadata on read.
 */
export function toEventData(event: PreparedEvent, hash?: string, created?: string): EventData {
  const metadata: Record<string, unknown> = { ...event.metadata };
  if (hash !== undefined) metadata[HASH_KEY] = hash;
  if (created !== undefined) metadata[CREATED_KEY] = created;
  if (typeof event.metadata.correlation_id === 'string')
    metadata.$correlationId = event.metadata.correlation_id;
  if (typeof event.metadata.causation_id === 'string') metadata.$causationId = event.metadata.causation_id;
  return jsonEvent({ id: event.id, type: event.type, data: event.data, metadata });
}

/** Positions of the port are commit positions; for events written without an explicit transaction prepare equals commit. */
export function toReadPosition(after: bigint | null): ReadPosition {
  return after === null ? START : { commit: after, prepare: after };
}

export function isSystemEvent(event: { streamId: string; type: string }): boolean {
  return event.streamId.startsWith('$') || event.type.startsWith('$');
}

export function toRecordedEvent(event: EsdbRecordedEvent): RecordedEvent {
  if (!event.isJson)
    throw new EventStoreError(
      `event ${event.id} in ${event.streamId} is not JSON: not written through this port`,
    );
  const position = event.position?.commit;
  if (position === undefined)
    throw new EventStoreError(
      'the server returns no $all position on stream reads (EventStoreDB 22.6 or later needed)',
    );
  const raw = event.metadata;
  const metadata: Record<string, unknown> = {};
  let hash: string | undefined;
  let created = event.created.toISOString();
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && !(raw instanceof Uint8Array)) {
    for (const [key, value] of Object.entries(raw)) {
      if (!key.startsWith('$')) metadata[key] = value;
      else if (key === HASH_KEY && typeof value === 'string') hash = value;
      else if (key === CREATED_KEY && typeof value === 'string' && !Number.isNaN(Date.parse(value)))
        created = new Date(value).toISOString();
    }
  }
  const recorded: RecordedEvent = {
    id: event.id,
    type: event.type,
    data: event.data as Record<string, unknown>,
    metadata,
    created,
    stream: event.streamId,
    revision: Number(event.revision),
    position,
  };
  if (hash !== undefined) recorded.hash = hash;
  return recorded;
}

/**
 * The server filters on one dimension only: stream prefixes when given (usually the most
 * selective), else event-type prefixes, else just "no system events". The caller re-checks the
 * whole filter on each event.
 */
export function toServerFilter(filter: Required<SubscriptionFilter>): Filter {
  if (filter.streamPrefixes.length > 0) return streamNameFilter({ prefixes: filter.streamPrefixes });
  if (filter.eventTypePrefixes.length > 0) return eventTypeFilter({ prefixes: filter.eventTypePrefixes });
  return excludeSystemEvents();
}

function errorType(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as { type?: string }).type : undefined;
}

export function isStreamNotFound(err: unknown): boolean {
  return errorType(err) === ErrorType.STREAM_NOT_FOUND;
}

/** A read that required the leader reached a follower (the client then reconnects to the leader). */
export function isNotLeader(err: unknown): boolean {
  return errorType(err) === ErrorType.NOT_LEADER;
}

export function isWrongExpectedVersion(err: unknown): boolean {
  return errorType(err) === ErrorType.WRONG_EXPECTED_VERSION;
}

export function toWrongExpectedRevision(
  err: unknown,
  stream: string,
  expected: ExpectedRevision,
): WrongExpectedRevisionError {
  const actual = (err as { actualVersion?: bigint | string }).actualVersion;
  const mapped = typeof actual === 'bigint' && actual >= 0n ? Number(actual) : NO_STREAM;
  return new WrongExpectedRevisionError(stream, expected, mapped);
}

/**
 * The server's refusal of an append larger than its MaxAppendSize (1 MiB unless raised), named for
 * the operator: the embedded log takes any size, so only the server's setting can be at fault.
 */
export function appendTooLarge(err: unknown, stream: string): EventStoreError | null {
  if (errorType(err) !== ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED) return null;
  const limit = (err as { maxAppendSize?: number }).maxAppendSize;
  return new EventStoreError(
    `the append to ${stream} is larger than EventStoreDB's maximum append size${limit ? ` (${limit} bytes)` : ''}: raise EVENTSTORE_MAX_APPEND_SIZE on the server (docker-compose.yml sets 12 MiB)`,
    { cause: err },
  );
}

const PERMANENT = new Set<string>([
  ErrorType.ACCESS_DENIED,
  ErrorType.INVALID_ARGUMENT,
  ErrorType.UNSUPPORTED,
]);

/** Whether a subscription that failed with `err` is worth re-establishing (network, leader change…). */
export function isRetryable(err: unknown): boolean {
  // Our own errors (an event this port cannot read) would fail the same way on every attempt.
  if (err instanceof EventStoreError) return false;
  const type = errorType(err);
  return type === undefined || !PERMANENT.has(type);
}
