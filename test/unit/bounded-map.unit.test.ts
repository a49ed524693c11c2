import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { trimOldest } from '../../src/core/bounded-map';

test('trimOldest leaves a map at or under its bound alone', () => {
  const m = new Map([
    ['a', 1],
    ['b', 2],
  ]);
  trimOldest(m, 2);
  assert.equal([...m.keys()], ['a', 'b']);
});

test('trimOldest evicts the oldest entries first, a 32nd of the bound below it', () => {
  const m = new Map<number, number>();
  for (let i = 0; i < 65; i++) m.set(i, i);
  trimOldest(m, 64);
  assert.equal(m.size, 62);
  assert.equal([...m.keys()][0], 3);
  assert.ok(m.has(64));
});

test('as an LRU (delete then set, then trim): never over the bound, the newest always kept', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 300 }),
      fc.integer({ min: 1, max: 20 }),
      (keys, max) => {
        const m = new Set<number>();
        const order: number[] = [];
        for (const k of keys) {
          m.delete(k);
          m.add(k);
          trimOldest(m, max);
          const i = order.indexOf(k);
          if (i >= 0) order.splice(i, 1);
          order.push(k);
          assert.ok(m.size <= max);
          assert.ok(m.has(k));
          // What is kept is the most recently used, in order.
          assert.equal([...m], order.slice(order.length - m.size));
        }
      },
    ),
  );
});

test.run();
