import fc from 'fast-check';
import { Query } from 'mingo';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { plainSort } from '../../src/adapters/document-store/embedded-collection';

const sortWithMingo = (docs: Record<string, unknown>[], sort: Record<string, 1 | -1>) =>
  new Query({}, {}).find<Record<string, unknown>>(docs).sort(sort).all();

// MongoDB compares strings as UTF-8 bytes, i.e. by code point; mingo (JavaScript's <) by UTF-16 code
// unit. Each string is handed to mingo as its code points in fixed-width hex, whose order is theirs.
const codePoints = (s: string) => [...s].map((c) => c.codePointAt(0)!.toString(16).padStart(6, '0')).join('');
const sortAsMongo = (docs: Record<string, unknown>[], sort: Record<string, 1 | -1>) => {
  const keyed = docs.map((d) => ({
    ...Object.fromEntries(Object.entries(d).map(([k, v]) => [k, typeof v === 'string' ? codePoints(v) : v])),
    doc: d,
  }));
  return sortWithMingo(keyed, sort).map((k) => k.doc as Record<string, unknown>);
};

test('plain comparisons give MongoDB order for string-only or number-only keys, ties in matching order', () => {
  // U+FF21 (a fullwidth A) is above every surrogate in UTF-16 and below every astral character in UTF-8.
  const value = fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.constantFrom('a', 'b', 'é', '😀', 'Z', '\uFF21', '\uFF21a'),
  );
  fc.assert(
    fc.property(
      fc.array(fc.record({ a: value, b: fc.integer({ min: -3, max: 3 }) }), { maxLength: 30 }),
      fc.constantFrom<1 | -1>(1, -1),
      fc.constantFrom<1 | -1>(1, -1),
      (rows, da, db) => {
        const docs = rows.map((r, i) => ({ _id: `d${i}`, ...r }));
        const sort = { a: da, b: db };
        assert.equal(
          plainSort(docs, sort)?.map((d) => d._id),
          sortAsMongo(docs, sort).map((d) => d._id),
        );
      },
    ),
    { numRuns: 500 },
  );
});

test('mixed types, missing fields, NaN and dotted keys are left to mingo', () => {
  assert.is(
    plainSort(
      [
        { _id: '1', a: 'x' },
        { _id: '2', a: 1 },
      ],
      { a: 1 },
    ),
    null,
  );
  assert.is(plainSort([{ _id: '1', a: 'x' }, { _id: '2' }], { a: 1 }), null);
  assert.is(plainSort([{ _id: '1', a: Number.NaN }], { a: 1 }), null);
  assert.is(plainSort([{ _id: '1', a: { b: 1 } }], { 'a.b': 1 }), null);
  assert.equal(plainSort([], { a: 1 }), []);
});

test.run();
