// WriteBackStore.dropCollections forgets the pending writes of the collections it drops, and only
// those: another collection's writes of the batch still reach the store at the flush.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { WriteBackStore } from '../../src/projection/write-back';

test('dropCollections keeps the pending writes of the collections it does not drop', async () => {
  const inner = new EmbeddedDocumentStore();
  await inner.collection('old_v1').replaceOne({ _id: 'x' }, { _id: 'x', v: 0 }, { upsert: true });
  const cache = new WriteBackStore(inner);
  await cache.collection('live').replaceOne({ _id: 'a' }, { _id: 'a', v: 1 }, { upsert: true });
  await cache.collection('old_v1').replaceOne({ _id: 'y' }, { _id: 'y', v: 2 }, { upsert: true });
  await cache.dropCollections(['old_v1']);
  await cache.flush();
  assert.equal(await inner.collection('live').findOne({ _id: 'a' }), { _id: 'a', v: 1 });
  assert.equal(await inner.collection('old_v1').find({}), []);
});

test.run();
