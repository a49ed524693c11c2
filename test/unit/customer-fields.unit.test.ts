// The bounds every way in holds to (spec §2.3, §8) and custom field values against their
// definitions (spec §2.4): each on both sides of its limit, one issue per faulty field.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkBounds } from '../../commands/customers/bounds';
import { type CustomFieldDefinition, checkCustomFields } from '../../commands/customers/custom-fields';
import { prepareChanges } from '../../commands/customers/prepare';
import type { ApiError } from '../../src/core/errors';
import { customerPatchBody } from '../../src/http/routes/customer-schemas';
import { validateInput } from '../../src/http/validate';

const t = suite('customer fields');
const s = (n: number) => 'x'.repeat(n);
const paths = (issues: { path: string }[]) => issues.map((i) => i.path);

const BOUNDS: [string, unknown, unknown][] = [
  ['name', s(1), s(0)],
  ['name', s(200), s(201)],
  ['phone_number', s(3), s(2)],
  ['phone_number', s(40), s(41)],
  ['external_id', s(1), s(0)],
  ['external_id', s(255), s(256)],
  ['note', s(10_000), s(10_001)],
  ['email', 'a@b.co', 'a@b'],
  ['lang', 'DE', 'de'],
];

for (const [field, inside, outside] of BOUNDS) {
  t(
    `${field}: ${JSON.stringify(inside).length - 2} chars pass, ${JSON.stringify(outside).length - 2} do not`,
    () => {
      assert.equal(checkBounds({ [field]: inside }), []);
      assert.equal(paths(checkBounds({ [field]: outside })), [field]);
    },
  );
}

t('tags: at most 100, each 1 to 100 characters', () => {
  assert.equal(checkBounds({ tags: Array.from({ length: 100 }, () => s(100)) }), []);
  assert.equal(paths(checkBounds({ tags: Array.from({ length: 101 }, () => 'a') })), ['tags']);
  assert.equal(paths(checkBounds({ tags: ['ok', '', s(101)] })), ['tags.1', 'tags.2']);
});

t('lengths count characters (code points): 150 or 200 emoji are a name, 201 are not', () => {
  assert.equal(checkBounds({ name: '😀'.repeat(150) }), []);
  assert.equal(
    checkBounds({ name: '😀'.repeat(200), tags: ['🍷'.repeat(100)], note: '𝄞'.repeat(10_000) }),
    [],
  );
  assert.equal(paths(checkBounds({ name: '😀'.repeat(201), tags: ['🍷'.repeat(101)] })), ['name', 'tags.0']);
  assert.equal(
    checkCustomFields([{ id: 'text', name: 'Text', type: 'TEXT' }], { text: '😀'.repeat(10_000) }).issues,
    [],
  );
});

// Every issue with its code, duplicates kept: a field refused twice over HTTP and once on the write
// side is a disagreement.
const schemaIssues = (body: Record<string, unknown>): string[] => {
  try {
    validateInput(body, customerPatchBody, 'body');
    return [];
  } catch (e) {
    return (((e as ApiError).details?.issues ?? []) as { path: string; code: string }[]).map(
      (i) => `${i.path}:${i.code}`,
    );
  }
};
const writeIssues = (body: Record<string, unknown>): string[] =>
  checkBounds(body).map((i) => `${i.path}:${i.code}`);

t('the HTTP schema and the write side refuse the same names, tags and notes (any text)', () => {
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 260 }),
    fc.string({ unit: 'binary', maxLength: 260 }),
    fc.string({ unit: fc.constantFrom(' ', '\t', '\u00a0', 'a', '😀'), maxLength: 260 }),
    fc.string({ unit: fc.constantFrom(' ', '\u200b', '\u0301'), minLength: 195, maxLength: 260 }),
  );
  fc.assert(
    fc.property(text, (v) => {
      for (const body of [{ name: v }, { tags: [v] }, { note: v }, { external_id: v }]) {
        assert.equal(schemaIssues(body), writeIssues(body), JSON.stringify(body));
      }
    }),
    { numRuns: 1000 },
  );
});

t('a name too long and invisible gets one issue on both sides: its length', () => {
  const name = '\u200b'.repeat(201);
  assert.equal(schemaIssues({ name }), ['name:out_of_range']);
  assert.equal(writeIssues({ name }), ['name:out_of_range']);
});

t('a name that is only whitespace is refused on the write side too', () => {
  for (const name of [' ', '\t\n', '\u00a0\u3000'])
    assert.equal(
      checkBounds({ name }).map((i) => `${i.path}:${i.code}`),
      ['name:invalid_format'],
    );
  assert.equal(checkBounds({ name: ' Ada ' }), []);
});

t('a name of only control or invisible characters is refused on the write side too', () => {
  for (const name of ['\u0000', '\u200b', '\u2060\u200e', '\u0301', '\u3164', ' \u0007 '])
    assert.equal(
      checkBounds({ name }).map((i) => `${i.path}:${i.code}`),
      ['name:invalid_format'],
      JSON.stringify(name),
    );
  assert.equal(checkBounds({ name: '\u200bAda' }), []);
});

const one = (p: RegExp) =>
  fc
    .integer({ min: 0, max: 0x10ffff })
    .filter((c) => c < 0xd800 || c > 0xdfff)
    .map((c) => String.fromCodePoint(c))
    .filter((c) => p.test(c));
const FILLERS = ['\u115f', '\u1160', '\u3164', '\uffa0'];
/** Letters, digits, punctuation and symbols: each shows, but for the Hangul fillers. */
const shows = one(/^[\p{L}\p{N}\p{P}\p{S}]$/u).filter((c) => !FILLERS.includes(c));
/** Marks, controls, format, private-use and unassigned code points, separators, the fillers. */
const blank = fc.oneof(
  one(/^[\p{M}\p{C}\p{Z}]$/u),
  fc.constantFrom(
    ...FILLERS,
    '\u064e',
    '\u0941',
    '\u{e0001}',
    '\u{e0020}',
    '\u{e007f}',
    '\u{e0100}',
    '\u{e01ef}',
    '\u{1d173}',
    '\u{1d17a}',
    '\u0600',
    '\u0605',
    '\u06dd',
    '\u200d',
    '\ufe0f',
  ),
);
const nameAccepted = (name: string) => [schemaIssues({ name }), writeIssues({ name })];

t(
  'a name holding a letter, digit, punctuation or symbol is accepted by both layers; one of marks, controls, separators and fillers only is refused by both',
  () => {
    fc.assert(
      fc.property(
        fc.array(blank, { minLength: 1, maxLength: 40 }),
        shows,
        fc.nat(),
        (invisible, visible, at) => {
          const none = invisible.join('');
          assert.equal(
            nameAccepted(none),
            [['name:invalid_format'], ['name:invalid_format']],
            JSON.stringify(none),
          );
          const i = at % (invisible.length + 1);
          const name = [...invisible.slice(0, i), visible, ...invisible.slice(i)].join('');
          assert.equal(nameAccepted(name), [[], []], JSON.stringify(name));
        },
      ),
      { numRuns: 2000 },
    );
  },
);

t(
  'names of every script are accepted: vowel signs, jamo, emoji sequences, harakat, one CJK character, a dot',
  () => {
    for (const name of [
      'สมชาย',
      'देवेन्द्र',
      '각',
      '한국',
      '👩\u200d🍳',
      '❤\ufe0f',
      'مُحَمَّد',
      '山',
      '.',
      'e\u0301',
    ])
      assert.equal(nameAccepted(name), [[], []], JSON.stringify(name));
  },
);

t('null is a value for the clearable fields, and every faulty field is reported', () => {
  assert.equal(checkBounds({ email: null, phone_number: null, external_id: null, note: null }), []);
  assert.equal(paths(checkBounds({ name: '', email: 'nope', lang: 'XX' })), ['name', 'email', 'lang']);
});

const DEFS: CustomFieldDefinition[] = [
  { id: 'text', name: 'Text', type: 'TEXT' },
  { id: 'num', name: 'Num', type: 'NUMBER', min: -1.5, max: 3 },
  { id: 'free', name: 'Free', type: 'NUMBER', min: null, max: null },
  { id: 'date', name: 'Date', type: 'DATE' },
  { id: 'bool', name: 'Bool', type: 'BOOLEAN' },
  { id: 'one', name: 'One', type: 'SELECT', options: ['a', 'b'] },
  { id: 'many', name: 'Many', type: 'MULTI_SELECT', options: ['a', 'b', 'c'], max_items: 2 },
  { id: 'unbounded', name: 'Unbounded', type: 'MULTI_SELECT', options: ['a', 'b', 'c'] },
];

const CASES: [string, unknown[], [unknown, string][]][] = [
  [
    'text',
    ['', 'hello', s(10_000)],
    [
      [1, 'invalid_type'],
      [['x'], 'invalid_type'],
      [s(10_001), 'out_of_range'],
    ],
  ],
  [
    'num',
    [-1.5, 0, 3, 2.75],
    [
      [-1.6, 'out_of_range'],
      [3.01, 'out_of_range'],
      ['1', 'invalid_type'],
      [Number.NaN, 'invalid_type'],
    ],
  ],
  ['free', [-1e9, 1e9], [[true, 'invalid_type']]],
  [
    'date',
    ['2024-02-29', '1999-12-31'],
    [
      ['2023-02-29', 'invalid_format'],
      ['2027-02-30', 'invalid_format'],
      ['2027-11-31', 'invalid_format'],
      ['2024-01-01T00:00:00Z', 'invalid_format'],
      ['2024-13-01', 'invalid_format'],
      ['2024-1-01', 'invalid_format'],
      [20240101, 'invalid_format'],
    ],
  ],
  [
    'bool',
    [true, false],
    [
      ['false', 'invalid_type'],
      [0, 'invalid_type'],
    ],
  ],
  [
    'one',
    ['a', 'b'],
    [
      ['c', 'invalid_option'],
      ['A', 'invalid_option'],
      [['a'], 'invalid_type'],
    ],
  ],
  [
    'many',
    [[], ['a'], ['c', 'a']],
    [
      [['a', 'b', 'c'], 'too_many_items'],
      [['a', 'a'], 'duplicate_value'],
      [['d'], 'invalid_option'],
      ['a', 'invalid_type'],
      [[1], 'invalid_type'],
    ],
  ],
  ['unbounded', [['a', 'b', 'c']], [[['b', 'b'], 'duplicate_value']]],
];

for (const [id, valid, invalid] of CASES) {
  t(`custom field ${id}: accepted and refused values`, () => {
    for (const value of valid) {
      const out = checkCustomFields(DEFS, { [id]: value });
      assert.equal(out.issues, [], JSON.stringify(value));
      assert.equal(out.set[id], { name: DEFS.find((d) => d.id === id)?.name, value });
    }
    for (const [value, code] of invalid) {
      const out = checkCustomFields(DEFS, { [id]: value });
      assert.equal(
        out.issues.map((i) => [i.path, i.code]),
        [[`custom_fields.${id}`, code]],
        JSON.stringify(value),
      );
      assert.equal(out.set, {});
    }
  });
}

t('null clears, an unknown id is an issue, each faulty field once', () => {
  const out = checkCustomFields(DEFS, { text: null, nope: 'x', num: 99, one: 'z', bool: true });
  assert.equal(out.cleared, ['text']);
  assert.equal(out.set, { bool: { name: 'Bool', value: true } });
  assert.equal(
    out.issues.map((i) => [i.path, i.code]),
    [
      ['custom_fields.nope', 'unknown_field'],
      ['custom_fields.num', 'out_of_range'],
      ['custom_fields.one', 'invalid_option'],
    ],
  );
  assert.equal(
    checkCustomFields([], { text: null }).issues.map((i) => i.code),
    ['unknown_field'],
  );
});

t('a value whose definition was removed from the catalog is cleared by null, never set', () => {
  // The value stays shown in custom_fields after its definition goes: a partner must be able to clear it.
  const current = {
    name: 'A',
    email: null,
    phone_number: null,
    country_code: null,
    lang: 'FR' as const,
    tags: [],
    note: null,
    custom_fields: { gone: { name: 'Gone', value: 'gold' }, text: { name: 'Text', value: 'x' } },
    newsletter_consent: false,
    external_id: null,
  };
  const ctx = { restaurantId: 'r', country: 'FR', definitions: DEFS };
  const { changes, previous } = prepareChanges(current, { custom_fields: { gone: null } }, ctx);
  assert.equal(changes, { custom_fields: { text: { name: 'Text', value: 'x' } } });
  assert.equal(previous, { custom_fields: current.custom_fields });
  const refused = (input: Record<string, unknown>) => {
    try {
      prepareChanges(current, { custom_fields: input }, ctx);
    } catch (e) {
      const issues = ((e as ApiError).details?.issues ?? []) as {
        path: string;
        code: string;
        message: string;
      }[];
      return issues.map((i) => [i.path, i.code, i.message]);
    }
    return 'accepted';
  };
  // The held value of a removed field: the message names the fix (null clears it).
  assert.equal(refused({ gone: 'gold' }), [
    [
      'custom_fields.gone',
      'unknown_field',
      "gone was removed from the restaurant's custom fields: send null to clear this customer's value",
    ],
  ]);
  assert.equal(refused({ never: null }), [
    ['custom_fields.never', 'unknown_field', 'the restaurant has no custom field never'],
  ]);
});

t.run();
