// The body guard (depth, sizes, prototype keys) and the answer to a body that did not parse: every
// hostile body is a 400 with one issue at its path, found without recursion, and validation messages
// never call anything the input holds.

import { maxHeaderSize } from 'node:http';
import fc from 'fast-check';
import { string as sString, type } from 'superstruct';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError, type Issue } from '../../src/core/errors';
import {
  BODY_LIMITS,
  bodyParseError,
  checkBody,
  guardBody,
  parseJsonDocument,
  refuseRepeatedMembers,
} from '../../src/http/body-guard';
import { generateOpenApi } from '../../src/http/openapi';
import { partnerRoutes } from '../../src/http/routes/index';
import type { AnySchema } from '../../src/http/schema';
import { validateInput } from '../../src/http/validate';

const t = suite('body guard');

/** `{"a":{"a":…}}` n levels deep, built without recursion. */
function nested(n: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

t('nesting: 32 levels pass, 33 answer too_deep at the path of the level too many', () => {
  assert.is(checkBody(nested(32)), null);
  const issue = checkBody(nested(33));
  assert.is(issue?.code, 'too_deep');
  assert.is(issue?.path, Array.from({ length: 32 }, () => 'a').join('.'));
  // Arrays count as levels too.
  assert.is(checkBody({ x: JSON.parse(`${'['.repeat(31)}${']'.repeat(31)}`) }), null);
  assert.is(checkBody({ x: JSON.parse(`${'['.repeat(32)}${']'.repeat(32)}`) })?.code, 'too_deep');
});

t('a million levels: an issue, not a stack overflow', () => {
  const deep = JSON.parse(`{"a":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`);
  assert.is(checkBody(deep)?.code, 'too_deep');
});

t('sizes: arrays, objects, strings and property names are bounded', () => {
  const many = (n: number) => Array.from({ length: n }, () => 0);
  assert.is(checkBody({ list: many(BODY_LIMITS.arrayItems) }), null);
  assert.equal(checkBody({ list: many(BODY_LIMITS.arrayItems + 1) })?.path, 'list');
  const keys = (n: number) => Object.fromEntries(many(n).map((_, i) => [`k${i}`, i]));
  assert.is(checkBody({ m: keys(BODY_LIMITS.objectKeys) }), null);
  assert.equal(checkBody({ m: keys(BODY_LIMITS.objectKeys + 1) })?.code, 'out_of_range');
  assert.is(checkBody({ s: 'x'.repeat(BODY_LIMITS.stringChars) }), null);
  assert.equal(checkBody({ m: { s: 'x'.repeat(BODY_LIMITS.stringChars + 1) } })?.path, 'm.s');
  assert.equal(checkBody({ m: { ['k'.repeat(BODY_LIMITS.stringChars + 1)]: 1 } })?.path, 'm');
});

t('__proto__, constructor and prototype are refused wherever they are, at their path', () => {
  const body = JSON.parse('{"a":[{"b":1},{"__proto__":{"polluted":true}}]}');
  assert.equal(checkBody(body), {
    path: 'a.1.__proto__',
    code: 'forbidden_property',
    message: '__proto__ is not allowed as a property name',
  });
  assert.is(checkBody({ metadata: { constructor: { prototype: 1 } } })?.path, 'metadata.constructor');
  assert.is(checkBody({ x: { prototype: 1 } })?.path, 'x.prototype');
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

t('a number past the double range (1e400, read as Infinity) is refused wherever it is, at its path', () => {
  assert.equal(checkBody(JSON.parse('{"metadata":{"a":[1,-1e400]}}')), {
    path: 'metadata.a.1',
    code: 'out_of_range',
    message: 'metadata.a.1 is a number beyond the range JSON numbers are read in (about ±1.8e308)',
  });
  assert.is(checkBody(JSON.parse('{"n":1e400}'))?.path, 'n');
  // The smallest double, -0, an underflow to 0 and the largest safe integers are numbers JSON carries back.
  assert.is(
    checkBody(
      JSON.parse('{"b":5e-324,"c":-0,"d":1e-400,"e":9007199254740991,"f":-9007199254740991,"g":1.5}'),
    ),
    null,
  );
});

t('an integer written past 2^53 is refused wherever it is, at its path: it would come back altered', () => {
  // 9007199254740993 parses as 9007199254740992: a partner's id in metadata came back another number.
  assert.equal(
    refusal(() => refuseRepeatedMembers('{"metadata":{"pos_id":9007199254740993}}')),
    [
      {
        path: 'metadata.pos_id',
        code: 'out_of_range',
        message:
          'metadata.pos_id is an integer written beyond ±9007199254740991 (2^53-1), which JSON readers keep only approximately: send it as a string',
      },
    ],
  );
  for (const n of ['9007199254740992', '-9007199254740993', '123456789012345678901'])
    assert.is(refusal(() => refuseRepeatedMembers(`{"m":[0,{"n":${n}}]}`))[0]?.path, 'm.1.n', n);
  // Numbers written with an exponent or a fraction are the doubles they say; the largest safe integers
  // are exact. Neither the text nor the parsed value is refused.
  for (const n of [
    '1e308',
    '6.02e23',
    '1e16',
    '1.5e16',
    '-1e300',
    '9007199254740991.5',
    '9007199254740991',
    '-9007199254740991',
    '1E20',
  ]) {
    const text = `{"m":{"n":${n}}}`;
    refuseRepeatedMembers(text);
    assert.is(checkBody(JSON.parse(text)), null, n);
    assert.ok(parseJsonDocument(text), n);
  }
  // An operator's file: refused with the path.
  assert.throws(
    () => parseJsonDocument('{"a":[{"b":-9007199254740993}]}'),
    /a\.0\.b is an integer written beyond/,
  );
  // A repeated name still answers first (one issue).
  assert.is(
    refusal(() => refuseRepeatedMembers('{"a":1,"a":9007199254740993}'))[0]?.code,
    'duplicate_property',
  );
});

t('half of a surrogate pair is refused wherever it is, in a value or a property name, at its path', () => {
  // JSON escapes a UTF-8 body can carry, parsing to strings that are not Unicode.
  const body = JSON.parse('{"name":"Zo\\ud800","tags":["ok","\\udfff x"],"m":{"\\udbff":1}}');
  assert.equal(checkBody({ name: body.name }), {
    path: 'name',
    code: 'invalid_encoding',
    message:
      'name holds half of a surrogate pair (a \\uD800-\\uDFFF escape without its other half): send Unicode text',
  });
  assert.is(checkBody({ tags: body.tags })?.path, 'tags.1');
  // The refusal itself must be readable by the strict JSON readers it protects: the name is shown
  // with its half escaped as text (six ASCII characters), not as the lone half, which JSON.stringify
  // writes back as the very escape those readers refuse.
  const named = checkBody({ m: body.m });
  assert.is(named?.path, 'm.\\uDBFF');
  assert.is(named?.code, 'invalid_encoding');
  const text = JSON.stringify(named);
  assert.ok(!/\\ud[89a-f]/.test(text), text);
  const deep = checkBody(JSON.parse('{"a":{"ok\\udc00b":{"x":1}}}'));
  assert.is(deep?.path, 'a.ok\\uDC00b');
  assert.ok(deep?.message.startsWith('a.ok\\uDC00b holds half'), deep?.message);
  // A whole pair, escaped or not, is one character: taken.
  assert.is(checkBody(JSON.parse('{"name":"\\ud83d\\ude00 😀","\\ud83d\\ude00":"x"}')), null);
});

t('the body itself must be an object', () => {
  assert.is(checkBody(undefined), null);
  for (const [v, kind] of [
    [null, 'null'],
    [[], 'an array'],
    [3, 'an integer'],
    ['x', 'a string'],
    [true, 'a boolean'],
  ] as const)
    assert.equal(checkBody(v), {
      path: '',
      code: 'invalid_type',
      message: `body must be a JSON object, not ${kind}`,
    });
});

t('guardBody throws the 400 envelope error', () => {
  try {
    guardBody(nested(40));
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ApiError);
    assert.is((e as ApiError).status, 400);
    assert.is((e as ApiError).code, 'VALIDATION_ERROR');
    assert.is(((e as ApiError).details?.issues as Issue[] | undefined)?.[0]?.code, 'too_deep');
  }
});

/** A co-body failure as koa-body hands it to onError. */
const parseFailure = (body: string, message = 'Unexpected token') =>
  Object.assign(new SyntaxError(message), { status: 400, body });

t('a parse failure of valid JSON says what is wrong: null, scalars, __proto__', () => {
  const nul = bodyParseError(parseFailure('null', 'invalid JSON, only supports object and array'), 1000);
  assert.is(nul.status, 400);
  assert.is(nul.message, 'The request body must be a JSON object');
  assert.equal(nul.details?.issues, [
    { path: '', code: 'invalid_type', message: 'body must be a JSON object, not null' },
  ]);
  assert.match(JSON.stringify(bodyParseError(parseFailure(' 12 '), 1000).details), 'not an integer');
  assert.match(JSON.stringify(bodyParseError(parseFailure('"x"'), 1000).details), 'not a string');
  const proto = bodyParseError(
    parseFailure('{"customer":{"__proto__":{"x":1}}}', 'Object contains forbidden prototype property'),
    1000,
  );
  assert.equal(proto.details?.issues, [
    {
      path: 'customer.__proto__',
      code: 'forbidden_property',
      message: '__proto__ is not allowed as a property name',
    },
  ]);
});

t('other parse failures keep their statuses', () => {
  const bad = bodyParseError(parseFailure('{"a":'), 1000);
  assert.equal([bad.status, (bad.details?.issues as Issue[] | undefined)?.[0]?.code], [400, 'invalid_json']);
  assert.is(bodyParseError(Object.assign(new Error('too large'), { status: 413 }), 1000).status, 413);
  assert.is(bodyParseError(Object.assign(new Error('gzip?'), { status: 415 }), 1000).status, 415);
  const charset = bodyParseError(
    Object.assign(new Error('x'), { status: 415, type: 'charset.unsupported' }),
    1000,
  );
  assert.is(charset.message, 'Unsupported charset; send the body as UTF-8');
  assert.is(bodyParseError(undefined, 1000).status, 400);
});

// Validation itself, on bodies the guard lets through.
const bodies = partnerRoutes().flatMap((r) => (r.body ? [[r.operationId, r.body] as const] : []));

t('validation is total: objects whose toString/valueOf are not functions answer 400 issues', () => {
  const hostile = JSON.parse('{"toString":null,"valueOf":"x"}');
  for (const [name, schema] of bodies)
    for (const value of [
      { party_size: hostile, name: hostile, customer: [hostile], tags: [[hostile]] },
      { customer: hostile, start_at: [hostile, [hostile]], custom_fields: { a: hostile } },
    ]) {
      try {
        validateInput(value, schema as AnySchema, 'body');
      } catch (e) {
        assert.instance(e, ApiError, `${name}: ${String((e as Error).message)}`);
        const issues = (e as ApiError).details?.issues as Issue[];
        assert.ok(issues.length > 0, name);
        for (const i of issues) assert.ok(i.message.length < 400, `${name}: ${i.message}`);
      }
    }
});

t('validation is total for any JSON within the guard (property)', () => {
  const key = fc.oneof(
    fc.constantFrom(
      'toString',
      'valueOf',
      'toJSON',
      'hasOwnProperty',
      'id',
      'name',
      'customer',
      'party_size',
    ),
    fc.string(),
  );
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.double(),
      fc.integer(),
      fc.string(),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 5 }),
    ),
  })).value;
  fc.assert(
    fc.property(fc.constantFrom(...bodies), fc.dictionary(key, json, { maxKeys: 6 }), ([, schema], body) => {
      if (checkBody(body)) return;
      try {
        validateInput(body, schema as AnySchema, 'body');
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 400) throw e;
        for (const i of (e.details?.issues ?? []) as Issue[]) {
          assert.type(i.path, 'string');
          assert.type(i.code, 'string');
          assert.type(i.message, 'string');
        }
      }
    }),
    { seed: 11, numRuns: 2_000 },
  );
});

const refusal = (f: () => unknown): Issue[] => {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return (e.details?.issues ?? []) as Issue[];
    throw e;
  }
  throw new Error('not refused');
};

t('a name given twice is one rule, body or query: duplicate_property at its path, one wording', () => {
  assert.equal(
    refusal(() => refuseRepeatedMembers('{"a":{"b":1,"b":2}}')),
    [{ path: 'a.b', code: 'duplicate_property', message: 'a.b is given more than once; give it once' }],
  );
  // An empty name at the top level: the message names the body (it began with a space).
  assert.equal(
    refusal(() => refuseRepeatedMembers('{"":1,"":2}')),
    [
      {
        path: '',
        code: 'duplicate_property',
        message: 'The property "" of body is given more than once; give it once',
      },
    ],
  );
  const query = {
    struct: type({ day: sString() }),
    json: { type: 'object', properties: {} },
  } as unknown as AnySchema;
  assert.equal(
    refusal(() => validateInput({ day: ['1', '2'] }, query, 'query')),
    [{ path: 'day', code: 'duplicate_property', message: 'day is given more than once; give it once' }],
  );
});

t('413 names the fix and says the size is counted decompressed', () => {
  const e = bodyParseError(Object.assign(new Error('too large'), { status: 413 }), 1000);
  assert.is(e.status, 413);
  assert.match(e.message, 'larger than 1000 bytes (counted decompressed');
  assert.match(e.message, ': send a smaller body');
});

t('the OpenAPI description gives the header limit the 431 applies (maxHeaderSize)', () => {
  const doc = generateOpenApi(partnerRoutes(), 'http://127.0.0.1') as { info: { description: string } };
  assert.match(doc.info.description, `past ${maxHeaderSize} bytes`);
  assert.not.match(doc.info.description, '16 KiB');
});

t.run();
