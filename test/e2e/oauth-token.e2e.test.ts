// POST /api/oauth/token and /api/oauth/revoke end to end (spec §4 OAuth endpoints 2-3, §5, §7, §8): client
// authentication, every invalid_* answer, the code's single use and expiry, replay revocation, the
// 3-token cap, revocation, the token endpoint's own rate limit. Codes come from the real consent pages.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { codeStream } from '../../commands/oauth/events';
import { sha256 } from '../../src/core/ids';
import { type EventStore, WrongExpectedRevisionError } from '../../src/ports/event-store';
import { runCli as cli } from '../helpers/cli-in-process';
import {
  authorizeQuery,
  Browser,
  basic,
  CALLBACK,
  consent,
  oauthBootstrap,
  pkce,
  SECRETS,
  tokenRequest,
} from '../helpers/oauth';
import { requestWithRepeats } from '../helpers/repeated-headers';
import { REQUEST_HANG_MS, startTestService, type TestService } from '../helpers/service';

const t = suite<{ svc: TestService; b: Browser }>('OAuth token endpoint', {} as never);
t.before(async (ctx) => {
  // The suite makes more token requests than the default per-IP minute allows (its own suite tests that).
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { TEST_CLOCK: 'true', OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE: '1000' },
  });
  ctx.b = new Browser(ctx.svc.url);
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

/** A fresh code for app_demo at rest_demo, with its verifier. */
async function code(
  b: Browser,
  o: { scope?: string; client?: string; restaurant?: string; redirect?: string } = {},
) {
  const { verifier, challenge } = pkce();
  const back = await consent(b, {
    query: authorizeQuery({ challenge, scope: o.scope, client_id: o.client, redirect_uri: o.redirect }),
    restaurant: o.restaurant,
  });
  return { code: back.searchParams.get('code') as string, verifier, back };
}

const exchange = (
  svc: TestService,
  c: { code: string; verifier: string },
  extra: Record<string, string> = {},
  o = {},
) =>
  tokenRequest(
    svc.url,
    {
      grant_type: 'authorization_code',
      code: c.code,
      redirect_uri: CALLBACK,
      code_verifier: c.verifier,
      ...extra,
    },
    o,
  );

t(
  'the redirect carries code, state and iss; the code buys a partner API key with exactly the consented scopes',
  async ({ svc, b }) => {
    const c = await code(b, { scope: 'RESERVATIONS_READ CATALOG_READ' });
    assert.is(c.back.origin + c.back.pathname, CALLBACK);
    assert.is(c.back.searchParams.get('state'), 'st-123');
    assert.is(c.back.searchParams.get('iss'), svc.url);
    assert.match(c.code, /^couvert_ac_[A-Za-z0-9_-]{43}$/);
    const res = await exchange(svc, c);
    assert.is(res.status, 200, res.text);
    assert.is(res.headers.get('cache-control'), 'no-store');
    assert.is(res.body.token_type, 'Bearer');
    assert.is(res.body.scope, 'CATALOG_READ RESERVATIONS_READ');
    assert.equal(res.body.restaurant, { id: 'rest_demo', name: 'Le Demo', slug: 'le-demo' });
    assert.match(res.body.access_token, /^couvert_pk_/);
    assert.not.ok('refresh_token' in res.body || 'expires_in' in res.body, 'no refresh token, no expiry');
    const me = await svc.api('GET', '/me', { token: res.body.access_token });
    assert.is(me.status, 200);
    assert.equal(me.body.data.scopes, ['CATALOG_READ', 'RESERVATIONS_READ']);
    assert.is(me.body.data.credential.type, 'OAUTH');
    assert.equal(me.body.data.credential.application, { id: 'app_demo', name: 'Demo POS' });
    // Works on every route its scopes allow, and on no other.
    assert.is((await svc.api('GET', '/tables', { token: res.body.access_token })).status, 200);
    assert.is((await svc.api('GET', '/customers', { token: res.body.access_token })).status, 403);
  },
);

t(
  'JSON bodies and client authentication in the body work too (checked against the OpenAPI document)',
  async ({ svc, b }) => {
    const c = await code(b);
    const res = await svc.api('POST', '/api/oauth/token', {
      body: {
        grant_type: 'authorization_code',
        code: c.code,
        redirect_uri: CALLBACK,
        code_verifier: c.verifier,
        client_id: 'app_demo',
        client_secret: SECRETS.app_demo,
      },
    });
    assert.is(res.status, 200, res.text);
    assert.is(res.headers.get('pragma'), 'no-cache');
  },
);

t(
  'client authentication: never both methods, never a wrong secret, an unknown or a disabled client',
  async ({ svc, b }) => {
    const c = await code(b);
    const both = await exchange(svc, c, { client_secret: SECRETS.app_demo });
    assert.equal([both.status, both.body.error], [400, 'invalid_request']);
    const wrong = await exchange(svc, c, {}, { client: ['app_demo', 'not-the-secret'] });
    assert.equal([wrong.status, wrong.body.error], [401, 'invalid_client']);
    assert.match(wrong.headers.get('www-authenticate') ?? '', /^Basic/);
    const unknown = await exchange(svc, c, {}, { client: ['app_nope', 'x'] });
    assert.equal([unknown.status, unknown.body.error], [401, 'invalid_client']);
    const disabled = await exchange(svc, c, {}, { client: ['app_off', 'off-secret-0123456789'] });
    assert.equal([disabled.status, disabled.body.error], [401, 'invalid_client']);
    const none = await exchange(svc, c, {}, { client: null });
    assert.equal([none.status, none.body.error], [401, 'invalid_client']);
    const halfBody = await exchange(svc, c, { client_id: 'app_demo' }, { client: null });
    assert.equal([halfBody.status, halfBody.body.error], [401, 'invalid_client']);
    const otherId = await exchange(svc, c, { client_id: 'app_pub' });
    assert.equal([otherId.status, otherId.body.error], [400, 'invalid_request']);
    // None of these used the code.
    assert.is((await exchange(svc, c)).status, 200);
  },
);

t('request errors: grant type, missing and repeated parameters, an unreadable body', async ({ svc, b }) => {
  const c = await code(b);
  const grant = await exchange(svc, c, { grant_type: 'client_credentials' });
  assert.equal([grant.status, grant.body.error], [400, 'unsupported_grant_type']);
  for (const missing of ['grant_type', 'code', 'redirect_uri', 'code_verifier']) {
    const form: Record<string, string> = {
      grant_type: 'authorization_code',
      code: c.code,
      redirect_uri: CALLBACK,
      code_verifier: c.verifier,
    };
    delete form[missing];
    const res = await tokenRequest(svc.url, form);
    assert.equal([res.status, res.body.error], [400, 'invalid_request'], missing);
    assert.match(res.body.error_description, new RegExp(missing));
  }
  const repeated = await fetch(`${svc.url}/api/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: basic('app_demo', SECRETS.app_demo),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: `grant_type=authorization_code&code=${c.code}&code=${c.code}&redirect_uri=${encodeURIComponent(CALLBACK)}&code_verifier=${c.verifier}`,
  });
  const body = (await repeated.json()) as { error: string; error_description: string };
  assert.equal([repeated.status, body.error], [400, 'invalid_request']);
  assert.match(body.error_description, /code: repeated/);
  // Two Authorization headers: a repeated parameter too, never read as the first (Node keeps only it).
  const exchangeForm = `grant_type=authorization_code&code=${c.code}&redirect_uri=${encodeURIComponent(CALLBACK)}&code_verifier=${c.verifier}`;
  for (const path of ['/api/oauth/token', '/api/oauth/revoke']) {
    const twice = await requestWithRepeats(
      `${svc.url}${path}`,
      'POST',
      {
        authorization: [basic('app_demo', SECRETS.app_demo), basic('app_pub', 'wrong')],
        'content-type': 'application/x-www-form-urlencoded',
      },
      path.endsWith('token') ? exchangeForm : 'token=couvert_pk_whatever',
    );
    assert.equal([twice.status, twice.body.error], [400, 'invalid_request'], path);
    assert.match(twice.body.error_description, /Authorization header is given more than once/);
  }
  const garbage = await fetch(`${svc.url}/api/oauth/token`, {
    method: 'POST',
    headers: { authorization: basic('app_demo', SECRETS.app_demo), 'content-type': 'application/json' },
    body: '{not json',
  });
  assert.equal(
    [garbage.status, ((await garbage.json()) as { error: string }).error],
    [400, 'invalid_request'],
  );
  for (const body of ['null', '[]', '"code"']) {
    const notObject = await fetch(`${svc.url}/api/oauth/token`, {
      method: 'POST',
      headers: { authorization: basic('app_demo', SECRETS.app_demo), 'content-type': 'application/json' },
      body,
    });
    const answer = (await notObject.json()) as { error: string; error_description: string };
    assert.equal([notObject.status, answer.error], [400, 'invalid_request'], body);
    assert.is(answer.error_description, 'the body must be form fields or a JSON object', body);
  }
  const plain = await fetch(`${svc.url}/api/oauth/token`, {
    method: 'POST',
    headers: { authorization: basic('app_demo', SECRETS.app_demo), 'content-type': 'text/plain' },
    body: 'grant_type=authorization_code',
  });
  const refused = (await plain.json()) as { error: string; error_description: string };
  assert.equal([plain.status, refused.error], [400, 'invalid_request']);
  // The endpoint takes a form first (RFC 6749): the answer names it, not JSON alone.
  assert.match(refused.error_description, /application\/x-www-form-urlencoded/);
  // A form whose %-escapes are not UTF-8 (the parser kept "%E9" as those three characters), or that
  // declares another charset and holds a byte past 0x7F (a raw Latin-1 "é"): invalid_request, said as
  // such (it read as an unknown code: invalid_grant).
  const form = (code: string) =>
    `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(CALLBACK)}&code_verifier=${c.verifier}`;
  for (const [type, body] of [
    ['application/x-www-form-urlencoded', form(`${c.code}%E9`)],
    ['application/x-www-form-urlencoded', form(`${c.code}%zz`)],
    ['application/x-www-form-urlencoded; charset=ISO-8859-1', Buffer.from(form(`${c.code}\xE9`), 'latin1')],
  ] as const) {
    const res = await fetch(`${svc.url}/api/oauth/token`, {
      method: 'POST',
      headers: { authorization: basic('app_demo', SECRETS.app_demo), 'content-type': type },
      body,
    });
    const answer = (await res.json()) as { error: string; error_description: string };
    assert.equal([res.status, answer.error], [400, 'invalid_request'], `${type} ${String(body)}`);
    assert.match(answer.error_description, /UTF-8/);
  }
  // A form declaring ISO-8859-1 (Apache HttpClient 4's default) whose bytes are all ASCII reads the same
  // in either charset: taken, and the code is still good.
  const latin1 = await fetch(`${svc.url}/api/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: basic('app_demo', SECRETS.app_demo),
      'content-type': 'application/x-www-form-urlencoded; charset=ISO-8859-1',
    },
    body: form(c.code),
  });
  assert.is(latin1.status, 200, await latin1.clone().text());
});

t(
  'invalid_grant: an unknown code, another redirect_uri, a wrong verifier, another client’s code',
  async ({ svc, b }) => {
    const c = await code(b);
    const cases: [Record<string, string>, object, RegExp][] = [
      [{ code: 'couvert_ac_nope' }, {}, /unknown/],
      [{ code: 'something-else' }, {}, /unknown/],
      [{ code: `couvert_ac_${'a'.repeat(600)}` }, {}, /unknown/],
      [{ redirect_uri: `${CALLBACK}/` }, {}, /redirect_uri/],
      [{ redirect_uri: 'https://pos.example.test/callback?tenant=1' }, {}, /redirect_uri/],
      [{ code_verifier: pkce().verifier }, {}, /code_verifier/],
      [{ code_verifier: 'short' }, {}, /code_verifier/],
      // Past 256 it answered invalid_request "at most 256 characters", a limit of no rule's.
      [{ code_verifier: 'a'.repeat(300) }, {}, /code_verifier must be 43 to 128 characters/],
      [{}, { client: ['app_pub', SECRETS.app_pub] }, /another client/],
    ];
    for (const [extra, o, why] of cases) {
      const res = await exchange(svc, c, extra, o);
      assert.equal([res.status, res.body.error], [400, 'invalid_grant'], JSON.stringify(extra));
      assert.match(res.body.error_description, why);
      assert.is(res.headers.get('cache-control'), 'no-store');
    }
    assert.is((await exchange(svc, c)).status, 200, 'refusals do not use the code');
  },
);

t('a code is valid 5 minutes', async ({ svc, b }) => {
  const fresh = await code(b);
  const stale = await code(b);
  await svc.api('POST', '/__test/clock', { body: { advance_seconds: 299 } });
  assert.is((await exchange(svc, fresh)).status, 200);
  await svc.api('POST', '/__test/clock', { body: { advance_seconds: 1 } });
  const res = await exchange(svc, stale);
  assert.equal([res.status, res.body.error], [400, 'invalid_grant']);
  assert.match(res.body.error_description, /expired/);
  // The fix is named: the flow again, and the new code exchanged at once.
  assert.match(res.body.error_description, /valid 5 minutes\): send the manager to \/oauth\/authorize again/);
});

t(
  'a code presented twice is refused and the token it issued is revoked, on the record',
  async ({ svc, b }) => {
    const c = await code(b);
    const first = await exchange(svc, c);
    assert.is(first.status, 200);
    const token = first.body.access_token as string;
    assert.is((await svc.api('GET', '/me', { token })).status, 200);
    const again = await exchange(svc, c);
    assert.equal([again.status, again.body.error], [400, 'invalid_grant']);
    assert.match(again.body.error_description, /already used/);
    assert.match(
      again.body.error_description,
      /a code works once: send the manager to \/oauth\/authorize again/,
    );
    const me = await svc.api('GET', '/me', { token });
    assert.equal([me.status, me.body.error.code], [401, 'INVALID_AUTHENTICATION']);
    const types: string[] = [];
    for await (const e of svc.rt.events.readAll()) types.push(e.type);
    assert.ok(types.includes('OAuthCodeReplayed'), 'an auditor sees the replay');
    const third = await exchange(svc, c);
    assert.is(third.body.error, 'invalid_grant');
  },
);

t(
  'two presentations at once: one redeems, the other is a replay, and no token stays active',
  async ({ svc, b }) => {
    const active = () =>
      svc.rt.docs
        .collection('api_keys')
        .count({ type: 'OAUTH', restaurant_id: 'rest_demo', revoked_at: null });
    const before = await active();
    const c = await code(b);
    const answers = await Promise.all([exchange(svc, c), exchange(svc, c)]);
    // The replay revokes the token the code issued, whichever request created it: a token handed out at
    // that moment would be revoked already, so neither request gets one.
    for (const r of answers) {
      if (r.status === 200)
        assert.is((await svc.api('GET', '/me', { token: r.body.access_token })).status, 401);
      else assert.is(r.body.error, 'invalid_grant');
    }
    assert.ok(answers.some((r) => r.status === 400));
    assert.is(await active(), before);
  },
);

t(
  'at most 3 active tokens per restaurant and application: a fourth revokes the oldest',
  async ({ svc, b }) => {
    // rest_three has no tokens of app_demo yet.
    const tokens: string[] = [];
    for (let i = 0; i < 4; i++) {
      const c = await code(b, { restaurant: 'rest_three' });
      const res = await exchange(svc, c);
      assert.is(res.status, 200);
      assert.is(res.body.restaurant.id, 'rest_three');
      tokens.push(res.body.access_token);
    }
    const statuses = await Promise.all(
      tokens.map(async (token) => (await svc.api('GET', '/me', { token })).status),
    );
    assert.equal(statuses, [401, 200, 200, 200]);
    // Another application's tokens at the same restaurant are counted apart.
    const pub = await code(b, { client: 'app_pub', scope: 'CATALOG_READ', restaurant: 'rest_three' });
    assert.is((await exchange(svc, pub, {}, { client: ['app_pub', SECRETS.app_pub] })).status, 200);
    assert.equal(
      await Promise.all(tokens.map(async (token) => (await svc.api('GET', '/me', { token })).status)),
      [401, 200, 200, 200],
    );
  },
);

t(
  'revocation (RFC 7009): the client revokes its token; unknown, repeated or foreign tokens answer 200',
  async ({ svc, b }) => {
    const mine = (await exchange(svc, await code(b))).body.access_token as string;
    const theirs = (
      await exchange(
        svc,
        await code(b, { client: 'app_pub', scope: 'CATALOG_READ' }),
        {},
        { client: ['app_pub', SECRETS.app_pub] },
      )
    ).body.access_token as string;
    const revoke = (token: string, client: [string, string] = ['app_demo', SECRETS.app_demo]) =>
      svc.api('POST', '/api/oauth/revoke', {
        body: { token },
        headers: { authorization: basic(client[0], client[1]) },
      });
    assert.is((await revoke(theirs)).status, 200);
    assert.is(
      (await svc.api('GET', '/me', { token: theirs })).status,
      200,
      "another application's token is left alone",
    );
    assert.is((await revoke(mine)).status, 200);
    assert.is((await svc.api('GET', '/me', { token: mine })).status, 401);
    assert.is((await revoke(mine)).status, 200, 'already revoked');
    assert.is((await revoke('couvert_pk_unknown')).status, 200, 'unknown');
    assert.is((await revoke(`couvert_pk_${'x'.repeat(600)}`)).status, 200, 'unknown, however long');
    const wrong = await revoke(theirs, ['app_pub', 'wrong']);
    assert.equal([wrong.status, wrong.body.error], [401, 'invalid_client']);
    const missing = await svc.api('POST', '/api/oauth/revoke', {
      body: {},
      headers: { authorization: basic('app_demo', SECRETS.app_demo) },
    });
    assert.equal([missing.status, missing.body.error], [400, 'invalid_request']);
    // Form-encoded with the client in the body.
    const form = await fetch(`${svc.url}/api/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: theirs,
        client_id: 'app_pub',
        client_secret: SECRETS.app_pub,
      }).toString(),
    });
    assert.is(form.status, 200);
    assert.is((await svc.api('GET', '/me', { token: theirs })).status, 401);
  },
);

t(
  'a third-party application needs the API option on: its code is refused and its tokens stop while it is off; a published one works everywhere',
  async ({ svc, b }) => {
    const mine = (await exchange(svc, await code(b))).body.access_token as string;
    const pending = await code(b);
    const pub = await code(b, { client: 'app_pub', scope: 'CATALOG_READ' });
    const published = (await exchange(svc, pub, {}, { client: ['app_pub', SECRETS.app_pub] })).body
      .access_token as string;
    await cli(svc, 'restaurants api-option', { id: 'rest_demo', enabled: 'false' });
    try {
      const refused = await exchange(svc, pending);
      assert.equal([refused.status, refused.body.error], [400, 'invalid_grant']);
      assert.match(refused.body.error_description, /API option/);
      const me = await svc.api('GET', '/me', { token: mine });
      assert.equal([me.status, me.body.error.code], [401, 'INVALID_AUTHENTICATION']);
      assert.match(me.body.error.message, /API option/);
      assert.is((await svc.api('GET', '/me', { token: published })).status, 200);
    } finally {
      await cli(svc, 'restaurants api-option', { id: 'rest_demo', enabled: 'true' });
    }
    // Turned on again, the token works again: it was never revoked.
    assert.is((await svc.api('GET', '/me', { token: mine })).status, 200);
    // And the code refused meanwhile works now: a refusal did not use it up (it was then refused as
    // "already used; the token it issued is revoked", of a token never issued, and logged as a replay).
    const later = await exchange(svc, pending);
    assert.is(later.status, 200, later.text);
    assert.match(later.body.access_token, /^couvert_pk_/);
    const history = await svc.rt.events.readStream(codeStream(sha256(pending.code)));
    assert.equal(
      history.map((e) => e.type),
      ['OAuthCodeIssued', 'OAuthCodeRedeemed'],
      'used once, no replay on the record',
    );
  },
);

t(
  "a manager who no longer manages the restaurant's integrations when the code is exchanged yields no token (invalid_grant), the code kept",
  async ({ svc, b }) => {
    const pending = await code(b);
    await cli(svc, 'users grant', {
      email: 'manager@demo.test',
      restaurant: 'rest_demo',
      'manage-integrations': 'false',
    });
    try {
      const refused = await exchange(svc, pending);
      assert.equal([refused.status, refused.body.error], [400, 'invalid_grant'], refused.text);
      assert.match(refused.body.error_description, /no longer manages this restaurant's integrations/);
      assert.is(refused.headers.get('cache-control'), 'no-store');
    } finally {
      await cli(svc, 'users grant', { email: 'manager@demo.test', restaurant: 'rest_demo' });
    }
    // Given back within the code's 5 minutes, the consent stands again: the refusal did not use it up.
    const later = await exchange(svc, pending);
    assert.is(later.status, 200, later.text);
  },
);

t(
  'another method on the token or revocation endpoint: 405 with Allow: POST, an RFC 6749 body, no-store',
  async ({ svc }) => {
    // It answered the partner API's envelope ({"error": {"code": "VALIDATION_ERROR", …}}), which an OAuth
    // client reads as an object where the spec's `error` string is, and without Cache-Control.
    for (const path of ['/api/oauth/token', '/api/oauth/revoke'])
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']) {
        // svc.api holds the answer to the document's components.responses.MethodNotAllowedOAuth.
        const res = await svc.api(method, path);
        const what = `${method} ${path}`;
        assert.is(res.status, 405, what);
        assert.is(res.headers.get('allow'), 'POST', what);
        assert.is(res.headers.get('cache-control'), 'no-store', what);
        assert.is(res.headers.get('pragma'), 'no-cache', what);
        assert.ok(res.headers.get('x-request-id'), what);
        if (method === 'HEAD') continue;
        assert.is(res.body.error, 'invalid_request', what);
        assert.match(res.body.error_description, `${method} is not allowed here`);
        assert.match(res.body.error_description, 'use POST');
      }
    // The partner API's 405 keeps its envelope.
    const partner = await svc.api('DELETE', '/me');
    assert.is(partner.status, 405);
    assert.is(partner.body.error.code, 'VALIDATION_ERROR');
  },
);

t('metadata (RFC 8414) names the endpoints, S256 and the client authentication methods', async ({ svc }) => {
  const res = await svc.api('GET', `${svc.url}/.well-known/oauth-authorization-server`);
  assert.is(res.status, 200);
  assert.is(res.body.issuer, svc.url);
  assert.is(res.body.authorization_endpoint, `${svc.url}/oauth/authorize`);
  assert.is(res.body.token_endpoint, `${svc.url}/api/oauth/token`);
  assert.is(res.body.revocation_endpoint, `${svc.url}/api/oauth/revoke`);
  assert.equal(res.body.code_challenge_methods_supported, ['S256']);
  assert.equal(res.body.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post']);
  assert.is(res.body.authorization_response_iss_parameter_supported, true);
});

t.run();

/**
 * The running service's log refuses the appends `match` picks with `failure` until the returned function
 * puts the real append back (call it in a finally).
 */
function failAppends(svc: TestService, match: (types: string[]) => boolean, failure: () => Error) {
  const store = svc.rt.events as { append: EventStore['append'] };
  const own = Object.hasOwn(store, 'append');
  const append = store.append;
  store.append = function (this: unknown, stream, batch, ...rest) {
    if (match(batch.map((e) => e.type))) return Promise.reject(failure());
    return append.call(this, stream, batch, ...rest);
  };
  return () => {
    if (own) store.append = append;
    else delete (store as { append?: unknown }).append;
  };
}

// Their own service: the first suite spends most of the token endpoint's per-minute budget.
const failing = suite<{ svc: TestService; b: Browser }>('OAuth token endpoint: failures', {} as never);
failing.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap() });
  ctx.b = new Browser(ctx.svc.url);
});
failing.after(async (ctx) => {
  await ctx.svc?.close();
});
failing(
  "the service's failures at the token and revocation endpoints answer RFC 6749 bodies (temporarily_unavailable, server_error), telling nothing of the cause",
  async ({ svc, b }) => {
    // What the failing store says (a path, a secret of the request) must not reach the client.
    const secretish = `disk full at /var/lib/couvert/events.sqlite, client_secret ${SECRETS.app_demo}`;
    const rfc6749 = (res: Awaited<ReturnType<typeof exchange>>, status: number, error: string) => {
      assert.is(res.status, status, res.text);
      assert.equal(Object.keys(res.body).sort(), ['error', 'error_description'], res.text);
      assert.is(res.body.error, error);
      assert.match(res.body.error_description, /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);
      assert.ok(res.body.error_description.includes(res.headers.get('x-request-id') as string), res.text);
      assert.not.match(res.text, /sqlite|client_secret|couvert_cs_|couvert_ac_/);
      assert.is(res.headers.get('cache-control'), 'no-store');
    };
    const full = await code(b);
    let restore = failAppends(
      svc,
      (types) => types.includes('OAuthCodeRedeemed'),
      () => Object.assign(new Error(secretish), { code: 'SQLITE_FULL' }),
    );
    try {
      const res = await exchange(svc, full);
      rfc6749(res, 503, 'temporarily_unavailable');
      assert.match(res.body.error_description, /storage is full/);
      assert.is(res.headers.get('retry-after'), '60');
    } finally {
      restore();
    }
    // Space back, the same code works: the refused write was its single use.
    assert.is((await exchange(svc, full)).status, 200);

    restore = failAppends(
      svc,
      (types) => types.includes('OAuthCodeRedeemed'),
      () => new Error(secretish),
    );
    try {
      rfc6749(await exchange(svc, await code(b)), 500, 'server_error');
    } finally {
      restore();
    }
    // A write that kept losing its race (every append a conflict, past runCommand's retries): the
    // envelope's 409 is 503 temporarily_unavailable here, at the exchange and at the revocation.
    const raced = await code(b);
    restore = failAppends(
      svc,
      (types) => types.includes('OAuthCodeRedeemed'),
      () => new WrongExpectedRevisionError('oauthcode-x', 0, 1),
    );
    try {
      const res = await exchange(svc, raced);
      rfc6749(res, 503, 'temporarily_unavailable');
      assert.match(res.body.error_description, /conflicted with this request; retry/);
      assert.is(res.headers.get('retry-after'), '1');
    } finally {
      restore();
    }
    const racedToken = (await exchange(svc, raced)).body.access_token as string;
    assert.ok(racedToken, 'the lost race did not use the code up');
    restore = failAppends(
      svc,
      (types) => types.includes('ApiKeyRevoked'),
      () => new WrongExpectedRevisionError('apikey-x', 0, 1),
    );
    try {
      const res = await svc.api('POST', '/api/oauth/revoke', {
        body: { token: racedToken },
        headers: { authorization: basic('app_demo', SECRETS.app_demo) },
      });
      rfc6749(res as Awaited<ReturnType<typeof exchange>>, 503, 'temporarily_unavailable');
    } finally {
      restore();
    }
    const mine = (await exchange(svc, await code(b))).body.access_token as string;
    restore = failAppends(
      svc,
      (types) => types.includes('ApiKeyRevoked'),
      () => new Error(secretish),
    );
    try {
      const res = await svc.api('POST', '/api/oauth/revoke', {
        body: { token: mine },
        headers: { authorization: basic('app_demo', SECRETS.app_demo) },
      });
      rfc6749(res as Awaited<ReturnType<typeof exchange>>, 500, 'server_error');
    } finally {
      restore();
    }
  },
);
failing.run();

const limited = suite<{ svc: TestService }>('OAuth token endpoint: its own rate limit', {} as never);
limited.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_PER_MINUTE: '1000' },
  });
});
limited.after(async (ctx) => {
  await ctx.svc?.close();
});
limited(
  'OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE requests per IP, then 429 rate_limited; partner routes keep their budget',
  async ({ svc }) => {
    const form = {
      grant_type: 'authorization_code',
      code: 'couvert_ac_x',
      redirect_uri: CALLBACK,
      code_verifier: pkce().verifier,
    };
    for (let i = 0; i < 3; i++) {
      const res = await tokenRequest(svc.url, form);
      assert.is(res.status, 400);
      assert.is(res.headers.get('x-ratelimit-limit'), '3');
      assert.is(res.headers.get('x-ratelimit-remaining'), String(2 - i));
    }
    const res = await tokenRequest(svc.url, form);
    assert.equal([res.status, res.body.error], [429, 'rate_limited']);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    assert.ok(Number(res.headers.get('x-ratelimit-reset')) > Date.now() - 1000);
    assert.is((await svc.api('GET', '/')).status, 200);
  },
);
limited.run();

// The revocation endpoint authenticates the client too: without a budget a client secret could be guessed
// there at any rate, whatever the token endpoint's limit. Both draw from one per-IP budget.
const revokeLimited = suite<{ svc: TestService }>(
  'OAuth revocation endpoint: the token endpoint’s budget',
  {} as never,
);
revokeLimited.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_PER_MINUTE: '1000' },
  });
});
revokeLimited.after(async (ctx) => {
  await ctx.svc?.close();
});
revokeLimited(
  'wrong secrets at /api/oauth/revoke are limited, and spend the token endpoint’s budget',
  async ({ svc }) => {
    const revoke = (secret: string) =>
      fetch(`${svc.url}/api/oauth/revoke`, {
        method: 'POST',
        headers: {
          authorization: basic('app_demo', secret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token: 'couvert_pk_unknown' }).toString(),
        signal: AbortSignal.timeout(REQUEST_HANG_MS),
      });
    for (let i = 0; i < 2; i++) {
      const res = await revoke(`guess-${i}`);
      assert.is(res.status, 401);
      assert.is(res.headers.get('x-ratelimit-remaining'), String(2 - i));
      await res.text();
    }
    const token = await tokenRequest(svc.url, {
      grant_type: 'authorization_code',
      code: 'couvert_ac_x',
      redirect_uri: CALLBACK,
      code_verifier: pkce().verifier,
    });
    assert.equal([token.status, token.headers.get('x-ratelimit-remaining')], [400, '0']);
    const refused = await revoke(SECRETS.app_demo);
    assert.is(refused.status, 429);
    assert.is(((await refused.json()) as { error: string }).error, 'rate_limited');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.is((await tokenRequest(svc.url, { grant_type: 'authorization_code' })).status, 429);
  },
);
revokeLimited.run();

// JSON is accepted at both endpoints; its parser kept the last value of a repeated name silently, where a
// form's repeated field is 400 invalid_request (RFC 6749 §3.2). A name spelled with an escape is the
// same name. Its own service: the main suite spends most of the per-IP budget. The check of every
// error_description's characters runs on this service too, for the same reason.
const repeatedJson = suite<{ svc: TestService; b: Browser }>(
  'OAuth endpoints: a JSON body repeating a parameter',
  {} as never,
);
repeatedJson.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap() });
  ctx.b = new Browser(ctx.svc.url);
});
repeatedJson.after(async (ctx) => {
  await ctx.svc?.close();
});
repeatedJson('is invalid_request, as a form repeating it is; nothing is used', async ({ svc, b }) => {
  const c = await code(b);
  const json = (text: string, headers: Record<string, string> = {}) =>
    fetch(`${svc.url}/api/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: basic('app_demo', SECRETS.app_demo),
        'content-type': 'application/json',
        ...headers,
      },
      body: text,
    });
  const rest = `"grant_type":"authorization_code","redirect_uri":${JSON.stringify(CALLBACK)},"code_verifier":"${c.verifier}"`;
  for (const [text, name] of [
    [`{"code":"couvert_ac_nope","code":"${c.code}",${rest}}`, 'code'],
    [`{ "code" : "${c.code}" , ${rest}, "\u0063ode": "${c.code}" }`, 'code'],
    [`{"code":"${c.code}",${rest},"redirect_uri":"https://elsewhere.example/cb"}`, 'redirect_uri'],
  ]) {
    const twice = await json(text as string);
    const answer = (await twice.json()) as { error: string; error_description: string };
    assert.equal([twice.status, answer.error], [400, 'invalid_request'], text);
    assert.match(answer.error_description, new RegExp(`^${name}: repeated`), text);
  }
  const inBody = await fetch(`${svc.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"client_id":"app_demo","client_id":"app_pub","client_secret":"${SECRETS.app_demo}","code":"${c.code}",${rest}}`,
  });
  assert.equal(
    [inBody.status, ((await inBody.json()) as { error_description: string }).error_description],
    [400, 'client_id: repeated or not a single value'],
  );
  const revokeTwice = await fetch(`${svc.url}/api/oauth/revoke`, {
    method: 'POST',
    headers: { authorization: basic('app_demo', SECRETS.app_demo), 'content-type': 'application/json' },
    body: '{"token":"couvert_pk_a","token":"couvert_pk_b"}',
  });
  assert.equal(
    [revokeTwice.status, ((await revokeTwice.json()) as { error: string }).error],
    [400, 'invalid_request'],
  );
  // The code is still good; a name the endpoint does not take is ignored, repeated or not, as in a form.
  const ok = await json(`{"code":"${c.code}",${rest},"x_trace":1,"x_trace":2}`);
  assert.is(ok.status, 200, await ok.clone().text());
  assert.match(((await ok.json()) as { access_token: string }).access_token, /^couvert_pk_/);
});
repeatedJson(
  'every error_description keeps to RFC 6749’s characters (printable ASCII but " and \\)',
  async ({ svc }) => {
    // A client or conformance suite that checks the set may refuse the whole answer; the content type's
    // refusal quoted the media types with ".
    const send = (headers: Record<string, string>, body: string, path = '/api/oauth/token') =>
      fetch(`${svc.url}${path}`, {
        method: 'POST',
        headers: { authorization: basic('app_demo', SECRETS.app_demo), ...headers },
        body,
      });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const json = { 'content-type': 'application/json' };
    const answers = [
      await send({ 'content-type': 'text/plain' }, 'grant_type=authorization_code'),
      await send({ 'content-type': 'text/plain' }, 'token=x', '/api/oauth/revoke'),
      await send(json, '{not json'),
      await send(json, '[]'),
      await send(json, '{"__proto__":{}}'),
      await send(form, 'grant_type=authorization_code&grant_type=x'),
      await send(form, `grant_type=${'x'.repeat(101)}`),
      await send(form, 'grant_type=authorization_code&code=couvert_ac_x&redirect_uri=x&code_verifier=%C3%A9'),
      await send({ ...form, authorization: 'Bearer "x"' }, 'grant_type=authorization_code'),
    ];
    for (const res of answers) {
      const body = (await res.json()) as { error: string; error_description: string };
      assert.ok(res.status >= 400, JSON.stringify(body));
      assert.match(body.error_description, /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/, JSON.stringify(body));
    }
  },
);
repeatedJson.run();
