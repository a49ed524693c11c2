// Contract: the store as a whole (checkpoints, dropAll) and what it refuses (InvalidQueryError).
import * as assert from 'uvu/assert';
import {
  type Collection,
  DocumentStoreError,
  DuplicateKeyError,
  type Filter,
  InvalidQueryError,
  type Update,
} from '../../src/ports/document-store';
import { type Person, type Register, rejects, seeded, snapshot } from './document-store.helpers';

const badFilters: [string, unknown][] = [
  ['unknown field operator', { age: { $foo: 1 } }],
  ['unknown top-level operator', { $where: 'this.age > 1' }],
  ['$in with a non-array', { city: { $in: 'Paris' } }],
  ['$nin with a non-array', { city: { $nin: 5 } }],
  ['$and with a non-array', { $and: { city: 'Paris' } }],
  ['$or with an empty array', { $or: [] }],
  ['operators mixed with fields', { age: { $gt: 1, years: 2 } }],
  ['$size with a non-number', { tags: { $size: 'x' } }],
  ['$regex with a number', { name: { $regex: 5 } }],
  ['$options without $regex', { name: { $options: 'i' } }],
  ['an invalid regular expression', { name: { $regex: '(' } }],
  ["$options with a flag JavaScript's RegExp has not", { name: { $regex: 'a d', $options: 'x' } }],
];

const badUpdates: [string, unknown][] = [
  ['unknown update operator', { $rename: { name: 'n' } }],
  ['a replacement document', { name: 'x' }],
  ['an empty update', {}],
  ['$inc with a non-number', { $inc: { age: '1' } }],
  ['$set with a non-object', { $set: 5 }],
  ['two operators on one path', { $set: { age: 1 }, $inc: { age: 1 } }],
  ['a path and its parent', { $set: { address: {}, 'address.city': 'x' } }],
  ['a positional path', { $set: { 'tags.$': 'x' } }],
  ['changing _id', { $set: { _id: 'other' } }],
  ['$push modifiers without $each', { $push: { tags: { $slice: 1 } } }],
];

// Operands the checks accept but the document refuses: caught while applying (MongoDB: on the server).
const refusedByDocument: [string, Update][] = [
  ['$inc on a string', { $set: { city: 'Changed' }, $inc: { name: 1 } }],
  ['$set through a string', { $set: { city: 'Changed', 'name.first': 'A' } }],
  ['$push onto a string', { $set: { city: 'Changed' }, $push: { name: 'x' } }],
  ['$pull from a string', { $set: { city: 'Changed' }, $pull: { name: 'x' } }],
];

export function storeContract(it: Register): void {
  it('checkpoints: null until set, then only move forward; projections are independent', async (store) => {
    assert.is(await store.getCheckpoint('reservations'), null);
    await store.setCheckpoint('reservations', 5n);
    assert.is(await store.getCheckpoint('reservations'), 5n);
    await store.setCheckpoint('reservations', 3n);
    assert.is(await store.getCheckpoint('reservations'), 5n);
    await store.setCheckpoint('reservations', 5n);
    await store.setCheckpoint('reservations', 12n);
    assert.is(await store.getCheckpoint('reservations'), 12n);
    await store.setCheckpoint('reservations', 9n);
    assert.is(await store.getCheckpoint('reservations'), 12n);
    await store.setCheckpoint('customers', 0n);
    assert.is(await store.getCheckpoint('customers'), 0n);
    const big = 2n ** 64n - 1n;
    await store.setCheckpoint('customers', big);
    assert.is(await store.getCheckpoint('customers'), big);
    assert.is(await store.getCheckpoint('reservations'), 12n);
    await rejects(store.setCheckpoint('customers', -1n), DocumentStoreError);
    await rejects(store.setCheckpoint('customers', 10n ** 20n), DocumentStoreError);
    assert.is(await store.getCheckpoint('customers'), big);
  });

  it('getCheckpoints and setCheckpoints: many in one call, forward only, absent names null', async (store) => {
    assert.equal(await store.getCheckpoints([]), new Map());
    await store.setCheckpoints([]);
    assert.equal(
      await store.getCheckpoints(['a', 'b']),
      new Map([
        ['a', null],
        ['b', null],
      ]),
    );
    await store.setCheckpoints([
      ['a', 5n],
      ['b', 0n],
    ]);
    // The single and the many views are one store.
    assert.is(await store.getCheckpoint('a'), 5n);
    assert.is(await store.getCheckpoint('b'), 0n);
    await store.setCheckpoint('c', 7n);
    assert.equal(
      await store.getCheckpoints(['c', 'a', 'absent', 'b']),
      new Map<string, bigint | null>([
        ['c', 7n],
        ['a', 5n],
        ['absent', null],
        ['b', 0n],
      ]),
    );
    // Forward only, entry by entry: a lower position leaves that one, the others still move.
    await store.setCheckpoints([
      ['a', 3n],
      ['b', 9n],
      ['c', 7n],
      ['d', 1n],
    ]);
    assert.equal(
      await store.getCheckpoints(['a', 'b', 'c', 'd']),
      new Map([
        ['a', 5n],
        ['b', 9n],
        ['c', 7n],
        ['d', 1n],
      ]),
    );
    // A name given twice ends at the higher position, whatever the order.
    await store.setCheckpoints([
      ['d', 20n],
      ['d', 10n],
    ]);
    assert.is(await store.getCheckpoint('d'), 20n);
    const big = 2n ** 64n - 1n;
    await store.setCheckpoints([['a', big]]);
    assert.is((await store.getCheckpoints(['a'])).get('a'), big);
    // A bad position anywhere writes none of the entries.
    await rejects(
      store.setCheckpoints([
        ['b', 11n],
        ['c', -1n],
      ]),
      DocumentStoreError,
    );
    await rejects(
      store.setCheckpoints([
        ['b', 11n],
        ['c', 10n ** 20n],
      ]),
      DocumentStoreError,
    );
    assert.equal(
      await store.getCheckpoints(['b', 'c']),
      new Map([
        ['b', 9n],
        ['c', 7n],
      ]),
    );
    // dropAll forgets them too.
    await store.dropAll();
    assert.equal(
      await store.getCheckpoints(['a', 'd']),
      new Map([
        ['a', null],
        ['d', null],
      ]),
    );
  });

  it('getCheckpoints and setCheckpoints: a hundred names in one call each', async (store) => {
    const names = Array.from({ length: 100 }, (_, i) => `projection-${i}@v${1 + (i % 3)}`);
    await store.setCheckpoints(names.map((n, i) => [n, BigInt(i * 1000)]));
    const read = await store.getCheckpoints([...names, 'none']);
    assert.is(read.size, 101);
    names.forEach((n, i) => {
      assert.is(read.get(n), BigInt(i * 1000), n);
    });
    assert.is(read.get('none'), null);
    // Half forward, half backward: only the forward half moves.
    await store.setCheckpoints(names.map((n, i) => [n, i % 2 === 0 ? BigInt(i * 1000 + 1) : 0n]));
    const again = await store.getCheckpoints(names);
    names.forEach((n, i) => {
      assert.is(again.get(n), BigInt(i * 1000 + (i % 2 === 0 ? 1 : 0)), n);
    });
  });

  it('dropAll drops documents, indexes and checkpoints; handles stay usable', async (store) => {
    const c = await seeded(store);
    await c.createIndex({ keys: { city: 1, name: 1 }, unique: true });
    await store.setCheckpoint('people', 42n);
    await store.dropAll();
    assert.is(await c.count(), 0);
    assert.is(await store.getCheckpoint('people'), null);
    await c.insertOne({ _id: 'a', city: 'Paris', name: 'Same' });
    await c.insertOne({ _id: 'b', city: 'Paris', name: 'Same' });
    assert.is(await store.collection('people').count(), 2);
    await rejects(c.insertOne({ _id: 'a' }), DuplicateKeyError);
  });

  it('dropAll(keep) keeps the named collections (state that is no read model), drops the rest', async (store) => {
    const c = await seeded(store);
    await store.collection('kept').insertOne({ _id: 'k' });
    await store.setCheckpoint('people', 42n);
    await store.dropAll(['kept']);
    assert.is(await c.count(), 0);
    assert.is(await store.getCheckpoint('people'), null);
    assert.is(await store.collection('kept').count(), 1);
  });

  it('dropCollections drops the named collections with their indexes, one absent is no error', async (store) => {
    const c = await seeded(store);
    await c.createIndex({ keys: { name: 1 }, unique: true });
    await store.collection('kept').insertOne({ _id: 'k' });
    await store.setCheckpoint('people', 42n);
    await store.dropCollections(['people', 'never_made']);
    assert.is(await c.count(), 0);
    assert.is(await store.collection('kept').count(), 1);
    assert.is(await store.getCheckpoint('people'), 42n, 'checkpoints are not collections dropped by name');
    // The handle still writes (the collection is made again), and the unique index went with the drop.
    await c.insertOne({ _id: 'x', name: 'Same' });
    await c.insertOne({ _id: 'y', name: 'Same' });
    assert.is(await c.count(), 2);
  });

  it('an unknown or malformed filter operator is an InvalidQueryError on every method', async (store) => {
    const c = await seeded(store);
    const before = await snapshot(c);
    for (const [what, filter] of badFilters) {
      const f = filter as Filter;
      await rejects(c.find(f), InvalidQueryError).catch(fail(what, 'find'));
      await rejects(c.findOne(f), InvalidQueryError).catch(fail(what, 'findOne'));
      await rejects(c.count(f), InvalidQueryError).catch(fail(what, 'count'));
      await rejects(c.updateOne(f, { $set: { x: 1 } }, { upsert: true }), InvalidQueryError).catch(
        fail(what, 'updateOne'),
      );
      await rejects(c.updateMany(f, { $set: { x: 1 } }), InvalidQueryError).catch(fail(what, 'updateMany'));
      await rejects(c.replaceOne(f, { _id: 'p1' }), InvalidQueryError).catch(fail(what, 'replaceOne'));
      await rejects(c.deleteOne(f), InvalidQueryError).catch(fail(what, 'deleteOne'));
      await rejects(c.deleteMany(f), InvalidQueryError).catch(fail(what, 'deleteMany'));
    }
    assert.equal(await snapshot(c), before);
    const empty = store.collection('empty');
    for (const [what, filter] of badFilters) {
      await rejects(empty.find(filter as Filter), InvalidQueryError).catch(
        fail(what, 'find on an empty collection'),
      );
      await rejects(empty.count(filter as Filter), InvalidQueryError).catch(
        fail(what, 'count on an empty collection'),
      );
    }
  });

  it('an unknown update operator or a wrong operand is an InvalidQueryError and changes nothing', async (store) => {
    const c = await seeded(store);
    const before = await snapshot(c);
    const empty = store.collection('empty');
    for (const [what, update] of badUpdates) {
      const u = update as Update;
      // A changed _id is refused by the document it would change; with none matched, nothing fails.
      if (what !== 'changing _id') {
        await rejects(empty.updateOne({ _id: 'x' }, u), InvalidQueryError).catch(
          fail(what, 'empty collection'),
        );
      }
      await rejects(c.updateOne({ _id: 'p1' }, u), InvalidQueryError).catch(fail(what, 'updateOne'));
      await rejects(c.updateOne({ _id: 'new' }, u, { upsert: true }), InvalidQueryError).catch(
        fail(what, 'upsert'),
      );
      await rejects(c.updateMany({}, u), InvalidQueryError).catch(fail(what, 'updateMany'));
    }
    for (const [what, update] of refusedByDocument) {
      await rejects(c.updateOne({ _id: 'p1' }, update), InvalidQueryError).catch(fail(what, 'updateOne'));
    }
    assert.equal(await snapshot(c), before);
  });

  it('malformed find options and index specs are InvalidQueryErrors', async (store) => {
    const c: Collection<Person> = await seeded(store);
    const bad = (options: unknown) => c.find({}, options as never);
    await rejects(bad({ sort: { age: 2 } }), InvalidQueryError);
    await rejects(bad({ projection: { name: 0 } }), InvalidQueryError);
    await rejects(bad({ projection: { address: 1, 'address.city': 1 } }), InvalidQueryError);
    await rejects(bad({ limit: -1 }), InvalidQueryError);
    await rejects(bad({ skip: 1.5 }), InvalidQueryError);
    await rejects(c.createIndex({ keys: {} }), InvalidQueryError);
    await rejects(c.createIndex({ keys: { age: 2 as 1 } }), InvalidQueryError);
    await rejects(c.insertOne({ name: 'no id' } as never), InvalidQueryError);
    await rejects(c.insertOne({ _id: 'x', $bad: 1 } as never), InvalidQueryError);
  });
}

function fail(what: string, method: string) {
  return (err: Error) => {
    throw new Error(`${method} with ${what}: ${err.message}`);
  };
}
