// A customer CSV import as a job (stream `customer-import-<job id>`): started (file, rows, on_match,
// actor in the metadata), the outcome of every row in batches, then finished or failed. The customers
// it creates or updates are ordinary customer events marked "publish no webhook"
// (src/core/no-webhook.ts) and carrying `import_job_id` / `import_row` in their metadata.
import type { Issue } from '../../src/core/errors';

export const ON_MATCH = ['return_existing', 'update', 'create_new'] as const;
export type OnMatch = (typeof ON_MATCH)[number];

/**
 * created: a new customer; updated: the matching customer took the row's fields; matched: a customer
 * matched and nothing was written (return_existing, or update with nothing different); skipped: the
 * row has faults (errors) and wrote nothing.
 */
export type RowOutcome = 'created' | 'updated' | 'matched' | 'skipped';
export const ROW_OUTCOMES: readonly RowOutcome[] = ['created', 'updated', 'matched', 'skipped'];
export type MatchedOn = 'external_id' | 'phone' | 'email';

export interface RowResult {
  /** 1-based data row (the header is not counted). */
  row: number;
  outcome: RowOutcome;
  customer_id: string | null;
  matched_on: MatchedOn | null;
  errors: Issue[];
}

export type ImportCounts = Record<RowOutcome, number>;
export const noCounts = (): ImportCounts => ({ created: 0, updated: 0, matched: 0, skipped: 0 });

interface Base {
  job_id: string;
  restaurant_id: string;
  at: string;
}

export type CustomerImportEvent =
  | {
      type: 'CustomerImportStarted';
      data: Base & {
        file_name: string;
        /** SHA-256 of the file's bytes: a resume must be given the very same file. */
        file_sha256: string;
        row_count: number;
        on_match: OnMatch;
        /** The header row as written. */
        columns: string[];
        actor: string;
      };
    }
  /** Rows `first_row`…`last_row`, in order; `processed` and `counts` are the totals after them. */
  | {
      type: 'CustomerImportRowsRecorded';
      data: Base & {
        first_row: number;
        last_row: number;
        rows: RowResult[];
        processed: number;
        counts: ImportCounts;
      };
    }
  /** Taken up again after its process stopped, from the row after the last recorded one. */
  | { type: 'CustomerImportResumed'; data: Base & { from_row: number; actor: string } }
  | { type: 'CustomerImportFinished'; data: Base & { counts: ImportCounts } }
  /**
   * Stopped. `written` (absent on jobs failed before it existed): the rows after `processed` that the
   * log shows written by the job (created / updated, src/customer-import/reconcile.ts), in row order;
   * every other row after `processed` was not imported. `counts`: the recorded totals with those rows.
   */
  | {
      type: 'CustomerImportFailed';
      data: Base & { reason: string; processed: number; written?: RowResult[]; counts?: ImportCounts };
    };

export type CustomerImportEventType = CustomerImportEvent['type'];
export const CUSTOMER_IMPORT_EVENT_TYPES: readonly CustomerImportEventType[] = [
  'CustomerImportStarted',
  'CustomerImportRowsRecorded',
  'CustomerImportResumed',
  'CustomerImportFinished',
  'CustomerImportFailed',
];

export const customerImportStream = (jobId: string) => `customer-import-${jobId}`;
