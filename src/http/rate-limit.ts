import type { Context } from 'koa';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterMongo,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { ApiError } from '../core/errors';
import type { Runtime } from '../runtime';

/**
 * One budget per client IP. Embedded: in memory. Scaled out: in MongoDB, so every API process
 * draws from the same budget; while MongoDB does not answer, each process falls back to a budget of
 * its own in memory (rate-limiter-flexible's insurance limiter) rather than failing every request.
 */
export function createLimiter(rt: Runtime, pointsPerMinute: number, keyPrefix: string): RateLimiterAbstract {
  const mongo = (rt.docs as { client?: unknown }).client;
  if (rt.docs.kind === 'mongodb' && mongo) {
    return new RateLimiterMongo({
      storeClient: mongo,
      dbName: rt.config.mongodbDb,
      tableName: 'rate_limits',
      keyPrefix,
      points: pointsPerMinute,
      duration: 60,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points: pointsPerMinute, duration: 60 }),
    });
  }
  return new RateLimiterMemory({ keyPrefix, points: pointsPerMinute, duration: 60 });
}

/**
 * Draws one point from the caller's budget and sets the budget headers, or throws 429 RATE_LIMITED with
 * `x-ratelimit-reset` (epoch ms) and `retry-after`. A plain call, not a middleware: the server runs it
 * inside its one middleware, before routing, for the paths it limits.
 */
export function consumeRateLimit(
  rt: Runtime,
  limiter: RateLimiterAbstract,
  ctx: Context,
  limitHeader: string,
): Promise<void> {
  // A plain promise chain, not an async function: this runs on every partner request, and each async
  // frame and await is measurable there (bench: server CPU per GET /me).
  return limiter.consume(ctx.ip || 'unknown').then(
    (res: RateLimiterRes) => {
      ctx.set('x-ratelimit-limit', limitHeader);
      ctx.set('x-ratelimit-remaining', String(res.remainingPoints));
    },
    (err: unknown) => {
      if (!(err instanceof RateLimiterRes)) throw err;
      const reset = rt.clock.now().getTime() + err.msBeforeNext;
      throw new ApiError(
        429,
        'RATE_LIMITED',
        'Too many requests: back off until x-ratelimit-reset',
        { reset_at: new Date(reset).toISOString() },
        {
          'x-ratelimit-reset': String(reset),
          'retry-after': String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))),
          'x-ratelimit-limit': limitHeader,
          'x-ratelimit-remaining': '0',
        },
      );
    },
  );
}
