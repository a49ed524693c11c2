// `audit export`: a restaurant's events as NDJSON, one object per line, in log order. The field
// names and their order are stable and documented in docs/AUDIT.md:
//   {"position","time","stream","revision","event_id","type","restaurant_id","actor","request_id",
//    "data","metadata","hash"}
// Personal fields sealed with a customer's key stay sealed (an erased customer stays erased in an
// export). The SQLite store has a fast path that copies the stored JSON text instead of parsing and
// re-serialising it; both paths write the same bytes.
import { SqliteEventStore } from '../adapters/event-store/sqlite';
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

const str = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : 'null');

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
  return `{"position":"${position}","time":"${created}","stream":${JSON.stringify(stream)},"revision":${revision},"event_id":"${id}","type":${JSON.stringify(type)},"restaurant_id":${str(restaurantId)},"actor":${str(actor)},"request_id":${str(requestId)},"data":${dataJson},"metadata":${metadataJson},"hash":${hash ? `"${hash}"` : 'null'}}\n`;
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
  const batch = options.batchSize ?? 5000;
  let exported = 0;
  if (events instanceof SqliteEventStore && !options.forceGeneric) {
    const end = Number(head);
    for (let after = 0; after < end; ) {
      const { rows, scannedTo } = events.exportPage(after, Math.min(batch, end - after), filter);
      let chunk = '';
      for (const r of rows)
        chunk += line(String(r[0]), r[7], r[2], r[3], r[1], r[4], r[9], r[10], r[11], r[5], r[6], r[8]);
      if (chunk !== '') await write(chunk);
      exported += rows.length;
      after = Math.min(scannedTo, end);
      onProgress?.({ exported, position: BigInt(after) });
    }
    return exported;
  }
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
