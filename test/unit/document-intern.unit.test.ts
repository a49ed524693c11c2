// The embedded store's string table (src/adapters/document-store/intern.ts): documents keep their
// values exactly (interning swaps a string for an equal one), frozen objects and `__proto__` fields
// are left alone, and the table stays bounded (two generations).
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import {
  INTERN_GENERATION,
  INTERN_MAX_LENGTH,
  intern,
  internDocument,
  internTableSizes,
  internValue,
  resetInternTable,
} from '../../src/adapters/document-store/intern';
import { cloneValue } from '../../src/adapters/document-store/values';

const test = suite('embedded store string table');

test.before.each(() => resetInternTable());

test('a document keeps its values, whatever JSON it holds', () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.dictionary(fc.string(), fc.jsonValue()),
      (a, b) => {
        const doc = cloneValue(a) as Record<string, unknown>;
        const before = cloneValue(b);
        internDocument(doc, before);
        assert.equal(doc, cloneValue(a));
        const v = cloneValue(a);
        assert.equal(internValue(v), cloneValue(a));
      },
    ),
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
  internDocument(frozen as Record<string, unknown>); // no TypeError in strict mode
  const doc = JSON.parse('{"_id":"b","__proto__":{"x":"y"},"list":["a",{"k":"v"}],"sub":{"n":null}}');
  internDocument(doc);
  assert.ok(Object.hasOwn(doc, '__proto__'));
  assert.equal(
    JSON.stringify(doc),
    '{"_id":"b","__proto__":{"x":"y"},"list":["a",{"k":"v"}],"sub":{"n":null}}',
  );
  assert.is(Object.getPrototypeOf(doc), Object.prototype);
});

test('the store reads back what was written, through every write path', async () => {
  const store = new EmbeddedDocumentStore();
  const col = store.collection('t');
  await col.createIndex({ keys: { restaurant_id: 1, day: 1 }, name: 'r_day' });
  await col.insertOne({ _id: 'a', restaurant_id: 'rest_full_2', day: '2031-03-02', tags: ['x'] });
  await col.replaceOne({ _id: 'a' }, { _id: 'a', restaurant_id: 'rest_full_2', day: '2031-03-03', tags: [] });
  await col.updateOne(
    { _id: 'b' },
    { $set: { restaurant_id: 'rest_full_2', day: '2031-03-03' } },
    { upsert: true },
  );
  await col.updateOne({ _id: 'b' }, { $push: { tags: 'long tag value' }, $set: { 'sub.k': 'v' } });
  col.writeBack([['c', { _id: 'c', restaurant_id: 'rest_full_2', day: '2031-03-03' }]]);
  assert.equal(await col.find({ restaurant_id: 'rest_full_2', day: '2031-03-03' }), [
    { _id: 'a', restaurant_id: 'rest_full_2', day: '2031-03-03', tags: [] },
    { _id: 'b', restaurant_id: 'rest_full_2', day: '2031-03-03', tags: ['long tag value'], sub: { k: 'v' } },
    { _id: 'c', restaurant_id: 'rest_full_2', day: '2031-03-03' },
  ]);
});

test.run();
