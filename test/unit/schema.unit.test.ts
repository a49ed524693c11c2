import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/core/errors';
import { arr, dateTime, enums, intQuery, nullable, obj, optional, str } from '../../src/http/schema';
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
  const q = obj({ page: optional(intQuery({ min: 1 })) });
  assert.equal(validateInput({ page: '3' }, q, 'query'), { page: 3 });
  assert.throws(() => validateInput({ page: '0' }, q, 'query'));
  assert.throws(() => validateInput({ page: 'x' }, q, 'query'));
});

test.run();
