// Contract: reading — filters, dotted paths, sort, skip, limit, projection, count, copies.
import * as assert from 'uvu/assert';
import type { Filter } from '../../src/ports/document-store';
import { ids, type Register, seeded } from './document-store.helpers';

const filterCases: [string, Filter, string[]][] = [
  ['equality', { city: 'Paris' }, ['p1', 'p3']],
  ['$eq', { age: { $eq: 25 } }, ['p2']],
  ['$ne', { age: { $ne: 36 } }, ['p2', 'p4', 'p5']],
  ['$gt and $lte', { age: { $gt: 25, $lte: 52 } }, ['p1', 'p3', 'p4']],
  ['$gte and $lt', { age: { $gte: 25, $lt: 36 } }, ['p2']],
  ['$in', { city: { $in: ['Lyon', 'Nice'] } }, ['p2', 'p4', 'p5']],
  ['$nin', { city: { $nin: ['Paris'] } }, ['p2', 'p4', 'p5']],
  ['null matches null and missing', { email: null }, ['p1', 'p2', 'p3', 'p4']],
  ['$exists true (null exists)', { email: { $exists: true } }, ['p3', 'p5']],
  ['$exists false', { tags: { $exists: false } }, ['p4']],
  ['dotted path', { 'address.city': 'Lyon' }, ['p2', 'p5']],
  ['dotted path through an array', { 'visits.covers': 2 }, ['p1']],
  ['array contains', { tags: 'vip' }, ['p1', 'p5']],
  ['$all', { tags: { $all: ['vip', 'fr'] } }, ['p1']],
  ['$size', { tags: { $size: 0 } }, ['p3']],
  ['$elemMatch', { visits: { $elemMatch: { covers: { $gte: 4 } } } }, ['p1', 'p4']],
  ['$regex with $options', { name: { $regex: '^D', $options: 'i' } }, ['p4']],
  ['$regex on a dotted path', { 'address.zip': { $regex: '^75' } }, ['p1', 'p3']],
  ['RegExp value', { name: /^e/i }, ['p5']],
  ['$not', { age: { $not: { $gt: 30 } } }, ['p2', 'p5']],
  ['$and', { $and: [{ city: 'Paris' }, { age: 36 }] }, ['p1', 'p3']],
  ['$or', { $or: [{ age: { $lt: 20 } }, { city: 'Nice' }] }, ['p4', 'p5']],
  ['$nor', { $nor: [{ city: 'Paris' }, { city: 'Lyon' }] }, ['p4']],
  ['$or next to a field', { city: 'Lyon', $or: [{ age: 25 }, { tags: 'x' }] }, ['p2']],
  ['_id $in', { _id: { $in: ['p2', 'p4', 'nope'] } }, ['p2', 'p4']],
  ['nothing', { city: 'Rome' }, []],
];

export function queryContract(it: Register): void {
  it('insertOne then findOne by _id; a missing _id gives null', async (store) => {
    const c = store.collection('things');
    await c.insertOne({ _id: 't1', n: 1, nested: { a: [1, { b: 2 }] } });
    assert.equal(await c.findOne({ _id: 't1' }), { _id: 't1', n: 1, nested: { a: [1, { b: 2 }] } });
    assert.is(await c.findOne({ _id: 'nope' }), null);
    assert.equal(await c.find({ _id: 't1' }), [{ _id: 't1', n: 1, nested: { a: [1, { b: 2 }] } }]);
  });

  it('filters: comparison, set, existence, array, regex and logical operators, dotted paths', async (store) => {
    const c = await seeded(store);
    for (const [what, filter, expected] of filterCases) {
      assert.equal(await ids(c.find(filter)), expected, what);
      assert.is(await c.count(filter), expected.length, `count: ${what}`);
      const one = await c.findOne(filter);
      if (expected.length === 0) assert.is(one, null, `findOne: ${what}`);
      else assert.ok(one && expected.includes(one._id), `findOne: ${what}`);
    }
  });

  it('sort on two keys, then skip and limit', async (store) => {
    const c = await seeded(store);
    const byCityThenName = await c.find({}, { sort: { city: 1, name: -1 } });
    assert.equal(
      byCityThenName.map((p) => p._id),
      ['p5', 'p2', 'p4', 'p3', 'p1'],
    );
    const byAgeThenName = await c.find({}, { sort: { age: -1, name: 1 } });
    assert.equal(
      byAgeThenName.map((p) => p._id),
      ['p4', 'p1', 'p3', 'p2', 'p5'],
    );
    const page = await c.find({}, { sort: { age: -1, name: 1 }, skip: 1, limit: 2 });
    assert.equal(
      page.map((p) => p._id),
      ['p1', 'p3'],
    );
    assert.equal(
      (await c.find({ city: 'Paris' }, { sort: { name: -1 }, limit: 1 })).map((p) => p._id),
      ['p3'],
    );
    assert.is((await c.find({}, { limit: 0 })).length, 5, 'limit 0 means no limit');
    assert.is((await c.find({}, { skip: 10 })).length, 0);
    assert.is((await c.find({}, { limit: 2 })).length, 2);
    const first = await c.findOne({ city: 'Lyon' }, { sort: { age: 1 } });
    assert.is(first?._id, 'p5');
    const second = await c.findOne({ city: 'Lyon' }, { sort: { age: 1 }, skip: 1 });
    assert.is(second?._id, 'p2');
  });

  it('undefined in a filter is null, as the MongoDB driver sends it: null and missing fields match', async (store) => {
    const c = store.collection('maybe');
    await c.insertMany([
      { _id: 'null', x: null },
      { _id: 'missing' },
      { _id: 'one', x: 1 },
      { _id: 'two', x: 2 },
      { _id: 'list', x: [2, 3] },
    ]);
    const found = async (filter: Record<string, unknown>) => ids(c.find(filter));
    assert.equal(await found({ x: undefined }), ['missing', 'null'], 'equality');
    assert.equal(await found({ x: { $in: [undefined] } }), ['missing', 'null'], '$in');
    assert.equal(
      await found({ x: { $in: [undefined, 3] } }),
      ['list', 'missing', 'null'],
      '$in with an array field',
    );
    assert.equal(await found({ x: { $nin: [undefined, 1] } }), ['list', 'two'], '$nin');
    assert.is(await c.count({ $or: [{ x: { $in: [undefined] } }, { x: 1 }] }), 3, 'count, inside $or');
  });

  it("strings order as MongoDB's UTF-8 bytes (code points), not JavaScript's UTF-16 code units", async (store) => {
    // An astral character (a surrogate pair in UTF-16) sorts above U+E000–U+FFFF in MongoDB, below
    // them with JavaScript's <: sort, range filters, $max/$min and $push's $sort must all agree.
    const c = store.collection('names');
    const names = { a: 'a', fw: '\uFF21', rep: '\uFFFD', pu: '\uE000', emoji: '\u{1F600}', han: '\u{20000}' };
    await c.insertMany(Object.entries(names).map(([_id, name]) => ({ _id, name })));
    const order = ['a', 'pu', 'fw', 'rep', 'emoji', 'han'];
    assert.equal(
      (await c.find({}, { sort: { name: 1 } })).map((d) => d._id),
      order,
      'ascending',
    );
    assert.equal(
      (await c.find({}, { sort: { name: -1 } })).map((d) => d._id),
      [...order].reverse(),
      'descending',
    );
    assert.equal(
      (await c.find({ name: { $gt: names.rep } }, { sort: { name: 1 } })).map((d) => d._id),
      ['emoji', 'han'],
      '$gt',
    );
    assert.equal(
      (await c.find({ name: { $lt: names.emoji } }, { sort: { name: 1 } })).map((d) => d._id),
      ['a', 'pu', 'fw', 'rep'],
      '$lt',
    );
    assert.equal(
      (await c.find({ _id: { $gte: 'a' }, name: { $lte: names.fw } }, { sort: { _id: 1 } })).map(
        (d) => d._id,
      ),
      ['a', 'fw', 'pu'],
      '$lte',
    );
    await c.insertOne({ _id: 'm', top: names.rep, low: names.emoji, list: [] });
    await c.updateOne(
      { _id: 'm' },
      {
        $max: { top: names.emoji },
        $min: { low: names.rep },
        $push: { list: { $each: [names.emoji, names.fw, 'a'], $sort: 1 } },
      },
    );
    assert.equal(await c.findOne({ _id: 'm' }), {
      _id: 'm',
      top: names.emoji,
      low: names.rep,
      list: ['a', names.fw, names.emoji],
    });
  });

  it('inclusion projection keeps _id and the named (dotted) fields', async (store) => {
    const c = await seeded(store);
    const [p1] = await c.find({ _id: 'p1' }, { projection: { name: 1, 'address.city': 1 } });
    assert.equal(p1, { _id: 'p1', name: 'Ada', address: { city: 'Paris' } });
    assert.is(Object.keys(p1!)[0], '_id');
    const p4 = await c.findOne({ _id: 'p4' }, { projection: { tags: 1, age: 1 } });
    assert.equal(p4, { _id: 'p4', age: 52 });
    const sorted = await c.find({ city: 'Lyon' }, { sort: { age: -1 }, projection: { name: 1 } });
    assert.equal(sorted, [
      { _id: 'p2', name: 'Bob' },
      { _id: 'p5', name: 'Eve' },
    ]);
  });

  it('count with and without a filter', async (store) => {
    const c = await seeded(store);
    assert.is(await c.count(), 5);
    assert.is(await c.count({}), 5);
    assert.is(await c.count({ city: 'Lyon' }), 2);
    assert.is(await store.collection('empty').count(), 0);
  });

  it('documents returned are copies, and so are documents and values handed in', async (store) => {
    const c = store.collection('copies');
    const doc = { _id: 'c1', list: [1, 2], inner: { v: 1 } };
    await c.insertOne(doc);
    doc.list.push(3);
    doc.inner.v = 99;
    const read = (await c.findOne({ _id: 'c1' }))!;
    assert.equal(read, { _id: 'c1', list: [1, 2], inner: { v: 1 } });
    (read.list as number[]).push(4);
    (read.inner as { v: number }).v = 42;
    const [found] = await c.find({});
    (found!.list as number[]).length = 0;
    const value = { deep: { k: 'v' } };
    const item = { x: 1 };
    await c.updateOne({ _id: 'c1' }, { $set: { value }, $push: { list: item } });
    value.deep.k = 'changed';
    item.x = 2;
    assert.equal(await c.findOne({ _id: 'c1' }), {
      _id: 'c1',
      list: [1, 2, { x: 1 }],
      inner: { v: 1 },
      value: { deep: { k: 'v' } },
    });
    const many = [{ _id: 'm1', a: { b: 1 } }];
    await c.insertMany(many);
    many[0]!.a.b = 2;
    assert.equal(await c.findOne({ _id: 'm1' }), { _id: 'm1', a: { b: 1 } });
  });
}
