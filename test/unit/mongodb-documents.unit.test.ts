// What the MongoDB adapter hands back is the document stored, as the embedded store's is. The driver's
// BSON decoder turns a sub-document whose $-keys are only $ref, $id and $db into a DBRef instance; the
// adapter makes it the plain object again (fromDriver). No server needed: BSON.deserialize is what the
// driver runs on each document it receives.
import fc from 'fast-check';
import { BSON } from 'mongodb';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fromDriver } from '../../src/adapters/document-store/mongodb';

const test = suite('mongodb: documents as stored');

const throughDriver = (doc: Record<string, unknown>) => BSON.deserialize(BSON.serialize(doc));

function assertPlain(value: unknown, path = 'doc'): void {
  if (typeof value !== 'object' || value === null) return;
  if (!Array.isArray(value))
    assert.is(Object.getPrototypeOf(value), Object.prototype, `${path} is a plain object`);
  for (const k of Object.keys(value)) assertPlain((value as Record<string, unknown>)[k], `${path}.${k}`);
}

test('partner JSON shaped like a DBRef reads back as stored, at any depth and in arrays', () => {
  const doc = JSON.parse(
    '{"_id": "r1", "metadata": {"$ref": "#/definitions/guest", "$id": "https://example.test/s", "k": 2},' +
      ' "headers": {"$ref": "a", "$id": "b"}, "custom_fields": {"schemas": [{"$id": 7, "$ref": "x",' +
      ' "$db": "d", "inner": {"$ref": "y", "$id": {"$ref": "z", "$id": 1}}}]},' +
      ' "proto": {"$ref": "p", "$id": 1, "__proto__": {"polluted": 1}}, "not": {"$ref": "n", "$id": null}}',
  );
  const decoded = throughDriver(doc);
  assert.is.not(Object.getPrototypeOf(decoded.headers), Object.prototype, 'the decoder gives a DBRef');
  const read = fromDriver(decoded);
  assert.equal(read, doc);
  assertPlain(read);
  assert.equal(Object.entries(read.headers as object), [
    ['$ref', 'a'],
    ['$id', 'b'],
  ]);
  assert.ok(Object.hasOwn(read.proto as object, '__proto__'), '__proto__ stays data');
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(fromDriver([throughDriver(doc)]), [doc], 'a find’s array');
  assert.is(fromDriver(null), null);
});

test('the decoder’s other values (dates, binaries, ids) pass untouched', () => {
  const at = new Date('2026-11-28T00:00:00Z');
  const read = fromDriver(
    throughDriver({ _id: 'x', at, bin: new BSON.Binary(Buffer.from('ab')), list: [at] }),
  );
  assert.instance(read.at, Date);
  assert.is((read.at as Date).getTime(), at.getTime());
  assert.instance(read.bin, BSON.Binary);
});

test('property: any document of partner-like keys reads back as stored', () => {
  const key = fc.constantFrom('$ref', '$id', '$db', 'a', 'b', 'x.y', '$q', '');
  const text = fc.constantFrom('s', 't', 'col', '#/defs/x', 'https:');
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      tie('object'),
      fc.array(tie('value'), { maxLength: 3 }),
    ),
    object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  }));
  fc.assert(
    fc.property(fc.dictionary(key, value, { maxKeys: 4 }), (fields) => {
      // As plain JSON objects (fast-check's dictionaries have no prototype).
      const doc = JSON.parse(JSON.stringify({ _id: 'd', ...fields }));
      const read = fromDriver(throughDriver(doc));
      assert.equal(read, doc);
      assertPlain(read);
    }),
    { numRuns: 300 },
  );
});

test.run();
