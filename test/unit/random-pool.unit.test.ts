// The shared pool of random bytes (src/core/random-pool.ts): each draw is fresh bytes of the size
// asked for, never bytes handed out before (across the pool's refills), and sizes outside 1..256 are
// refused; the ids drawn from it keep their shapes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { uuidv7 } from '../../src/adapters/event-store/validate';
import { newId } from '../../src/core/ids';
import { MAX_RANDOM_VIEW, randomView } from '../../src/core/random-pool';
import { newRequestId } from '../../src/http/request-id';

const test = suite('random pool');

test('draws of every size are distinct across refills of the pool', () => {
  const seen = new Set<string>();
  let bytes = 0;
  for (let i = 0; bytes < 3 * 4096; i++) {
    const n = 1 + (i % 32) + 8; // 9..40 bytes: draws that straddle the pool's end
    const v = randomView(n);
    assert.is(v.length, n);
    const hex = v.toString('hex');
    assert.not.ok(seen.has(hex), 'a draw repeated');
    seen.add(hex);
    bytes += n;
  }
  assert.is(randomView(MAX_RANDOM_VIEW).length, MAX_RANDOM_VIEW);
});

test('draws between two refills never share a byte of the pool', () => {
  let last = randomView(16);
  for (let i = 0; i < 600; i++) {
    const copy = Buffer.from(last);
    const next = randomView(7 + (i % 20));
    // A refill (the next draw starts the pool again) rewrites the bytes: views are valid until then.
    if (next.byteOffset > last.byteOffset) {
      assert.ok(next.byteOffset >= last.byteOffset + last.length, 'overlapping views');
      assert.ok(last.equals(copy), 'a draw changed by the next one before a refill');
    }
    last = next;
  }
});

test('sizes outside 1..256 are refused', () => {
  for (const n of [0, -1, 1.5, MAX_RANDOM_VIEW + 1, Number.NaN])
    assert.throws(
      () => randomView(n),
      (e: unknown) => e instanceof RangeError,
    );
});

test('ids drawn from it keep their shapes and do not repeat', () => {
  const ids = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const id = newId('cus');
    assert.match(id, /^cus_[0-9a-z]{16}$/);
    const u = uuidv7();
    assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const r = newRequestId();
    assert.match(r, /^req_[0-9a-f]{32}$/);
    for (const x of [id, u, r]) {
      assert.not.ok(ids.has(x));
      ids.add(x);
    }
  }
});

test.run();
