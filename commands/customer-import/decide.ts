// Pure decisions on an import job's stream. Rows are recorded strictly in order, each once: a second
// process running the same job (a resume while the first still runs) is refused at its first record.
import { conflict, notFound, validationError } from '../../src/core/errors';
import type { NewEvent } from '../../src/ports/event-store';
import type { CustomerImportEvent, ImportCounts, OnMatch, RowResult } from './events';
import { STALE_AFTER_MS, silentTooLong } from './slot';
import type { ImportJobState } from './state';

const event = (e: CustomerImportEvent): NewEvent => ({
  type: e.type,
  data: e.data as unknown as Record<string, unknown>,
  metadata: { restaurant_id: e.data.restaurant_id },
});

export interface StartImport {
  jobId: string;
  restaurantId: string;
  fileName: string;
  fileSha256: string;
  rowCount: number;
  onMatch: OnMatch;
  columns: string[];
  actor: string;
}

export function decideStartImport(state: ImportJobState, cmd: StartImport, at: string): NewEvent[] {
  if (state.status !== 'none') throw conflict(`import ${cmd.jobId} already exists`);
  return [
    event({
      type: 'CustomerImportStarted',
      data: {
        job_id: cmd.jobId,
        restaurant_id: cmd.restaurantId,
        at,
        file_name: cmd.fileName,
        file_sha256: cmd.fileSha256,
        row_count: cmd.rowCount,
        on_match: cmd.onMatch,
        columns: cmd.columns,
        actor: cmd.actor,
      },
    }),
  ];
}

function assertRunning(
  state: ImportJobState,
  jobId: string,
): asserts state is ImportJobState & {
  restaurantId: string;
  jobId: string;
} {
  if (state.status === 'none') throw notFound(`import ${jobId}`);
  if (state.status !== 'running') throw conflict(`import ${jobId} is ${state.status}`);
}

export function decideRecordRows(
  state: ImportJobState,
  jobId: string,
  rows: RowResult[],
  at: string,
): NewEvent[] {
  assertRunning(state, jobId);
  if (rows.length === 0) return [];
  const first = rows[0] as RowResult;
  if (first.row !== state.processed + 1 || rows.some((r, i) => r.row !== first.row + i))
    throw conflict(`import ${jobId}: rows must follow row ${state.processed} in order`);
  const last = (rows.at(-1) as RowResult).row;
  if (last > state.rowCount) throw conflict(`import ${jobId} has only ${state.rowCount} rows`);
  const counts: ImportCounts = { ...state.counts };
  for (const r of rows) counts[r.outcome]++;
  return [
    event({
      type: 'CustomerImportRowsRecorded',
      data: {
        job_id: jobId,
        restaurant_id: state.restaurantId,
        at,
        first_row: first.row,
        last_row: last,
        rows,
        processed: last,
        counts,
      },
    }),
  ];
}

export function decideFinishImport(state: ImportJobState, jobId: string, at: string): NewEvent[] {
  assertRunning(state, jobId);
  if (state.processed !== state.rowCount)
    throw conflict(`import ${jobId} has recorded ${state.processed} of ${state.rowCount} rows`);
  return [
    event({
      type: 'CustomerImportFinished',
      data: { job_id: jobId, restaurant_id: state.restaurantId, at, counts: state.counts },
    }),
  ];
}

export function decideFailImport(
  state: ImportJobState,
  jobId: string,
  reason: string,
  at: string,
  /** The rows after the last recorded one that were written (reconcile.ts), in row order. */
  written?: RowResult[],
): NewEvent[] {
  if (state.status === 'failed') return [];
  assertRunning(state, jobId);
  const data: Extract<CustomerImportEvent, { type: 'CustomerImportFailed' }>['data'] = {
    job_id: jobId,
    restaurant_id: state.restaurantId,
    at,
    reason,
    processed: state.processed,
  };
  if (written !== undefined) {
    if (
      written.some(
        (r, i) => r.row <= state.processed || (i > 0 && r.row <= (written[i - 1] as RowResult).row),
      )
    )
      throw conflict(`import ${jobId}: written rows must follow row ${state.processed} in order`);
    const counts: ImportCounts = { ...state.counts };
    for (const r of written) counts[r.outcome]++;
    data.written = written;
    data.counts = counts;
  }
  return [event({ type: 'CustomerImportFailed', data })];
}

/** A job that stopped (its process died, or it was marked failed) goes on with the same file only. */
export function decideResumeImport(
  state: ImportJobState,
  jobId: string,
  fileSha256: string,
  actor: string,
  at: string,
): NewEvent[] {
  if (state.status === 'none') throw notFound(`import ${jobId}`);
  if (state.status === 'finished') throw conflict(`import ${jobId} is finished`);
  // Still running (a process, the CLI or the server's dashboard import, recorded something within the
  // stale limit): a resume would make two processes write one job. Once silent that long, its process
  // is taken for gone (the slot's own rule).
  if (state.status === 'running' && !silentTooLong(state.lastEventAt ?? at, Date.parse(at)))
    throw conflict(
      `import ${jobId} is still running (last activity ${state.lastEventAt}, ${state.processed} of ${state.rowCount} rows done): it can be resumed only once it has been silent for ${STALE_AFTER_MS / 60_000} minutes (its process gone), or once it has failed`,
      { reason: 'IMPORT_STILL_RUNNING', job_id: jobId, last_activity_at: state.lastEventAt },
    );
  if (state.fileSha256 !== fileSha256)
    throw validationError(
      [{ path: 'file', code: 'other_file', message: `this is not the file import ${jobId} started with` }],
      'A resumed import needs its own file',
    );
  return [
    event({
      type: 'CustomerImportResumed',
      data: {
        job_id: jobId,
        restaurant_id: state.restaurantId as string,
        at,
        from_row: state.processed + 1,
        actor,
      },
    }),
  ];
}
