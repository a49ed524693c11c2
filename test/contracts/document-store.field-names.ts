// Contract: field names that are also Object.prototype's (`__proto__`, `constructor`, `toString`)
// and `prototype`. Partner JSON (reservation metadata, custom field values) reaches read models, and
// JSON.parse makes `__proto__` an own property: MongoDB stores it as an ordinary field, so both
// adapters store and return all of them as data, at any depth, and no write reaches a prototype.
// Queries (filters, sort, projection, index keys) cannot name `__proto__`: mingo, the embedded
// adapter's reference, refuses such paths, so both adapters refuse them with an InvalidQueryError.
import * as assert from 'uvu/assert';
import { type Doc, InvalidQueryError } from '../../src/ports/document-store';
import { type Register, rejects } from './document-store.helpers';

// Built with JSON.parse: an object literal's `__proto__:` would set the prototype instead.
const metadata = () =>
  JSON.parse(
    '{"__proto__": {"x": 1, "constructor": {"prototype": {"y": 2}}}, "constructor": {"prototype": {"polluted": 1}},' +
      ' "prototype": [{"__proto__": {"deep": true}}], "toString": "text", "hasOwnProperty": 5}',
  ) as Record<string, unknown>;

const reservation = (id: string): Doc => ({ _id: id, status: 'CONFIRMED', metadata: metadata() });

// Field order aside (MongoDB 5+ adds the fields of one update in lexicographic order), as pairs:
// comparing the objects themselves would read `__proto__` through the prototype chain.
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  return Object.keys(o)
    .sort()
    .map((k) => [k, canonical(o[k])]);
}

/** The same fields and values as `expected`, every one an own property, every object an ordinary one. */
function assertData(found: unknown, expected: unknown): void {
  assert.equal(canonical(found), canonical(expected));
  const visit = (v: unknown) => {
    if (typeof v !== 'object' || v === null) return;
    if (!Array.isArray(v)) assert.is(Object.getPrototypeOf(v), Object.prototype);
    for (const k of Object.keys(v)) visit((v as Record<string, unknown>)[k]);
  };
  visit(found);
}

function assertNoPollution(): void {
  const probe = {} as Record<string, unknown>;
  for (const k of ['polluted', 'x', 'y', 'deep', 'n', 'list', 'z']) {
    assert.is(probe[k], undefined, `Object.prototype.${k} was polluted`);
    assert.not.ok(Object.hasOwn(Object.prototype, k), `Object.prototype.${k} was polluted`);
  }
  assert.is(Object.getPrototypeOf(probe), Object.prototype);
  assert.is(typeof probe.toString, 'function');
}

export function fieldNameContract(it: Register): void {
  it('__proto__, constructor and prototype fields are stored and read back as data', async (store) => {
    const c = store.collection('reservations');
    await c.insertOne(reservation('r1'));
    await c.insertMany([reservation('r2'), reservation('r3')]);
    const top = JSON.parse(
      '{"_id": "r4", "__proto__": {"a": 1}, "constructor": "c", "prototype": null}',
    ) as Doc;
    await c.insertOne(top);
    for (const id of ['r1', 'r2', 'r3']) {
      assertData(await c.findOne({ _id: id }), reservation(id));
      assertData(await c.findOne({ _id: id, status: 'CONFIRMED' }), reservation(id));
    }
    assertData(await c.findOne({ _id: 'r4' }), top);
    assertData(await c.find({ status: 'CONFIRMED' }, { sort: { _id: -1 } }), [
      reservation('r3'),
      reservation('r2'),
      reservation('r1'),
    ]);
    assertData(await c.find({ _id: 'r1' }, { projection: { metadata: 1 } }), [
      { _id: 'r1', metadata: metadata() },
    ]);
    assertData(await c.find({ _id: 'r1' }, { projection: { 'metadata.constructor': 1 } }), [
      { _id: 'r1', metadata: { constructor: metadata().constructor } },
    ]);
    const replaced = { ...reservation('r2'), status: 'SEATED' };
    assert.is((await c.replaceOne({ _id: 'r2' }, replaced)).modified, 1);
    assertData(await c.findOne({ _id: 'r2' }), replaced);
    assert.is((await c.replaceOne({ _id: 'r2' }, { ...reservation('r2'), status: 'SEATED' })).modified, 0);
    assertNoPollution();
  });

  it('$set, $inc, $push, $max and $setOnInsert write such fields as data, dotted paths too', async (store) => {
    const c = store.collection('reservations');
    await c.insertOne({ _id: 'r1', status: 'CONFIRMED' });
    await c.updateOne(
      { _id: 'r1' },
      {
        $set: {
          metadata: metadata(),
          '__proto__.polluted': 1,
          'constructor.prototype.polluted': 1,
          'a.__proto__.x': 1,
          'prototype.y': 2,
        },
        $inc: { 'counts.__proto__.n': 1, toString: 2 },
        $push: { '__proto__x.list': 1, 'b.__proto__': { z: 1 } },
        $max: { 'c.constructor': 3 },
      },
    );
    const expected = JSON.parse(
      '{"_id": "r1", "status": "CONFIRMED", "__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}},' +
        ' "a": {"__proto__": {"x": 1}}, "prototype": {"y": 2}, "counts": {"__proto__": {"n": 1}}, "toString": 2,' +
        ' "__proto__x": {"list": [1]}, "b": {"__proto__": [{"z": 1}]}, "c": {"constructor": 3}}',
    );
    expected.metadata = metadata();
    assertData(await c.findOne({ _id: 'r1' }), expected);
    assertNoPollution();

    // Writing the same values again changes nothing; a different nested value is a change.
    const again = await c.updateOne(
      { _id: 'r1' },
      { $set: { metadata: metadata(), '__proto__.polluted': 1, 'a.__proto__': { x: 1 } } },
    );
    assert.is(again.modified, 0);
    assert.is(
      (await c.updateOne({ _id: 'r1' }, { $set: { a: JSON.parse('{"__proto__": {"x": 2}}') } })).modified,
      1,
    );
    assert.is(
      (await c.updateOne({ _id: 'r1' }, { $set: { a: JSON.parse('{"__proto__": {}}') } })).modified,
      1,
    );
    assertData((await c.findOne({ _id: 'r1' }))!.a, JSON.parse('{"__proto__": {}}'));
    // A sub-document holding `__proto__` differs from one holding another field instead.
    await c.updateOne({ _id: 'r1' }, { $set: { a: JSON.parse('{"__proto__": {}, "p": 1}') } });
    assert.is((await c.updateOne({ _id: 'r1' }, { $set: { a: { p: 1, q: {} } } })).modified, 1);
    assertData((await c.findOne({ _id: 'r1' }))!.a, { p: 1, q: {} });

    await c.updateOne(
      { _id: 'r2' },
      { $setOnInsert: JSON.parse('{"__proto__": {"polluted": 1}, "metadata.constructor": 1}') },
      { upsert: true },
    );
    assertData(
      await c.findOne({ _id: 'r2' }),
      JSON.parse('{"_id": "r2", "__proto__": {"polluted": 1}, "metadata": {"constructor": 1}}'),
    );
    assertNoPollution();
  });

  it('$unset removes such fields only where the document holds them', async (store) => {
    const c = store.collection('reservations');
    await c.insertOne(reservation('r1'));
    await c.insertOne({ _id: 'r2', status: 'CONFIRMED' });
    const r = await c.updateOne(
      { _id: 'r1' },
      { $unset: { 'metadata.__proto__': '', 'metadata.constructor.prototype': '', 'metadata.toString': '' } },
    );
    assert.is(r.modified, 1);
    assertData(
      await c.findOne({ _id: 'r1' }),
      JSON.parse(
        '{"_id": "r1", "status": "CONFIRMED", "metadata": {"constructor": {}, "prototype": [{"__proto__": {"deep": true}}], "hasOwnProperty": 5}}',
      ),
    );
    // Absent fields, even those every object inherits, are nothing to remove.
    const none = await c.updateOne(
      { _id: 'r2' },
      { $unset: { __proto__x: '', constructor: '', toString: '', 'metadata.constructor': '' } },
    );
    assert.is(none.modified, 0);
    assert.is((await c.updateOne({ _id: 'r2' }, { $unset: JSON.parse('{"__proto__": ""}') })).modified, 0);
    assertData(await c.findOne({ _id: 'r2' }), { _id: 'r2', status: 'CONFIRMED' });
    assertNoPollution();
  });

  it('a refused update that wrote such fields first leaves the document as it was', async (store) => {
    const c = store.collection('reservations');
    await c.insertOne({ _id: 'r1', status: 'CONFIRMED', n: 'not a number' });
    for (const set of [
      { constructor: { a: 1 } },
      { 'constructor.a': 1 },
      JSON.parse('{"__proto__": {"a": 1}}'),
      { '__proto__.a': 1 },
      { toString: 1, 'hasOwnProperty.x': 1 },
    ]) {
      await rejects(c.updateOne({ _id: 'r1' }, { $set: set, $inc: { n: 1 } }), InvalidQueryError);
      assertData(await c.findOne({ _id: 'r1' }), { _id: 'r1', status: 'CONFIRMED', n: 'not a number' });
    }
    assertNoPollution();
  });

  // Partner JSON reaches read models as nested field names the partner chose: a reservation's
  // metadata and custom_fields (any keys, any depth, written whole by replaceOne), a webhook
  // endpoint's headers (token characters: `$` and `.` are allowed) written with $set. MongoDB 5+
  // stores $-prefixed, dotted and empty names below the top level on inserts, replacements and $set
  // values; a refusal there would be permanent, and the scaled-out projector would stop on it. Objects
  // whose $-keys are only $ref and $id (a JSON Schema's) are what MongoDB's driver decodes as DBRefs.
  it('partner keys below the top level ($-prefixed, dotted, empty) are data on every write', async (store) => {
    const partner = () =>
      JSON.parse(
        '{"$where": "w", "$inc": {"$set": 1}, "a.b": {"c.d": 2, "": 3}, "": {"$": "dollar", ".": "dot"},' +
          ' "list": [{"$y": 5, "p.q": 6}, ["$z"], {"$id": 7, "$ref": "x", "k": 1}], "x.": null, ".y": true,' +
          ' "schema": {"$ref": "#/defs/guest", "$id": "https://example.test/s"},' +
          ' "ordered": {"title": "t", "$id": 1, "$ref": "common.json"}}',
      ) as Record<string, unknown>;
    const doc = (id: string, status = 'CONFIRMED'): Doc => ({
      _id: id,
      status,
      metadata: partner(),
      custom_fields: { nested: partner() },
    });
    const c = store.collection('reservations');
    await c.insertOne(doc('r1'));
    await c.insertMany([doc('r2')]);
    assertData(await c.findOne({ _id: 'r1' }), doc('r1'));
    assertData(await c.findOne({ _id: 'r2' }), doc('r2'));
    // As written: keys in their order, a $ref with one dot whole (MongoDB's decoder moves and splits them).
    const ordered = ((await c.findOne({ _id: 'r1' }))?.metadata as Record<string, unknown> | undefined)
      ?.ordered;
    assert.is(JSON.stringify(ordered), '{"title":"t","$id":1,"$ref":"common.json"}');
    assertData(await c.find({ _id: 'r1' }, { projection: { metadata: 1 } }), [
      { _id: 'r1', metadata: partner() },
    ]);
    await c.replaceOne({ _id: 'r1' }, doc('r1', 'SEATED'));
    assertData(await c.findOne({ _id: 'r1' }), doc('r1', 'SEATED'));
    await c.replaceOne({ _id: 'r3' }, doc('r3'), { upsert: true });
    assertData(await c.findOne({ _id: 'r3' }), doc('r3'));
    await c.insertOne({ _id: 'e1', headers: { 'X-A': '1' } });
    await c.updateOne(
      { _id: 'e1' },
      { $set: { headers: { $Trace: 't', 'X-Req.Id': 'r' }, metadata: partner() } },
    );
    assertData(await c.findOne({ _id: 'e1' }), {
      _id: 'e1',
      headers: { $Trace: 't', 'X-Req.Id': 'r' },
      metadata: partner(),
    });
    await c.updateOne({ _id: 'e2' }, { $set: { metadata: partner() } }, { upsert: true });
    assertData(await c.findOne({ _id: 'e2' }), { _id: 'e2', metadata: partner() });
    assert.equal(
      (await c.find({ status: 'CONFIRMED' }, { sort: { _id: 1 } })).map((d) => d._id),
      ['r2', 'r3'],
    );
  });

  it('filters see such fields only where documents hold them', async (store) => {
    const c = store.collection('reservations');
    await c.createIndex({ keys: { constructor: 1 } as Record<string, 1> });
    await c.createIndex({ keys: { 'metadata.toString': 1 } });
    await c.insertOne(reservation('r1'));
    await c.insertOne({ _id: 'r2', status: 'CONFIRMED', constructor: 'c', toString: 't' });
    await c.insertOne({ _id: 'r3', status: 'SEATED' });
    const ids = async (filter: Record<string, unknown>) =>
      (await c.find(filter, { sort: { _id: 1 } })).map((d) => d._id);
    assert.equal(await ids({ constructor: { $exists: true } }), ['r2']);
    assert.equal(await ids({ constructor: null }), ['r1', 'r3']);
    assert.equal(await ids({ constructor: 'c' }), ['r2']);
    assert.equal(await ids({ toString: { $exists: false } }), ['r1', 'r3']);
    assert.equal(await ids({ hasOwnProperty: null, status: 'CONFIRMED' }), ['r1', 'r2']);
    assert.equal(await ids({ 'metadata.toString': 'text' }), ['r1']);
    assert.equal(await ids({ 'metadata.toString': null }), ['r2', 'r3']);
    assert.equal(await ids({ 'metadata.constructor.prototype.polluted': 1 }), ['r1']);
    assert.equal(await ids({ 'metadata.hasOwnProperty': { $gt: 4 } }), ['r1']);
    assert.equal(await ids({ 'status.constructor': { $exists: true } }), []);
    assert.is(await c.count({ prototype: { $exists: true } }), 0);
    assert.is(await c.count({ $or: [{ 'metadata.prototype': { $size: 1 } }, { constructor: 'c' }] }), 2);
  });

  it('filters, sorts, projections and index keys naming __proto__ are InvalidQueryErrors', async (store) => {
    const c = store.collection('reservations');
    await c.insertOne(reservation('r1'));
    for (const filter of [
      { '__proto__.x': 1 },
      { 'metadata.__proto__.x': 1 },
      { 'metadata.__proto__': { $exists: true } },
      JSON.parse('{"__proto__": 1}'),
      { $or: [{ status: 'X' }, { 'metadata.__proto__': 1 }] },
    ]) {
      await rejects(c.find(filter), InvalidQueryError);
      await rejects(c.findOne({ _id: 'r1', ...filter }), InvalidQueryError);
      await rejects(c.count(filter), InvalidQueryError);
      await rejects(c.updateMany(filter, { $set: { hit: true } }), InvalidQueryError);
      await rejects(c.deleteMany(filter), InvalidQueryError);
    }
    await rejects(
      c.updateOne({ _id: 'r1' }, { $pull: { 'metadata.prototype': { '__proto__.deep': true } } }),
      InvalidQueryError,
    );
    await rejects(c.find({}, { sort: { 'metadata.__proto__.x': 1 } }), InvalidQueryError);
    await rejects(c.find({}, { projection: { 'metadata.__proto__': 1 } }), InvalidQueryError);
    await rejects(c.createIndex({ keys: { 'metadata.__proto__.x': 1 } }), InvalidQueryError);
    assertData(await c.findOne({ _id: 'r1' }), reservation('r1'));
    assert.is(await c.count({}), 1);
    assertNoPollution();
  });
}
