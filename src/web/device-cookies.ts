// Device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies"). The per-account
// sign-in limit (sign-in-limits.ts) holds even the right password once an account has had too many
// failures: without more, whoever knows a manager's email keeps them out for good with a few wrong
// passwords every 15 minutes, from anywhere, and a manager kept out cannot revoke a leaked key or
// disconnect an application. So a browser where an account signed in gets a cookie naming that
// account: `<nonce>.<HMAC(account, nonce)>`, keyed by a key derived from SECRETS_KEY (the same in every
// process). Its later attempts for that account count on a budget of the device's own instead of the
// account's, so the manager's browser still signs in while the account is held everywhere else. The
// cookie opens nothing by itself: the password is checked as always, and the per-IP limit still applies.
import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { constantTimeEqual } from '../core/ids';
import type { Runtime } from '../runtime';
import { hostCookieName, readCookie, setCookie } from './cookies';

/** 180 days: a manager signing in less often than that is a stranger again (held with the account). */
const MAX_AGE_SECONDS = 180 * 24 * 60 * 60;
const VALUE = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export const deviceCookieName = (rt: Runtime) => hostCookieName(rt, 'couvert_device');

const keys = new WeakMap<Runtime, Buffer>();
const mac = (rt: Runtime, account: string, nonce: string) => {
  let key = keys.get(rt);
  if (!key) {
    key = rt.secrets.derive('sign-in device cookie');
    keys.set(rt, key);
  }
  return createHmac('sha256', key).update(`${account}\n${nonce}`).digest('base64url');
};

/**
 * The device id (its nonce) when the request carries a device cookie made for `account` (normalised), else
 * null: no cookie, another account's, or a value this service did not make.
 */
export function trustedDevice(rt: Runtime, ctx: Context, account: string): string | null {
  const m = VALUE.exec(readCookie(ctx, deviceCookieName(rt)) ?? '');
  if (!m) return null;
  const [, nonce = '', given = ''] = m;
  return constantTimeEqual(given, mac(rt, account, nonce)) ? nonce : null;
}

/** After a successful sign-in: this browser is a device of `account` from now on (a new nonce each time). */
export function rememberDevice(rt: Runtime, ctx: Context, account: string): void {
  const nonce = randomBytes(16).toString('base64url');
  // Read by the sign-in form's own POST only: never sent along from another site.
  setCookie(rt, ctx, deviceCookieName(rt), `${nonce}.${mac(rt, account, nonce)}`, {
    maxAgeSeconds: MAX_AGE_SECONDS,
    sameSite: 'Strict',
  });
}
