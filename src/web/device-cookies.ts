// Device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies"). The per-account
// sign-in limit (sign-in-limits.ts) holds even the right password once an account has had too many
// failures: without more, whoever knows a manager's email keeps them out for good with a few wrong
// passwords every 15 minutes, from anywhere, and a manager kept out cannot revoke a leaked key or
// disconnect an application. So a browser where an account signed in gets a cookie naming that
// account: `<nonce>.<issued at>.<HMAC(account, nonce, issued at, password)>`, keyed by a key derived
// from SECRETS_KEY (the same in every process). Its later attempts for that account count on a budget
// of the device's own instead of the account's, so the manager's browser still signs in while the
// account is held everywhere else. The cookie opens nothing by itself: the password is checked as
// always, and the per-IP limit still applies.
//
// It still lets its holder past the account's hold, so it does not last for ever: the server refuses
// one issued more than MAX_AGE_SECONDS ago (the cookie's Max-Age binds only the browser, not whoever
// copied the value), and one made while the account had another password: the MAC covers the
// password's tag (sessions.ts's passwordTag, which ends sessions on a password change too), so the
// devices of a password changed because it leaked are strangers again.
import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { constantTimeEqual } from '../core/ids';
import type { Runtime } from '../runtime';
import { hostCookieName, readCookie, setCookie } from './cookies';
import { passwordTag } from './sessions';

/** 180 days: a manager signing in less often than that is a stranger again (held with the account). */
const MAX_AGE_SECONDS = 180 * 24 * 60 * 60;
const VALUE = /^([A-Za-z0-9_-]{22})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;

export const deviceCookieName = (rt: Runtime) => hostCookieName(rt, 'couvert_device');

const keys = new WeakMap<Runtime, Buffer>();
const mac = (rt: Runtime, account: string, nonce: string, issued: string, passwordHash: string | null) => {
  let key = keys.get(rt);
  if (!key) {
    key = rt.secrets.derive('sign-in device cookie');
    keys.set(rt, key);
  }
  return createHmac('sha256', key)
    .update(`${account}\n${nonce}\n${issued}\n${passwordTag(passwordHash)}`)
    .digest('base64url');
};

const nowSeconds = (rt: Runtime) => Math.floor(rt.clock.now().getTime() / 1000);

/**
 * The device id (its nonce) when the request carries a device cookie made for `account` (normalised)
 * while it had its current password, at most MAX_AGE_SECONDS ago; else null: no cookie, another
 * account's, an older password's, expired, or a value this service did not make. The account's
 * password hash is asked for only when the request carries such a cookie.
 */
export async function trustedDevice(
  rt: Runtime,
  ctx: Context,
  account: string,
  passwordHash: () => Promise<string | null>,
): Promise<string | null> {
  const m = VALUE.exec(readCookie(ctx, deviceCookieName(rt)) ?? '');
  if (!m) return null;
  const [, nonce = '', issued = '', given = ''] = m;
  if (nowSeconds(rt) - Number(issued) > MAX_AGE_SECONDS) return null;
  return constantTimeEqual(given, mac(rt, account, nonce, issued, await passwordHash())) ? nonce : null;
}

/**
 * After a successful sign-in with the password whose hash is `passwordHash`: this browser is a device of
 * `account` from now on (a new nonce each time), until MAX_AGE_SECONDS or a new password.
 */
export function rememberDevice(
  rt: Runtime,
  ctx: Context,
  account: string,
  passwordHash: string | null,
): void {
  const nonce = randomBytes(16).toString('base64url');
  const issued = String(nowSeconds(rt));
  // Read by the sign-in form's own POST only: never sent along from another site.
  setCookie(
    rt,
    ctx,
    deviceCookieName(rt),
    `${nonce}.${issued}.${mac(rt, account, nonce, issued, passwordHash)}`,
    {
      maxAgeSeconds: MAX_AGE_SECONDS,
      sameSite: 'Strict',
    },
  );
}
