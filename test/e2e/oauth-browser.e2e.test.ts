// The whole connection flow as a restaurant manager and a partner live it: headless Chromium clicks
// through sign-in, restaurant choice and consent (no JavaScript needed by the pages), a standard OAuth
// client (oauth4webapi) discovers the endpoints from the RFC 8414 metadata, sends PKCE S256, checks
// state and iss, and exchanges the code; the token reads the API; the manager then disconnects the
// application on Connected applications and the token stops working. Screenshots of every page at
// desktop and phone widths go to SCREENSHOT_DIR (a temporary directory by default).
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import escapeHtml from 'escape-html';
import * as oauth from 'oauth4webapi';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertAccessible, assertAccessibleAtBothWidths } from '../helpers/a11y';
import { browserAvailable, clickToLoad, launchChromium } from '../helpers/browser';
import { CALLBACK, oauthBootstrap, PASSWORD, SECRETS } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const haveBrowser = browserAvailable('OAuth flow');

interface Ctx {
  svc: TestService;
  callback: Server;
  redirectUri: string;
  hits: string[];
  /** A partner whose callback listens on the IPv6 loopback (`http://[::1]:port`, RFC 8252 §7.3). */
  callback6: Server;
  /** null when this host has no IPv6 loopback to listen on. */
  redirectUri6: string | null;
  hits6: string[];
  /** Couvert Widget's logo URL: a loopback port nothing listens on. */
  unreachableLogo: string;
}
const t = suite<Ctx>('OAuth flow: headless Chromium and a standard OAuth client', {} as Ctx);
t.before(async (ctx) => {
  // The partner's callback: a loopback server (RFC 8252 allows http there) that shows a page.
  ctx.hits = [];
  // Its /framing page is another site (another origin on loopback) framing the page named by ?src=.
  ctx.callback = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    if (url.pathname === '/framing') {
      const src = escapeHtml(url.searchParams.get('src') ?? '');
      res.end(`<!doctype html><title>Another site</title><iframe id="f" src="${src}"></iframe>`);
      return;
    }
    if (url.pathname === '/callback') ctx.hits.push(req.url ?? '');
    res.end('<!doctype html><title>Demo POS</title><h1>Demo POS: back from Couvert</h1>');
  });
  await new Promise<void>((resolve) => ctx.callback.listen(0, '127.0.0.1', resolve));
  ctx.redirectUri = `http://127.0.0.1:${(ctx.callback.address() as AddressInfo).port}/callback`;
  ctx.hits6 = [];
  ctx.callback6 = createServer((req, res) => {
    if (req.url?.startsWith('/callback')) ctx.hits6.push(req.url);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Demo POS</title><h1>Demo POS on [::1]</h1>');
  });
  // A host without an IPv6 loopback (some containers) cannot listen there: that one test says so.
  ctx.redirectUri6 = await new Promise<string | null>((resolve) => {
    ctx.callback6.once('error', () => resolve(null));
    ctx.callback6.listen(0, '::1', () =>
      resolve(`http://[::1]:${(ctx.callback6.address() as AddressInfo).port}/callback`),
    );
  });
  // Couvert Widget's logo is on a loopback port nothing listens on (one just closed): it never loads.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  ctx.unreachableLogo = `https://127.0.0.1:${(closed.address() as AddressInfo).port}/logo.png`;
  await new Promise((resolve) => closed.close(resolve));
  const bootstrap = oauthBootstrap(
    ctx.redirectUri6 ? [ctx.redirectUri, ctx.redirectUri6] : [ctx.redirectUri],
  );
  for (const app of bootstrap.oauth_applications)
    if (app.client_id === 'app_pub') Object.assign(app, { logo_url: ctx.unreachableLogo });
  ctx.svc = await startTestService({ bootstrap });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await new Promise((resolve) => ctx.callback?.close(resolve));
  if (ctx.callback6?.listening) await new Promise((resolve) => ctx.callback6.close(resolve));
});

const test = haveBrowser ? t : t.skip;
/** Whether this host can listen on the IPv6 loopback (some containers cannot): else that test is skipped, visibly. */
const ipv6Loopback = await new Promise<boolean>((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(false));
  probe.listen(0, '::1', () => probe.close(() => resolve(true)));
});
const testIpv6 = ipv6Loopback ? test : t.skip;

test('sign in, choose, allow; exchange with oauth4webapi; disconnect on the dashboard', async (ctx) => {
  const { svc, redirectUri } = ctx;
  const issuer = new URL(svc.url);
  const insecure = { [oauth.allowInsecureRequests]: true };
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
  assert.equal(as.code_challenge_methods_supported, ['S256']);
  const client: oauth.Client = { client_id: 'app_demo' };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint as string);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'CATALOG_READ RESERVATIONS_READ',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    restaurant_hint: 'trois-etoiles',
  }).toString();

  const browser = await launchChromium();
  const shots = process.env.SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-oauth-'));
  const problems: string[] = [];
  try {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      javaScriptEnabled: false,
    });
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('request', (r) => {
      const origin = new URL(r.url()).origin;
      if (origin !== issuer.origin && !r.url().startsWith(redirectUri))
        problems.push(`foreign request ${r.url()}`);
    });
    // The page's headings in order: the first is its h1, and none skips a level.
    const headingLevels = async () =>
      (await page.evaluate(
        "[...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map((h) => Number(h.tagName[1]))",
      )) as number[];
    const headingsInOrder = async () => {
      const levels = await headingLevels();
      assert.is(levels[0], 1, `the first heading is the h1 (levels ${levels.join(', ')})`);
      for (let i = 1; i < levels.length; i++)
        assert.ok((levels[i] as number) <= (levels[i - 1] as number) + 1, `levels ${levels.join(', ')}`);
    };
    /** Desktop and phone screenshots of the current page. */
    const shoot = async (name: string) => {
      await headingsInOrder();
      await page.screenshot({ path: join(shots, `oauth-${name}-desktop.png`), fullPage: true });
      await assertAccessible(page, name);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(shots, `oauth-${name}-phone.png`), fullPage: true });
      await assertAccessible(page, name);
      await page.setViewportSize({ width: 1280, height: 800 });
    };

    // A link no application could have made: the error page, not a redirect (in a page of its own:
    // its 400 is the console error the watch above would count).
    const unknown = new URL(url);
    unknown.searchParams.set('client_id', 'app_nobody');
    const errorPage = await context.newPage();
    await errorPage.goto(unknown.toString());
    assert.is(await errorPage.title(), 'This connection cannot be made · Couvert');
    await errorPage.screenshot({ path: join(shots, 'oauth-0-error-desktop.png'), fullPage: true });
    await assertAccessibleAtBothWidths(errorPage, 'the OAuth error page');
    await errorPage.close();

    await page.goto(url.toString());
    assert.is(await page.title(), 'Sign in · Couvert');
    await shoot('1-sign-in');
    // Keyboard order: email, password, then the button.
    await page.keyboard.press('Tab');
    await page.getByLabel('Email').fill('manager@demo.test');
    await page.getByLabel('Password').fill('not the password!');
    await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
    assert.match((await page.getByRole('alert').textContent()) ?? '', /incorrect/);
    await shoot('1b-sign-in-error');
    await page.getByLabel('Password').fill(PASSWORD);
    await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));

    assert.is(await page.title(), 'Choose a restaurant · Couvert');
    assert.ok(await page.getByLabel(/Trois Étoiles/).isChecked(), 'restaurant_hint preselects');
    assert.is(await page.getByLabel(/Chez Deux/).count(), 0, 'no API option: not offered');
    await shoot('2-choose-restaurant');
    await page.getByLabel(/Le Demo/).check();
    await clickToLoad(page, page.getByRole('button', { name: 'Continue' }));

    assert.is(await page.title(), 'Allow Demo POS · Couvert');
    assert.match((await page.locator('h1').textContent()) ?? '', /Allow Demo POS to access Le Demo\?/);
    assert.equal(await page.locator('ul.scopes li').allInnerTexts(), [
      'See your tables, rooms, shifts, prescribers, discounts and message templates',
      'See your reservations',
    ]);
    await shoot('3-consent');
    await clickToLoad(page, page.getByRole('button', { name: 'Allow' }));
    assert.ok(page.url().startsWith(redirectUri), page.url());

    // The partner's side, with a standard client: state and iss checked, PKCE verifier sent.
    const params = oauth.validateAuthResponse(as, client, new URL(page.url()), state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(SECRETS.app_demo),
      params,
      redirectUri,
      verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    assert.is(tokens.token_type, 'bearer');
    assert.is(tokens.scope, 'CATALOG_READ RESERVATIONS_READ');
    assert.equal(tokens.restaurant, { id: 'rest_demo', name: 'Le Demo', slug: 'le-demo' });
    const token = tokens.access_token;
    const me = await svc.api('GET', '/me', { token });
    assert.is(me.status, 200);
    assert.is(me.body.data.restaurant.id, 'rest_demo');
    // The same code again, through the same client: refused.
    const again = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(SECRETS.app_demo),
      params,
      redirectUri,
      verifier,
      insecure,
    );
    assert.is(again.status, 400);
    assert.is(((await again.json()) as { error: string }).error, 'invalid_grant');
    assert.is((await svc.api('GET', '/me', { token })).status, 401, 'the replay revoked it');

    // Connect again (the session is still there: straight to the choice), then disconnect on the dashboard.
    const verifier2 = oauth.generateRandomCodeVerifier();
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier2));
    url.searchParams.set('restaurant_hint', 'le-demo');
    await page.goto(url.toString());
    await clickToLoad(page, page.getByRole('button', { name: 'Continue' }));
    await clickToLoad(page, page.getByRole('button', { name: 'Allow' }));
    assert.ok(page.url().startsWith(redirectUri), page.url());
    const second = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(SECRETS.app_demo),
        oauth.validateAuthResponse(as, client, new URL(page.url()), state),
        redirectUri,
        verifier2,
        insecure,
      ),
    );
    assert.is((await svc.api('GET', '/me', { token: second.access_token })).status, 200);

    await page.goto(`${svc.url}/dashboard?restaurant=rest_demo`);
    assert.is(await page.title(), 'Connected applications · Couvert');
    assert.match(
      (await page.locator('.connections').textContent()) ?? '',
      /Demo POS[\s\S]*See your reservations/,
    );
    await shoot('4-connected-applications');
    await clickToLoad(page, page.getByRole('button', { name: 'Disconnect Demo POS' }));
    // The confirmation step (its button has the same name), then the disconnection.
    assert.match((await page.getByRole('alert').textContent()) ?? '', /revoked/);
    await clickToLoad(page, page.getByRole('button', { name: 'Disconnect Demo POS' }));
    assert.match((await page.getByRole('status').textContent()) ?? '', /Demo POS is disconnected/);
    assert.match((await page.locator('main').textContent()) ?? '', /No application is connected to Le Demo/);
    await shoot('5-disconnected');
    const after = await svc.api('GET', '/me', { token: second.access_token });
    assert.equal([after.status, after.body.error.code], [401, 'INVALID_AUTHENTICATION']);

    // The restaurant switcher, for a manager of several restaurants.
    await page.getByLabel('Restaurant').selectOption('rest_three');
    await clickToLoad(page, page.getByRole('button', { name: 'Show' }));
    assert.match(page.url(), /restaurant=rest_three/);

    // A page framed by another site is refused by the browser (frame-ancestors 'none'). goto() returns
    // once the framing page has loaded, its frame included: what the frame shows is final then.
    const framing = await context.newPage();
    const framed = async (src: string) => {
      await framing.goto(
        `${ctx.redirectUri.replace(/\/callback$/, '/framing')}?src=${encodeURIComponent(src)}`,
      );
      const frame = await (await framing.$('#f'))?.contentFrame();
      assert.ok(frame, 'the frame is there');
      return { url: frame.url(), text: (await frame.locator('body').textContent()) ?? '' };
    };
    // The watch is not blind: a page without the policy renders in that frame.
    const control = await framed(ctx.redirectUri.replace(/\/callback$/, '/elsewhere'));
    assert.match(control.text, /Demo POS: back from Couvert/, 'a page without the policy shows in the frame');
    const signInFramed = await framed(`${svc.url}/sign-in`);
    assert.not.ok(signInFramed.url.startsWith(svc.url), `the frame shows ${signInFramed.url}`);
    assert.not.match(signInFramed.text, /Sign in/, 'the sign-in page does not render inside a frame');
    await context.close();
  } finally {
    await browser.close();
  }
  assert.equal(problems, []);
  assert.ok(ctx.hits.length >= 2, 'the browser reached the partner’s callback');
  console.log(`screenshots: ${shots}`);
});

testIpv6(
  'an IPv6 loopback redirect URI: Allow reaches the callback (form-action can name it)',
  async (ctx) => {
    // A CSP source list cannot hold `http://[::1]:port` (browsers drop it), so the consent form's redirect
    // there was blocked by form-action and the manager could neither allow nor deny.
    const { svc, redirectUri6 } = ctx;
    assert.ok(redirectUri6, 'the [::1] callback listens (the probe above could)');
    const url = new URL(`${svc.url}/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: 'app_demo',
      redirect_uri: redirectUri6,
      response_type: 'code',
      scope: 'CATALOG_READ',
      state: 'st-ipv6',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const browser = await launchChromium();
    const blocked: string[] = [];
    try {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') blocked.push(m.text());
      });
      await page.goto(url.toString());
      await page.getByLabel('Email').fill('solo@demo.test');
      await page.getByLabel('Password').fill(PASSWORD);
      await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
      assert.is(await page.title(), 'Allow Demo POS · Couvert');
      await clickToLoad(page, page.getByRole('button', { name: 'Allow' }));
      assert.ok(page.url().startsWith(`${redirectUri6}?code=`), page.url());
      assert.is(new URL(page.url()).searchParams.get('state'), 'st-ipv6');
      await context.close();
    } finally {
      await browser.close();
    }
    assert.is(ctx.hits6.length, 1, 'the browser reached the [::1] callback');
    assert.equal(blocked, []);
  },
);

test('a logo that cannot be loaded shows the initial-letter tile, not a broken image', async (ctx) => {
  const url = new URL(`${ctx.svc.url}/oauth/authorize`);
  url.search = new URLSearchParams({
    client_id: 'app_pub',
    redirect_uri: CALLBACK,
    response_type: 'code',
    scope: 'CATALOG_READ',
    state: 'st-logo',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }).toString();
  const shots = process.env.SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-oauth-logo-'));
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      javaScriptEnabled: false,
    });
    const page = await context.newPage();
    await page.goto(url.toString());
    await page.getByLabel('Email').fill('solo@demo.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
    assert.is(await page.title(), 'Allow Couvert Widget · Couvert');
    const logo = page.locator('.app img.logo');
    assert.is(await logo.getAttribute('src'), ctx.unreachableLogo);
    // The browser gave up on it (a refused connection), without any script of the page's.
    assert.is(
      await page.evaluate(
        "(() => { const i = document.querySelector('.app img.logo'); return i.complete && i.naturalWidth; })()",
      ),
      0,
    );
    // What shows instead is the tile of its initial, over the whole image box (the broken-image icon
    // is under it): a pseudo-element a broken image renders and a loaded one does not.
    const tile = await page.evaluate(
      "(() => { const s = getComputedStyle(document.querySelector('.app img.logo'), '::before'); return { content: s.content, position: s.position, width: s.width, height: s.height }; })()",
    );
    assert.equal(tile, { content: '"C"', position: 'absolute', width: '56px', height: '56px' });
    await page.screenshot({
      path: join(shots, 'oauth-3b-consent-logo-unreachable-phone.png'),
      fullPage: true,
    });
    await assertAccessibleAtBothWidths(page, 'consent, a logo that does not load');
    await context.close();
  } finally {
    await browser.close();
  }
});

t.run();
