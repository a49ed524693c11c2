import type { ServerResponse } from 'node:http';
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

/** Whose budget a request draws from: the client address (behind a trusted proxy, the one it saw). */
export const rateLimitKey = (ctx: Context): string => ctx.ip || 'unknown';

/**
 * A request drew a point: the budget headers. Set on Node's response directly, as the request id is:
 * Koa's `ctx.set` builds arrays and a closure per call, and these run on every partner request.
 */
export function setBudgetHeaders(res: ServerResponse, limitHeader: string, budget: RateLimiterRes): void {
  res.setHeader('x-ratelimit-limit', limitHeader);
  res.setHeader('x-ratelimit-remaining', String(budget.remainingPoints));
}

/**
 * What a refused `consume` becomes: 429 RATE_LIMITED with `x-ratelimit-reset` (epoch ms) and
 * `retry-after`; anything else the limiter rejected with (a store error) is returned as it is.
 */
export function rateLimitError(rt: Runtime, err: unknown, limitHeader: string): unknown {
  if (!(err instanceof RateLimiterRes)) return err;
  const reset = rt.clock.now().getTime() + err.msBeforeNext;
  return new ApiError(
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
}
