// CSV as the operators' exports write it (RFC 4180), written by csv-stringify: records end with CRLF, a
// field holding a comma, a quote or a line break is quoted (quotes doubled), and a text field a
// spreadsheet would take for a formula (starting with = + - @, a tab or a carriage return, or the
// full-width ＝ ＋ － ＠ some spreadsheets read as those) is written with a leading apostrophe
// (`escape_formulas`), so opening an export in a spreadsheet never runs a formula a name or an id
// carried (OWASP "CSV injection"). Numbers are written as they are (a negative number is a number, not
// a formula).
import { type Options, stringify } from 'csv-stringify/sync';

/** What ends every record, the header's included (RFC 4180 §2.1). */
export const CSV_RECORD_END = '\r\n';

const OPTIONS: Options = {
  escape_formulas: true,
  record_delimiter: 'windows',
  // csv-stringify quotes a field holding the record delimiter itself (CRLF); a lone LF or CR (a cell
  // echoed from a file) must be quoted too, or a reader would end the record there.
  quoted_match: /[\r\n]/,
  eof: false,
};

/** One record's fields, without the record's end: empty for null, numbers as they are, text protected. */
export const csvRecord = (fields: readonly (string | number | null)[]): string =>
  stringify([fields as (string | number | null)[]], OPTIONS);

/** One field, as `csvRecord` writes it. */
export const csvField = (v: string | number | null): string => csvRecord([v]);
