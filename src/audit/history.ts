// The events of one entity, in log order, for `audit history`, `audit as-of` and the partners'
// GET /reservations/{id}/history.
import { GENESIS, hashOfRecorded } from '../adapters/event-store/chain';
import { parseDateTime } from '../core/datetime';
import type { EventStore, RecordedEvent } from '../ports/event-store';
import { storedEvents } from '../privacy/sealing-event-store';
import { type AuditorActor, auditorActor } from './actors';
import { changesOf, describeChanges, type FieldChange, printable } from './changes';
import { type AuditSubject, auditSubjects, eventNames, genericFold } from './subjects';

export interface SubjectEvents {
  /** The kind whose streams held the id, or "log" when the whole log was searched. */
  kind: string;
  subject: AuditSubject | null;
  /** Every event listed by history, in log order. */
  events: RecordedEvent[];
  /** Those the entity is folded from (as-of): its kind's own streams, or every event found by a search. */
  own: RecordedEvent[];
}

const byPosition = (a: RecordedEvent, b: RecordedEvent) =>
  a.position < b.position ? -1 : a.position > b.position ? 1 : 0;

async function scanLog(events: EventStore, id: string): Promise<RecordedEvent[]> {
  const found: RecordedEvent[] = [];
  for await (const e of events.readAll({ batchSize: 5000 })) if (eventNames(e, id)) found.push(e);
  return found;
}

/**
 * Finds an id's events: the streams of the first kind that has any, else (when `scan` allows) every
 * event of the log naming it. An empty result means the log knows nothing of it.
 */
export async function loadSubject(
  events: EventStore,
  id: string,
  options: { kind?: string; scan?: boolean } = {},
): Promise<SubjectEvents> {
  for (const subject of auditSubjects()) {
    if (options.kind !== undefined && subject.kind !== options.kind) continue;
    const found: RecordedEvent[] = [];
    for (const stream of subject.streams(id)) found.push(...(await events.readStream(stream)));
    if (found.length > 0) {
      found.sort(byPosition);
      if (!subject.scanToo || options.scan === false)
        return { kind: subject.kind, subject, events: found, own: found };
      const seen = new Set(found.map((e) => e.position));
      const all = [...found, ...(await scanLog(events, id)).filter((e) => !seen.has(e.position))];
      return { kind: subject.kind, subject, events: all.sort(byPosition), own: found };
    }
  }
  if (options.scan === false || options.kind !== undefined)
    return { kind: 'none', subject: null, events: [], own: [] };
  const found = await scanLog(events, id);
  return { kind: 'log', subject: null, events: found, own: found };
}

/** The point of `--at`: a log position, or an instant (events recorded at or before it). */
export type AsOf = { position: bigint } | { time: string };

export function parseAsOf(text: string): AsOf | null {
  // Any run of digits is a position, however long: one past the log's end is refused as such.
  if (/^\d+$/.test(text)) return { position: BigInt(text) };
  const time = instantBound(text, 'at or before');
  return time === null ? null : { time };
}

/** The first and last instants a store's recorded time (`toISOString`, a 4-digit year) can hold. */
const FIRST_RECORDED = '0000-01-01T00:00:00.000Z';
const LAST_RECORDED = '9999-12-31T23:59:59.999Z';

/**
 * An RFC 3339 instant as the recorded times it bounds are written (UTC, milliseconds), compared as
 * text: `at or before` (`--at`, `--to`) keeps the millisecond it falls in (events recorded at 10:00:00.000
 * are at or before 10:00:00.0004), `at or after` (`--from`) starts at the next one when it falls between
 * two (they are not at or after 10:00:00.0004). An instant past year 9999 or before year 0 (an offset can
 * move 9999-12-31T23:59 or 0000-01-01T00:00 there) is the last or first time a store can record: its ISO
 * text (+010000-…, -000001-…) would compare as text before every recorded time.
 */
export function instantBound(text: string, side: 'at or before' | 'at or after'): string | null {
  // Strict RFC 3339 (src/core/datetime.ts): Date.parse would read 2026-02-30 as 2 March.
  const parsed = parseDateTime(text);
  if (!parsed.ok) return null;
  const { epochMs, nanos } = parsed.value;
  const ms = side === 'at or after' && nanos % 1e6 !== 0 ? epochMs + 1 : epochMs;
  if (!Number.isFinite(ms)) return null;
  const iso = new Date(ms).toISOString();
  return iso.startsWith('+') ? LAST_RECORDED : iso.startsWith('-') ? FIRST_RECORDED : iso;
}

export const isAtOrBefore = (e: Pick<RecordedEvent, 'position' | 'created'>, at: AsOf): boolean =>
  'position' in at ? e.position <= at.position : e.created <= at.time;

/**
 * The events (in log order) of the log as it stood at `at`: up to the first one past it. By time, the
 * events after one recorded past it are left out too, as `--until` replays the log (src/audit/replay.ts):
 * recorded times can go back between events (clocks of two API processes differ, an EventStoreDB log
 * written before its appends kept them rising), and filtering by time could fold revision N+1 of a stream
 * without N.
 */
export function logUpTo<E extends Pick<RecordedEvent, 'position' | 'created'>>(events: E[], at: AsOf): E[] {
  const past = events.findIndex((e) => !isAtOrBefore(e, at));
  return past < 0 ? events : events.slice(0, past);
}

/**
 * The entity as of `at`, and whether what it was folded from holds erased personal fields (a customer
 * since erased: its events read with `erased: true`, src/privacy/seal.ts). Folds keep the fields, not
 * that mark, so the answer says it: a reservation's `allergies: null` may be an erasure, not "none".
 */
export function foldSubject(
  loaded: SubjectEvents,
  at: AsOf,
): { state: unknown; events: number; erased: boolean; folded: RecordedEvent[] } {
  const upTo = logUpTo(loaded.own, at);
  const fold = loaded.subject?.fold ?? genericFold;
  return {
    state: upTo.length === 0 ? null : fold(upTo),
    events: upTo.length,
    folded: upTo,
    erased: upTo.some((e) => (e.data as { erased?: unknown }).erased === true),
  };
}

/** One entry of an auditor's history (the NDJSON of `audit history --json`; docs/AUDIT.md). */
export interface HistoryEntry {
  position: string;
  time: string;
  stream: string;
  revision: number;
  type: string;
  actor: AuditorActor;
  request_id: string | null;
  changes: FieldChange[];
  hash: string | null;
  /**
   * The restaurant the event is of (metadata's, else data's, as in `audit export`), or null. The
   * changes leave it out (every event of a restaurant's entities carries it), so without it a
   * credential's creation or a manager's access set would not say which restaurant.
   */
  restaurant_id: string | null;
  /** False when the event's hash does not match its content (edited since written): hashMismatches. */
  hash_ok: boolean;
}

/**
 * The positions of those of `list` whose stored hash is not the hash of their stored content chained
 * to their stream's previous event: edited since written (`audit verify` reports them too). Each
 * stream is read again as stored (sealed fields sealed: the hash covers that form).
 */
export async function hashMismatches(
  events: EventStore,
  list: readonly RecordedEvent[],
): Promise<Set<bigint>> {
  const stored = storedEvents(events);
  const bad = new Set<bigint>();
  for (const stream of new Set(list.map((e) => e.stream))) {
    let prev = GENESIS;
    for (const e of await stored.readStream(stream)) {
      const recomputed = hashOfRecorded(prev, e);
      if (e.hash !== undefined && e.hash !== recomputed) bad.add(e.position);
      prev = e.hash ?? recomputed;
    }
  }
  return bad;
}

export function historyEntry(e: RecordedEvent, subjectId: string, hashOk = true): HistoryEntry {
  return {
    position: e.position.toString(),
    time: e.created,
    stream: e.stream,
    revision: e.revision,
    type: e.type,
    actor: auditorActor(e.metadata.actor),
    request_id: typeof e.metadata.request_id === 'string' ? e.metadata.request_id : null,
    changes: changesOf(e as { type: string; data: Record<string, unknown> }, subjectId),
    hash: e.hash ?? null,
    restaurant_id: restaurantOf(e),
    hash_ok: hashOk,
  };
}

function restaurantOf(e: RecordedEvent): string | null {
  const r = e.metadata.restaurant_id ?? (e.data as { restaurant_id?: unknown }).restaurant_id;
  return typeof r === 'string' ? r : null;
}

/** The readable form: a header line per event, an indented line per change. */
export function historyText(entry: HistoryEntry): string[] {
  const who = entry.actor.raw ?? 'no actor recorded';
  const head = printable(
    `${entry.time}  #${entry.position}  ${entry.stream}@${entry.revision}  ${entry.type}  by ${who} (${entry.actor.kind})${entry.restaurant_id === null ? '' : `  at ${entry.restaurant_id}`}${entry.request_id ? `  request ${entry.request_id}` : ''}`,
  );
  const warning = entry.hash_ok
    ? []
    : [
        `    ! hash does not match: ${printable(entry.stream)} revision ${entry.revision} (position ${entry.position}) was edited after it was written (audit verify)`,
      ];
  return [head, ...warning, ...describeChanges(entry.changes).map((l) => `    ${l}`)];
}
