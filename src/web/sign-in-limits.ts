// Sign-in attempts are limited per client IP (an IPv6 client's /64: guessingKey; every attempt counts) and per account (failures count;
// a success clears them; from a browser where the account signed in before, per that device instead, whose success clears the device's alone: device-cookies.ts), through rate-limiter-flexible: in memory embedded, in MongoDB scaled out (one
// budget for every API process, with an in-memory fallback while MongoDB does not answer). A limited
// attempt is refused before the password is checked. An attempt takes its place in the account's budget
// before its password is checked (as a failure, cleared by a success): counted only after the check,
// a burst of guesses sent at once all passed while the first was still being hashed.
import { RateLimiterRes } from 'rate-limiter-flexible';
import { createLimiter, guessingKey } from '../http/rate-limit';
import type { Runtime } from '../runtime';

export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

export interface SignInLimits {
  /**
   * Seconds to wait when this attempt may not be made, and whose limit holds it (the client address's,
   * the account's, or the device's); null when it may, and then the attempt already
   * counts as a failure of the account (or, from a device of the account, of that device: device-cookies.ts)
   * until `succeeded` clears them (from a device, the device's only).
   */
  check(ip: string, account: string, device?: string | null): Promise<SignInHold | null>;
  succeeded(account: string, device?: string | null): Promise<void>;
}

export interface SignInHold {
  seconds: number;
  by: 'address' | 'account' | 'device';
}

const limits = new WeakMap<Runtime, SignInLimits>();

export function signInLimits(rt: Runtime): SignInLimits {
  let l = limits.get(rt);
  if (l) return l;
  const perIp = createLimiter(rt, rt.config.signInAttemptsPerIp, SIGN_IN_WINDOW_SECONDS, 'signin_ip');
  const perAccount = createLimiter(
    rt,
    rt.config.signInFailuresPerAccount,
    SIGN_IN_WINDOW_SECONDS,
    'signin_account',
  );
  // A device of the account (device-cookies.ts) has the same budget, of its own: the account's failures,
  // a stranger's, do not hold it, and guesses made from it are held all the same.
  const perDevice = createLimiter(
    rt,
    rt.config.signInFailuresPerAccount,
    SIGN_IN_WINDOW_SECONDS,
    'signin_device',
  );
  const wait = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  l = {
    async check(ip, account, device) {
      const budget = device ? perDevice : perAccount;
      const key = device ? `${account}\n${device}` : account;
      const mine = device ? 'device' : 'account';
      const held = await budget.get(key);
      if (held && held.consumedPoints >= rt.config.signInFailuresPerAccount)
        return { seconds: wait(held.msBeforeNext), by: mine };
      let by: SignInHold['by'] = 'address';
      try {
        await perIp.consume(guessingKey(ip));
        by = mine;
        await budget.consume(key);
        return null;
      } catch (err) {
        if (err instanceof RateLimiterRes) return { seconds: wait(err.msBeforeNext), by };
        throw err;
      }
    },
    async succeeded(account, device) {
      // From a device, only its own budget was spent: the account's holds a stranger's failures, which
      // the manager's sign-in must not wipe (each would hand whoever holds the account fresh guesses).
      if (device) await perDevice.delete(`${account}\n${device}`);
      else await perAccount.delete(account);
    },
  };
  limits.set(rt, l);
  return l;
}
