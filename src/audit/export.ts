// `audit export`: a restaurant's events as NDJSON, one object per line, in log order. The field
// names and their order are stable and documented in docs/AUDIT.md:
//   {"position","time","stream","revision","event_id","type","restaurant_id","actor","request_id",
//    "data","metadata","hash"}, and last `"withheld":true` or `"redacted":true` on the lines so marked
// Personal fields sealed with a customer's key stay sealed (an erasure after the export still makes
// them unreadable in the file); those of a customer already erased (key destroyed) are shown erased,
// as every reader sees them (`name: "[erased]"`, the others null or {}, `erased: true` in data).
// The SQLite store has a fast path (exportStoredRows): SQLite itself builds each page's lines from
// the stored JSON text and hands over one Buffer per page (SqliteLogReader.concatenated); nothing is
// parsed in JavaScript except the data of an erased customer's sealed events and of webhook endpoint
// events naming headers (values in clear before 2026-11-28 masked). Both paths write the
// same bytes (test/integration/audit-export.int.test.ts, test/e2e/audit.e2e.test.ts).

import { customerStream } from '../../commands/customers/events';
import { withClearHeadersMasked } from '../../commands/webhook-endpoints/header-secrets';
import { SqliteEventStore } from '../adapters/event-store/sqlite';
import {
  SqliteLogReader,
  type StoredRowFilter,
  storedRowToEvent,
} from '../adapters/event-store/sqlite-log-reader';
import type { EventStore, RecordedEvent } from '../ports/event-store';
import type { KeyStore } from '../ports/key-store';
import { customerSubject, isSealed, openData, sealedCustomer } from '../privacy/seal';
import { SealingEventStore, storedEvents } from '../privacy/sealing-event-store';

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
  redacted: boolean,
): string {
  return `{"position":"${position}","time":"${created}","stream":${str(stream)},"revision":${revision},"event_id":"${id}","type":${str(type)},"restaurant_id":${str(restaurantId)},"actor":${str(actor)},"request_id":${str(requestId)},"data":${dataJson},"metadata":${metadataJson},"hash":${hash ? `"${hash}"` : 'null'}${redacted ? REDACTED_MARK : ''}}\n`;
}

/**
 * Last on a line whose data had values the log holds in clear replaced by `[redacted]` (an endpoint's
 * custom headers written before 2026-11-28): its `hash` is that of the stored event, which the line
 * no longer holds, so an offline check must not recompute it (docs/AUDIT.md), as for `withheld`.
 */
const REDACTED_MARK = ',"redacted":true';

/**
 * The streams of accounts no restaurant owns, which may hold events of several restaurants: a
 * manager's (granted at several) and an OAuth application's. Every other stream is an entity of one
 * restaurant. Only these are looked at for sharing, through the stream index: finding shared streams
 * among all would cost a second pass over the log (measured: 1.8 → 3.5 µs of CPU an event).
 */
export const SHARED_STREAM_PREFIXES: readonly string[] = ['user-', 'oauthapp-'];

/**
 * An event of another restaurant (or of none) in a stream the exported restaurant shares (a
 * manager's): only where it sits in the chain — position, time, stream, revision and hash —, the
 * other fields null, and `withheld: true` last. Its hash cannot be recomputed from the line, but the
 * next line of the stream chains to it, so the restaurant's own events stay checkable and every
 * revision of the stream is accounted for (docs/AUDIT.md).
 */
export function withheldLine(
  e: Pick<RecordedEvent, 'position' | 'created' | 'stream' | 'revision' | 'hash'>,
): string {
  return `{"position":"${e.position}","time":"${e.created}","stream":${str(e.stream)},"revision":${e.revision},"event_id":null,"type":null,"restaurant_id":null,"actor":null,"request_id":null,"data":null,"metadata":null,"hash":${e.hash ? `"${e.hash}"` : 'null'},"withheld":true}\n`;
}

/** `redacted`: the data shown is not the data stored (values in clear masked): see REDACTED_MARK. */
export function exportLine(e: RecordedEvent, redacted = false): string {
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
    redacted,
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

/** A chunk of NDJSON: text, or its UTF-8 bytes (the SQLite fast path). */
export type ExportChunk = string | Buffer;

/**
 * Customers erased (key destroyed), asked once each: what the export shows as erased. Null: no key
 * store (a bare store, not the service's sealing layer): sealed fields stay as stored.
 */
class ErasedCustomers {
  private readonly known = new Map<string, boolean>();
  constructor(private readonly keys: KeyStore | null) {}

  async isErased(customerId: string): Promise<boolean> {
    if (this.keys === null) return false;
    let erased = this.known.get(customerId);
    if (erased === undefined) {
      erased = (await this.keys.find(customerSubject(customerId))).state === 'destroyed';
      this.known.set(customerId, erased);
    }
    return erased;
  }

  /** The data as the export shows it: a sealed event of an erased customer opened as erased. */
  async shown(type: string, data: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!isSealed(data)) return data;
    const customer = sealedCustomer(data);
    return customer !== null && (await this.isErased(customer)) ? openData(type, data, null) : data;
  }
}

/**
 * Streams the matching events as NDJSON chunks to `write` (awaited: back-pressure), reading the
 * log up to the head it saw when it started. Answers the number of events written.
 */
export async function exportEvents(
  events: EventStore,
  filter: ExportFilter,
  write: (chunk: ExportChunk) => Promise<void> | void,
  onProgress?: (p: ExportProgress) => void,
  options: { batchSize?: number; forceGeneric?: boolean } = {},
): Promise<number> {
  const layer = events instanceof SealingEventStore ? events : null;
  const erased = new ErasedCustomers(layer?.keys ?? null);
  // What the log holds: sealed personal fields stay sealed (those of erased customers shown erased;
  // on EventStoreDB, events written in clear before sealing too: storedAsShown).
  events = storedEvents(events);
  const head = await events.headPosition();
  if (head === null) return 0;
  if (events instanceof SqliteEventStore && !options.forceGeneric) {
    const reader = SqliteLogReader.open(events.file);
    if (reader !== null)
      try {
        return await exportStoredRows(
          reader,
          Number(head),
          filter,
          options.batchSize ?? 4096,
          erased,
          write,
          onProgress,
        );
      } finally {
        reader.close();
      }
  }
  // Pages of 2,048 events (~1.5 MB of NDJSON): large writes, and a page's strings die young (pages
  // of 8,192 outgrew V8's young generation and tripled the CPU per event in GC).
  const batch = options.batchSize ?? 2048;
  // The streams holding the restaurant's events: their other events are written withheld.
  const mine = new Set<string>();
  if (filter.restaurantId !== null)
    for await (const e of events.readAll({ batchSize: batch })) {
      if (e.position > head) break;
      if (SHARED_STREAM_PREFIXES.some((p) => e.stream.startsWith(p)) && matchesExport(e, filter))
        mine.add(e.stream);
    }
  let exported = 0;
  let chunk = '';
  let inChunk = 0;
  let last = 0n;
  for await (const e of events.readAll({ batchSize: batch })) {
    if (e.position > head) break;
    last = e.position;
    if (matchesExport(e, filter)) {
      const shown = layer === null ? e : await layer.storedAsShown(e);
      const opened = await erased.shown(shown.type, shown.data);
      const data = withClearHeadersMasked(shown.type, opened);
      chunk += exportLine(data === shown.data ? shown : { ...shown, data }, data !== opened);
      exported++;
    } else if (mine.has(e.stream) && matchesExport(e, { ...filter, restaurantId: null })) {
      chunk += withheldLine(e);
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

// The line of `exportLine` as an SQL expression over the stored columns (SQLite 3.44+ for concat).
// The stored data and metadata are JSON.stringify's text, so a string value taken out of them with
// `->` is already written as JSON.stringify writes it; `json_quote` escapes stream and type as
// JSON.stringify does (quotes, backslashes, \b \t \n \f \r, other control characters as \u00xx).
// The integration test holds both paths to the same bytes on hostile strings (fast-check).
// JSON functions are the dearest part of a row (SQLite parses the metadata once a row, then each
// lookup is ~1,000 instructions): a row costs two lookups beyond the restaurant check, whose value
// the line does not look up again (it is the restaurant asked for). Measured with cachegrind over
// 8,192 rows: 24,200 instructions a row with type-checked lookups throughout, 14,900 so.

/** A top-level string of a JSON column as a JSON literal, else null (exportLine's `str`). */
const jsonStringSql = (column: string, key: string) =>
  `CASE json_type(${column}, '$.${key}') WHEN 'text' THEN ${column} -> '$.${key}' ELSE 'null' END`;
/** A looked-up value (`->`) as exportLine writes it: a JSON string literal as it is, anything else null. */
const stringOrNull = (name: string) => `CASE WHEN ${name} GLOB '"*' THEN ${name} ELSE 'null' END`;
/** The line's restaurant_id for an export of every restaurant (metadata's unless missing or null, else data's). */
const RESTAURANT_JSON = `CASE WHEN coalesce(json_type(metadata, '$.restaurant_id'), 'null') = 'null'
  THEN ${jsonStringSql('data', 'restaurant_id')} ELSE ${jsonStringSql('metadata', 'restaurant_id')} END`;
/**
 * The row's restaurant equals @restaurant: `metadata.restaurant_id ?? data.restaurant_id === id`. The
 * store accepts only a string or null as metadata's restaurant_id (validate.ts), so `->>` (null for
 * a JSON null) needs no type check there; data's may be anything, and only a string matches.
 */
const RESTAURANT_IS = `coalesce(metadata ->> '$.restaurant_id',
  CASE json_type(data, '$.restaurant_id') WHEN 'text' THEN data ->> '$.restaurant_id' END) = @restaurant`;
/** Looked up once a row, in the subquery (see SqliteLogReader.concatenated). */
const LOOKED_UP = { x_actor: `metadata -> '$.actor'`, x_request: `metadata -> '$.request_id'` };
/**
 * A damaged row (the file edited or damaged) is refused, never copied into an invalid line: the
 * metadata is parsed by its lookups anyway (SQLite throws on malformed JSON, and the page is then
 * read row by row to name it), and the data, copied as it is, is parsed (json_valid) and must be an
 * object. Before 2026-11-28 only its first and last characters were looked at, and a damage inside
 * that kept both braces (`{oops}`) went out as an invalid line.
 */
const ROW_OK = `(data GLOB '{*' AND json_valid(data) AND metadata GLOB '{*')`;
/** The SQL function that shows an erased customer's sealed data erased (see exportStoredRows). */
const SHOWN_DATA = 'couvert_export_shown_data';
/** A cheap test a sealed row passes (its data holds `"sealed":{`): the function runs only on those. */
const MAYBE_SEALED = `instr(data, '"sealed":{') > 0`;

/** Custom header values of endpoint events, in clear in events written before 2026-11-28 (header-secrets.ts). */
const MASKED_HEADERS = 'couvert_export_masked_headers';
/** A cheap test: only endpoint events that name headers go through the function. */
const MAYBE_CLEAR_HEADERS = `(type IN ('WebhookEndpointCreated', 'WebhookEndpointUpdated') AND instr(data, '"headers":{"') > 0)`;
/** The function writing REDACTED_MARK (or nothing) after the hash of a row whose values it masks. */
const REDACTED_MARK_FN = 'couvert_export_redacted_mark';
const REDACTED_MARK_SQL = `CASE WHEN ${MAYBE_CLEAR_HEADERS} THEN ${REDACTED_MARK_FN}(type, data) ELSE '' END`;
/** withheldLine as an SQL expression over the stored columns. */
const WITHHELD_LINE_SQL = `concat('{"position":"', position, '","time":"', created, '","stream":', json_quote(stream),
    ',"revision":', revision, ',"event_id":null,"type":null,"restaurant_id":null,"actor":null,"request_id":null,"data":null,"metadata":null,"hash":',
    CASE WHEN hash IS NULL OR hash = '' THEN 'null' ELSE '"' || hash || '"' END, ',"withheld":true}', char(10))`;
/** A row of a shared stream (the `@shared` JSON array of stream names) the restaurant's filter left out. */
const IN_SHARED = `stream IN (SELECT value FROM json_each(@shared))`;

function lineSql(restaurantSql: string, dataSql: string): string {
  return `concat('{"position":"', position, '","time":"', created, '","stream":', json_quote(stream),
    ',"revision":', revision, ',"event_id":"', id, '","type":', json_quote(type),
    ',"restaurant_id":', ${restaurantSql}, ',"actor":', ${stringOrNull('x_actor')},
    ',"request_id":', ${stringOrNull('x_request')}, ',"data":', ${dataSql},
    ',"metadata":', metadata, ',"hash":', CASE WHEN hash IS NULL OR hash = '' THEN 'null' ELSE '"' || hash || '"' END,
    ${REDACTED_MARK_SQL}, '}', char(10))`;
}

/**
 * The error naming the first row of after < position <= upTo (passing the filter's text and time
 * checks) whose data or metadata is not a JSON object, as the generic path reports it; null if none.
 */
function damagedRowIn(
  reader: SqliteLogReader,
  after: number,
  upTo: number,
  filter: StoredRowFilter,
): Error | null {
  for (const row of reader.rows(after, upTo, filter))
    try {
      storedRowToEvent(row);
    } catch (err) {
      return err as Error;
    }
  return null;
}

/**
 * The SQLite fast path: pages of positions up to the head (so a selective filter never reads a page
 * twice), each turned into its NDJSON bytes inside SQLite and written as one Buffer with
 * back-pressure; progress once a page. Rows that do not hold the restaurant id's JSON text anywhere
 * are dropped by a plain text search before any JSON function runs; the rest are checked exactly.
 * Erased customers are the deleted ones (CustomerDeleted in a `customer-…` stream, found through the
 * stream index) whose key is destroyed, asked once each before the first page; their sealed events' data goes through a JavaScript function
 * (parsed, opened as erased, re-serialised), and no other row's does.
 */
async function exportStoredRows(
  reader: SqliteLogReader,
  end: number,
  filter: ExportFilter,
  batch: number,
  erased: ErasedCustomers,
  write: (chunk: ExportChunk) => Promise<void> | void,
  onProgress?: (p: ExportProgress) => void,
): Promise<number> {
  const gone = new Set<string>();
  for (const text of reader.dataOfType('CustomerDeleted', customerStream(''))) {
    const c = (JSON.parse(text) as { customer_id?: unknown }).customer_id;
    if (typeof c === 'string' && !gone.has(c) && (await erased.isErased(c))) gone.add(c);
  }
  // The data as the generic path shows it: an erased customer's sealed event opened as erased, then
  // endpoint headers written in clear before the sealing masked (both in JS, on the rows the cheap
  // tests let through); `redacted` when the masking changed it.
  const shownOf = (type: string, text: string) => {
    const data = JSON.parse(text) as Record<string, unknown>;
    const customer = gone.size > 0 && isSealed(data) ? sealedCustomer(data) : null;
    const opened = customer !== null && gone.has(customer) ? openData(type, data, null) : data;
    const shown = withClearHeadersMasked(type, opened);
    return { text: shown === data ? text : JSON.stringify(shown), redacted: shown !== opened };
  };
  reader.defineFunction(MASKED_HEADERS, (type, text) => shownOf(type, text).text);
  reader.defineFunction(REDACTED_MARK_FN, (type, text) =>
    shownOf(type, text).redacted ? REDACTED_MARK : '',
  );
  let dataSql = `CASE WHEN ${MAYBE_CLEAR_HEADERS} THEN ${MASKED_HEADERS}(type, data) ELSE data END`;
  if (gone.size > 0) {
    reader.defineFunction(SHOWN_DATA, (type, text) => shownOf(type, text).text);
    dataSql = `CASE WHEN ${MAYBE_SEALED} THEN ${SHOWN_DATA}(type, data) WHEN ${MAYBE_CLEAR_HEADERS} THEN ${MASKED_HEADERS}(type, data) ELSE data END`;
  }
  const one = filter.restaurantId !== null;
  const params: Record<string, unknown> = one
    ? { restaurant: filter.restaurantId, restaurant_json: JSON.stringify(filter.restaurantId) }
    : {};
  const rowFilter = {
    contains: filter.restaurantId === null ? null : JSON.stringify(filter.restaurantId),
    from: filter.from,
    to: filter.to,
  };
  // Streams the restaurant shares with others' events (a manager's): found before the first page
  // through the stream index; usually none, and then the pages are the restaurant's rows alone.
  const shared = one
    ? reader.sharedStreams(SHARED_STREAM_PREFIXES, RESTAURANT_IS, end, rowFilter, params)
    : [];
  let page: ReturnType<SqliteLogReader['concatenated']>;
  let pageFilter: StoredRowFilter = rowFilter;
  if (shared.length === 0)
    page = one
      ? reader.concatenated(lineSql('@restaurant_json', dataSql), RESTAURANT_IS, LOOKED_UP, ROW_OK)
      : reader.concatenated(lineSql(RESTAURANT_JSON, dataSql), 'TRUE', LOOKED_UP, ROW_OK);
  else {
    // The text pre-filter moves into the condition, beside the rows of the shared streams.
    params.shared = JSON.stringify(shared);
    params.contains_text = rowFilter.contains;
    const mineSql = `((instr(metadata, @contains_text) > 0 OR instr(data, @contains_text) > 0) AND ${RESTAURANT_IS})`;
    page = reader.concatenated(
      `CASE WHEN x_mine THEN ${lineSql('@restaurant_json', dataSql)} ELSE ${WITHHELD_LINE_SQL} END`,
      `${mineSql} OR ${IN_SHARED}`,
      { ...LOOKED_UP, x_mine: `coalesce(${mineSql}, FALSE)` },
      `(NOT x_mine OR ${ROW_OK})`,
    );
    pageFilter = { ...rowFilter, contains: null };
  }
  let exported = 0;
  for (let after = 0; after < end; ) {
    const upTo = Math.min(after + batch, end);
    let result: ReturnType<typeof page>;
    try {
      result = page(after, upTo, pageFilter, params);
    } catch (err) {
      // Malformed JSON met by a lookup (or by the erased-data function): name the row.
      throw damagedRowIn(reader, after, upTo, rowFilter) ?? err;
    }
    const { bytes, rows, firstBad } = result;
    // A row the check doubts: refused if it is not JSON objects indeed (whitespace around a valid
    // object, which no writer leaves, passes: then the whole page is read to be sure of the others).
    if (firstBad !== null) {
      const damaged =
        damagedRowIn(reader, firstBad - 1, firstBad, rowFilter) ??
        damagedRowIn(reader, after, upTo, rowFilter);
      if (damaged !== null) throw damaged;
    }
    if (bytes !== null && rows > 0) await write(bytes);
    exported += rows;
    after = upTo;
    onProgress?.({ exported, position: BigInt(after) });
  }
  return exported;
}
