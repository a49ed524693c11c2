// The summary of an import (or of a dry run) as CSV: one line per data row of the file, in order.
// Columns: row (1-based, header not counted), outcome (created, updated, matched, skipped),
// customer_id, matched_on (external_id, phone, email), errors ("field: message; …", as POST /customers
// reports them).
import { stringify } from 'csv-stringify/sync';
import type { RowResult } from '../../commands/customer-import/events';
import { importRowResults } from '../../commands/customer-import/handler';
import type { Issue } from '../core/errors';
import type { WriteDeps } from '../core/write-deps';

export const SUMMARY_COLUMNS = ['row', 'outcome', 'customer_id', 'matched_on', 'errors'] as const;

export const issuesText = (issues: readonly Issue[]): string =>
  issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');

const line = (r: RowResult) => [
  r.row,
  r.outcome,
  r.customer_id ?? '',
  r.matched_on ?? '',
  issuesText(r.errors),
];

export function summaryCsv(rows: Iterable<RowResult>): string {
  const records: unknown[][] = [[...SUMMARY_COLUMNS]];
  for (const r of rows) records.push(line(r));
  // A cell with a line break is quoted (csv-stringify quotes only the record delimiter itself, CRLF,
  // so a lone LF or CR echoed from a file's cell would otherwise split the line in a spreadsheet).
  return stringify(records, { record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
}

/** The summary of a job, from its recorded row outcomes (in progress: the rows done so far). */
export async function jobSummaryCsv(deps: WriteDeps, jobId: string): Promise<string> {
  const rows: RowResult[] = [];
  for await (const r of importRowResults(deps, jobId)) rows.push(r);
  return summaryCsv(rows);
}
