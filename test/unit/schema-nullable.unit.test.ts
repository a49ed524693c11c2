// `nullable` in OpenAPI 3.0.3 terms: a `type` beside it, null listed in an enum, a union taking null
// through exactly one member. Read back with the same 3.0.3 semantics the e2e checker uses.
import { openapiSchemaToJsonSchema } from '@openapi-contrib/openapi-schema-to-json-schema';
import AjvDraft04 from 'ajv-draft-04';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  anyJson,
  arr,
  bool,
  enums,
  type JsonSchema,
  literal,
  nullable,
  nullableJson,
  num,
  str,
  union,
} from '../../src/http/schema';

const accepts = (schema: JsonSchema, value: unknown) =>
  new AjvDraft04({ strict: false }).validate(openapiSchemaToJsonSchema(schema), value);

test('a nullable enum lists null, so 3.0.3 readers take null', () => {
  const s = nullable(enums(['A', 'B'])).json;
  assert.equal(s, { type: 'string', enum: ['A', 'B', null], nullable: true });
  assert.ok(accepts(s, null));
  assert.ok(accepts(s, 'A'));
  assert.not.ok(accepts(s, 'C'));
});

test('a nullable union takes null through exactly one member (oneOf still matches once)', () => {
  const s = nullable(union([str(), num(), bool(), arr(str())])).json;
  assert.not.ok('nullable' in s, 'no nullable without type');
  const members = s.oneOf as JsonSchema[];
  assert.is(members.filter((m) => m.nullable === true).length, 1);
  for (const v of [null, 'x', 1.5, true, ['a']]) assert.ok(accepts(s, v), JSON.stringify(v));
  assert.not.ok(accepts(s, { a: 1 }));
  assert.is(nullable(union([str(), num()])).struct.validate(null)[0], undefined);
});

test('a literal gets its type when it may be null', () => {
  const s = nullable(literal('')).json;
  assert.equal(s, { type: 'string', enum: ['', null], nullable: true });
});

test('any JSON value is spelled per type, null included; nullable of it changes nothing', () => {
  const s = anyJson().json;
  for (const v of [null, 'x', 1, false, [1, null], { a: null }]) assert.ok(accepts(s, v), JSON.stringify(v));
  assert.equal(nullable(anyJson()).json, s);
});

test('a hand-written nullable without a spelling in 3.0.3 is refused at generation', () => {
  assert.throws(() => nullableJson({ nullable: true, description: 'anything' }), /no OpenAPI 3.0.3 spelling/);
  assert.equal(nullableJson({ nullable: true, type: 'integer' }), { type: 'integer', nullable: true });
});

test.run();
