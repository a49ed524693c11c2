// An index level's string keys kept in MongoDB's string order (code point order) as they come and
// go: sorted with `<` and the built-in sort while no key has a unit at or above U+D800, where that
// order and UTF-16 unit order part (astral characters, lone surrogates, U+E000–U+FFFF).
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SortedKeys } from '../../src/adapters/document-store/sorted-keys';
import { compareStrings } from '../../src/adapters/document-store/values';

const test = suite("embedded store: an index level's sorted keys");

// Short strings over units that straddle the surrogate range, so keys share prefixes and part there.
const unit = fc.constantFrom(
  'a',
  'b',
  'é',
  '\uD7FF',
  '\uD800',
  '\uDBFF',
  '\uDC00',
  '\uE000',
  '\uFFFF',
  '\u{1F600}',
);
const key = fc.oneof(
  fc.array(unit, { maxLength: 4 }).map((us) => us.join('')),
  fc.string({ unit: 'binary', maxLength: 4 }),
);
const narrowKey = fc.string({ unit: fc.constantFrom('a', 'b', 'é', '\uD7FF'), maxLength: 4 });

const op = fc.oneof(fc.record({ add: fc.boolean(), key }), fc.record({ add: fc.boolean(), key: narrowKey }));

test('built, added to and deleted from: the keys in compareStrings order, both ways, within any range', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.array(narrowKey, { maxLength: 40 }), fc.array(key, { maxLength: 40 })),
      fc.array(op, { maxLength: 60 }),
      fc.option(fc.record({ lo: key, hi: narrowKey })),
      (initial, ops, range) => {
        const held = new Set(initial);
        const keys = new SortedKeys([...held]);
        for (const o of ops) {
          if (o.add && !held.has(o.key)) {
            held.add(o.key);
            keys.add(o.key);
          } else if (!o.add) {
            held.delete(o.key);
            keys.delete(o.key);
          }
        }
        const expected = [...held].sort(compareStrings);
        assert.equal([...keys.within(undefined, 1)], expected);
        assert.equal([...keys.within(undefined, -1)], [...expected].reverse());
        if (range) {
          const r = { gte: range.lo, lt: range.hi };
          const inside = expected.filter((k) => compareStrings(k, r.gte) >= 0 && compareStrings(k, r.lt) < 0);
          assert.equal([...keys.within(r, 1)], inside);
          assert.equal([...keys.within(r, -1)], [...inside].reverse());
        }
      },
    ),
    { numRuns: 500 },
  );
});

test('more keys than a chunk holds, narrow then one astral key: still in order', () => {
  const narrow = Array.from({ length: 1_500 }, (_, i) =>
    `k${(i * 7919) % 1_500}\uE000`.slice(0, i % 2 ? 5 : 6),
  );
  const held = new Set(narrow.filter((k) => !/[\uD800-\uFFFF]/.test(k)));
  const keys = new SortedKeys([...held]);
  for (const k of ['k7\u{1F600}', 'k7\uE000', 'k70', '\uFFFF', '\u{10FFFF}']) {
    held.add(k);
    keys.add(k);
  }
  keys.delete('k70');
  held.delete('k70');
  assert.equal([...keys.within(undefined, 1)], [...held].sort(compareStrings));
});

test.run();
