// The write side of the SQLite log (sqlite.ts): an append's rows and chain hashes, the inspection of
// an append that did not hold, and the group commit. One definition, run either on the main thread
// with the store's connection or in the writer thread (sqlite-writer.ts) with a connection of its
// own: the rules are the same wherever the transaction runs.

import type Database from 'better-sqlite3';
import { packText, type ThreadText, unpackText } from '../../core/thread-text';
import {
  type AppendResult,
  EventStoreError,
  type ExpectedRevision,
  InvalidEventStoreInputError,
  NO_STREAM,
  WrongExpectedRevisionError,
} from '../../ports/event-store';
import { expectationHolds, resolveExistingIds } from './append-rules';
import { chainHash, GENESIS, tipOf } from './chain';

/** What a write needs of an event: checked and serialised already (validate.ts prepareEvent). */
export interface WriteEvent {
  id: string;
  type: string;
  dataJson: string;
  metadataJson: string;
}

export interface WriteAppend {
  stream: string;
  expected: ExpectedRevision;
  events: WriteEvent[];
}

interface StoredRow {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  hash: string | null;
}

/**
 * A group of appends as sent to the writer thread: every string of it (stream, created, and each
 * event's id, type, data and metadata JSON) joined into one, with their lengths, and per append its
 * expected revision and event count. Two strings and two typed arrays instead of a few objects and
 * strings per event: the main thread's share of the message (its serialization) is then about a
 * copy of the text.
 */
export interface EncodedGroup {
  /** The joined text, as UTF-8 bytes to transfer when it is well formed (src/core/thread-text.ts). */
  text: ThreadText;
  /** Per append: [event count, length of stream, length of created, then 4 lengths per event]. */
  lens: Int32Array;
  expected: ExpectedRevision[];
}

export function encodeGroup(queue: readonly { batch: WriteAppend; created: string }[]): EncodedGroup {
  let n = 0;
  for (const q of queue) n += 3 + 4 * q.batch.events.length;
  const lens = new Int32Array(n);
  const parts: string[] = [];
  const expected: ExpectedRevision[] = [];
  let at = 0;
  const put = (text: string) => {
    lens[at++] = text.length;
    parts.push(text);
  };
  for (const { batch, created } of queue) {
    expected.push(batch.expected);
    lens[at++] = batch.events.length;
    put(batch.stream);
    put(created);
    for (const e of batch.events) {
      put(e.id);
      put(e.type);
      put(e.dataJson);
      put(e.metadataJson);
    }
  }
  return { text: packText(parts.join('')), lens, expected };
}

export function decodeGroup(group: EncodedGroup): { batch: WriteAppend; created: string }[] {
  const { lens, expected } = group;
  const text = unpackText(group.text);
  const queue: { batch: WriteAppend; created: string }[] = [];
  let pos = 0;
  let at = 0;
  const take = () => {
    const len = lens[at++] as number;
    const part = text.slice(pos, pos + len);
    pos += len;
    return part;
  };
  for (const exp of expected) {
    const count = lens[at++] as number;
    const stream = take();
    const created = take();
    const events: WriteEvent[] = [];
    for (let i = 0; i < count; i++)
      events.push({ id: take(), type: take(), dataJson: take(), metadataJson: take() });
    queue.push({ batch: { stream, expected: exp, events }, created });
  }
  return queue;
}

/**
 * What one append of a group commit came to, settled after COMMIT. `fresh`: this transaction wrote
 * its events (positions result.position - events + 1 … result.position); false for an append answered
 * as the retry of one committed before.
 */
export type Outcome = { ok: true; result: AppendResult; fresh: boolean } | { ok: false; error: unknown };

export interface SqliteWrites {
  /** One append in its own IMMEDIATE transaction; null when the expectation does not hold. */
  appendTx(batch: WriteAppend, created: string): AppendResult | null;
  /** An append that did not hold or met a stored id: a retry of a committed one, or its error. */
  inspectTx(batch: WriteAppend): AppendResult;
  /**
   * Every append of the queue in one IMMEDIATE transaction, in order. An append that fails (wrong
   * expected revision, an id stored elsewhere) or turns out to be a retry is undone alone; errors
   * other than the store's own escape and roll the whole transaction back.
   */
  groupTx(queue: readonly { batch: WriteAppend; created: string }[]): Outcome[];
}

export function sqliteWrites(db: Database.Database): SqliteWrites {
  const last = db
    .prepare<[string], [number, string | null]>(
      'SELECT revision, hash FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1',
    )
    .raw();
  const insert = db.prepare<[string, string, number, string, string, string, string, string]>(
    'INSERT INTO events (id, stream, revision, type, data, metadata, created, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const byId = db.prepare<[string], { stream: string; revision: number; position: number }>(
    'SELECT stream, revision, position FROM events WHERE id = ?',
  );
  const forwards = db.prepare<[string], StoredRow>(
    'SELECT id, stream, revision, type, data, metadata, hash FROM events WHERE stream = ? ORDER BY revision',
  );

  /** The chain tip of a stream whose last row has no hash (written before the chain): recomputed. */
  const legacyTip = (stream: string): string =>
    tipOf(
      forwards.all(stream).map(({ hash, ...r }) => ({
        ...r,
        data: JSON.parse(r.data),
        metadata: JSON.parse(r.metadata),
        ...(hash === null ? {} : { hash }),
      })),
    );

  // Returns null when the expectation fails, so the slow path (idempotency check) stays out of
  // the write lock and out of the common case.
  const appendRows = (batch: WriteAppend, created: string): AppendResult | null => {
    const tip = last.get(batch.stream);
    const current = tip === undefined ? null : tip[0];
    if (!expectationHolds(batch.expected, current ?? NO_STREAM)) return null;
    let revision = current ?? -1;
    let position = 0;
    let prev = tip === undefined ? GENESIS : (tip[1] ?? legacyTip(batch.stream));
    for (const e of batch.events) {
      revision++;
      prev = chainHash(prev, { ...e, stream: batch.stream, revision });
      position = Number(
        insert.run(e.id, batch.stream, revision, e.type, e.dataJson, e.metadataJson, created, prev)
          .lastInsertRowid,
      );
    }
    return { nextRevision: revision, position: BigInt(position) };
  };
  const tx = db.transaction(appendRows);

  // One read snapshot, so the revision and the ids found belong to the same state of the log.
  const inspectLog = (batch: WriteAppend): AppendResult => {
    const current = last.get(batch.stream)?.[0] ?? null;
    const found = batch.events.map((e) => {
      const row = byId.get(e.id);
      return row && { stream: row.stream, revision: row.revision, position: BigInt(row.position) };
    });
    return resolveExistingIds(batch.stream, batch.expected, current ?? NO_STREAM, found);
  };

  // Group commit: one IMMEDIATE transaction; `tx` called inside it runs in a SAVEPOINT (how
  // better-sqlite3 nests transactions) and rolls back to it when it throws. The inspection runs
  // in the write transaction, so it sees the batch's earlier appends as a later append would.
  const group = db.transaction((queue: readonly { batch: WriteAppend; created: string }[]): Outcome[] =>
    queue.map(({ batch, created }): Outcome => {
      let result: AppendResult | null;
      try {
        // A one-event append writes with one INSERT, which SQLite undoes by itself when it fails
        // (a statement is atomic): it needs no SAVEPOINT of its own. Several events do.
        result = batch.events.length === 1 ? appendRows(batch, created) : tx(batch, created);
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
        result = null;
      }
      if (result !== null) return { ok: true, result, fresh: true };
      try {
        return { ok: true, result: inspectLog(batch), fresh: false };
      } catch (err) {
        if (err instanceof EventStoreError) return { ok: false, error: err };
        throw err;
      }
    }),
  );

  return {
    appendTx: (batch, created) => tx.immediate(batch, created),
    inspectTx: db.transaction(inspectLog).deferred,
    groupTx: (queue) => group.immediate(queue),
  };
}

/**
 * The positions a committed group wrote, as [first, last] (null: none). They are contiguous: the group
 * held the write lock, and an append undone to its savepoint gave its positions back.
 */
export function freshRange(
  queue: readonly { batch: WriteAppend }[],
  outcomes: readonly Outcome[],
): [number, number] | null {
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  outcomes.forEach((o, i) => {
    if (!o.ok || !o.fresh) return;
    const end = Number(o.result.position);
    const start = end - (queue[i] as { batch: WriteAppend }).batch.events.length + 1;
    if (start < first) first = start;
    if (end > last) last = end;
  });
  return last === 0 ? null : [first, last];
}

/** An error of the store as plain data (what a thread can send), and back. */
export type SentError =
  | { kind: 'wrong_revision'; stream: string; expected: ExpectedRevision; actual: number | typeof NO_STREAM }
  | { kind: 'invalid_input' | 'store'; message: string };

export function sendError(err: EventStoreError): SentError {
  if (err instanceof WrongExpectedRevisionError)
    return { kind: 'wrong_revision', stream: err.stream, expected: err.expected, actual: err.actual };
  return {
    kind: err instanceof InvalidEventStoreInputError ? 'invalid_input' : 'store',
    message: err.message,
  };
}

export function receiveError(e: SentError): EventStoreError {
  if (e.kind === 'wrong_revision') return new WrongExpectedRevisionError(e.stream, e.expected, e.actual);
  return e.kind === 'invalid_input'
    ? new InvalidEventStoreInputError(e.message)
    : new EventStoreError(e.message);
}
