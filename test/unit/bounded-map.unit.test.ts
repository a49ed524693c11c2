import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BoundedCache, trimOldest } from '../../src/core/bounded-map';

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

test('BoundedCache: never over its bound, answers what was last set for every key it holds, keeps the newest half, forgets deleted keys', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.constantFrom('set', 'get', 'delete'), fc.integer({ min: 0, max: 60 }), fc.integer()),
        { maxLength: 400 },
      ),
      fc.integer({ min: 2, max: 40 }),
      (ops, max) => {
        const cache = new BoundedCache<number, number>(max);
        const truth = new Map<number, number>();
        const recent: number[] = [];
        for (const [op, k, v] of ops) {
          if (op === 'set') {
            cache.set(k, v);
            truth.set(k, v);
            recent.push(k);
          } else if (op === 'delete') {
            cache.delete(k);
            truth.delete(k);
            assert.not.ok(cache.has(k));
          } else {
            const got = cache.get(k);
            if (got !== undefined) assert.is(got, truth.get(k));
          }
          assert.ok(cache.size <= max, `size ${cache.size} over ${max}`);
          for (const [key, value] of cache.entries()) assert.is(value, truth.get(key));
        }
        // The last max / 2 keys set (and not deleted since) are all still there.
        const newest = [...new Set(recent.slice().reverse())].filter((k) => truth.has(k));
        for (const k of newest.slice(0, Math.floor(max / 2))) assert.ok(cache.has(k), `key ${k} kept`);
      },
    ),
  );
});

test('BoundedCache: after four times its bound in insertions it holds the newest, not the oldest', () => {
  const cache = new BoundedCache<string, number>(50_000);
  for (let i = 0; i < 200_000; i++) cache.set(`cus_${i}`, i);
  assert.is(cache.size <= 50_000, true);
  assert.is(cache.get('cus_199999'), 199_999);
  assert.is(cache.get('cus_100'), undefined);
});

test.run();
