// Failed sign-ins and refused (limited) ones, one structured line each in the service log. The sign-in
// page answers a wrong password 200 (the form again) and a limited attempt 429, so the access log alone
// showed neither as a failure, and guessing against a manager's account left nothing an operator could
// find. A line names the account by a keyed hash (the same in every process: derived from SECRETS_KEY)
// and its user id when the account exists, with the client address as the access log has it, never
// the email or the password: an email is personal data, and a plain hash of one is reversed by hashing
// a list of addresses. The hash still lets the lines of one account be told apart and counted.
import { createHmac } from 'node:crypto';
import type { Context } from 'koa';
import type { Runtime } from '../runtime';
import type { SignInHold } from './sign-in-limits';

/** Why a sign-in was not accepted. */
export type SignInFailure = 'wrong_password' | 'unknown_account' | 'no_password' | 'no_email';

/**
 * Why a sign-in failed, given the account's state and whether the password matched. `no_email`: the
 * password matched an account stored without an email (a session needs one), so it is not called a
 * wrong password.
 */
export function signInFailureReason(
  user: { user_id: string | null; email: string | null; password_hash: string | null },
  passwordMatched: boolean,
): SignInFailure {
  if (!user.user_id) return 'unknown_account';
  if (!user.password_hash) return 'no_password';
  if (!passwordMatched) return 'wrong_password';
  return 'no_email';
}

const keys = new WeakMap<Runtime, Buffer>();

/** The account (a normalised email) as the log names it: 16 bytes of an HMAC, base64url. */
export function accountForLog(rt: Runtime, account: string): string {
  let key = keys.get(rt);
  if (!key) {
    key = rt.secrets.derive('sign-in log account');
    keys.set(rt, key);
  }
  return createHmac('sha256', key).update(account).digest().subarray(0, 16).toString('base64url');
}

const common = (rt: Runtime, ctx: Context, account: string, device: string | null) => ({
  request_id: ctx.state.requestId as string,
  ip: ctx.ip,
  account: accountForLog(rt, account),
  // Attempts from a browser where the account signed in before count on that browser's own budget.
  trusted_device: device !== null,
});

export function logSignInFailure(
  rt: Runtime,
  ctx: Context,
  account: string,
  device: string | null,
  reason: SignInFailure,
  userId: string | null,
): void {
  rt.logger.info(
    { event: 'sign_in_failed', ...common(rt, ctx, account, device), user_id: userId, reason },
    'sign-in failed',
  );
}

/**
 * An attempt refused before its password was checked: too many attempts from its address, or failures
 * of its account (or of that browser, for a browser the account signed in from).
 */
export function logSignInLocked(
  rt: Runtime,
  ctx: Context,
  account: string,
  device: string | null,
  hold: SignInHold,
): void {
  rt.logger.warn(
    {
      event: 'sign_in_locked',
      ...common(rt, ctx, account, device),
      reason: `too_many_attempts_${hold.by === 'address' ? 'from_address' : `of_${hold.by}`}`,
      retry_after_seconds: hold.seconds,
    },
    'sign-in refused: too many attempts',
  );
}
