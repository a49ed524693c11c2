// Connected applications (/dashboard) and the secrets of the whole flow kept out of the log: a manager
// sees each connected application, its scopes and since when, and disconnects it (every active token of
// it there is revoked; another application or restaurant is untouched). Every secret issued or received
// during the flow is then looked for in the captured log (access log included): none is there.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli as cli } from '../helpers/cli-in-process';
import { captureLog } from '../helpers/log-sink';
import {
  authorizeQuery,
  Browser,
  CALLBACK,
  consent,
  formFields,
  oauthBootstrap,
  PASSWORD,
  pkce,
  SECRETS,
  signIn,
  tokenRequest,
} from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const log = captureLog();
const t = suite<{ svc: TestService; secrets: string[] }>('Connected applications', {} as never);
t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap(), logger: log.logger });
  ctx.secrets = [PASSWORD, ...Object.values(SECRETS), 'off-secret-0123456789'];
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

async function connect(
  ctx: { svc: TestService; secrets: string[] },
  b: Browser,
  client: 'app_demo' | 'app_pub',
  restaurant: string,
) {
  const { verifier, challenge } = pkce();
  const back = await consent(b, {
    query: authorizeQuery({ challenge, client_id: client, scope: 'CATALOG_READ' }),
    restaurant,
  });
  const code = back.searchParams.get('code') as string;
  const res = await tokenRequest(
    ctx.svc.url,
    { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier },
    { client: [client, SECRETS[client]] },
  );
  assert.is(res.status, 200);
  ctx.secrets.push(code, verifier, res.body.access_token);
  return res.body.access_token as string;
}

t('signed out: the dashboard sends you to sign in and back', async ({ svc }) => {
  const b = new Browser(svc.url);
  const res = await b.get('/dashboard');
  assert.is(res.status, 303);
  assert.is(res.location, '/sign-in?next=%2Fdashboard');
  const page = await b.get(res.location as string);
  const ok = await signIn(b, page, 'solo@demo.test');
  assert.is(ok.location, '/dashboard');
});

t(
  'lists each application with its scopes and since when; Disconnect revokes its tokens there only',
  async (ctx) => {
    const { svc } = ctx;
    const b = new Browser(svc.url);
    const demo1 = await connect(ctx, b, 'app_demo', 'rest_demo');
    const demo2 = await connect(ctx, b, 'app_demo', 'rest_demo');
    const pub = await connect(ctx, b, 'app_pub', 'rest_demo');
    const elsewhere = await connect(ctx, b, 'app_demo', 'rest_three');
    const page = await b.get('/dashboard?restaurant=rest_demo');
    assert.is(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.match(page.text, /<h2>Demo POS<\/h2>/);
    assert.match(page.text, /<h2>Couvert Widget<\/h2>/);
    assert.match(page.text, /Connected since \d+ \w+ \d{4} at \d\d:\d\d · 2 active tokens/);
    assert.match(page.text, /See your tables, rooms, shifts/);
    assert.match(page.text, /<select id="restaurant" name="restaurant">/);
    for (const id of ['rest_demo', 'rest_two', 'rest_three'])
      assert.match(page.text, new RegExp(`<option value="${id}"`));

    // Cards by name: Couvert Widget, then Demo POS.
    assert.ok(page.text.indexOf('Couvert Widget') < page.text.indexOf('<h2>Demo POS'));
    const form = { ...formFields(page.text, '/dashboard/applications/disconnect'), client_id: 'app_demo' };
    // CSRF: without the session's token nothing changes.
    const forged = await b.post('/dashboard/applications/disconnect', {
      ...form,
      csrf_token: 'y'.repeat(43),
    });
    assert.is(forged.status, 403);
    assert.is((await svc.api('GET', '/me', { token: demo1 })).status, 200);
    // Asked first; nothing changes until it is confirmed.
    const asked = await b.post('/dashboard/applications/disconnect', form);
    assert.is(asked.status, 200);
    assert.match(asked.text, /<title>Disconnect Demo POS\? · Le Demo · Couvert<\/title>/);
    assert.is((await svc.api('GET', '/me', { token: demo1 })).status, 200);
    const done = await b.post('/dashboard/applications/disconnect', {
      ...formFields(asked.text, '/dashboard/applications/disconnect'),
    });
    assert.is(done.status, 303);
    assert.is(done.location, '/dashboard?restaurant=rest_demo&disconnected=app_demo');
    for (const token of [demo1, demo2]) {
      const me = await svc.api('GET', '/me', { token });
      assert.equal([me.status, me.body.error.code], [401, 'INVALID_AUTHENTICATION']);
    }
    assert.is((await svc.api('GET', '/me', { token: pub })).status, 200, 'another application stays');
    assert.is((await svc.api('GET', '/me', { token: elsewhere })).status, 200, 'another restaurant stays');
    const after = await b.get(done.location as string);
    assert.match(after.text, /Demo POS is disconnected/);
    assert.not.match(after.text, /<h2>Demo POS<\/h2>/);
    // Connecting again works: disconnection is not a ban.
    const again = await connect(ctx, b, 'app_demo', 'rest_demo');
    assert.is((await svc.api('GET', '/me', { token: again })).status, 200);
    const types: string[] = [];
    for await (const e of svc.rt.events.readAll()) types.push(e.type);
    assert.ok(types.includes('OAuthApplicationDisconnected'));
  },
);

t(
  "with the restaurant's API option off, a third-party application is shown paused, a published one not",
  async (ctx) => {
    const { svc } = ctx;
    const b = new Browser(svc.url);
    await connect(ctx, b, 'app_demo', 'rest_three');
    await connect(ctx, b, 'app_pub', 'rest_three');
    // The card of each application: from its name to the next card.
    const card = (html: string, name: string) => {
      const from = html.indexOf(`<h2>${name}</h2>`);
      assert.ok(from >= 0, name);
      const end = html.indexOf('</li>', from);
      return html.slice(from, end);
    };
    const before = await b.get('/dashboard?restaurant=rest_three');
    assert.not.match(before.text, /Paused/, 'the option is on');
    await cli(svc, 'restaurants api-option', { id: 'rest_three', enabled: 'false' });
    try {
      const page = await b.get('/dashboard?restaurant=rest_three');
      assert.match(
        card(page.text, 'Demo POS'),
        /Paused: Demo POS is a third-party application, and Trois Étoiles’s API option is off/,
      );
      assert.match(card(page.text, 'Demo POS'), /Once the option is on again, it can:/);
      assert.not.match(
        card(page.text, 'Couvert Widget'),
        /Paused/,
        'published by the operator: works everywhere',
      );
      assert.match(card(page.text, 'Couvert Widget'), /It can:/);
    } finally {
      await cli(svc, 'restaurants api-option', { id: 'rest_three', enabled: 'true' });
    }
    assert.not.match((await b.get('/dashboard?restaurant=rest_three')).text, /Paused/);
  },
);

t('a restaurant the user does not manage can be neither shown nor disconnected', async (ctx) => {
  const { svc } = ctx;
  const manager = new Browser(svc.url);
  const token = await connect(ctx, manager, 'app_pub', 'rest_three');
  const solo = new Browser(svc.url);
  await signIn(solo, await solo.get('/sign-in'), 'solo@demo.test');
  // As on every dashboard page, another restaurant named in the URL is not found (not quietly replaced).
  const other = await solo.get('/dashboard?restaurant=rest_three');
  assert.is(other.status, 404);
  assert.match(other.text, /<title>Page not found · Couvert<\/title>/);
  assert.not.match(other.text, /Couvert Widget/);
  const page = await solo.get('/dashboard');
  assert.match(page.text, /act for <strong>Le Demo<\/strong>/);
  assert.not.match(page.text, /<select/, 'one restaurant: no switcher');
  const form = formFields(page.text, '/sign-out');
  const res = await solo.post('/dashboard/applications/disconnect', {
    csrf_token: form.csrf_token as string,
    restaurant_id: 'rest_three',
    client_id: 'app_pub',
    confirm: 'yes',
  });
  assert.is(res.status, 404);
  assert.is((await svc.api('GET', '/me', { token })).status, 200);
  const viewer = new Browser(svc.url);
  await signIn(viewer, await viewer.get('/sign-in'), 'viewer@demo.test');
  assert.match((await viewer.get('/dashboard')).text, /You do not manage integrations for any restaurant/);
});

t('no secret of the flow reaches the log', async ({ svc, secrets }) => {
  // A few more paths that handle secrets: a failed sign-in, a replayed code, a revocation, bad clients.
  const b = new Browser(svc.url);
  const wrongPassword = 'wrong-but-secret-password';
  secrets.push(wrongPassword);
  await signIn(b, await b.get('/sign-in'), 'manager@demo.test', wrongPassword);
  const { verifier, challenge } = pkce();
  await signIn(b, await b.get('/sign-in'), 'manager@demo.test');
  const back = await consent(b, { query: authorizeQuery({ challenge }), restaurant: 'rest_demo' });
  const code = back.searchParams.get('code') as string;
  const form = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier };
  const token = (await tokenRequest(svc.url, form)).body.access_token as string;
  await tokenRequest(svc.url, form);
  await tokenRequest(svc.url, form, { client: ['app_demo', 'a-wrong-client-secret'] });
  await fetch(`${svc.url}/api/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, client_id: 'app_demo', client_secret: SECRETS.app_demo }).toString(),
  });
  secrets.push(code, verifier, token, 'a-wrong-client-secret', ...b.cookies.values());
  const page = await b.get('/dashboard');
  secrets.push(formFields(page.text, '/sign-out').csrf_token as string);
  // Nothing to wait for: with a logger of the test's, the access log writes through it (accessLogVia,
  // not the batched file log), each request's line before its answer leaves, as every other line.
  svc.rt.logger.flush?.();
  const text = log.lines.join('');
  assert.ok(log.lines.length > 20, `the log was captured (${log.lines.length} lines)`);
  assert.match(text, /\/api\/oauth\/token/, 'token requests are in the access log');
  for (const secret of secrets)
    assert.not.ok(text.includes(secret), `a secret is in the log: ${secret.slice(0, 6)}…`);
});

t.run();
