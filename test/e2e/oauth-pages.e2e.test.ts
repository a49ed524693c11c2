// GET /oauth/authorize and its pages end to end (spec §4 OAuth endpoints 1, DESIGN §3 OAuth pages):
// what is never redirected, what is redirected with an error, the restaurants offered, CSRF, session
// fixation, and the headers that keep the pages out of frames.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setUserPassword } from '../../commands/oauth/user-handler';
import {
  authorizeQuery,
  Browser,
  CALLBACK,
  consent,
  formFields,
  oauthBootstrap,
  PASSWORD,
  pageText,
  pkce,
  signIn,
} from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('OAuth pages', {} as never);
t.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { SIGN_IN_FAILURES_PER_ACCOUNT: '3' },
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const STRICT =
  /^default-src 'none'; style-src 'self'; img-src 'self'[^;]*; form-action 'self'[^;]*; frame-ancestors 'none'; base-uri 'none'$/;

function assertPageHeaders(res: { headers: Headers }, where: string) {
  assert.match(res.headers.get('content-security-policy') ?? '', STRICT, where);
  assert.is(res.headers.get('x-frame-options'), 'DENY', where);
  assert.is(res.headers.get('cache-control'), 'no-store', where);
  assert.is(res.headers.get('content-type'), 'text/html; charset=utf-8', where);
  assert.is(res.headers.get('x-content-type-options'), 'nosniff', where);
}

t(
  'never redirected: an unknown or disabled client, a redirect_uri not registered character for character',
  async ({ svc }) => {
    const b = new Browser(svc.url);
    const cases: [string, RegExp][] = [
      [authorizeQuery({ client_id: 'app_nope' }), /not registered/],
      [authorizeQuery({ client_id: 'app_off' }), /disabled/],
      [authorizeQuery({ client_id: '' }), /client_id is missing/],
      [`${authorizeQuery()}&client_id=app_pub`, /more than once/],
      [authorizeQuery({ redirect_uri: `${CALLBACK}/` }), /not one it registered/],
      [authorizeQuery({ redirect_uri: 'https://POS.example.test/callback' }), /not one it registered/],
      [
        authorizeQuery({ redirect_uri: 'https://pos.example.test/callback?tenant=2' }),
        /not one it registered/,
      ],
      [authorizeQuery({ redirect_uri: 'https://pos.example.test:443/callback' }), /not one it registered/],
      [authorizeQuery({ redirect_uri: 'https://evil.example/callback' }), /not one it registered/],
      [authorizeQuery({ redirect_uri: '' }), /redirect_uri is missing/],
    ];
    for (const [query, why] of cases) {
      const res = await b.get(`/oauth/authorize?${query}`);
      assert.is(res.status, 400, query);
      assert.is(res.location, null, `${query} is not redirected`);
      assert.match(res.text, why, query);
      assertPageHeaders(res, query);
    }
  },
);

t('other errors go back to the application with error, error_description, state and iss', async ({ svc }) => {
  const b = new Browser(svc.url);
  const cases: [string, string][] = [
    [authorizeQuery({ response_type: 'token' }), 'unsupported_response_type'],
    [authorizeQuery({ response_type: '' }), 'invalid_request'],
    [authorizeQuery({ code_challenge_method: 'plain' }), 'invalid_request'],
    [authorizeQuery({ code_challenge_method: '' }), 'invalid_request'],
    [authorizeQuery({ code_challenge: '' }), 'invalid_request'],
    [authorizeQuery({ code_challenge: 'too-short' }), 'invalid_request'],
    [authorizeQuery({ scope: 'CATALOG_READ NOPE' }), 'invalid_scope'],
    [authorizeQuery({ scope: 'CUSTOMERS_READ' }), 'invalid_scope'],
    [authorizeQuery({ scope: ' ' }), 'invalid_scope'],
    [`${authorizeQuery()}&scope=CATALOG_READ`, 'invalid_request'],
    [authorizeQuery({ restaurant_hint: 'x'.repeat(65) }), 'invalid_request'],
    // %-escapes that are not UTF-8 (Latin-1, a broken one): read as U+FFFD, the request went on with
    // a value nobody sent (a hint naming no restaurant, a scope list that was not the one asked).
    [`${authorizeQuery({ restaurant_hint: undefined })}&restaurant_hint=caf%E9`, 'invalid_request'],
    [
      authorizeQuery({ scope: 'CATALOG_READ' }).replace('scope=CATALOG_READ', 'scope=CATALOG_READ%zz'),
      'invalid_request',
    ],
  ];
  for (const [query, error] of cases) {
    const res = await b.get(`/oauth/authorize?${query}`);
    assert.is(res.status, 303, query);
    const url = new URL(res.location as string);
    assert.is(`${url.origin}${url.pathname}`, CALLBACK, query);
    assert.is(url.searchParams.get('error'), error, query);
    assert.match(url.searchParams.get('error_description') ?? '', /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/, query);
    assert.is(url.searchParams.get('state'), 'st-123', query);
    assert.is(url.searchParams.get('iss'), svc.url, query);
    assert.not.ok(url.searchParams.get('code'));
  }
  // error_description keeps to RFC 6749's characters (printable ASCII but " and \\), also where it names
  // what the request held: an unknown scope named with a quote, a backslash, a letter outside ASCII.
  const odd = await b.get(`/oauth/authorize?${authorizeQuery({ scope: 'CATALOG_READ "NÖPE\\' })}`);
  const oddUrl = new URL(odd.location as string);
  assert.is(oddUrl.searchParams.get('error'), 'invalid_scope');
  assert.is(oddUrl.searchParams.get('error_description'), "unknown scope: 'N?PE/");
  // A state that is not UTF-8 text could not be returned as sent (it went back as U+FFFD, which the
  // application would not recognise): said on the page, not redirected.
  for (const state of ['st%E9', 'st%ED%A0%80', '50%']) {
    const res = await b.get(`/oauth/authorize?${authorizeQuery().replace('state=st-123', `state=${state}`)}`);
    assert.is(res.status, 400, state);
    assert.is(res.location, null, state);
    assert.match(pageText(res.text), /sent a state that is not text/, state);
  }
  // No state: the error still goes back, without one.
  const noState = await b.get(`/oauth/authorize?${authorizeQuery({ state: '' })}`);
  assert.is(new URL(noState.location as string).searchParams.get('error'), 'invalid_request');
  // The registered URI's own query is kept; unknown parameters are ignored (RFC 6749 §3.1).
  const own = await b.get(
    `/oauth/authorize?${authorizeQuery({ redirect_uri: 'https://pos.example.test/callback?tenant=1', response_type: 'token' })}&foo=bar`,
  );
  const url = new URL(own.location as string);
  assert.is(url.searchParams.get('tenant'), '1');
  assert.is(url.searchParams.get('error'), 'unsupported_response_type');
});

t(
  'sign-in first: a wrong password says so without telling which; success starts a new session (no fixation)',
  async ({ svc }) => {
    const b = new Browser(svc.url);
    const query = authorizeQuery();
    const page = await b.get(`/oauth/authorize?${query}`);
    assert.is(page.status, 200);
    assertPageHeaders(page, 'sign-in');
    assert.match(page.text, /Sign in to connect <strong>Demo POS<\/strong>/);
    assert.match(page.text, /<label for="email">Email<\/label>/);
    assert.match(page.text, /<label for="password">Password<\/label>/);
    const cookie = page.headers.getSetCookie()[0] as string;
    assert.match(cookie, /^couvert_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const anonymous = b.cookies.get('couvert_session');
    const wrong = await signIn(b, page, 'manager@demo.test', 'not the password!');
    assert.is(wrong.status, 200);
    assert.match(wrong.text, /The email or password is incorrect/);
    const unknown = await signIn(b, page, 'nobody@demo.test');
    assert.is(unknown.status, 200);
    assert.match(unknown.text, /The email or password is incorrect/);
    const ok = await signIn(b, page, 'Manager@Demo.test ');
    assert.is(ok.status, 303);
    assert.is(ok.location, `/oauth/authorize?${query}`);
    const signedIn = b.cookies.get('couvert_session');
    assert.ok(signedIn && signedIn !== anonymous, 'a new session id after sign-in');
    // The old id is dead: presenting it again shows the sign-in page.
    const fixated = new Browser(svc.url);
    fixated.cookies.set('couvert_session', anonymous as string);
    assert.match((await fixated.get(`/oauth/authorize?${authorizeQuery()}`)).text, /action="\/sign-in"/);
    const next = await b.get(ok.location as string);
    assert.match(next.text, /Choose a restaurant/);
  },
);

t(
  'restaurant choice: only restaurants the user manages that allow the application; the hint preselects',
  async ({ svc }) => {
    const b = new Browser(svc.url);
    await signIn(b, await b.get('/sign-in'), 'manager@demo.test');
    // Third-party: rest_two has no API option.
    const third = await b.get(`/oauth/authorize?${authorizeQuery({ restaurant_hint: 'trois-etoiles' })}`);
    assertPageHeaders(third, 'choice');
    assert.match(third.text, /value="rest_demo" required>/);
    assert.match(third.text, /value="rest_three" required checked>/);
    assert.not.match(third.text, /rest_two/);
    const byId = await b.get(`/oauth/authorize?${authorizeQuery({ restaurant_hint: 'rest_demo' })}`);
    assert.match(byId.text, /value="rest_demo" required checked>/);
    const notAllowed = await b.get(`/oauth/authorize?${authorizeQuery({ restaurant_hint: 'rest_two' })}`);
    assert.match(notAllowed.text, /suggested a restaurant you cannot connect it to/);
    // Published by the operator: every restaurant the user manages.
    const pub = await b.get(
      `/oauth/authorize?${authorizeQuery({ client_id: 'app_pub', scope: 'CATALOG_READ' })}`,
    );
    for (const id of ['rest_demo', 'rest_two', 'rest_three'])
      assert.match(pub.text, new RegExp(`value="${id}"`));
    // A restaurant not offered cannot be forced through the form.
    const fields = formFields(third.text, '/oauth/authorize/restaurant');
    const forced = await b.post('/oauth/authorize/restaurant', { ...fields, restaurant_id: 'rest_two' });
    assert.match(forced.text, /cannot be connected to this application/);
    const decided = await b.post('/oauth/authorize/decision', {
      ...fields,
      restaurant_id: 'rest_two',
      decision: 'allow',
    });
    assert.is(decided.status, 200, 'no code for a restaurant not offered');
    assert.match(decided.text, /Choose a restaurant/);
  },
);

t(
  'consent names the application, the restaurant and each scope in plain words; deny goes back with access_denied',
  async ({ svc }) => {
    const b = new Browser(svc.url);
    await signIn(b, await b.get('/sign-in'), 'solo@demo.test');
    const page = await b.get(`/oauth/authorize?${authorizeQuery({ scope: 'CATALOG_READ WEBHOOKS_WRITE' })}`);
    assert.match(page.text, /Allow Demo POS to access Le Demo\?/);
    assert.match(page.text, /See your tables, rooms, shifts/);
    assert.match(page.text, /Be notified of changes \(webhooks\)/);
    assert.not.match(page.text, /See your reservations/);
    assert.match(page.text, /Third-party application/);
    assert.match(
      page.headers.get('content-security-policy') ?? '',
      /form-action 'self' https:\/\/pos\.example\.test;/,
    );
    const back = await consent(b, { query: authorizeQuery(), decision: 'deny' });
    assert.is(back.searchParams.get('error'), 'access_denied');
    assert.is(back.searchParams.get('state'), 'st-123');
    assert.is(back.searchParams.get('iss'), svc.url);
  },
);

t('no restaurant to offer: a page that sends the person back with access_denied', async ({ svc }) => {
  const b = new Browser(svc.url);
  await signIn(b, await b.get('/sign-in'), 'viewer@demo.test');
  const page = await b.get(`/oauth/authorize?${authorizeQuery()}`);
  assert.match(page.text, /No restaurant to connect/);
  const back = await b.post('/oauth/authorize/decision', {
    ...formFields(page.text, '/oauth/authorize/decision'),
    decision: 'deny',
  });
  assert.is(new URL(back.location as string).searchParams.get('error'), 'access_denied');
});

t('CSRF: a form without the session’s token changes nothing and issues no code', async ({ svc }) => {
  const b = new Browser(svc.url);
  await signIn(b, await b.get('/sign-in'), 'solo@demo.test');
  const page = await b.get(`/oauth/authorize?${authorizeQuery()}`);
  const fields = formFields(page.text, '/oauth/authorize/decision');
  const forged = await b.post('/oauth/authorize/decision', {
    ...fields,
    csrf_token: 'x'.repeat(43),
    decision: 'allow',
  });
  assert.is(forged.status, 403);
  assert.is(forged.location, null);
  assert.match(forged.text, /This form has expired/);
  // Another person's browser (its own session) with this page's token: refused too.
  const other = new Browser(svc.url);
  await signIn(other, await other.get('/sign-in'), 'manager@demo.test');
  assert.is((await other.post('/oauth/authorize/decision', { ...fields, decision: 'allow' })).status, 403);
  // No session at all.
  assert.is(
    (await new Browser(svc.url).post('/oauth/authorize/decision', { ...fields, decision: 'allow' })).status,
    403,
  );
  // Sign-in itself needs the token (no login CSRF).
  const loginForged = await new Browser(svc.url).post('/sign-in', {
    csrf_token: 'x'.repeat(43),
    next: '/dashboard',
    email: 'solo@demo.test',
    password: PASSWORD,
  });
  assert.is(loginForged.status, 403);
  assert.is(loginForged.location, null);
  // A missing field is refused as a page, not JSON.
  const missing = await b.post('/oauth/authorize/decision', {
    authorization: fields.authorization as string,
    decision: 'allow',
  });
  assert.is(missing.status, 400);
  assert.is(missing.headers.get('content-type'), 'text/html; charset=utf-8');
  // The genuine form still works.
  const ok = await b.post('/oauth/authorize/decision', { ...fields, decision: 'allow' });
  assert.ok(new URL(ok.location as string).searchParams.get('code'));
});

t('the longest state the spec allows survives sign-in, the choice and the consent', async ({ svc }) => {
  // 1,024 characters of non-Latin text: 9,216 characters percent-encoded, over what the forms carried.
  const state = '€'.repeat(1024);
  const b = new Browser(svc.url);
  const first = await b.get(`/oauth/authorize?${authorizeQuery({ state })}`);
  assert.is(first.status, 200);
  const signedIn = await signIn(b, first, 'manager@demo.test');
  assert.is(signedIn.status, 303, signedIn.text.slice(0, 300));
  const choice = await b.get(signedIn.location as string);
  const consentPage = await b.post('/oauth/authorize/restaurant', {
    ...formFields(choice.text, '/oauth/authorize/restaurant'),
    restaurant_id: 'rest_demo',
  });
  assert.is(consentPage.status, 200, consentPage.text.slice(0, 300));
  const ok = await b.post('/oauth/authorize/decision', {
    ...formFields(consentPage.text, '/oauth/authorize/decision'),
    decision: 'allow',
  });
  assert.is(ok.status, 303, ok.text.slice(0, 300));
  const back = new URL(ok.location as string);
  assert.is(back.searchParams.get('state'), state);
  assert.ok(back.searchParams.get('code'));
});

t('a state with a backslash left as it is in the link survives sign-in', async ({ svc }) => {
  // A browser leaves a backslash unencoded in a query (WHATWG's query percent-encode set lacks it): the
  // sign-in's next= held it raw and was refused as a whole, so the manager landed on the dashboard.
  const state = 'a\\b|c';
  const query = authorizeQuery({ state: 'STATE' }).replace('STATE', state);
  const b = new Browser(svc.url);
  const first = await b.get(`/oauth/authorize?${query}`);
  assert.is(first.status, 200);
  const signedIn = await signIn(b, first, 'solo@demo.test');
  assert.is(signedIn.status, 303, signedIn.text.slice(0, 300));
  assert.match(
    signedIn.location ?? '',
    /^\/oauth\/authorize\?/,
    'back to the authorization, not the dashboard',
  );
  const consentPage = await b.get(signedIn.location as string);
  const ok = await b.post('/oauth/authorize/decision', {
    ...formFields(consentPage.text, '/oauth/authorize/decision'),
    decision: 'allow',
  });
  assert.is(ok.status, 303, ok.text.slice(0, 300));
  const back = new URL(ok.location as string);
  assert.is(back.searchParams.get('state'), state);
  assert.ok(back.searchParams.get('code'));
});

t('a form sent once the session is gone offers to start the same request again', async ({ svc }) => {
  const b = new Browser(svc.url);
  await signIn(b, await b.get('/sign-in'), 'solo@demo.test');
  const query = authorizeQuery({ state: 'kept-state' });
  const page = await b.get(`/oauth/authorize?${query}`);
  const fields = formFields(page.text, '/oauth/authorize/decision');
  // The session ended meanwhile (expired, or signed out in another tab): the browser has no session now.
  b.cookies.clear();
  const gone = await b.post('/oauth/authorize/decision', { ...fields, decision: 'allow' });
  assert.is(gone.status, 403);
  assert.is(gone.location, null, 'nothing allowed');
  assert.match(gone.text, /This form has expired/);
  const restart = /<a class="button secondary" href="([^"]+)">Sign in and start again<\/a>/.exec(gone.text);
  assert.ok(restart, 'a way on');
  const href = ((restart as RegExpExecArray)[1] as string).replace(/&amp;/g, '&');
  assert.is(href, `/oauth/authorize?${query}`);
  // It leads to sign-in, then to the same consent.
  const again = await b.get(href);
  const signedIn = await signIn(b, again, 'solo@demo.test');
  const consentPage = await b.get(signedIn.location as string);
  const ok = await b.post('/oauth/authorize/decision', {
    ...formFields(consentPage.text, '/oauth/authorize/decision'),
    decision: 'allow',
  });
  const back = new URL(ok.location as string);
  assert.is(back.searchParams.get('state'), 'kept-state');
  assert.ok(back.searchParams.get('code'));
});

t(
  'the request is checked again at every step: a tampered authorization field is refused',
  async ({ svc }) => {
    const b = new Browser(svc.url);
    await signIn(b, await b.get('/sign-in'), 'solo@demo.test');
    const page = await b.get(`/oauth/authorize?${authorizeQuery()}`);
    const fields = formFields(page.text, '/oauth/authorize/decision');
    const widened = (fields.authorization as string).replace('scope=CATALOG_READ', 'scope=CUSTOMERS_READ');
    const res = await b.post('/oauth/authorize/decision', {
      ...fields,
      authorization: widened,
      decision: 'allow',
    });
    assert.is(new URL(res.location as string).searchParams.get('error'), 'invalid_scope');
    const elsewhere = (fields.authorization as string).replace(
      encodeURIComponent(CALLBACK),
      encodeURIComponent('https://evil.example/cb'),
    );
    const page2 = await b.post('/oauth/authorize/decision', {
      ...fields,
      authorization: elsewhere,
      decision: 'allow',
    });
    assert.is(page2.status, 400);
    assert.is(page2.location, null);
  },
);

t(
  'sign-in attempts are limited per account: past the limit even the right password waits',
  async ({ svc }) => {
    const b = new Browser(svc.url);
    const page = await b.get('/sign-in');
    for (let i = 0; i < 3; i++)
      assert.match((await signIn(b, page, 'solo@demo.test', 'wrong password!')).text, /incorrect/);
    const held = await signIn(b, page, 'solo@demo.test');
    assert.is(held.status, 429);
    assert.match(held.text, /Too many sign-in attempts/);
    // Another account from the same browser is not held.
    const other = new Browser(svc.url);
    assert.is((await signIn(other, await other.get('/sign-in'), 'manager@demo.test')).status, 303);
  },
);

t('sign-out ends the session; next= never leaves the site', async ({ svc }) => {
  const b = new Browser(svc.url);
  const page = await b.get('/sign-in?next=https://evil.example/');
  assert.match(page.text, /name="next" value="\/dashboard"/);
  const ok = await signIn(b, await b.get('/sign-in?next=//evil.example'), 'manager@demo.test');
  assert.is(ok.location, '/dashboard');
  const dash = await b.get('/dashboard');
  assert.is(dash.status, 200);
  const out = await b.post('/sign-out', formFields(dash.text, '/sign-out'));
  assert.is(out.location, '/sign-in');
  assert.is((await b.get('/dashboard')).status, 303);
});

t(
  'next= with text outside ASCII (a link’s é, €, a control character) leads there encoded, not to a 500',
  async ({ svc }) => {
    for (const [next, location] of [
      [
        '/dashboard?restaurant=rest_demo&utm_campaign=café',
        '/dashboard?restaurant=rest_demo&utm_campaign=caf%C3%A9',
      ],
      ['/dashboard?utm_campaign=€\u0001', '/dashboard?utm_campaign=%E2%82%AC%01'],
    ] as const) {
      const b = new Browser(svc.url);
      const page = await b.get(`/sign-in?next=${encodeURIComponent(next)}`);
      const signedIn = await signIn(b, page, 'manager@demo.test');
      assert.is(signedIn.status, 303, signedIn.text.slice(0, 300));
      assert.is(signedIn.location, location);
      // Already signed in, the sign-in page sends on at once, the same way.
      const again = await b.get(`/sign-in?next=${encodeURIComponent(next)}`);
      assert.is(again.status, 303);
      assert.is(again.location, location);
      assert.is((await b.get(location)).status, 200);
    }
  },
);

t(
  'a long authorization request (a client packing its state) survives signing in: back to it, not to /dashboard',
  async ({ svc }) => {
    // state is at most 1,024 characters; outside ASCII each takes up to 9 in the query (%E2%82%AC).
    const query = authorizeQuery({ state: '€'.repeat(700) });
    assert.ok(query.length > 6_000);
    const b = new Browser(svc.url);
    const page = await b.get(`/oauth/authorize?${query}`);
    assert.match(page.text, /action="\/sign-in"/);
    const ok = await signIn(b, page, 'manager@demo.test');
    assert.is(ok.status, 303, ok.text.slice(0, 300));
    assert.is(ok.location, `/oauth/authorize?${query}`);
  },
);

t(
  'a visitor who has not signed in is not stored: page views without a cookie add no session',
  async ({ svc }) => {
    const sessions = svc.rt.docs.collection('web_sessions');
    const before = await sessions.count({});
    // A crawler (or someone filling the store) asks for the sign-in pages without ever keeping a cookie.
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${svc.url}${i % 2 ? '/sign-in' : `/oauth/authorize?${authorizeQuery()}`}`);
      assert.is(res.status, 200);
      await res.text();
    }
    assert.is(await sessions.count({}), before, 'nothing stored for anonymous visitors');
    // The form still works, and only a forged token is refused.
    const b = new Browser(svc.url);
    const page = await b.get('/sign-in');
    const forged = await b.post('/sign-in', {
      ...formFields(page.text, '/sign-in'),
      csrf_token: 'x'.repeat(43),
      email: 'manager@demo.test',
      password: PASSWORD,
    });
    assert.is(forged.status, 403);
    assert.is(await sessions.count({}), before);
    const ok = await signIn(b, page, 'manager@demo.test');
    assert.is(ok.status, 303);
    assert.is(await sessions.count({}), before + 1, 'signing in stores the session');
    // Another visitor's page (another cookie) does not carry this visitor's token.
    const other = new Browser(svc.url);
    const theirs = formFields((await other.get('/sign-in')).text, '/sign-in').csrf_token;
    assert.is.not(theirs, formFields(page.text, '/sign-in').csrf_token);
  },
);

t('the stylesheet is a file on this origin', async ({ svc }) => {
  const res = await fetch(`${svc.url}/assets/couvert.css`);
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'text/css; charset=utf-8');
  assert.match(await res.text(), /:focus-visible/);
  assert.is((await fetch(`${svc.url}/assets/nope.css`)).status, 404);
});

t.run();

const limited = suite<{ svc: TestService }>('OAuth pages: sign-in limit per IP', {} as never);
limited.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap(), env: { SIGN_IN_RATE_LIMIT_PER_IP: '2' } });
});
limited.after(async (ctx) => {
  await ctx.svc?.close();
});
limited('SIGN_IN_RATE_LIMIT_PER_IP attempts from one IP, whatever the accounts', async ({ svc }) => {
  const b = new Browser(svc.url);
  const page = await b.get('/sign-in');
  assert.match((await signIn(b, page, 'a@demo.test', 'wrong password!')).text, /incorrect/);
  assert.match((await signIn(b, page, 'b@demo.test', 'wrong password!')).text, /incorrect/);
  assert.is((await signIn(b, page, 'manager@demo.test')).status, 429);
  void pkce;
});
limited.run();

const proxied = suite<{ svc: TestService }>('OAuth pages: sign-in limit behind a trusted proxy', {} as never);
proxied.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { SIGN_IN_RATE_LIMIT_PER_IP: '2', TRUST_PROXY: 'true' },
  });
});
proxied.after(async (ctx) => {
  await ctx.svc?.close();
});
proxied(
  'TRUST_PROXY: the address the proxy appended is the key; what the client wrote before it is not',
  async ({ svc }) => {
    const b = new Browser(svc.url);
    const page = await b.get('/sign-in');
    const from = (client: string, proxy: string) => ({ 'x-forwarded-for': `${client}, ${proxy}` });
    const attempt = (headers: Record<string, string>) =>
      b.post(
        '/sign-in',
        { ...formFields(page.text, '/sign-in'), email: 'a@demo.test', password: 'wrong password!' },
        headers,
      );
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await attempt(from(`10.0.0.${i}`, '203.0.113.9'))).status);
    assert.equal(
      statuses.map((s) => s === 429),
      [false, false, true],
      'one budget for 203.0.113.9',
    );
    assert.is.not(
      (await attempt(from('10.0.0.1', '203.0.113.10'))).status,
      429,
      'another client has its own',
    );
  },
);
proxied.run();

// The per-account limit holds for attempts made at the same moment: each attempt takes its place in
// the account's budget before the password is checked (scrypt takes tens of milliseconds), so a burst
// of guesses, from one address or many, cannot all pass the check before the first failure counts.
const burst = suite<{ svc: TestService }>('OAuth pages: sign-in bursts', {} as never);
burst.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { SIGN_IN_FAILURES_PER_ACCOUNT: '3' },
  });
});
burst.after(async (ctx) => {
  await ctx.svc?.close();
});
burst('twelve wrong passwords sent at once: three are checked, the others wait', async ({ svc }) => {
  const browsers = Array.from({ length: 12 }, () => new Browser(svc.url));
  const pages = await Promise.all(browsers.map((b) => b.get('/sign-in')));
  const answers = await Promise.all(
    browsers.map((b, i) =>
      signIn(b, pages[i] as Awaited<ReturnType<Browser['get']>>, 'solo@demo.test', `guess number ${i}!`),
    ),
  );
  const checked = answers.filter((a) => /incorrect/.test(a.text)).length;
  const held = answers.filter((a) => a.status === 429).length;
  assert.equal([checked, held], [3, 9]);
  // The right password waits too, and another account is not held.
  const b = new Browser(svc.url);
  assert.is((await signIn(b, await b.get('/sign-in'), 'solo@demo.test')).status, 429);
  const other = new Browser(svc.url);
  assert.is((await signIn(other, await other.get('/sign-in'), 'manager@demo.test')).status, 303);
});
burst.run();

// A new password ends the sessions signed in with the old one: whoever knew the old password (the
// reason it was changed) is signed out at their next request. Scaled out, sessions live in MongoDB and
// outlive the restart of the process that applied the change.
const changed = suite<{ svc: TestService }>('OAuth pages: a changed password', {} as never);
changed.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap() });
});
changed.after(async (ctx) => {
  await ctx.svc?.close();
});
changed('ends the sessions signed in before it; the new password signs in', async ({ svc }) => {
  const before = new Browser(svc.url);
  assert.is((await signIn(before, await before.get('/sign-in'), 'solo@demo.test')).status, 303);
  assert.is((await before.get('/dashboard')).status, 200);
  const other = new Browser(svc.url);
  assert.is((await signIn(other, await other.get('/sign-in'), 'manager@demo.test')).status, 303);
  await setUserPassword(svc.rt, 'solo@demo.test', 'a brand new passphrase', {
    actor: 'operator:test',
    request_id: 'req_test',
  });
  const out = await before.get('/dashboard');
  assert.is(out.status, 303);
  assert.match(out.location ?? '', /^\/sign-in\?next=/);
  // Another account's session is untouched.
  assert.is((await other.get('/dashboard')).status, 200);
  const again = new Browser(svc.url);
  assert.is((await signIn(again, await again.get('/sign-in'), 'solo@demo.test')).status, 200);
  const ok = await signIn(again, await again.get('/sign-in'), 'solo@demo.test', 'a brand new passphrase');
  assert.is(ok.status, 303);
  assert.is((await again.get('/dashboard')).status, 200);
});
changed.run();
