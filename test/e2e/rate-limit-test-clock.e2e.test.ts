// The rate limits' minute is the service clock's, as x-ratelimit-reset is: under TEST_CLOCK, a test
// that moves the clock past the reset a 429 named gets its budget back, and one that moves it less
// sees the same reset. rate-limiter-flexible keeps its windows on Date.now(), so the budget stayed
// spent for a real minute however far the clock moved (the reset it named had long passed).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { advance } from '../helpers/missed-calls';
import { Browser, CALLBACK, oauthBootstrap, signIn, tokenRequest } from '../helpers/oauth';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const TOKEN = 'couvert_pk_ratelimitclock_000000000000001';

const t = suite<{ svc: TestService }>('rate limits on the service clock', {} as never);

t.before(async (ctx) => {
  ctx.svc = await startTestService({
    env: { TEST_CLOCK: 'true', RATE_LIMIT_PER_MINUTE: '2', OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE: '1' },
    bootstrap: {
      ...demoBootstrap({}, [{ id: 'k', token: TOKEN, scopes: ['CATALOG_READ'] }]),
      oauth_applications: oauthBootstrap().oauth_applications,
    },
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const me = (svc: TestService) => svc.api('GET', '/me', { token: TOKEN });
const reset = (res: { headers: Headers }) => Number(res.headers.get('x-ratelimit-reset'));

t('partner routes: the budget is back once the clock passes the reset; not before', async ({ svc }) => {
  assert.equal([(await me(svc)).status, (await me(svc)).status], [200, 200]);
  const limited = await me(svc);
  assert.is(limited.status, 429);
  // Moved less than the window: still spent, and the reset named is the same instant.
  assert.is((await advance(svc, 10)).status, 200);
  const still = await me(svc);
  assert.is(still.status, 429);
  assert.is(reset(still), reset(limited), 'the reset moved with the clock');
  // Moved past that reset (an hour on: the minute is long over): a new minute's budget.
  assert.is((await advance(svc, 3600)).status, 200);
  const again = await me(svc);
  assert.is(again.status, 200, again.text);
  assert.is(again.headers.get('x-ratelimit-remaining'), '1');
});

t("the token endpoint's own budget follows the clock too", async ({ svc }) => {
  const ask = () =>
    tokenRequest(svc.url, { grant_type: 'authorization_code', code: 'unknown', redirect_uri: CALLBACK });
  assert.is((await ask()).status, 400);
  const limited = await ask();
  assert.is(limited.status, 429);
  assert.is((await advance(svc, 3600)).status, 200);
  assert.is((await ask()).status, 400, 'the budget is back: the request is answered');
});

t.run();

const signIns = suite<{ svc: TestService }>('sign-in limits on the service clock', {} as never);
signIns.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { TEST_CLOCK: 'true', SIGN_IN_RATE_LIMIT_PER_IP: '2' },
  });
});
signIns.after(async (ctx) => {
  await ctx.svc?.close();
});

signIns('the per-IP sign-in budget is back once the clock passes its 15 minutes', async ({ svc }) => {
  const b = new Browser(svc.url);
  const page = await b.get('/sign-in');
  assert.match((await signIn(b, page, 'a@demo.test', 'wrong password!')).text, /incorrect/);
  assert.match((await signIn(b, page, 'b@demo.test', 'wrong password!')).text, /incorrect/);
  assert.is((await signIn(b, page, 'manager@demo.test')).status, 429);
  assert.is((await advance(svc, 14 * 60)).status, 200);
  assert.is((await signIn(b, page, 'manager@demo.test')).status, 429, 'not before the window ends');
  assert.is((await advance(svc, 61)).status, 200);
  assert.is((await signIn(b, page, 'manager@demo.test')).status, 303, 'signed in');
});

signIns.run();
