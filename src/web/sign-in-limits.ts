// Sign-in attempts are limited per client IP (an IPv6 client's /64: guessingKey; every attempt counts) and per account (failures count;
// a success clears them), through rate-limiter-flexible: in memory embedded, in MongoDB scaled out (one
// budget for every API process, with an in-memory fallback while MongoDB does not answer). A limited
// attempt is refused before the password is checked. An attempt takes its place in the account's budget
// before its password is checked (as a failure, cleared by a success): counted only after the check,
// a burst of guesses sent at once all passed while the first was still being hashed.
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterMongo,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { type Limiter, onServiceClock } from '../http/clocked-limiter';
import { guessingKey, RATE_LIMITS_COLLECTION } from '../http/rate-limit';
import type { Runtime } from '../runtime';

export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

function limiter(rt: Runtime, points: number, keyPrefix: string): Limiter {
  return onServiceClock(storeLimiter(rt, points, keyPrefix), rt.clock, SIGN_IN_WINDOW_SECONDS);
}

function storeLimiter(rt: Runtime, points: number, keyPrefix: string): RateLimiterAbstract {
  const duration = SIGN_IN_WINDOW_SECONDS;
  const mongo = (rt.docs as { client?: unknown }).client;
  if (rt.docs.kind === 'mongodb' && mongo)
    return new RateLimiterMongo({
      storeClient: mongo,
      dbName: rt.config.mongodbDb,
      tableName: RATE_LIMITS_COLLECTION,
      keyPrefix,
      points,
      duration,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
    });
  return new RateLimiterMemory({ keyPrefix, points, duration });
}

export interface SignInLimits {
  /**
   * Seconds to wait when this attempt may not be made; null when it may, and then the attempt already
   * counts as a failure of the account until `succeeded` clears them.
   */
  check(ip: string, account: string): Promise<number | null>;
  succeeded(account: string): Promise<void>;
}

const limits = new WeakMap<Runtime, SignInLimits>();

export function signInLimits(rt: Runtime): SignInLimits {
  let l = limits.get(rt);
  if (l) return l;
  const perIp = limiter(rt, rt.config.signInAttemptsPerIp, 'signin_ip');
  const perAccount = limiter(rt, rt.config.signInFailuresPerAccount, 'signin_account');
  const wait = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  l = {
    async check(ip, account) {
      const held = await perAccount.get(account);
      if (held && held.consumedPoints >= rt.config.signInFailuresPerAccount) return wait(held.msBeforeNext);
      try {
        await perIp.consume(guessingKey(ip));
        await perAccount.consume(account);
        return null;
      } catch (err) {
        if (err instanceof RateLimiterRes) return wait(err.msBeforeNext);
        throw err;
      }
    },
    async succeeded(account) {
      await perAccount.delete(account);
    },
  };
  limits.set(rt, l);
  return l;
}
