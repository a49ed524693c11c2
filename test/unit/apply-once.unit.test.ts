import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { Collection, Update } from '../../src/ports/document-store';
import { applyOnce } from '../../src/projection/idempotent';

test('applyOnce stamps _pos, applies each position once and leaves the caller update untouched', async () => {
  const c = new EmbeddedDocumentStore().collection('counts');
  const update: Update = { $inc: { n: 1 }, $set: { name: 'a' } };
  const before = structuredClone(update);
  assert.is(await applyOnce(c, 'x', 5n, update, { upsert: true }), true);
  assert.is(await applyOnce(c, 'x', 5n, update, { upsert: true }), false, 'a redelivery is a no-op');
  assert.is(await applyOnce(c, 'x', 4n, update, { upsert: true }), false, 'an older position too');
  assert.is(await applyOnce(c, 'x', 7n, { $inc: { n: 1 } }, { upsert: true }), true, 'no $set of its own');
  assert.is(await applyOnce(c, 'y', 1n, { $inc: { n: 1 } }), false, 'no upsert: nothing to update');
  assert.equal(update, before);
  assert.equal(await c.findOne({ _id: 'x' }), { _id: 'x', n: 2, name: 'a', _pos: '00000000000000000007' });
});

test('applyOnce sends the update as {...update, $set: {...update.$set, _pos}} would build it', async () => {
  const sent: Update[] = [];
  const recorder = {
    updateOne: async (_filter: unknown, update: Update) => {
      sent.push(update);
      return { matched: 1, modified: 1, upsertedId: null };
    },
  } as unknown as Collection;
  const updates = [
    { $inc: { n: 1 }, $set: { a: 1, _pos: 'theirs' } },
    { $push: { log: 'x' } },
    JSON.parse('{"$set": {"__proto__": {"polluted": true}, "a": 1}}') as Update,
  ];
  for (const update of updates) await applyOnce(recorder, 'x', 12n, update);
  updates.forEach((update, i) => {
    const expected = { ...update, $set: { ...update.$set, _pos: '00000000000000000012' } };
    assert.equal(sent[i], expected);
    assert.equal(Object.keys(sent[i]!.$set!), Object.keys(expected.$set));
    assert.is(Object.getPrototypeOf(sent[i]!.$set), Object.prototype);
  });
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

test.run();
