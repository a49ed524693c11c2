// The CSV fields every export writes (src/core/csv.ts: the analytics exports and the customer-import
// summary, one rule): RFC 4180 quoting, and a text cell a
// spreadsheet would run as a formula written with a leading apostrophe, numbers as they are.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { emptyFigures, type ReservationFacts } from '../../projections/analytics/figures';
import { csvHeader, csvRow } from '../../queries/analytics';
import { csvField } from '../../src/core/csv';
import { summaryCsv } from '../../src/customer-import/summary';

test('RFC 4180: a comma, a quote or a line break is quoted, quotes doubled; null is empty', () => {
  assert.is(csvField('a,b'), '"a,b"');
  assert.is(csvField('say "hi"'), '"say ""hi"""');
  assert.is(csvField('two\nlines'), '"two\nlines"');
  assert.is(csvField('cr\rhere'), '"cr\rhere"');
  assert.is(csvField('plain_id-1'), 'plain_id-1');
  assert.is(csvField(null), '');
  assert.is(csvField(''), '');
});

/** One table for the formula rule: every writer (csvField, the import summary's cells) follows it. */
const FORMULAS: [string, string][] = [
  ['=1+1', "'=1+1"],
  ['+33612345678', "'+33612345678"],
  ['-2-3', "'-2-3"],
  ['@SUM(A1)', "'@SUM(A1)"],
  ['\tx', "'\tx"],
  ['\uFF1D1+1', "'\uFF1D1+1"],
  ['\uFF0B1', "'\uFF0B1"],
  ['\uFF0D1', "'\uFF0D1"],
  ['\uFF20SUM(A1)', "'\uFF20SUM(A1)"],
  ['=HYPERLINK("http://x","y")', '"\'=HYPERLINK(""http://x"",""y"")"'],
  ['\r=1', '"\'\r=1"'],
  ['a=b', 'a=b'],
  ['plain', 'plain'],
];

test('a text cell starting with = + - @ (or full-width ＝ ＋ － ＠), a tab or a CR gets an apostrophe; numbers are numbers', () => {
  for (const [cell, written] of FORMULAS) assert.is(csvField(cell), written, JSON.stringify(cell));
  assert.is(csvField(-3), '-3');
  assert.is(csvField(0.25), '0.25');
});

test('the customer-import summary writes its cells by the same rule (one table)', () => {
  for (const [cell, written] of FORMULAS) {
    const text = summaryCsv([
      { row: 1, outcome: 'skipped', customer_id: cell, matched_on: null, errors: [] } as never,
    ]);
    assert.is(
      text,
      `row,outcome,customer_id,matched_on,errors\r\n1,skipped,${written},,\r\n`,
      JSON.stringify(cell),
    );
  }
});

test('the analytics CSV: a shift id a spreadsheet would compute (ids may start with -) is text', () => {
  const facts = { restaurant_id: 'rest_x', service_date: '2026-06-01', shift_id: '-2-3' } as ReservationFacts;
  const row = emptyFigures(facts, true);
  const cells = csvRow(row).split(',');
  const names = csvHeader().split(',');
  assert.is(cells[names.indexOf('shift_id')], "'-2-3");
  assert.is(cells[names.indexOf('restaurant_id')], 'rest_x');
});

test('the customer-import summary: a formula-like cell gets an apostrophe too, CRLF records', () => {
  const text = summaryCsv([
    {
      row: 1,
      outcome: 'skipped',
      customer_id: null,
      matched_on: null,
      errors: [{ path: '', code: 'invalid', message: '=HYPERLINK("http://x")' }],
    },
  ]);
  assert.is(
    text,
    'row,outcome,customer_id,matched_on,errors\r\n1,skipped,,,"\'=HYPERLINK(""http://x"")"\r\n',
  );
});

test.run();
