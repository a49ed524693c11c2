// CSV as the operators' exports write it (RFC 4180): records end with CRLF, a field holding a comma,
// a quote or a line break is quoted (quotes doubled), and a text field a spreadsheet would take for a
// formula (starting with = + - @, a tab or a carriage return, or the full-width ＝ ＋ － ＠ some
// spreadsheets read as those) is written with a leading apostrophe,
// so opening an export in a spreadsheet never runs a formula a name or an id carried (OWASP "CSV
// injection"). Numbers are written as they are (a negative number is a number, not a formula).

/** What ends every record, the header's included (RFC 4180 §2.1). */
export const CSV_RECORD_END = '\r\n';

/** A text cell a spreadsheet would read as a formula: the one rule every CSV the service writes follows. */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** One field: empty for null; numbers as they are; text protected from formulas, then quoted if needed. */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  const s = FORMULA_START.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One record's fields, each as `csvField` writes it, without the record's end. */
export const csvRecord = (fields: readonly (string | number | null)[]): string =>
  fields.map(csvField).join(',');
