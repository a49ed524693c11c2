// The per-account sign-in limit holds the right password too once an account has had too many
// failures: against guessing, it must. But anyone who knows a manager's email could then keep them
// out for good with a handful of wrong passwords every 15 minutes, from anywhere, and a manager kept
// out cannot revoke a leaked key or disconnect an application. A browser where the account has signed
// in before carries a device cookie (OWASP "device cookies"): its attempts are counted on a budget of
// their own, so the manager's own browser still signs in while a stranger's failures hold the account
// everywhere else.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
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
  /^couvert_device=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/;

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
  },
);

t('a device cookie opens nothing by itself: another account, a forged or copied value', async ({ svc }) => {
  const manager = new Browser(svc.url);
  assert.is((await signIn(manager, await manager.get('/sign-in'), 'manager@demo.test')).status, 303);
  const cookie = manager.cookies.get('couvert_device') as string;
  const stranger = new Browser(svc.url);
  const page = await stranger.get('/sign-in');
  for (let i = 0; i < 3; i++) await signIn(stranger, page, 'viewer@demo.test', 'a wrong guess!');
  // The cookie of manager@ is no device of viewer@: held like any stranger.
  stranger.cookies.set('couvert_device', cookie);
  assert.is((await signIn(stranger, page, 'viewer@demo.test')).status, 429);
  // Nor is a value altered by one character.
  const [nonce = '', mac = ''] = cookie.split('.');
  stranger.cookies.set('couvert_device', `${nonce}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`);
  assert.is((await signIn(stranger, page, 'viewer@demo.test')).status, 429);
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
