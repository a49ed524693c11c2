// The frozen empty array and object stored documents share (src/adapters/document-store/values.ts):
// the runner's interning puts them in events' data, readers get their own copies, and an in-place
// update of the embedded store that writes into one gives the document a fresh one first.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { EmbeddedCollection } from '../../src/adapters/document-store/embedded-collection';
import { SHARED_EMPTY_ARRAY, SHARED_EMPTY_OBJECT } from '../../src/adapters/document-store/values';
import { internStrings } from '../../src/projection/intern';

test('interning replaces empty arrays and plain objects at any depth by the shared frozen ones', () => {
  const data = { tags: [], metadata: {}, nested: { list: [[], {}], full: [1], obj: { a: 1 } } };
  internStrings(data);
  assert.is(data.tags, SHARED_EMPTY_ARRAY);
  assert.is(data.metadata, SHARED_EMPTY_OBJECT);
  assert.is(data.nested.list[0], SHARED_EMPTY_ARRAY);
  assert.is(data.nested.list[1], SHARED_EMPTY_OBJECT);
  assert.equal(data.nested.full, [1]);
  assert.equal(data.nested.obj, { a: 1 });
  assert.ok(Object.isFrozen(SHARED_EMPTY_ARRAY) && Object.isFrozen(SHARED_EMPTY_OBJECT));
});

test('stored documents sharing them: reads are copies, updates into them leave the shared ones empty', async () => {
  const docs = new EmbeddedDocumentStore();
  const col = docs.collection('things') as EmbeddedCollection;
  assert.ok(col instanceof EmbeddedCollection);
  // As the write-back cache stores a projection's document: as given, no copy.
  col.writeBack([
    ['a', { _id: 'a', tags: SHARED_EMPTY_ARRAY as unknown as string[], meta: SHARED_EMPTY_OBJECT, rows: [] }],
    ['b', { _id: 'b', tags: SHARED_EMPTY_ARRAY as unknown as string[], meta: SHARED_EMPTY_OBJECT }],
  ]);
  const read = (await col.findOne({ _id: 'a' })) as unknown as {
    tags: string[];
    meta: Record<string, unknown>;
  };
  assert.is.not(read.tags, SHARED_EMPTY_ARRAY);
  read.tags.push('x');
  read.meta.k = 1;
  await col.updateOne({ _id: 'a' }, { $set: { 'meta.x': 1, 'tags.1': 'y' } });
  await col.updateOne({ _id: 'a' }, { $push: { rows: 1 } });
  await col.updateOne({ _id: 'b' }, { $unset: { 'meta.x': '' }, $pull: { tags: 'z' } });
  await col.updateOne({ _id: 'b' }, { $push: { tags: 'z' } });
  assert.equal(await col.findOne({ _id: 'a' }), { _id: 'a', tags: [null, 'y'], meta: { x: 1 }, rows: [1] });
  assert.equal(await col.findOne({ _id: 'b' }), { _id: 'b', tags: ['z'], meta: {} });
  assert.is(SHARED_EMPTY_ARRAY.length, 0);
  assert.equal(Object.keys(SHARED_EMPTY_OBJECT), []);
});

test.run();
