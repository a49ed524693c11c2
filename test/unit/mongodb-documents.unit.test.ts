// What the MongoDB adapter hands back is the document stored, as the embedded store's is. The driver's
// BSON decoder turns a sub-document whose $-keys are only $ref, $id and $db into a DBRef instance (its
// keys moved, a $ref with one dot split); the adapter reads the stored bytes (the driver's raw) and
// decodes them itself (decodeStored). No server needed: the bytes are BSON.serialize's.
import fc from 'fast-check';
import { BSON } from 'mongodb';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeStored } from '../../src/adapters/document-store/mongodb-stored-documents';

const test = suite('mongodb: documents as stored');

/** As the adapter reads a document: its stored bytes (the driver's `raw`), decoded. */
const stored = (doc: Record<string, unknown>) => decodeStored(BSON.serialize(doc));
/** Equal, and with every object's keys in the stored order (dequal does not look at the order). */
function assertAsStored(read: unknown, doc: unknown): void {
  assert.equal(read, doc);
  assert.is(JSON.stringify(read), JSON.stringify(doc), 'keys in the stored order');
}

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
  assert.is.not(
    Object.getPrototypeOf(BSON.deserialize(BSON.serialize(doc)).headers),
    Object.prototype,
    'the decoder alone gives a DBRef',
  );
  const read = stored(doc);
  assertAsStored(read, doc);
  assertPlain(read);
  assert.equal(Object.entries(read.headers as object), [
    ['$ref', 'a'],
    ['$id', 'b'],
  ]);
  assert.ok(Object.hasOwn(read.proto as object, '__proto__'), '__proto__ stays data');
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

test('keys keep their stored order, and a $ref with one dot stays whole (the decoder moved and split them)', () => {
  const doc = JSON.parse(
    '{"_id": "r1", "metadata": {"title": "Guest", "$id": "https://example.test/s", "$ref": "#/definitions/guest"},' +
      ' "schema": {"$id": 1, "$ref": "common.json"}, "list": [{"x": 1, "$ref": "a.b", "$id": 2, "y": 3}]}',
  );
  const decoder = BSON.deserialize(BSON.serialize(doc)).schema as { collection: string; db: string };
  assert.equal([decoder.db, decoder.collection], ['common', 'json'], 'the decoder splits it');
  const read = stored(doc);
  assertAsStored(read, doc);
  assert.equal(Object.keys(read.metadata as object), ['title', '$id', '$ref']);
});

test('a $db given beside a $ref with one dot stays as written (the decoder replaced it)', () => {
  const doc = {
    _id: 'd',
    $ref: [{ $db: 's', $ref: '.', $id: 's' }],
    other: { $db: 'x', $ref: 'a.b', $id: 1 },
  };
  assertAsStored(stored(doc), doc);
});

test('a root whose only $-keys are $ref and $id (the decoder makes the whole document a DBRef)', () => {
  const doc = { _id: 'r', $id: 1, $ref: 'x.y', z: [1] };
  assertAsStored(stored(doc), doc);
});

test('"$ref" inside a string or a binary only: decoded as the driver would', () => {
  const doc = { _id: 'r', note: 'a $ref\u0000 b', bin: new BSON.Binary(Buffer.from('\u0002$ref\u0000')) };
  const read = stored(doc);
  assert.is(read.note, doc.note);
  assert.instance(read.bin, BSON.Binary);
});

test('the decoder’s other values (dates, binaries, ids) pass untouched', () => {
  const at = new Date('2026-11-28T00:00:00Z');
  const read = stored({ _id: 'x', at, bin: new BSON.Binary(Buffer.from('ab')), list: [at], n: 2 ** 40 });
  assert.instance(read.at, Date);
  assert.is((read.at as Date).getTime(), at.getTime());
  assert.instance(read.bin, BSON.Binary);
  assert.is(read.n, 2 ** 40, 'an int64 promoted to a number, as the driver does');
});

test('property: any document of partner-like keys reads back as stored', () => {
  const key = fc.constantFrom('$ref', '$id', '$db', 'a', 'b', 'x.y', '$q', '');
  const text = fc.constantFrom('s', 't', 'col', '#/defs/x', 'https:', 'a.b', 'x.y.z', '.');
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
      const read = stored(doc);
      assertAsStored(read, doc);
      assertPlain(read);
    }),
    { numRuns: 300 },
  );
});

test.run();
