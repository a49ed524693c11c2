// Contract: writing — every update operator, upserts, updateMany, replaceOne, deletes.
import * as assert from 'uvu/assert';
import { cutOffFilter } from '../../commands/oauth/cut-off';
import { DuplicateKeyError, InvalidQueryError } from '../../src/ports/document-store';
import { positionToString } from '../../src/ports/event-store';
import { type Register, rejects, seeded } from './document-store.helpers';

export function writeContract(it: Register): void {
  it('$set on top-level and dotted paths; setting the same value modifies nothing', async (store) => {
    const c = await seeded(store);
    const r = await c.updateOne(
      { _id: 'p2' },
      { $set: { city: 'Lille', 'prefs.lang': 'fr', 'address.zip': '59000' } },
    );
    assert.equal(r, { matched: 1, modified: 1, upsertedId: null });
    const p2 = (await c.findOne({ _id: 'p2' }))!;
    assert.is(p2.city, 'Lille');
    assert.equal(p2.prefs, { lang: 'fr' });
    assert.equal(p2.address, { city: 'Lyon', zip: '59000' });
    assert.equal(await c.updateOne({ _id: 'p2' }, { $set: { city: 'Lille' } }), {
      matched: 1,
      modified: 0,
      upsertedId: null,
    });
    assert.equal(await c.updateOne({ _id: 'nope' }, { $set: { city: 'X' } }), {
      matched: 0,
      modified: 0,
      upsertedId: null,
    });
  });

  it('$unset removes fields; unsetting a missing field modifies nothing', async (store) => {
    const c = await seeded(store);
    assert.is((await c.updateOne({ _id: 'p5' }, { $unset: { email: '', 'address.zip': '' } })).modified, 1);
    const p5 = (await c.findOne({ _id: 'p5' }))!;
    assert.not.ok('email' in p5);
    assert.equal(p5.address, { city: 'Lyon' });
    assert.is((await c.updateOne({ _id: 'p5' }, { $unset: { email: '' } })).modified, 0);
  });

  it('$inc adds to numbers and creates missing fields, dotted too', async (store) => {
    const c = await seeded(store);
    await c.updateOne({ _id: 'p2' }, { $inc: { age: 1, 'stats.visits': 2 } });
    await c.updateOne({ _id: 'p2' }, { $inc: { age: -3, 'stats.visits': 0.5 } });
    const p2 = (await c.findOne({ _id: 'p2' }))!;
    assert.is(p2.age, 23);
    assert.equal(p2.stats, { visits: 2.5 });
  });

  it('$push appends (one value, or $each with $slice/$position) and creates the array', async (store) => {
    const c = await seeded(store);
    await c.updateOne({ _id: 'p2' }, { $push: { tags: 'new' } });
    assert.equal((await c.findOne({ _id: 'p2' }))!.tags, ['fr', 'new']);
    await c.updateOne({ _id: 'p2' }, { $push: { tags: { $each: ['a', 'b', 'c'], $slice: -3 } } });
    assert.equal((await c.findOne({ _id: 'p2' }))!.tags, ['a', 'b', 'c']);
    await c.updateOne({ _id: 'p2' }, { $push: { tags: { $each: ['first'], $position: 0 } } });
    assert.equal((await c.findOne({ _id: 'p2' }))!.tags, ['first', 'a', 'b', 'c']);
    await c.updateOne({ _id: 'p4' }, { $push: { tags: 'created', 'log.events': { kind: 'x' } } });
    const p4 = (await c.findOne({ _id: 'p4' }))!;
    assert.equal(p4.tags, ['created']);
    assert.equal(p4.log, { events: [{ kind: 'x' }] });
  });

  it('$pull removes by value, by condition and by sub-document query', async (store) => {
    const c = await seeded(store);
    await c.updateOne({ _id: 'p1' }, { $pull: { tags: 'fr' } });
    assert.equal((await c.findOne({ _id: 'p1' }))!.tags, ['vip']);
    await c.updateOne({ _id: 'p1' }, { $pull: { visits: { covers: { $gte: 4 } } } });
    assert.equal((await c.findOne({ _id: 'p1' }))!.visits, [{ at: '2026-01-01', covers: 2 }]);
    await c.updateOne({ _id: 'p1' }, { $push: { scores: { $each: [1, 5, 9, 5] } } });
    await c.updateOne({ _id: 'p1' }, { $pull: { scores: { $in: [5, 7] } } });
    assert.equal((await c.findOne({ _id: 'p1' }))!.scores, [1, 9]);
    assert.is((await c.updateOne({ _id: 'p1' }, { $pull: { tags: 'absent', missing: 1 } })).modified, 0);
  });

  it('$max and $min replace only when further out, and set missing fields', async (store) => {
    const c = await seeded(store);
    assert.is((await c.updateOne({ _id: 'p1' }, { $max: { age: 40 } })).modified, 1);
    assert.is((await c.updateOne({ _id: 'p1' }, { $max: { age: 30 } })).modified, 0);
    assert.is((await c.findOne({ _id: 'p1' }))!.age, 40);
    await c.updateOne({ _id: 'p1' }, { $min: { age: 18, 'first.seen': '2026-05-01' } });
    await c.updateOne({ _id: 'p1' }, { $min: { 'first.seen': '2026-04-01' } });
    await c.updateOne({ _id: 'p1' }, { $min: { 'first.seen': '2026-06-01' } });
    const p1 = (await c.findOne({ _id: 'p1' }))!;
    assert.is(p1.age, 18);
    assert.equal(p1.first, { seen: '2026-04-01' });
  });

  it('upsert inserts from the filter equalities and $setOnInsert, then updates', async (store) => {
    const c = store.collection('guests');
    const first = await c.updateOne(
      { _id: 'g1', kind: 'guest' },
      { $set: { name: 'Zed' }, $setOnInsert: { created: 1 }, $inc: { visits: 1 } },
      { upsert: true },
    );
    assert.equal(first, { matched: 0, modified: 0, upsertedId: 'g1' });
    assert.equal(await c.findOne({ _id: 'g1' }), {
      _id: 'g1',
      kind: 'guest',
      name: 'Zed',
      created: 1,
      visits: 1,
    });
    const again = await c.updateOne(
      { _id: 'g1', kind: 'guest' },
      { $set: { name: 'Zed' }, $setOnInsert: { created: 2 }, $inc: { visits: 1 } },
      { upsert: true },
    );
    assert.equal(again, { matched: 1, modified: 1, upsertedId: null });
    assert.equal(await c.findOne({ _id: 'g1' }), {
      _id: 'g1',
      kind: 'guest',
      name: 'Zed',
      created: 1,
      visits: 2,
    });
    const onlyOnInsert = await c.updateOne({ _id: 'g1' }, { $setOnInsert: { created: 3 } }, { upsert: true });
    assert.equal(onlyOnInsert, { matched: 1, modified: 0, upsertedId: null });
  });

  it('upsert without an _id in the filter creates a string _id (or the one $setOnInsert names)', async (store) => {
    const c = store.collection('guests');
    const r = await c.updateOne(
      { email: 'x@y.test', 'profile.tier': 'gold' },
      { $set: { n: 1 } },
      { upsert: true },
    );
    assert.type(r.upsertedId, 'string');
    assert.ok(r.upsertedId!.length > 0);
    assert.equal(await c.findOne({ _id: r.upsertedId! }), {
      _id: r.upsertedId!,
      email: 'x@y.test',
      profile: { tier: 'gold' },
      n: 1,
    });
    const chosen = await c.updateOne(
      { email: 'z@y.test' },
      { $setOnInsert: { _id: 'chosen' } },
      { upsert: true },
    );
    assert.is(chosen.upsertedId, 'chosen');
    assert.equal(await c.findOne({ email: 'z@y.test' }), { _id: 'chosen', email: 'z@y.test' });
  });

  it('an upsert whose guard excludes an existing document fails on _id: the idempotent-replay pattern', async (store) => {
    const c = store.collection('replay');
    const apply = (pos: string) =>
      c.updateOne(
        { _id: 'r1', $or: [{ _pos: { $lt: pos } }, { _pos: { $exists: false } }] },
        { $set: { _pos: pos }, $inc: { n: 1 } },
        { upsert: true },
      );
    assert.is((await apply('00000000000000000005')).upsertedId, 'r1');
    assert.is((await apply('00000000000000000007')).modified, 1);
    const err = await rejects(apply('00000000000000000006'), DuplicateKeyError);
    assert.ok(err.index.includes('_id'), err.index);
    assert.equal(await c.findOne({ _id: 'r1' }), { _id: 'r1', _pos: '00000000000000000007', n: 2 });
  });

  it('the replay guard matches a missing or earlier _pos only, and updateOne agrees with count', async (store) => {
    const c = store.collection('guard');
    const pos = '00000000000000000005';
    const stored: [string, unknown, boolean][] = [
      ['missing', undefined, true],
      ['earlier', '00000000000000000004', true],
      ['equal', pos, false],
      ['later', '00000000000000000006', false],
      ['null', null, false],
      ['number', 4, false],
      ['array-earlier', ['00000000000000000001'], true],
      ['array-later', ['00000000000000000009'], false],
      ['object', { at: '00000000000000000001' }, false],
      ['date', new Date(0), false],
    ];
    await c.insertMany(stored.map(([_id, p]) => (p === undefined ? { _id } : { _id, _pos: p })));
    for (const [_id, , expected] of stored) {
      const guard = { _id, $or: [{ _pos: { $lt: pos } }, { _pos: { $exists: false } }] };
      assert.is(await c.count(guard), expected ? 1 : 0, `count, _pos ${_id}`);
      const r = await c.updateOne(guard, { $inc: { n: 1 } });
      assert.equal(r, { matched: expected ? 1 : 0, modified: expected ? 1 : 0, upsertedId: null }, _id);
    }
    const absent = { _id: 'absent', $or: [{ _pos: { $lt: pos } }, { _pos: { $exists: false } }] };
    assert.equal(await c.updateOne(absent, { $inc: { n: 1 } }), {
      matched: 0,
      modified: 0,
      upsertedId: null,
    });
  });

  it('updateOne changes one matching document; updateMany changes all', async (store) => {
    const c = await seeded(store);
    const one = await c.updateOne({ city: 'Lyon' }, { $set: { flagged: true } });
    assert.equal(one, { matched: 1, modified: 1, upsertedId: null });
    assert.is(await c.count({ flagged: true }), 1);
    const many = await c.updateMany({ city: 'Lyon' }, { $set: { flagged: true }, $inc: { age: 1 } });
    assert.equal(many, { matched: 2, modified: 2, upsertedId: null });
    assert.equal(
      (await c.find({ city: 'Lyon' }, { sort: { _id: 1 } })).map((p) => p.age),
      [26, 20],
    );
    assert.equal(await c.updateMany({ city: 'Rome' }, { $set: { x: 1 } }), {
      matched: 0,
      modified: 0,
      upsertedId: null,
    });
  });

  // api_keys' marking of an application's cut-off (projections/api-keys.ts) is one updateMany by a
  // dotted path, a range on fixed-width position text and a field null or missing: every adapter must
  // pick the same tokens, or a store would let a cut-off token through (or refuse a later one).
  it("updateMany with an application's cut-off filter marks the tokens issued before it only", async (store) => {
    const c = store.collection('keys');
    const key = (id: string, position: bigint, more: Record<string, unknown> = {}) => ({
      _id: id,
      type: 'OAUTH',
      application: { id: 'app_a', name: 'A' },
      created_position: positionToString(position),
      ...more,
    });
    await c.insertMany([
      key('k9', 9n, { cut_off_at: null }),
      key('k10', 10n),
      key('k99', 99n, { cut_off_at: null }),
      key('k100', 100n, { cut_off_at: null }),
      key('k_earlier', 5n, { cut_off_at: 'earlier' }),
      key('k_other', 7n, { application: { id: 'app_b', name: 'B' }, cut_off_at: null }),
      key('k_api', 7n, { type: 'API_KEY', application: null, cut_off_at: null }),
      { _id: 'k_v2', type: 'OAUTH', application: { id: 'app_a', name: 'A' }, cut_off_at: null },
    ]);
    const r = await c.updateMany(cutOffFilter('app_a', 100n), { $set: { cut_off_at: 'now' } });
    assert.equal(r, { matched: 3, modified: 3, upsertedId: null });
    const marked = await c.find({ cut_off_at: { $ne: null } }, { sort: { _id: 1 } });
    assert.equal(
      marked.map((k) => [k._id, k.cut_off_at]),
      [
        ['k10', 'now'],
        ['k9', 'now'],
        ['k99', 'now'],
        ['k_earlier', 'earlier'],
      ],
    );
  });

  it('replaceOne swaps the whole document, upserts, and keeps _id immutable', async (store) => {
    const c = await seeded(store);
    assert.equal(await c.replaceOne({ name: 'Bob' }, { _id: 'p2', name: 'Bobby' }), {
      matched: 1,
      modified: 1,
      upsertedId: null,
    });
    assert.equal(await c.findOne({ _id: 'p2' }), { _id: 'p2', name: 'Bobby' });
    assert.equal(await c.replaceOne({ _id: 'p2' }, { _id: 'p2', name: 'Bobby' }), {
      matched: 1,
      modified: 0,
      upsertedId: null,
    });
    assert.equal(await c.replaceOne({ _id: 'p9' }, { _id: 'p9', name: 'New' }, { upsert: true }), {
      matched: 0,
      modified: 0,
      upsertedId: 'p9',
    });
    assert.equal(await c.replaceOne({ _id: 'p8' }, { _id: 'p8', name: 'Nobody' }), {
      matched: 0,
      modified: 0,
      upsertedId: null,
    });
    await rejects(c.replaceOne({ _id: 'p3' }, { _id: 'other', name: 'Cleo' }), InvalidQueryError);
    assert.is((await c.findOne({ _id: 'p3' }))!.name, 'Cleo');
  });

  it('deleteOne removes one match, deleteMany all, and both say how many', async (store) => {
    const c = await seeded(store);
    assert.is(await c.deleteOne({ city: 'Lyon' }), 1);
    assert.is(await c.count({ city: 'Lyon' }), 1);
    assert.is(await c.deleteOne({ city: 'Rome' }), 0);
    assert.is(await c.deleteMany({ age: { $gte: 30 } }), 3);
    assert.is(await c.count(), 1);
    assert.is(await c.deleteMany({}), 1);
    assert.is(await c.count(), 0);
    await c.insertOne({ _id: 'p1', back: true });
    assert.equal(await c.findOne({ _id: 'p1' }), { _id: 'p1', back: true });
  });

  it('a duplicate _id is a DuplicateKeyError on index _id_', async (store) => {
    const c = await seeded(store);
    const err = await rejects(c.insertOne({ _id: 'p1', name: 'again' }), DuplicateKeyError);
    assert.is(err.index, '_id_');
    assert.is(err.collection, 'people');
    assert.is((await c.findOne({ _id: 'p1' }))!.name, 'Ada');
    await rejects(c.insertMany([{ _id: 'p6' }, { _id: 'p6' }]), DuplicateKeyError);
  });
}
