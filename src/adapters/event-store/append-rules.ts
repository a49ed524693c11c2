// Optimistic-concurrency and idempotency rules of the embedded stores (memory, SQLite), modelled on
// EventStoreDB so that a command handler behaves the same on every adapter.
import {
  ANY,
  type AppendResult,
  type ExpectedRevision,
  InvalidEventStoreInputError,
  NO_STREAM,
  STREAM_EXISTS,
  WrongExpectedRevisionError,
} from '../../ports/event-store';

export type CurrentRevision = number | typeof NO_STREAM;

export function expectationHolds(expected: ExpectedRevision, current: CurrentRevision): boolean {
  switch (expected) {
    case ANY:
      return true;
    case NO_STREAM:
      return current === NO_STREAM;
    case STREAM_EXISTS:
      return current !== NO_STREAM;
    default:
      return current === expected;
  }
}

/** Where an event id of the batch already lives, if anywhere. */
export interface ExistingEvent {
  stream: string;
  revision: number;
  position: bigint;
}

/**
 * Decides an append whose event ids (some or all) are already stored, the way EventStoreDB does:
 * the whole batch already written, in order, where `expected` says it goes, is a retry and answers
 * the original result; anything else is a conflict. Unlike EventStoreDB, an id is unique across
 * the whole log, so an id found in another stream is a caller bug, not a conflict.
 */
export function resolveExistingIds(
  stream: string,
  expected: ExpectedRevision,
  current: CurrentRevision,
  found: (ExistingEvent | undefined)[],
): AppendResult {
  const elsewhere = found.find((f) => f !== undefined && f.stream !== stream);
  if (elsewhere)
    throw new InvalidEventStoreInputError(
      `an event id of this append to ${stream} already belongs to stream ${elsewhere.stream} (revision ${elsewhere.revision})`,
    );
  const first = found[0];
  const last = found[found.length - 1];
  const wholeBatch =
    first !== undefined && found.every((f, i) => f !== undefined && f.revision === first.revision + i);
  const atExpectedPlace =
    expected === ANY || expected === STREAM_EXISTS
      ? true
      : first !== undefined && first.revision === (expected === NO_STREAM ? 0 : expected + 1);
  if (wholeBatch && atExpectedPlace && last !== undefined)
    return { nextRevision: last.revision, position: last.position };
  throw new WrongExpectedRevisionError(stream, expected, current);
}
