import type { ServerResponse } from 'node:http';
import ipaddr from 'ipaddr.js';
import type { Context } from 'koa';
import type { MongoClient } from 'mongodb';
import {
  type IRateLimiterMongoOptions,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterMongo,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { ApiError } from '../core/errors';
import type { Runtime } from '../runtime';
import { ClockedRes, type Limiter, onServiceClock } from './clocked-limiter';

/**
 * One budget per client IP. Embedded: in memory. Scaled out: in MongoDB, so every API process
 * draws from the same budget; while MongoDB does not answer, each process falls back to a budget of
 * its own in memory (rate-limiter-flexible's insurance limiter) rather than failing every request.
 */
/** MongoDB collection of the shared budgets (also the sign-in limits'): no read model, kept by a rebuild. */
export const RATE_LIMITS_COLLECTION = 'rate_limits';

/**
 * A budget of `points` per window of `durationSeconds` for each key (the partner routes', the token
 * endpoint's, sign-in's), its windows ended on the service clock (onServiceClock).
 */
export function createLimiter(
  rt: Runtime,
  points: number,
  durationSeconds: number,
  keyPrefix: string,
): Limiter {
  return onServiceClock(storeLimiter(rt, points, durationSeconds, keyPrefix), rt.clock);
}

function storeLimiter(rt: Runtime, points: number, duration: number, keyPrefix: string): RateLimiterAbstract {
  const mongo = (rt.docs as { client?: unknown }).client;
  if (rt.docs.kind === 'mongodb' && mongo)
    return new RateLimiterMongo(
      mongoLimiterOptions(mongo as MongoClient, rt.config.mongodbDb, keyPrefix, points, duration),
    );
  return new RateLimiterMemory({ keyPrefix, points, duration });
}

/**
 * A shared budget's options (the partner routes', the token endpoint's, sign-in's), with an in-memory
 * insurance limiter while MongoDB does not answer. The store is given the read models' database read
 * on the primary (the library uses a Db as it is), not the client: through the client it read with
 * MONGODB_URL's readPreference, and a secondary behind the primary counts fewer points than were spent
 * (sign-in's check reads the account's failures with `get`), letting more attempts through.
 */
export function mongoLimiterOptions(
  client: MongoClient,
  dbName: string,
  keyPrefix: string,
  points: number,
  duration: number,
): IRateLimiterMongoOptions {
  return {
    // As readModelsDb (adapters/document-store/mongodb.ts), not imported: the embedded server never loads the driver.
    storeClient: client.db(dbName, { readPreference: 'primary' }),
    dbName,
    tableName: RATE_LIMITS_COLLECTION,
    keyPrefix,
    points,
    duration,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
  };
}

/** Whose budget a request draws from: the client address (behind a trusted proxy, the one it saw). */
export const rateLimitKey = (ctx: Context): string => ctx.ip || 'unknown';

/**
 * Whose budget a guess draws from (sign-in passwords, OAuth client secrets): an IPv6 client's /64,
 * not its address. One subscriber or host is routinely given a whole /64, so keyed by address it
 * could spread its guesses over 2^64 budgets. An IPv4 address (mapped into IPv6 too) stays itself.
 * The partner routes' budget keeps the address: the spec sets it per client IP, and hosts sharing a
 * /64 must not share it.
 */
export function guessingKey(ip: string): string {
  if (!ip) return 'unknown';
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return ip;
  }
  if (addr.kind() === 'ipv4') return addr.toString();
  const v6 = addr as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

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
  const reset = err instanceof ClockedRes ? err.resetAt : rt.clock.now().getTime() + err.msBeforeNext;
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
