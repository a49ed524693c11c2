// The rate-limit call the server makes before routing: headers, the 429 envelope data, and the scaled-out
// limiter's behaviour while MongoDB does not answer.
import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock } from '../../src/core/clock';
import { ApiError } from '../../src/core/errors';
import type { Limiter } from '../../src/http/clocked-limiter';
import {
  createLimiter,
  guessingKey,
  rateLimitError,
  rateLimitKey,
  setBudgetHeaders,
} from '../../src/http/rate-limit';
import type { Runtime } from '../../src/runtime';

const NOW = new Date('2026-11-23T12:00:00.000Z');

function fakeRt(docs: unknown): Runtime {
  return { docs, config: { mongodbDb: 'couvert' }, clock: new FixedClock(NOW) } as unknown as Runtime;
}

function fakeCtx(ip: string) {
  const headers: Record<string, string> = {};
  const res = { setHeader: (k: string, v: string) => (headers[k] = v) } as unknown as ServerResponse;
  return { ctx: { ip, res } as unknown as Context, headers };
}

/** The server's steps for a partner request (src/http/server.ts): draw a point, set the headers or throw. */
async function consumeRateLimit(rt: Runtime, limiter: Limiter, ctx: Context, limitHeader: string) {
  let budget: Awaited<ReturnType<Limiter['consume']>>;
  try {
    budget = await limiter.consume(rateLimitKey(ctx));
  } catch (err) {
    throw rateLimitError(rt, err, limitHeader);
  }
  setBudgetHeaders(ctx.res, limitHeader, budget);
}

test('within the budget: limit and remaining headers; beyond it: 429 with reset (epoch ms) and retry-after', async () => {
  const rt = fakeRt({ kind: 'embedded' });
  const limiter = createLimiter(rt, 2, 60, 'partner');
  for (const remaining of ['1', '0']) {
    const { ctx, headers } = fakeCtx('203.0.113.7');
    await consumeRateLimit(rt, limiter, ctx, '2');
    assert.equal(headers, { 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': remaining });
  }
  const { ctx } = fakeCtx('203.0.113.7');
  const err = await consumeRateLimit(rt, limiter, ctx, '2').then(
    () => null,
    (e) => e,
  );
  assert.instance(err, ApiError);
  assert.is(err.status, 429);
  assert.is(err.code, 'RATE_LIMITED');
  const reset = Number(err.headers['x-ratelimit-reset']);
  assert.ok(reset > NOW.getTime() && reset <= NOW.getTime() + 60_000, `reset ${reset}`);
  assert.ok(Number(err.headers['retry-after']) >= 1 && Number(err.headers['retry-after']) <= 60);
  // Another address has its own budget.
  await consumeRateLimit(rt, limiter, fakeCtx('203.0.113.8').ctx, '2');
});

test('scaled out, a MongoDB that does not answer falls back to a per-process budget instead of failing', async () => {
  const down = () => Promise.reject(new Error('MongoDB is down'));
  const collection = { createIndex: down, findOneAndUpdate: down, updateOne: down, findOne: down };
  const client = { db: () => ({ collection: () => collection }) };
  const rt = fakeRt({ kind: 'mongodb', client });
  const limiter = createLimiter(rt, 2, 60, 'partner');
  await consumeRateLimit(rt, limiter, fakeCtx('198.51.100.1').ctx, '2');
  await consumeRateLimit(rt, limiter, fakeCtx('198.51.100.1').ctx, '2');
  const err = await consumeRateLimit(rt, limiter, fakeCtx('198.51.100.1').ctx, '2').then(
    () => null,
    (e) => e,
  );
  assert.instance(err, ApiError, 'the fallback budget still limits');
  assert.is(err.status, 429);
});

test("guesses (sign-in, client secrets) draw from an IPv6 client's /64, an IPv4 client's address", () => {
  const a = guessingKey('2001:db8:1:2:aaaa::1');
  assert.is(a, '2001:db8:1:2::/64');
  assert.is(
    guessingKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'),
    a,
    'any address of the /64, any spelling',
  );
  assert.is.not(guessingKey('2001:db8:1:3::1'), a, 'the next /64 is another budget');
  assert.is(guessingKey('203.0.113.9'), '203.0.113.9');
  assert.is(
    guessingKey('::ffff:203.0.113.9'),
    '203.0.113.9',
    'an IPv4 client seen through a dual-stack socket',
  );
  assert.is(guessingKey(''), 'unknown');
  assert.is(guessingKey('not an address'), 'not an address');
  // The partner routes' budget stays per address (the spec: per client IP).
  assert.is(rateLimitKey({ ip: '2001:db8:1:2:aaaa::1' } as unknown as Context), '2001:db8:1:2:aaaa::1');
});

test('x-ratelimit-reset is the window end on the service clock: a clock that moves between reads names one instant', async () => {
  // A clock that moves a millisecond at each read, as a test clock does with real time.
  let t = NOW.getTime();
  const clock = { now: () => new Date(t++) };
  const rt = { docs: {}, config: { mongodbDb: 'couvert' }, clock } as unknown as Runtime;
  const limiter = createLimiter(rt, 1, 60, 'reset_test');
  const { ctx } = fakeCtx('192.0.2.9');
  await consumeRateLimit(rt, limiter, ctx, '1');
  const resets: string[] = [];
  for (let i = 0; i < 3; i++) {
    try {
      await consumeRateLimit(rt, limiter, ctx, '1');
      assert.unreachable('the budget of one was spent');
    } catch (err) {
      assert.instance(err, ApiError);
      resets.push((err as ApiError).headers?.['x-ratelimit-reset'] as string);
    }
  }
  assert.equal(resets, [
    String(NOW.getTime() + 60_000),
    String(NOW.getTime() + 60_000),
    String(NOW.getTime() + 60_000),
  ]);
});

test.run();
