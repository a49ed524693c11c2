// The advice of the 400 for an integer written past ±2^53-1: a string only where the field takes one.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBody } from '../../src/http/routes/reservation-schemas';
import { anyJson, arr, int, nullable, num, obj, optional, record, str, union } from '../../src/http/schema';
import { schemasAt, unsafeIntegerAdvice } from '../../src/http/unsafe-integer-advice';

const t = suite('unsafe integer advice');

t('a field taking a string (or any JSON) is told to send a string; a numeric one its bound', () => {
  const body = obj({
    amount: optional(int({ min: 0 })),
    ratio: optional(num({ max: 10 })),
    count: optional(nullable(int({ max: 500 }))),
    signed: optional(int()),
    pos_id: optional(union([str(), int({ min: 1 })], { pick: (v) => (typeof v === 'string' ? 0 : 1) })),
    list: optional(arr(int({ min: 2, max: 9 }))),
    meta: optional(record(anyJson())),
  }).json;
  const advice = (...keys: string[]) => unsafeIntegerAdvice(body, keys);
  assert.is(advice('amount'), `it must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
  assert.is(advice('ratio'), 'it must be a number at most 10');
  assert.is(advice('count'), 'it must be an integer at most 500');
  assert.is(advice('signed'), `it must be an integer at most ${Number.MAX_SAFE_INTEGER}`);
  assert.is(advice('pos_id'), 'send it as a string');
  assert.is(advice('list', '3'), 'it must be an integer from 2 to 9');
  assert.is(advice('meta', 'pos_id'), 'send it as a string');
  assert.is(advice('meta', 'deep', '0', 'x'), 'send it as a string');
  // A name the schema does not declare (refused anyway), or no schema at all: the range only.
  assert.is(advice('nope'), `write it within ±${Number.MAX_SAFE_INTEGER}`);
  assert.match(unsafeIntegerAdvice(undefined, ['x']), /^write it within/);
});

t(
  "the reservation body: total_amount_paid is numbers only, metadata and the customer's name take strings",
  () => {
    const json = createBody.json;
    assert.not.match(unsafeIntegerAdvice(json, ['total_amount_paid']), /string/);
    assert.match(unsafeIntegerAdvice(json, ['party_size']), /^it must be an integer from 1 to \d+$/);
    assert.is(unsafeIntegerAdvice(json, ['metadata', 'pos_id']), 'send it as a string');
    assert.is(unsafeIntegerAdvice(json, ['customer', 'name']), 'send it as a string');
    assert.ok(schemasAt(json, ['customer', 'id']).length > 0, 'the {id} member of the union is walked');
  },
);

t.run();
