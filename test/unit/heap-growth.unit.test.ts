// The growth a backlog's catch-up allows after each full collection (src/projection/heap-growth.ts):
// the percent while the heap is small, the headroom in bytes once it is large, never under the floor.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { growthPercent, MIN_GROWTH_PERCENT } from '../../src/projection/heap-growth';

const test = suite('heap growth: percent from the live heap');
const MiB = 2 ** 20;

test('the percent while small, the headroom once large, the floor at the end', () => {
  assert.is(growthPercent(50 * MiB, 35, 64 * MiB), 35);
  assert.is(growthPercent(256 * MiB, 35, 64 * MiB), 25);
  assert.is(growthPercent(512 * MiB, 35, 64 * MiB), 12);
  assert.is(growthPercent(4096 * MiB, 35, 64 * MiB), MIN_GROWTH_PERCENT);
  assert.is(growthPercent(512 * MiB, 35, 0), 35, 'no headroom: the percent alone');
  assert.is(growthPercent(0, 35, 64 * MiB), 35, 'nothing measured: the percent');
  assert.is(growthPercent(512 * MiB, 5, 64 * MiB), 5, 'a percent under the floor is kept');
});

test('property: bounded, never more growth than the headroom above the floor, and never more for a larger heap', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 16 * 1024 * MiB }),
      fc.integer({ min: 1, max: 16 * 1024 * MiB }),
      fc.integer({ min: 1, max: 200 }),
      fc.integer({ min: 1, max: 1024 * MiB }),
      (a, b, percent, headroom) => {
        const [small, large] = a <= b ? [a, b] : [b, a];
        const p = growthPercent(large, percent, headroom);
        assert.ok(p <= percent && p >= Math.min(percent, MIN_GROWTH_PERCENT));
        assert.ok(p <= growthPercent(small, percent, headroom));
        if (p > MIN_GROWTH_PERCENT) assert.ok((large * p) / 100 <= headroom);
      },
    ),
  );
});

test.run();
