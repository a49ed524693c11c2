// The reason a failed sign-in is logged with (src/web/sign-in-log.ts): a matching password is never
// logged as a wrong one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { signInFailureReason } from '../../src/web/sign-in-log';

const user = { user_id: 'usr_1', email: 'a@example.com', password_hash: 'hash' };

test('each failure has its reason', () => {
  assert.is(
    signInFailureReason({ user_id: null, email: null, password_hash: null }, false),
    'unknown_account',
  );
  assert.is(signInFailureReason({ ...user, password_hash: null }, false), 'no_password');
  assert.is(signInFailureReason(user, false), 'wrong_password');
});

test('the right password of an account stored without an email is not a wrong password', () => {
  assert.is(signInFailureReason({ ...user, email: null }, true), 'no_email');
  assert.is(signInFailureReason({ ...user, email: null }, false), 'wrong_password');
});

test.run();
