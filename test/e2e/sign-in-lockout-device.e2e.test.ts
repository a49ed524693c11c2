// The per-account sign-in limit holds the right password too once an account has had too many
// failures: against guessing, it must. But anyone who knows a manager's email could then keep them
// out for good with a handful of wrong passwords every 15 minutes, from anywhere, and a manager kept
// out cannot revoke a leaked key or disconnect an application. A browser where the account has signed
// in before carries a device cookie (OWASP "device cookies"): its attempts are counted on a budget of
// their own, so the manager's own browser still signs in while a stranger's failures hold the account
// everywhere else.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setUserPassword } from '../../commands/oauth/user-handler';
import { Browser, formFields, oauthBootstrap, signIn } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('sign-in limit and device cookies', {} as never);
t.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { SIGN_IN_FAILURES_PER_ACCOUNT: '3' },
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const DEVICE =
  /^couvert_device=[A-Za-z0-9_-]{22}\.\d+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/;

t(
  'a stranger’s failures hold the account everywhere but where its manager signed in before',
  async ({ svc }) => {
    const manager = new Browser(svc.url);
    const ok = await signIn(manager, await manager.get('/sign-in'), 'solo@demo.test');
    assert.is(ok.status, 303);
    const device = ok.headers.getSetCookie().find((c) => c.startsWith('couvert_device='));
    assert.match(device ?? '', DEVICE);
    const dash = await manager.get('/dashboard');
    await manager.post('/sign-out', formFields(dash.text, '/sign-out'));
    assert.ok(manager.cookies.get('couvert_device'), 'signing out keeps the device cookie');

    const stranger = new Browser(svc.url);
    const page = await stranger.get('/sign-in');
    for (let i = 0; i < 3; i++)
      assert.match((await signIn(stranger, page, 'solo@demo.test', 'a wrong guess!')).text, /incorrect/);
    assert.is((await signIn(stranger, page, 'solo@demo.test')).status, 429, 'the stranger is held');
    const fresh = new Browser(svc.url);
    assert.is((await signIn(fresh, await fresh.get('/sign-in'), 'solo@demo.test')).status, 429);

    // The manager's browser signs in with the right password all the same.
    const back = await signIn(manager, await manager.get('/sign-in'), 'solo@demo.test');
    assert.is(back.status, 303);
    assert.is((await manager.get('/dashboard')).status, 200);
    // And that sign-in clears the device's failures only: the stranger gets no fresh guesses from it.
    assert.is((await signIn(stranger, page, 'solo@demo.test', 'another guess!')).status, 429);
  },
);

t('a device cookie opens nothing by itself: another account, a forged or copied value', async ({ svc }) => {
  const manager = new Browser(svc.url);
  assert.is((await signIn(manager, await manager.get('/sign-in'), 'manager@demo.test')).status, 303);
  const cookie = manager.cookies.get('couvert_device') as string;
  const viewer = new Browser(svc.url);
  assert.is((await signIn(viewer, await viewer.get('/sign-in'), 'viewer@demo.test')).status, 303);
  const own = viewer.cookies.get('couvert_device') as string;
  const stranger = new Browser(svc.url);
  const page = await stranger.get('/sign-in');
  for (let i = 0; i < 3; i++) await signIn(stranger, page, 'viewer@demo.test', 'a wrong guess!');
  // The cookie of manager@ is no device of viewer@: held like any stranger.
  stranger.cookies.set('couvert_device', cookie);
  assert.is((await signIn(stranger, page, 'viewer@demo.test')).status, 429);
  // Nor is viewer@'s own value altered by one character.
  const [nonce = '', issued = '', mac = ''] = own.split('.');
  stranger.cookies.set(
    'couvert_device',
    `${nonce}.${issued}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
  );
  assert.is((await signIn(stranger, page, 'viewer@demo.test')).status, 429);
  // Nor one whose issued-at was moved on (to outlive its 180 days).
  stranger.cookies.set('couvert_device', `${nonce}.${Number(issued) + 1}.${mac}`);
  assert.is((await signIn(stranger, page, 'viewer@demo.test')).status, 429);
  // The value as it was made is a device of viewer@.
  stranger.cookies.set('couvert_device', own);
  assert.is((await signIn(stranger, page, 'viewer@demo.test')).status, 303);
});

t('a device has a failure budget of its own: guessing from it is held too', async ({ svc }) => {
  const b = new Browser(svc.url);
  assert.is((await signIn(b, await b.get('/sign-in'), 'manager@demo.test')).status, 303);
  const dash = await b.get('/dashboard');
  await b.post('/sign-out', formFields(dash.text, '/sign-out'));
  const page = await b.get('/sign-in');
  for (let i = 0; i < 3; i++)
    assert.match((await signIn(b, page, 'manager@demo.test', 'a wrong guess!')).text, /incorrect/);
  assert.is((await signIn(b, page, 'manager@demo.test')).status, 429);
});

t.run();

// A device cookie is no credential of its own, but it lets its holder past the account's lockout: one
// copied off a manager's machine, or kept by a browser whose password was changed because it leaked,
// must not do so for ever. The server refuses one older than its max age (a browser-only Max-Age binds
// nobody who copied the value) and one made before the account's password changed.
const revoked = suite<{ svc: TestService }>('device cookies: expiry and password changes', {} as never);
revoked.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { SIGN_IN_FAILURES_PER_ACCOUNT: '3', TEST_CLOCK: 'true' },
  });
});
revoked.after(async (ctx) => {
  await ctx.svc?.close();
});

const DAY = 24 * 60 * 60;
const advance = (svc: TestService, seconds: number) =>
  (svc.rt.testClock as NonNullable<TestService['rt']['testClock']>).advance(seconds);

/** A stranger's wrong guesses hold `email` (for the next 15 minutes). */
async function holdAccount(svc: TestService, email: string) {
  const stranger = new Browser(svc.url);
  const page = await stranger.get('/sign-in');
  for (let i = 0; i < 3; i++) await signIn(stranger, page, email, 'a wrong guess!');
  assert.is((await signIn(stranger, page, email)).status, 429, 'the account is held');
}

/** A browser holding only the device cookie `value`, signing in to `email`. */
async function withDevice(svc: TestService, value: string, email: string, password?: string) {
  const b = new Browser(svc.url);
  b.cookies.set('couvert_device', value);
  return (await signIn(b, await b.get('/sign-in'), email, password)).status;
}

revoked('a device cookie older than 180 days is refused by the server', async ({ svc }) => {
  const manager = new Browser(svc.url);
  assert.is((await signIn(manager, await manager.get('/sign-in'), 'solo@demo.test')).status, 303);
  const cookie = manager.cookies.get('couvert_device') as string;
  advance(svc, 179 * DAY);
  await holdAccount(svc, 'solo@demo.test');
  assert.is(await withDevice(svc, cookie, 'solo@demo.test'), 303, 'still a device on day 179');
  advance(svc, 2 * DAY);
  await holdAccount(svc, 'solo@demo.test');
  assert.is(await withDevice(svc, cookie, 'solo@demo.test'), 429, 'a stranger on day 181');
});

revoked('a new password makes the devices of the old one strangers', async ({ svc }) => {
  const manager = new Browser(svc.url);
  assert.is((await signIn(manager, await manager.get('/sign-in'), 'manager@demo.test')).status, 303);
  const cookie = manager.cookies.get('couvert_device') as string;
  await setUserPassword(svc.rt, 'manager@demo.test', 'a brand new passphrase', {
    actor: 'operator:test',
    request_id: 'req_test',
  });
  await holdAccount(svc, 'manager@demo.test');
  assert.is(await withDevice(svc, cookie, 'manager@demo.test', 'a brand new passphrase'), 429);
  // A sign-in with the new password (once the hold is over) makes the browser a device again.
  advance(svc, 16 * 60);
  const again = new Browser(svc.url);
  const ok = await signIn(again, await again.get('/sign-in'), 'manager@demo.test', 'a brand new passphrase');
  assert.is(ok.status, 303);
  await holdAccount(svc, 'manager@demo.test');
  const fresh = again.cookies.get('couvert_device') as string;
  assert.is(await withDevice(svc, fresh, 'manager@demo.test', 'a brand new passphrase'), 303);
});

revoked.run();
