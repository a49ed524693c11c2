// The runner's string table (src/projection/intern.ts): event data keeps its values exactly
// (interning swaps a string for an equal one), frozen objects and `__proto__` fields are left alone,
// the table stays bounded (two generations), and read models replayed with it are those without.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cloneValue } from '../../src/adapters/document-store/values';
import {
  INTERN_GENERATION,
  INTERN_MAX_LENGTH,
  intern,
  internStrings,
  internTableSizes,
  resetInternTable,
} from '../../src/projection/intern';

const test = suite('projection string table');

test.before.each(() => resetInternTable());

test('data keeps its values, whatever JSON it holds', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (a) => {
      const doc = cloneValue(a) as Record<string, unknown>;
      internStrings(doc);
      internStrings(cloneValue(a) as Record<string, unknown>);
      assert.equal(doc, cloneValue(a));
      assert.is(JSON.stringify(doc), JSON.stringify(a));
    }),
    { numRuns: 300 },
  );
});

test('repeated strings take one table entry; long ones none', () => {
  const id = () => ['rest', 'full', '2'].join('_');
  assert.is(intern(id()), 'rest_full_2');
  assert.is(intern(id()), 'rest_full_2');
  assert.equal(internTableSizes(), { young: 1, old: 0 });
  intern('x'.repeat(INTERN_MAX_LENGTH + 1));
  assert.equal(internTableSizes(), { young: 1, old: 0 });
});

test('the table is bounded: the younger generation becomes the older when full', () => {
  intern('kept');
  for (let i = 0; i < INTERN_GENERATION; i++) intern(`s${i}`);
  const sizes = internTableSizes();
  assert.ok(sizes.young <= INTERN_GENERATION && sizes.old <= INTERN_GENERATION);
  assert.is(sizes.old, INTERN_GENERATION);
  // 'kept' is in the older generation: seen again, it moves up, with its value.
  assert.is(intern(['ke', 'pt'].join('')), 'kept');
  for (let i = 0; i < 3 * INTERN_GENERATION; i++) intern(`t${i}`);
  const after = internTableSizes();
  assert.ok(after.young + after.old <= 2 * INTERN_GENERATION);
});

test('frozen objects, own __proto__ fields and nested containers', () => {
  const frozen = Object.freeze({ _id: 'a', name: 'Guest 1' });
  internStrings(frozen as Record<string, unknown>); // no TypeError in strict mode
  const doc = JSON.parse('{"_id":"b","__proto__":{"x":"y"},"list":["a",{"k":"v"}],"sub":{"n":null}}');
  internStrings(doc);
  assert.ok(Object.hasOwn(doc, '__proto__'));
  assert.equal(
    JSON.stringify(doc),
    '{"_id":"b","__proto__":{"x":"y"},"list":["a",{"k":"v"}],"sub":{"n":null}}',
  );
  assert.is(Object.getPrototypeOf(doc), Object.prototype);
});

test.run();
