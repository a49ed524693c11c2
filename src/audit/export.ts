// `audit export`: a restaurant's events as NDJSON, one object per line, in log order. The field
// names and their order are stable and documented in docs/AUDIT.md:
//   {"position","time","stream","revision","event_id","type","restaurant_id","actor","request_id",
//    "data","metadata","hash"}
// Personal fields sealed with a customer's key stay sealed (an erased customer stays erased in an
// export). The SQLite store has a fast path (exportStoredRows): the stored rows are read raw through
// a memory-mapped read-only connection, pre-filtered inside SQLite on the restaurant id's text and
// the time, and each line is built from the stored JSON text — only the small metadata is parsed
// (for restaurant_id, actor, request_id); data is copied, never parsed nor re-serialised. Both
// paths write the same bytes (test/e2e/audit.e2e.test.ts).
import { SqliteEventStore } from '../adapters/event-store/sqlite';
import { SqliteLogReader, type StoredRow } from '../adapters/event-store/sqlite-log-reader';
import type { EventStore, RecordedEvent } from '../ports/event-store';
import { storedEvents } from '../privacy/sealing-event-store';

export interface ExportFilter {
  restaurantId: string | null;
  /** ISO instants (UTC, as Date.toISOString writes them), inclusive, on the event's recorded time. */
  from: string | null;
  to: string | null;
}

export interface ExportProgress {
  /** Events written so far. */
  exported: number;
  /** Log position reached (scanned up to). */
  position: bigint;
}

/** Strings JSON writes as they are (no escape): most ids, types, actors. */
const PLAIN = /^[\w .:@/+=,;~!#$%&'()*<>?[\]^`{|}-]*$/;
/** A JSON string literal, or null for anything else (as JSON.stringify would write a string). */
const str = (v: unknown): string =>
  typeof v !== 'string' ? 'null' : PLAIN.test(v) ? `"${v}"` : JSON.stringify(v);

function line(
  position: string,
  created: string,
  stream: string,
  revision: number,
  id: string,
  type: string,
  restaurantId: unknown,
  actor: unknown,
  requestId: unknown,
  dataJson: string,
  metadataJson: string,
  hash: string | null | undefined,
): string {
  return `{"position":"${position}","time":"${created}","stream":${str(stream)},"revision":${revision},"event_id":"${id}","type":${str(type)},"restaurant_id":${str(restaurantId)},"actor":${str(actor)},"request_id":${str(requestId)},"data":${dataJson},"metadata":${metadataJson},"hash":${hash ? `"${hash}"` : 'null'}}\n`;
}

export function exportLine(e: RecordedEvent): string {
  const restaurantId = e.metadata.restaurant_id ?? (e.data as { restaurant_id?: unknown }).restaurant_id;
  return line(
    e.position.toString(),
    e.created,
    e.stream,
    e.revision,
    e.id,
    e.type,
    restaurantId,
    e.metadata.actor,
    e.metadata.request_id,
    JSON.stringify(e.data),
    JSON.stringify(e.metadata),
    e.hash,
  );
}

export function matchesExport(e: RecordedEvent, f: ExportFilter): boolean {
  if (f.restaurantId !== null) {
    const r = e.metadata.restaurant_id ?? (e.data as { restaurant_id?: unknown }).restaurant_id;
    if (r !== f.restaurantId) return false;
  }
  if (f.from !== null && e.created < f.from) return false;
  if (f.to !== null && e.created > f.to) return false;
  return true;
}

/**
 * Streams the matching events as NDJSON chunks to `write` (awaited: back-pressure), reading the
 * log up to the head it saw when it started. Answers the number of events written.
 */
export async function exportEvents(
  events: EventStore,
  filter: ExportFilter,
  write: (chunk: string) => Promise<void> | void,
  onProgress?: (p: ExportProgress) => void,
  options: { batchSize?: number; forceGeneric?: boolean } = {},
): Promise<number> {
  // What the log holds: sealed personal fields stay sealed.
  events = storedEvents(events);
  const head = await events.headPosition();
  if (head === null) return 0;
  // Pages of 2,048 events (~1.5 MB of NDJSON): large writes, and a page's strings die young (pages
  // of 8,192 outgrew V8's young generation and tripled the CPU per event in GC).
  const batch = options.batchSize ?? 2048;
  if (events instanceof SqliteEventStore && !options.forceGeneric) {
    const reader = SqliteLogReader.open(events.file);
    if (reader !== null)
      try {
        return await exportStoredRows(reader, Number(head), filter, batch, write, onProgress);
      } finally {
        reader.close();
      }
  }
  let exported = 0;
  let chunk = '';
  let inChunk = 0;
  let last = 0n;
  for await (const e of events.readAll({ batchSize: batch })) {
    if (e.position > head) break;
    last = e.position;
    if (matchesExport(e, filter)) {
      chunk += exportLine(e);
      exported++;
    }
    if (++inChunk >= batch) {
      if (chunk !== '') await write(chunk);
      chunk = '';
      inChunk = 0;
      onProgress?.({ exported, position: last });
    }
  }
  if (chunk !== '') await write(chunk);
  onProgress?.({ exported, position: last });
  return exported;
}

/** A stored row's metadata and restaurant (metadata's, else data's), or null when it is not wanted. */
function storedRowMetadata(
  r: StoredRow,
  restaurantId: string | null,
): { metadata: Record<string, unknown>; restaurant: unknown } | null {
  const metadata = JSON.parse(r[6]) as Record<string, unknown>;
  // Data is parsed only for an event whose metadata names no restaurant (rare: the handlers put it there).
  const restaurant =
    metadata.restaurant_id ?? (JSON.parse(r[5]) as { restaurant_id?: unknown }).restaurant_id;
  return restaurantId === null || restaurant === restaurantId ? { metadata, restaurant } : null;
}

/**
 * The SQLite fast path: pages of stored rows by position range up to the head (so a selective filter
 * never reads a page twice), one chunk per page written with back-pressure, progress once a page.
 * A log with no restaurant column: every row of the log is scanned, and rows that do not hold the
 * restaurant id's JSON text anywhere are dropped inside SQLite before they cost a JS string.
 */
async function exportStoredRows(
  reader: SqliteLogReader,
  end: number,
  filter: ExportFilter,
  batch: number,
  write: (chunk: string) => Promise<void> | void,
  onProgress?: (p: ExportProgress) => void,
): Promise<number> {
  const rowFilter = {
    contains: filter.restaurantId === null ? null : JSON.stringify(filter.restaurantId),
    from: filter.from,
    to: filter.to,
  };
  let exported = 0;
  for (let after = 0; after < end; ) {
    const upTo = Math.min(after + batch, end);
    let chunk = '';
    for (const r of reader.rows(after, upTo, rowFilter)) {
      const found = storedRowMetadata(r, filter.restaurantId);
      if (found === null) continue;
      const m = found.metadata;
      chunk += line(
        String(r[0]),
        r[7],
        r[2],
        r[3],
        r[1],
        r[4],
        found.restaurant,
        m.actor,
        m.request_id,
        r[5],
        r[6],
        r[8],
      );
      exported++;
    }
    if (chunk !== '') await write(chunk);
    after = upTo;
    onProgress?.({ exported, position: BigInt(after) });
  }
  return exported;
}
