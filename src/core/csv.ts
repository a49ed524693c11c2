// CSV as the operators' exports write it (RFC 4180): records end with CRLF, a field holding a comma,
// a quote or a line break is quoted (quotes doubled), and a text field a spreadsheet would take for a
// formula (starting with = + - @, a tab or a carriage return) is written with a leading apostrophe,
// so opening an export in a spreadsheet never runs a formula a name or an id carried (OWASP "CSV
// injection"). Numbers are written as they are (a negative number is a number, not a formula).

/** What ends every record, the header's included (RFC 4180 §2.1). */
export const CSV_RECORD_END = '\r\n';

/** A text cell a spreadsheet would read as a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One field: empty for null; numbers as they are; text protected from formulas, then quoted if needed. */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  const s = FORMULA_START.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
