// A partial index (IndexSpec.partial) holds only the documents its fields equal, and the embedded
// planner uses it only for a filter pinning them so: webhook_deliveries' pending_by_endpoint holds the
// pending deliveries, not every delivered one (a write more per delivery change for nothing).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';

const test = suite('embedded store: a partial index');

test('it holds the documents it names and answers only filters pinning them', async () => {
  const col = new EmbeddedDocumentStore().collection('deliveries');
  await col.createIndex({ keys: { e: 1, at: 1 }, name: 'by_e_at' });
  await col.createIndex({
    keys: { status: 1, e: 1, at: 1 },
    name: 'pending_by_e',
    partial: { status: 'pending' },
  });
  const docs = [];
  for (let i = 0; i < 100; i++)
    docs.push({ _id: `d${i}`, status: i < 90 ? 'delivered' : 'pending', e: 'e1', at: `t${i}` });
  await col.insertMany(docs);
  const pending = col.explain({ status: 'pending', e: 'e1' });
  assert.equal(pending, { index: 'pending_by_e', candidates: 10 });
  // Not planned on it where it holds none of the matches.
  assert.is.not(col.explain({ status: 'delivered', e: 'e1' }).index, 'pending_by_e');
  assert.is(col.explain({ status: { $in: ['pending', 'delivered'] }, e: 'e1' }).index, 'by_e_at');
  await col.updateOne({ _id: 'd0' }, { $set: { status: 'pending' } });
  await col.updateOne({ _id: 'd95' }, { $set: { status: 'delivered' } });
  assert.equal(col.explain({ status: 'pending', e: 'e1' }), { index: 'pending_by_e', candidates: 10 });
  assert.is((await col.find({ status: 'delivered', e: 'e1' })).length, 90);
});

test.run();
