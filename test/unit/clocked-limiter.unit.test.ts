// onServiceClock (src/http/clocked-limiter.ts): under a clock of the service's own, a limiter's window
// ends on that clock, and what it answers (msBeforeNext) is the time left on it; on the system clock
// the library's limiter is returned as it is. The clock here is frozen: only the test moves it, so any
// window ending is the service clock's (the library's real minute cannot pass within a test).
import fc from 'fast-check';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock, systemClock } from '../../src/core/clock';
import { ClockedLimiter, type Limiter, onServiceClock } from '../../src/http/clocked-limiter';

const START = '2026-11-28T07:00:00.000Z';

const limiter = (points: number, clock: FixedClock) =>
  onServiceClock(new RateLimiterMemory({ points, duration: 60 }), clock);

/** The answer of a consume: accepted or refused, with its msBeforeNext. */
const consume = (l: Limiter, key = 'ip') =>
  l.consume(key).then(
    (res) => ({ ok: true, ms: res.msBeforeNext }),
    (err: unknown) => {
      if (!(err instanceof RateLimiterRes)) throw err;
      return { ok: false, ms: err.msBeforeNext };
    },
  );

test('the system clock: the library limiter itself', () => {
  const inner = new RateLimiterMemory({ points: 1, duration: 60 });
  assert.is(onServiceClock(inner, systemClock), inner);
});

test('a window ends when the service clock passes it, not before; the time left is on that clock', async () => {
  const clock = new FixedClock(START);
  const l = limiter(2, clock);
  assert.equal(await consume(l), { ok: true, ms: 60_000 });
  assert.equal((await consume(l)).ok, true);
  assert.equal(await consume(l), { ok: false, ms: 60_000 });
  clock.advance(59);
  assert.equal(await consume(l), { ok: false, ms: 1_000 });
  assert.equal((await consume(l, 'other')).ok, true, 'another key has its own window');
  clock.advance(1);
  assert.equal(await consume(l), { ok: true, ms: 60_000 });
  assert.equal((await l.get('ip'))?.consumedPoints, 1);
  clock.advance(3600);
  assert.is(await l.get('ip'), null, 'a window over on the clock is no window');
  assert.equal(await consume(l), { ok: true, ms: 60_000 });
  assert.ok(await l.delete('ip'));
  assert.equal(await consume(l), { ok: true, ms: 60_000 }, 'deleted: a new window');
});

test('property: within a window at most `points` pass; a refusal names the end of the window the first consume began', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.array(fc.integer({ min: 0, max: 90 }), { minLength: 1, maxLength: 40 }),
      async (points, steps) => {
        const clock = new FixedClock(START);
        const l = limiter(points, clock);
        let windowStart: number | null = null;
        let passed = 0;
        for (const step of steps) {
          clock.advance(step);
          const now = clock.now().getTime();
          if (windowStart === null || now >= windowStart + 60_000) {
            windowStart = now;
            passed = 0;
          }
          const got = await consume(l);
          assert.is(got.ms, windowStart + 60_000 - now);
          assert.is(got.ok, passed < points);
          if (got.ok) passed++;
        }
      },
    ),
    { numRuns: 200 },
  );
});

test('the windows remembered are bounded: past the bound the earliest running ones are forgotten', async () => {
  const clock = new FixedClock(START);
  const l = new ClockedLimiter(new RateLimiterMemory({ points: 5, duration: 60 }), clock, 60_000, 64);
  for (let i = 0; i < 200; i++) {
    await consume(l, `k${i}`);
    assert.ok(l.windowsKept <= 64, `${l.windowsKept} windows kept after ${i + 1} keys`);
  }
  // The latest key's window is still the clock's: it ends when the clock passes it.
  clock.advance(60);
  assert.equal(await consume(l, 'k199'), { ok: true, ms: 60_000 });
});

test('consumes while a window ended on the clock is being deleted wait for it (none lands in the old one)', async () => {
  const clock = new FixedClock(START);
  const store = new RateLimiterMemory({ points: 2, duration: 60 });
  const calls: string[] = [];
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  // A store whose delete takes its time (MongoDB's is a round trip).
  const inner = {
    duration: 60,
    consume: (k: string, p?: number) => {
      calls.push('consume');
      return store.consume(k, p);
    },
    get: (k: string) => store.get(k),
    delete: async (k: string) => {
      calls.push('delete');
      await held;
      calls.push('deleted');
      return store.delete(k);
    },
  } as unknown as RateLimiterAbstract;
  const l = new ClockedLimiter(inner, clock, 60_000);
  assert.equal((await consume(l)).ok, true);
  clock.advance(60);
  const both = Promise.all([consume(l), consume(l)]);
  // Every continuation that needs no store answer has run.
  await new Promise((r) => setImmediate(r));
  assert.equal(calls, ['consume', 'delete'], 'a consume went to the store before the delete was done');
  release();
  assert.equal(await both, [
    { ok: true, ms: 60_000 },
    { ok: true, ms: 60_000 },
  ]);
  assert.equal(calls, ['consume', 'delete', 'deleted', 'consume', 'consume']);
  assert.is((await l.get('ip'))?.consumedPoints, 2, 'both drew from the new window');
});

test.run();
