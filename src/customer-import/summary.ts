// The summary of an import (or of a dry run) as CSV: one line per data row of the file, in order.
// Columns: row (1-based, header not counted), outcome (created, updated, matched, skipped, and
// not_imported for a row a stopped import did not write),
// customer_id, matched_on (external_id, phone, email), errors ("field: message; …", as POST /customers
// reports them).
import type { RowResult } from '../../commands/customer-import/events';
import { importRowResults, loadImportJob } from '../../commands/customer-import/handler';
import { stoppedSince } from '../../commands/customer-import/resume';
import { CSV_RECORD_END, csvRecord } from '../core/csv';
import type { Issue } from '../core/errors';
import type { WriteDeps } from '../core/write-deps';
import { stoppedJobRows } from './reconcile';

export const SUMMARY_COLUMNS = ['row', 'outcome', 'customer_id', 'matched_on', 'errors'] as const;

export const issuesText = (issues: readonly Issue[]): string =>
  issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');

/** A summary line: a row's outcome, or `not_imported` for a row a stopped job did not write. */
export type SummaryRow = Omit<RowResult, 'outcome'> & { outcome: RowResult['outcome'] | 'not_imported' };

const line = (r: SummaryRow) => [r.row, r.outcome, r.customer_id, r.matched_on, issuesText(r.errors)];

/**
 * Written as every CSV the service writes (src/core/csv.ts): a cell with a comma, a quote or a line
 * break (a lone LF or CR echoed from a file's cell) is quoted, and a text cell a spreadsheet would run
 * as a formula gets a leading apostrophe.
 */
export function summaryCsv(rows: Iterable<SummaryRow>): string {
  let text = csvRecord(SUMMARY_COLUMNS) + CSV_RECORD_END;
  for (const r of rows) text += csvRecord(line(r)) + CSV_RECORD_END;
  return text;
}

const notImported = (row: number): SummaryRow => ({
  row,
  outcome: 'not_imported',
  customer_id: null,
  matched_on: null,
  errors: [],
});

/**
 * The summary of a job, from its recorded row outcomes. While it runs: the rows done so far. Once it
 * has stopped (failed, or its process died: running and silent too long), one line for every row of
 * the file: the recorded rows, then each later row as the log shows it (written: created / updated;
 * otherwise `not_imported`), so the lines add up to the file and say exactly what to import again.
 */
export async function jobSummaryCsv(deps: WriteDeps, jobId: string): Promise<string> {
  const rows: SummaryRow[] = [];
  for await (const r of importRowResults(deps, jobId)) rows.push(r);
  const { state } = await loadImportJob(deps, jobId);
  const stopped = stoppedSince(state, deps.clock.now().getTime()) !== null;
  const { written } = await stoppedJobRows(deps, state, stopped);
  if (written !== null) {
    const byRow = new Map(written.map((r) => [r.row, r]));
    // The rows read above may be fewer than the state's if a record came in between: from the first
    // row not read.
    for (let row = (rows.at(-1)?.row ?? 0) + 1; row <= state.rowCount; row++)
      rows.push(byRow.get(row) ?? notImported(row));
  }
  return summaryCsv(rows);
}
