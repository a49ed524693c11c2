import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/core/errors';
import { charCount, NOT_BLANK } from '../../src/core/text';
import { NOT_BLANK_DOCUMENTED } from '../../src/http/portable-pattern';
import {
  arr,
  date,
  dateTime,
  enums,
  int,
  intQuery,
  nullable,
  obj,
  optional,
  str,
} from '../../src/http/schema';
import { validateInput } from '../../src/http/validate';

const body = obj({
  name: str({ min: 1, max: 200 }),
  email: optional(nullable(str())),
  tags: optional(arr(str({ min: 1, max: 100 }), { max: 100 })),
  lang: optional(enums(['FR', 'EN'])),
  at: optional(dateTime()),
});

function issues(value: unknown) {
  try {
    validateInput(value, body, 'body');
  } catch (e) {
    assert.instance(e, ApiError);
    return (((e as ApiError).details?.issues ?? []) as { path: string; code: string }[]).map(
      (i) => `${i.path}:${i.code}`,
    );
  }
  return [];
}

test('valid input passes and keeps its values', () => {
  assert.equal(validateInput({ name: 'Ana', email: null }, body, 'body'), { name: 'Ana', email: null });
});

test('every faulty field is reported with path and code', () => {
  assert.equal(issues({ name: '', tags: ['ok', ''], lang: 'XX', extra: 1 }).sort(), [
    'extra:unknown_property',
    'lang:invalid_enum',
    'name:out_of_range',
    'tags.1:out_of_range',
  ]);
  assert.equal(issues({}), ['name:required']);
});

test('a list past its bounds says them in words, as a string past its length does', () => {
  const messageOf = (schema: ReturnType<typeof arr<string>>, value: string[]) => {
    try {
      validateInput({ v: value }, obj({ v: schema }), 'body');
    } catch (e) {
      const issues = (e as ApiError).details?.issues as { code: string; message: string }[];
      return issues.map((i) => `${i.code} ${i.message}`).join('; ');
    }
    return 'accepted';
  };
  const tags = Array.from({ length: 101 }, (_, i) => `t${i}`);
  assert.is(messageOf(arr(str(), { max: 100 }), tags), 'out_of_range v: must hold at most 100 items');
  assert.is(messageOf(arr(str(), { min: 1, max: 20 }), []), 'out_of_range v: must hold 1 to 20 items');
  assert.is(messageOf(arr(str(), { min: 1 }), []), 'out_of_range v: must hold at least 1 item');
  assert.is(messageOf(arr(str(), { min: 1, max: 20 }), ['a']), 'accepted');
  assert.is(messageOf(arr(str(), { max: 100 }), tags.slice(1)), 'accepted');
});

test('date-times need an explicit offset', () => {
  assert.equal(issues({ name: 'a', at: '2026-05-01T19:00:00' }), ['at:invalid_format']);
  assert.equal(issues({ name: 'a', at: '2026-05-01T19:00:00+02:00' }), []);
  assert.equal(issues({ name: 'a', at: '2026-05-01T19:00:00 02:00' }), ['at:invalid_format']);
});

test('the JSON schema mirrors the struct', () => {
  assert.equal(body.json.required, ['name']);
  assert.is(body.json.additionalProperties, false);
  assert.equal((body.json.properties as Record<string, unknown>).name, {
    type: 'string',
    minLength: 1,
    maxLength: 200,
  });
});

test('query integers are coerced from strings', () => {
  const q = obj({ page: optional(intQuery({ min: 1, max: 1000 })) });
  assert.equal(validateInput({ page: '3' }, q, 'query'), { page: 3 });
  assert.throws(() => validateInput({ page: '0' }, q, 'query'));
  assert.throws(() => validateInput({ page: 'x' }, q, 'query'));
});

function queryIssues(value: Record<string, string>, max = 1000) {
  const q = obj({ page: optional(intQuery({ min: 1, max })) });
  try {
    return { ok: validateInput(value, q, 'query').page };
  } catch (e) {
    const issue = (((e as ApiError).details?.issues ?? []) as { path: string; code: string }[])[0];
    return { issue: `${issue?.path}:${issue?.code}` };
  }
}

test('query integers: only plain digits, within the declared range, never altered', () => {
  for (const v of ['1e3', '2.0', '+3', ' 3', '0x10', '', '3 ', 'Infinity'])
    assert.equal(queryIssues({ page: v }), { issue: 'page:invalid_type' }, v);
  for (const v of ['1001', '100000000000000000000', '9007199254740993', `1${'0'.repeat(400)}`, '-1'])
    assert.equal(queryIssues({ page: v }), { issue: 'page:out_of_range' }, v);
  assert.equal(queryIssues({ page: '1000' }), { ok: 1000 });
  assert.equal(queryIssues({ page: '007' }), { ok: 7 });
  fc.assert(
    fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (n) => {
      const out = queryIssues({ page: String(n) }, Number.MAX_SAFE_INTEGER);
      if (n >= 1n && n <= BigInt(Number.MAX_SAFE_INTEGER)) assert.equal(out, { ok: Number(n) });
      else assert.equal(out, { issue: 'page:out_of_range' }, String(n));
    }),
  );
});

test('every integer refuses what is past the safe range, and documents its maximum', () => {
  const b = obj({ n: int({ min: 0 }) });
  assert.throws(() => validateInput({ n: 2 ** 53 }, b, 'body'));
  assert.throws(() => validateInput({ n: 1e300 }, b, 'body'));
  assert.equal(validateInput({ n: Number.MAX_SAFE_INTEGER }, b, 'body'), { n: Number.MAX_SAFE_INTEGER });
  const maximum = (schema: { json: Record<string, unknown> }) =>
    (schema.json.properties as Record<string, { maximum?: number }>).n?.maximum;
  assert.is(maximum(b), Number.MAX_SAFE_INTEGER);
  assert.is(maximum(obj({ n: intQuery({ min: 1, max: 7 }) })), 7);
});

const lengthBody = obj({ name: str({ min: 1, max: 200, notBlank: true }) });
const lengthOk = (name: string) => {
  try {
    validateInput({ name }, lengthBody, 'body');
    return true;
  } catch {
    return false;
  }
};

test('lengths count characters (code points), not UTF-16 units', () => {
  assert.ok(lengthOk('😀'.repeat(150)), '150 emoji are 150 characters');
  assert.ok(lengthOk('😀'.repeat(200)));
  assert.not.ok(lengthOk('😀'.repeat(201)));
  assert.not.ok(lengthOk('a'.repeat(201)));
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), { maxLength: 30 }),
      (parts) => {
        const v = parts.join('');
        const n = [...v].length;
        assert.is(charCount(v), n);
        // A blank value is refused for being blank (below): only lengths are judged here.
        if (NOT_BLANK.test(v)) assert.is(lengthOk(v), n >= 1 && n <= 200, JSON.stringify(v));
      },
    ),
    { numRuns: 1000 },
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 400 }), fc.constantFrom('a', 'é', '😀', '𝄞', '中'), (n, ch) => {
      assert.is(lengthOk(ch.repeat(n)), n >= 1 && n <= 200, `${n} × ${ch}`);
    }),
  );
});

test('names that are only whitespace are refused, and kept as sent otherwise', () => {
  for (const v of [' ', '   ', '\t\n', '\u00a0', '\u3000 ']) assert.not.ok(lengthOk(v), JSON.stringify(v));
  assert.equal(validateInput({ name: '  Ada ' }, lengthBody, 'body'), { name: '  Ada ' });
  assert.equal((lengthBody.json.properties as Record<string, unknown>).name, {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    pattern: NOT_BLANK_DOCUMENTED,
    description:
      'Holds a visible character (not only whitespace, control or invisible formatting characters: the pattern lists those up to U+FFFF, the server refuses the others too); kept as sent',
  });
});

/** Characters that show nothing on their own: controls, invisible formatting, lone combining marks. */
const INVISIBLE = [
  '\u0000',
  '\u0007',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u00ad',
  '\u0301',
  '\u034f',
  '\u061c',
  '\u115f',
  '\u180e',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202e',
  '\u2060',
  '\u2066',
  '\u20dd',
  '\u3164',
  '\ufe0f',
  '\ufeff',
  '\uffa0',
  '\u064e',
  '\u0941',
  '\u0600',
  '\u06dd',
  '\u{e0001}',
  '\u{e0041}',
  '\u{e0100}',
  '\u{1d173}',
];

test('names made only of control or invisible characters are refused as blank (write fuzzer: NUL and ZWSP names were stored)', () => {
  for (const v of INVISIBLE) assert.not.ok(lengthOk(v), JSON.stringify(v));
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...INVISIBLE, ' ', '\t', '\u00a0'), { minLength: 1, maxLength: 20 }),
      fc.constantFrom('A', 'é', '山', '😀', 'ß', '7', '-'),
      fc.nat(),
      (blank, visible, at) => {
        assert.not.ok(lengthOk(blank.join('')), JSON.stringify(blank.join('')));
        const i = at % (blank.length + 1);
        const name = [...blank.slice(0, i), visible, ...blank.slice(i)].join('');
        // A visible character anywhere makes a name, kept as sent.
        assert.ok(lengthOk(name), JSON.stringify(name));
      },
    ),
    { seed: 20261128, numRuns: 500 },
  );
  for (const v of ['e\u0301', '\u200bAda', 'Zoë', 'محمد', '\u202eAda\u202c', '\u{e0041}A', '😀\u{e0001}'])
    assert.ok(lengthOk(v), JSON.stringify(v));
});

test('date-times and dates go through the strict parser', () => {
  const b = obj({ at: optional(dateTime()), day: optional(date()) });
  const codes = (value: unknown) => {
    try {
      validateInput(value, b, 'body');
      return [];
    } catch (e) {
      return (
        ((e as ApiError).details?.issues ?? []) as { path: string; code: string; message: string }[]
      ).map((i) => `${i.path}:${i.code}:${i.message}`);
    }
  };
  assert.equal(codes({ at: '2027-12-01T19:45:00+01:00', day: '2028-02-29' }), []);
  assert.match(codes({ at: '2027-11-31T19:45:00+01:00' })[0] ?? '', /^at:invalid_format:at has no day 31/);
  assert.match(codes({ at: '2027-02-30T19:00:00Z' })[0] ?? '', /^at:invalid_format/);
  assert.match(codes({ at: '2027-01-01T24:00:00Z' })[0] ?? '', /hours run 00 to 23/);
  assert.match(codes({ day: '2027-02-29' })[0] ?? '', /^day:invalid_format/);
});

test.run();
