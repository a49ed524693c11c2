// Reading a customer file: the CSV layer (csv-parse), the header, and each row's values and faults by
// the customers module's rules. Property: any valid customer written to CSV reads back the same.
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { matchablePhoneKey, phoneLookupKey } from '../../commands/customers/contact';
import type { CustomFieldDefinition } from '../../commands/customers/custom-fields';
import { LANGS } from '../../commands/customers/events';
import { NOT_BLANK } from '../../src/core/text';
import { analyzeCells } from '../../src/customer-import/analysis';
import { CUSTOMER_COLUMNS, mapHeader } from '../../src/customer-import/columns';
import { CsvFileError, decodeUtf8, detectDelimiter, readCsv } from '../../src/customer-import/csv';
import { readRow, validateRow } from '../../src/customer-import/rows';
import { summaryCsv } from '../../src/customer-import/summary';

const FIELDS: CustomFieldDefinition[] = [
  { id: 'cf_text', name: 'Favourite dish', type: 'TEXT' },
  { id: 'cf_kids', name: 'Children', type: 'NUMBER', min: 0, max: 10 },
  { id: 'cf_birthday', name: 'Birthday', type: 'DATE' },
  { id: 'cf_terrace', name: 'Terrace', type: 'BOOLEAN' },
  { id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] },
  { id: 'cf_diet', name: 'Diet', type: 'MULTI_SELECT', options: ['vegan', 'halal', 'kosher'], max_items: 2 },
];

const bytes = (s: string) => new TextEncoder().encode(s);

async function fileError(text: string | Uint8Array): Promise<CsvFileError> {
  try {
    await readCsv(typeof text === 'string' ? bytes(text) : text);
  } catch (err) {
    assert.instance(err, CsvFileError);
    return err as CsvFileError;
  }
  throw new Error('expected the file to be refused');
}

const csv = suite('customer import: CSV files');

csv('BOM, CRLF, quoted fields with commas, quotes and line breaks; empty lines skipped', async () => {
  const t = await readCsv(bytes('\uFEFFname,note\r\n"Smith, Jo","said ""hi""\r\nthen left"\r\n\r\nAnn,\r\n'));
  assert.is(t.delimiter, ',');
  assert.equal(t.header, ['name', 'note']);
  assert.equal(t.rows, [
    ['Smith, Jo', 'said "hi"\r\nthen left'],
    ['Ann', ''],
  ]);
});

csv('LF only, no final newline; semicolon and tab files', async () => {
  assert.equal((await readCsv(bytes('name,email\nA,a@x.fr'))).rows, [['A', 'a@x.fr']]);
  const semi = await readCsv(bytes('name;note\n"Jo; Ann";a,b\n'));
  assert.is(semi.delimiter, ';');
  assert.equal(semi.rows, [['Jo; Ann', 'a,b']]);
  assert.is(detectDelimiter('name\temail\tnote\n'), '\t');
  assert.is(detectDelimiter('"a,b";c;d\n'), ';');
  assert.is(detectDelimiter('name\n'), ',');
});

csv(
  'a file decoded a megabyte at a time: characters cut by a step are whole, a bad byte anywhere refuses it',
  async () => {
    const enc = new TextEncoder();
    // 'é' (2 bytes) and '€' (3 bytes) repeated so that steps of 1 MB cut through them.
    const line = 'é€x'.repeat(20);
    const body = `name\n${`${line}\n`.repeat(40_000)}`;
    const bytes = enc.encode(`\uFEFF${body}`);
    assert.ok(bytes.byteLength > 2 * 1024 * 1024);
    const parts = await decodeUtf8(bytes);
    assert.ok(parts.length >= 3, 'a part a megabyte');
    assert.is(parts.join(''), body, 'the BOM dropped, every character as written');
    // The same file parsed across the parts' edges: every row whole.
    const table = await readCsv(bytes);
    assert.is(table.rows.length, 40_000);
    assert.ok(table.rows.every((r) => r.length === 1 && r[0] === line));
    for (const at of [5, 1024 * 1024, 1024 * 1024 + 1, bytes.byteLength - 1]) {
      const bad = bytes.slice();
      bad[at] = 0xff;
      await decodeUtf8(bad).then(
        () => assert.unreachable(`a bad byte at ${at} was accepted`),
        (err: CsvFileError) => assert.is(err.code, 'not_utf8'),
      );
    }
    // A file that ends inside a character.
    await decodeUtf8(enc.encode('name\n€').subarray(0, 7)).then(
      () => assert.unreachable('a cut character was accepted'),
      (err: CsvFileError) => assert.is(err.code, 'not_utf8'),
    );
    assert.equal(await decodeUtf8(new Uint8Array(0)), []);
  },
);

csv(
  'line endings mixed in one file (CRLF, LF, CR) each end a row; a quoted field keeps its own',
  async () => {
    const t = await readCsv(bytes('name,email\r\nA,a@x.fr\nB,b@x.fr\r\n"C\nD",c@x.fr\rE,e@x.fr\n'));
    assert.equal(t.header, ['name', 'email']);
    assert.equal(t.rows, [
      ['A', 'a@x.fr'],
      ['B', 'b@x.fr'],
      ['C\nD', 'c@x.fr'],
      ['E', 'e@x.fr'],
    ]);
    // A CRLF cut by the parser's chunk edge is one line break, not a row and an empty line.
    const many = `name\r\n${'x'.repeat(16 * 1024 - 7)}\r\nB\nC\r\n`;
    assert.equal((await readCsv(bytes(many))).rows, [['x'.repeat(16 * 1024 - 7)], ['B'], ['C']]);
  },
);

csv('a quote inside an unquoted field refuses the file with a reason (not an unexpected error)', async () => {
  for (const text of ['name,note\n=HYPERLINK("x"),a\n', 'name\nJo "JJ" Smith\n']) {
    const err = await fileError(text);
    assert.is(err.code, 'unparsable');
    assert.match(err.message, /near line 2: a quote inside a field/);
  }
});

csv('files that are not UTF-8 CSV are refused with a clear reason', async () => {
  assert.is((await fileError(new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0xe9, 0x0a]))).code, 'not_utf8');
  // UTF-16 without a BOM is valid UTF-8 with a NUL beside each ASCII letter: its header read as
  // "n\0a\0m\0e\0", refused as not a customer field. Said as what it is.
  for (const file of [Buffer.from('name,email\nAda,ada@x.fr\n', 'utf16le'), 'name\nA\u0000B\n']) {
    const nul = await fileError(file);
    assert.is(nul.code, 'not_utf8');
    assert.match(nul.message, /NUL bytes.*UTF-16/);
  }
  assert.is((await fileError('')).code, 'empty');
  assert.is((await fileError('\uFEFF  \r\n')).code, 'empty');
  const open = await fileError('name,note\nA,"never closed\n');
  assert.is(open.code, 'unparsable');
  assert.match(open.message, /never closed/);
  assert.is((await fileError('name\n"a"b\n')).code, 'unparsable');
});

csv(
  'the header is checked before any data row: a refused header stops the reading of a large file',
  async () => {
    const big = `email,nickname\n${'a@b.fr,x\n'.repeat(300_000)}`;
    const seen: string[][] = [];
    let err: unknown = null;
    await readCsv(bytes(big), (h) => {
      seen.push(h);
      throw new Error('refused');
    }).catch((e) => {
      err = e;
    });
    assert.match(String(err), /refused/);
    assert.equal(seen, [['email', 'nickname']]);
  },
);

const header = suite('customer import: header row');

header('customer fields in any case, custom fields by cf:<id> or by name', () => {
  const h = mapHeader([' Name ', 'EMAIL', 'cf:cf_vip', 'children', 'Diet'], FIELDS);
  assert.equal(h.issues, []);
  assert.equal(
    h.columns.map((c) => (c.kind === 'field' ? c.field : c.definition.id)),
    ['name', 'email', 'cf_vip', 'cf_kids', 'cf_diet'],
  );
});

header('every problem is reported at once, before any row', () => {
  const h = mapHeader(['email', 'mail', '', 'cf:cf_nope', 'Email', 'VIP level', 'cf:cf_vip'], FIELDS);
  assert.equal(h.columns, []);
  assert.equal(
    h.issues.map((i) => [i.column, i.code]),
    [
      [2, 'unknown_column'],
      [3, 'empty_header'],
      [4, 'unknown_column'],
      [5, 'duplicate_column'],
      [7, 'duplicate_column'],
      [null, 'missing_column'],
    ],
  );
  assert.match(h.issues[3]?.message ?? '', /column 1/);
});

header('a name two custom fields share is ambiguous; a field named like a customer field needs cf:', () => {
  const defs: CustomFieldDefinition[] = [
    { id: 'cf_a', name: 'Level', type: 'TEXT' },
    { id: 'cf_b', name: 'level', type: 'TEXT' },
    { id: 'cf_note', name: 'Note', type: 'TEXT' },
  ];
  const h = mapHeader(['name', 'Level', 'note', 'cf:cf_note'], defs);
  assert.equal(
    h.issues.map((i) => i.code),
    ['ambiguous_column'],
  );
  assert.match(h.issues[0]?.message ?? '', /cf:cf_a or cf:cf_b/);
  const ok = mapHeader(['name', 'note', 'cf:cf_note'], defs);
  assert.equal(
    ok.columns.map((c) => c.kind),
    ['field', 'field', 'custom'],
  );
});

const rows = suite('customer import: rows');
const columns = mapHeader(
  [
    'name',
    'email',
    'phone_number',
    'lang',
    'external_id',
    'tags',
    'note',
    'newsletter_consent',
    ...FIELDS.map((f) => `cf:${f.id}`),
  ],
  FIELDS,
).columns;
const row = (cells: Record<string, string>) =>
  readRow(
    columns.map((c) => cells[c.kind === 'field' ? c.field : c.definition.id] ?? ''),
    columns,
  );

rows('cells become the values POST /customers takes; empty cells are not given', () => {
  const r = row({
    name: ' Jo ',
    email: ' jo@example.com ',
    phone_number: '06 12 34 56 78',
    lang: 'fr',
    tags: 'vip | regular||',
    newsletter_consent: 'Yes',
    cf_kids: '2',
    cf_terrace: 'no',
    cf_diet: 'vegan|halal',
    cf_birthday: '1990-02-01',
  });
  assert.equal(r.issues, []);
  assert.equal(r.input, {
    name: ' Jo ',
    email: 'jo@example.com',
    phone_number: '06 12 34 56 78',
    lang: 'FR',
    tags: ['vip', 'regular'],
    newsletter_consent: true,
    custom_fields: { cf_kids: 2, cf_terrace: false, cf_diet: ['vegan', 'halal'], cf_birthday: '1990-02-01' },
  });
  assert.equal(validateRow(r, 'FR', FIELDS), []);
});

rows('SELECT and MULTI_SELECT cells are read in any case, as the option is spelled', () => {
  // Spreadsheets from other systems capitalise: "Gold", "VEGAN" are the options gold and vegan.
  const r = row({ name: 'Jo', cf_vip: 'Gold', cf_diet: 'VEGAN| Halal' });
  assert.equal(r.input.custom_fields, { cf_vip: 'gold', cf_diet: ['vegan', 'halal'] });
  assert.equal(validateRow(r, 'FR', FIELDS), []);
  // A value that is no option, in any case, is still reported as written.
  const bad = row({ name: 'Jo', cf_vip: 'Bronze', cf_diet: 'Vegan|Paleo' });
  assert.equal(bad.input.custom_fields, { cf_vip: 'Bronze', cf_diet: ['vegan', 'Paleo'] });
  assert.equal(
    validateRow(bad, 'FR', FIELDS).map((i) => i.path),
    ['custom_fields.cf_vip', 'custom_fields.cf_diet'],
  );
  // Two options differing only in case: the cell must name one exactly.
  const cased: CustomFieldDefinition = { id: 'cf_size', name: 'Size', type: 'SELECT', options: ['S', 's'] };
  const cols = mapHeader(['name', 'Size'], [cased]).columns;
  assert.equal(readRow(['Jo', 's'], cols).input.custom_fields, { cf_size: 's' });
  assert.equal(readRow(['Jo', 'S'], cols).input.custom_fields, { cf_size: 'S' });
});

rows('faults by the customers module rules, one per field, with its paths', () => {
  const r = row({
    name: '   ',
    email: 'not-an-email',
    phone_number: '12',
    lang: 'xx',
    newsletter_consent: 'maybe',
    cf_kids: '11',
    cf_terrace: 'perhaps',
    cf_vip: 'bronze',
    cf_diet: 'vegan|vegan',
    cf_birthday: '2027-02-30',
  });
  const issues = validateRow(r, 'FR', FIELDS);
  assert.equal(
    issues.map((i) => [i.path, i.code]),
    [
      ['newsletter_consent', 'invalid_type'],
      ['name', 'required'],
      ['email', 'invalid_format'],
      ['phone_number', 'out_of_range'],
      ['lang', 'invalid_enum'],
      ['custom_fields.cf_kids', 'out_of_range'],
      ['custom_fields.cf_birthday', 'invalid_format'],
      ['custom_fields.cf_terrace', 'invalid_type'],
      ['custom_fields.cf_vip', 'invalid_option'],
      ['custom_fields.cf_diet', 'duplicate_value'],
    ],
  );
  assert.equal(
    validateRow(row({ email: 'a@b.fr' }), 'FR', FIELDS).map((i) => [i.path, i.code]),
    [['name', 'required']],
  );
});

rows('a national phone spelling is read with the restaurant country', () => {
  const r = row({ name: 'Jo', phone_number: '06 12 34 56 78' });
  assert.equal(validateRow(r, 'FR', FIELDS), []);
  assert.equal(
    validateRow(row({ name: 'Jo', phone_number: '612' }), 'FR', FIELDS).map((i) => i.path),
    ['phone_number'],
  );
  assert.equal(validateRow(row({ name: 'Jo', phone_number: '+39 312 345 6789' }), 'FR', FIELDS), []);
});

rows('a row with another number of cells than the header is a fault', () => {
  const r = readRow(['Jo', 'jo@x.fr'], columns);
  assert.equal(
    r.issues.map((i) => i.code),
    ['column_count'],
  );
});

rows('the summary is CSV with one line per row', () => {
  const text = summaryCsv([
    { row: 1, outcome: 'created', customer_id: 'cus_1', matched_on: null, errors: [] },
    {
      row: 2,
      outcome: 'skipped',
      customer_id: null,
      matched_on: null,
      errors: [
        { path: 'name', code: 'required', message: 'name is required' },
        { path: 'email', code: 'invalid_format', message: 'email must be an email address, "really"' },
      ],
    },
  ]);
  assert.is(
    text,
    'row,outcome,customer_id,matched_on,errors\r\n1,created,cus_1,,\r\n2,skipped,,,"name: name is required; email: email must be an email address, ""really"""\r\n',
  );
});

rows('the summary quotes a cell holding a line break: a spreadsheet reads one line per row', async () => {
  // A message holding a line break (a field's name may): the summary quotes it.
  const text = summaryCsv([
    {
      row: 1,
      outcome: 'skipped',
      customer_id: null,
      matched_on: null,
      errors: [
        {
          path: 'custom_fields.cf_vip',
          code: 'invalid_option',
          message: 'VIP level has no option a\nb\rc',
        },
      ],
    },
    { row: 2, outcome: 'created', customer_id: 'cus_2', matched_on: null, errors: [] },
  ]);
  const table = await readCsv(bytes(text));
  assert.equal(
    table.rows.map((r) => r[0]),
    ['1', '2'],
  );
  assert.is(table.rows[0]?.[4], 'custom_fields.cf_vip: VIP level has no option a\nb\rc');
});

// Any customer POST /customers accepts, written to CSV the way a spreadsheet does, reads back as the
// same input. Values the file format cannot carry are left out of the generator: leading or trailing
// spaces in trimmed columns, the list separator "|" inside a tag, an all-blank optional value (read
// as "not given").
const printable = (min: number, max: number) =>
  fc
    .string({
      minLength: min,
      maxLength: max,
      unit: fc.oneof(
        fc.constantFrom(',', '"', ';', '\n', '\r\n', ' ', 'é', '😀'),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      ),
    })
    .filter((s) => s.trim() !== '');
const trimmed = (max: number) =>
  fc
    .string({
      minLength: 1,
      maxLength: max,
      unit: fc.oneof(
        fc.constantFrom(',', '"', ';', 'é'),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      ),
    })
    .map((s) => s.replaceAll('|', '/').trim())
    .filter((s) => s !== '');
const customer = fc.record(
  {
    name: printable(1, 60).filter((s) => NOT_BLANK.test(s)),
    email: fc.emailAddress(),
    phone_number: fc.constantFrom('06 12 34 56 78', '+33 6 12 34 56 78', '0612345678', '+39 312 345 6789'),
    lang: fc.constantFrom(...LANGS),
    external_id: printable(1, 40),
    tags: fc.uniqueArray(trimmed(30), { minLength: 1, maxLength: 5 }),
    note: printable(1, 200),
    newsletter_consent: fc.boolean(),
    custom_fields: fc.record(
      {
        cf_text: printable(1, 50),
        cf_kids: fc.integer({ min: 0, max: 10 }),
        cf_terrace: fc.boolean(),
        cf_vip: fc.constantFrom('gold', 'silver'),
        cf_diet: fc.uniqueArray(fc.constantFrom('vegan', 'halal', 'kosher'), { minLength: 1, maxLength: 2 }),
        cf_birthday: fc.constantFrom('1990-02-01', '2000-02-29', '1975-12-31'),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['name'] },
);

rows('property: a valid customer written to CSV reads back the same', async () => {
  await fc.assert(
    fc.asyncProperty(customer, fc.constantFrom(',', ';', '\t'), fc.boolean(), async (c, delimiter, bom) => {
      const head = ['name', ...CUSTOMER_COLUMNS.filter((f) => f !== 'name'), ...FIELDS.map((f) => f.name)];
      const cf = (c.custom_fields ?? {}) as Record<string, unknown>;
      const cell = (v: unknown) =>
        v === undefined
          ? ''
          : Array.isArray(v)
            ? v.join('|')
            : typeof v === 'boolean'
              ? String(v)
              : String(v);
      const values = [
        c.name,
        ...CUSTOMER_COLUMNS.filter((f) => f !== 'name').map((f) => cell((c as Record<string, unknown>)[f])),
        ...FIELDS.map((f) => cell(cf[f.id])),
      ];
      // As a spreadsheet writes it (RFC 4180): a cell with a line break is quoted.
      const text = stringify([head, values], { delimiter, record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
      const table = await readCsv(bytes(bom ? `\uFEFF${text}` : text));
      const h = mapHeader(table.header, FIELDS);
      assert.equal(h.issues, []);
      assert.is(table.rows.length, 1);
      const read = readRow(table.rows[0] as string[], h.columns);
      assert.equal(validateRow(read, 'FR', FIELDS), []);
      const expected: Record<string, unknown> = { ...c, custom_fields: { ...cf } };
      if (Object.keys(cf).length === 0) delete expected.custom_fields;
      assert.equal(read.input, expected);
    }),
    { numRuns: 300 },
  );
});

// The import hands findMatch the phone key its analysis derived (engine.ts decideRow), instead of
// findMatch parsing the number again: the two must be the very same key, for any spelling.
rows('the analysis’s phone key is the one findMatch derives, for any spelling and country', () => {
  const columns = mapHeader(['name', 'phone_number'], []).columns;
  const spellings = fc.oneof(
    fc.constantFrom(
      '+33 6 12 34 56 78',
      '06 12 34 56 78',
      '0612345678',
      '(0)6-12-34-56-78',
      '+44 20 7946 0958',
      '020 7946 0958',
      '12',
      'not a number',
      '+1 (415) 555-0100',
    ),
    fc.stringMatching(/^[+0-9 ().-]{1,20}$/),
  );
  fc.assert(
    fc.property(spellings, fc.constantFrom('FR', 'GB', 'US', null), (phone, country) => {
      const a = analyzeCells(['Someone', phone], 1, { columns, country, definitions: [] });
      if (a.issues.length > 0) return;
      const own = matchablePhoneKey(phoneLookupKey(phone.trim(), country));
      assert.is(a.keys.phone === null ? null : a.keys.phone.slice(2), own ?? null);
    }),
    { numRuns: 300 },
  );
});

csv.run();
header.run();
rows.run();
