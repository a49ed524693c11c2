// What an import that stopped part way wrote beyond its last recorded row, read from the log.
//
// A job records a row's outcome only after the row is written, in row order, a few slices behind the
// writes (engine.ts: up to IN_FLIGHT_ROWS rows in flight, plus those being recorded). When the job
// stops (an error, a write that fails, the server stopping or dying) the rows written and not yet
// recorded would be missing from its summary, and a manager told to "upload the rows after row N"
// would import them twice. Every customer event an import appends carries `import_job_id` and
// `import_row` in its metadata (never sealed), so the log itself says which rows after the last
// recorded one were written, and how: a CustomerCreated is `created`, anything else `updated`.
//
// The scan starts at the job's first event (every write of every run of the job comes after it) and
// reads only this job's events: on the embedded log a read-only connection beside the writer
// (SqliteLogReader) keeps in SQLite every row whose metadata does not name the job; elsewhere the
// stored log is read through (as stored: nothing is decrypted). It runs when a job fails (its result
// is kept on CustomerImportFailed) and for a job whose process died (running, silent too long).
import { customerImportStream, type MatchedOn, type RowResult } from '../../commands/customer-import/events';
import type { ImportJobState } from '../../commands/customer-import/state';
import { SqliteEventStore } from '../adapters/event-store/sqlite';
import { SqliteLogReader, storedRowToEvent } from '../adapters/event-store/sqlite-log-reader';
import type { WriteDeps } from '../core/write-deps';
import type { RecordedEvent } from '../ports/event-store';
import { storedEvents } from '../privacy/sealing-event-store';

const CUSTOMER_PREFIX = 'customer-';
const MATCHED_ON: readonly unknown[] = ['external_id', 'phone', 'email'] satisfies MatchedOn[];
const isMatchedOn = (v: unknown): v is MatchedOn => MATCHED_ON.includes(v);
const PAGE = 20_000;

/** The outcome of a row the log shows written by `jobId` (a customer event of that row). */
function writtenRow(e: RecordedEvent, jobId: string, after: number, upTo: number): RowResult | null {
  const m = e.metadata;
  if (m.import_job_id !== jobId || typeof m.import_row !== 'number') return null;
  if (m.import_row <= after || m.import_row > upTo || !e.stream.startsWith(CUSTOMER_PREFIX)) return null;
  return {
    row: m.import_row,
    outcome: e.type === 'CustomerCreated' ? 'created' : 'updated',
    customer_id: e.stream.slice(CUSTOMER_PREFIX.length),
    // An update's metadata names the key it matched on (engine.ts writeRow; absent in older logs).
    matched_on: e.type !== 'CustomerCreated' && isMatchedOn(m.import_matched_on) ? m.import_matched_on : null,
    errors: [],
  };
}

/**
 * The rows after row `after` (its last recorded row) that job `jobId` wrote, in row order: created or
 * updated, with the customer. Rows not listed wrote nothing.
 */
export async function writtenAfterRecorded(
  deps: WriteDeps,
  jobId: string,
  after: number,
  rowCount: number,
): Promise<RowResult[]> {
  const [first] = await deps.events.readStream(customerImportStream(jobId), { limit: 1 });
  if (!first || after >= rowCount) return [];
  const found = new Map<number, RowResult>();
  const take = (e: RecordedEvent) => {
    const r = writtenRow(e, jobId, after, rowCount);
    // A row writes one customer event; were there two (a retried update), a creation says more.
    if (r && (!found.has(r.row) || r.outcome === 'created')) found.set(r.row, r);
  };
  const log = storedEvents(deps.events);
  const reader = log instanceof SqliteEventStore ? SqliteLogReader.open(log.file) : null;
  if (reader) {
    try {
      const head = Number((await log.headPosition()) ?? 0n);
      const contains = JSON.stringify(jobId);
      for (let from = Number(first.position); from < head; from += PAGE) {
        for (const row of reader.rows(from, Math.min(head, from + PAGE), { contains, from: null, to: null }))
          take(storedRowToEvent(row));
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      reader.close();
    }
  } else {
    for await (const e of log.readAll({ after: first.position })) take(e);
  }
  return [...found.values()].sort((a, b) => a.row - b.row);
}

/** A job's rows as its summary says them: recorded, then written after them, then not imported. */
export interface JobRows {
  /** Rows after the last recorded one that were written (known: the job has stopped), else null. */
  written: RowResult[] | null;
  /** Rows neither recorded nor written (0 while the job runs: not known yet). */
  notImported: number;
}

/**
 * For a job that has stopped (failed, or running with its process gone: `stopped`), the rows written
 * after its last recorded one: kept on its CustomerImportFailed, or read from the log.
 */
export async function stoppedJobRows(
  deps: WriteDeps,
  state: ImportJobState,
  stopped: boolean,
): Promise<JobRows> {
  const over = state.status === 'failed' || (state.status === 'running' && stopped);
  if (!over || state.jobId === null) return { written: null, notImported: 0 };
  const written =
    state.status === 'failed' && state.written !== null
      ? state.written
      : await writtenAfterRecorded(deps, state.jobId, state.processed, state.rowCount);
  return { written, notImported: state.rowCount - state.processed - written.length };
}
