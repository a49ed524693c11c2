// An import job as the write side knows it: the fold of its stream (counts, not the rows themselves).
import type { RecordedEvent } from '../../src/ports/event-store';
import {
  type CustomerImportEvent,
  type ImportCounts,
  noCounts,
  type OnMatch,
  type RowResult,
} from './events';

export interface ImportJobState {
  status: 'none' | 'running' | 'finished' | 'failed';
  jobId: string | null;
  restaurantId: string | null;
  fileName: string | null;
  fileSha256: string | null;
  rowCount: number;
  onMatch: OnMatch;
  columns: string[];
  actor: string | null;
  /** The last row recorded (0 before any). */
  processed: number;
  counts: ImportCounts;
  startedAt: string | null;
  endedAt: string | null;
  /** The time of the job's last event (service clock): a running job silent too long has stopped (slot.ts). */
  lastEventAt: string | null;
  failure: string | null;
  /**
   * A failed job's rows after `processed` that were written (CustomerImportFailed.written); null while
   * it runs or finished, and for a job failed before the field existed.
   */
  written: RowResult[] | null;
}

export const initialImportJob: ImportJobState = {
  status: 'none',
  jobId: null,
  restaurantId: null,
  fileName: null,
  fileSha256: null,
  rowCount: 0,
  onMatch: 'return_existing',
  columns: [],
  actor: null,
  processed: 0,
  counts: noCounts(),
  startedAt: null,
  endedAt: null,
  lastEventAt: null,
  failure: null,
  written: null,
};

export function evolveImportJob(
  state: ImportJobState,
  recorded: Pick<RecordedEvent, 'type' | 'data'>,
): ImportJobState {
  const event = recorded as unknown as CustomerImportEvent;
  const next = evolveFields(state, event);
  return next === state ? state : { ...next, lastEventAt: event.data.at };
}

function evolveFields(state: ImportJobState, event: CustomerImportEvent): ImportJobState {
  switch (event.type) {
    case 'CustomerImportStarted': {
      const d = event.data;
      return {
        ...initialImportJob,
        status: 'running',
        jobId: d.job_id,
        restaurantId: d.restaurant_id,
        fileName: d.file_name,
        fileSha256: d.file_sha256,
        rowCount: d.row_count,
        onMatch: d.on_match,
        columns: d.columns,
        actor: d.actor,
        startedAt: d.at,
      };
    }
    case 'CustomerImportRowsRecorded':
      return { ...state, processed: event.data.processed, counts: event.data.counts };
    case 'CustomerImportResumed':
      return { ...state, status: 'running', endedAt: null, failure: null, written: null };
    case 'CustomerImportFinished':
      return { ...state, status: 'finished', counts: event.data.counts, endedAt: event.data.at };
    case 'CustomerImportFailed':
      return {
        ...state,
        status: 'failed',
        failure: event.data.reason,
        endedAt: event.data.at,
        written: event.data.written ?? null,
      };
    default:
      return state;
  }
}
