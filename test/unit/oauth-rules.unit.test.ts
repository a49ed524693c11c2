// The pure rules of OAuth: the authorization request (every outcome), PKCE S256, a code's redemption
// (expiry, single use, replay), the 3-token cap (property-tested over random histories), registration
// checks, passwords, and the pages' escaping and redirect safety.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type ApplicationState,
  checkProfile,
  decideSetDisabled,
  evolveApplication,
  redirectUriProblem,
} from '../../commands/oauth/applications';
import { checkAuthorizeRequest, redirectTo } from '../../commands/oauth/authorize-request';
import {
  type CodeState,
  decideRedeem,
  evolveCode,
  GrantRefused,
  initialCode,
} from '../../commands/oauth/codes';
import {
  type ConnectionState,
  decideAddToken,
  decideDisconnect,
  decideRemoveToken,
  evolveConnection,
  initialConnection,
} from '../../commands/oauth/connections';
import { hashPassword, verifyPassword } from '../../commands/oauth/passwords';
import { challengeOf, verifierMatches } from '../../commands/oauth/pkce';
import { userIdFor } from '../../commands/oauth/users';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { originOf, pageHeaders } from '../../src/web/headers';
import { html, markup } from '../../src/web/html';
import { safeNext } from '../../src/web/respond';

const t = suite('OAuth rules');

const app: ApplicationState = {
  client_id: 'app_x',
  profile: {
    name: 'X',
    logo_url: null,
    redirect_uris: ['https://x.example/cb', 'https://x.example/cb?t=1'],
    allowed_scopes: ['CATALOG_READ', 'RESERVATIONS_READ'],
    published_by_operator: false,
  },
  secret_hash: 'h',
  disabled: false,
  cut_off_position: null,
  created_at: '2026-01-01T00:00:00Z',
};
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const good = {
  client_id: 'app_x',
  redirect_uri: 'https://x.example/cb',
  response_type: 'code',
  scope: 'RESERVATIONS_READ CATALOG_READ',
  state: 's1',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
};

t('PKCE S256: the RFC 7636 appendix B vector; plain-looking or short verifiers never match', () => {
  assert.is(challengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'), CHALLENGE);
  assert.ok(verifierMatches('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', CHALLENGE));
  assert.not.ok(verifierMatches(CHALLENGE, CHALLENGE), 'the challenge is not its own verifier');
  assert.not.ok(verifierMatches('a'.repeat(42), challengeOf('a'.repeat(42))), '42 characters is too short');
  assert.ok(verifierMatches('a'.repeat(128), challengeOf('a'.repeat(128))));
  assert.not.ok(verifierMatches('a'.repeat(129), challengeOf('a'.repeat(129))), '129 characters is too long');
  assert.not.ok(
    verifierMatches(`${'a'.repeat(42)}!`, challengeOf(`${'a'.repeat(42)}!`)),
    'outside the alphabet',
  );
});

t('authorize: the request as given is accepted with canonical scopes', () => {
  const out = checkAuthorizeRequest(good, app);
  assert.equal(out, {
    kind: 'ok',
    request: {
      client_id: 'app_x',
      redirect_uri: 'https://x.example/cb',
      scopes: ['CATALOG_READ', 'RESERVATIONS_READ'],
      state: 's1',
      code_challenge: CHALLENGE,
      restaurant_hint: null,
    },
  });
});

t(
  'authorize: a parameter of its own given twice is invalid_request; any other is ignored, repeated or not',
  () => {
    // RFC 6749 §3.1: unrecognised parameters are ignored (RFC 8707's `resource` is repeated by design).
    const other = checkAuthorizeRequest(
      { ...good, resource: ['https://a.example', 'https://b.example'] },
      app,
    );
    assert.is(other.kind, 'ok');
    const twice = checkAuthorizeRequest({ ...good, restaurant_hint: ['a', 'b'] }, app);
    assert.is(twice.kind, 'redirect');
    if (twice.kind === 'redirect') {
      assert.is(twice.error, 'invalid_request');
      assert.match(twice.description, /repeated parameter: restaurant_hint/);
    }
  },
);

t('authorize: restaurant_hint sent without a value is as if omitted (RFC 6749 §3.1)', () => {
  const out = checkAuthorizeRequest({ ...good, restaurant_hint: '' }, app);
  assert.is(out.kind, 'ok');
  if (out.kind === 'ok') assert.is(out.request.restaurant_hint, null);
  const given = checkAuthorizeRequest({ ...good, restaurant_hint: 'le-demo' }, app);
  assert.is(given.kind === 'ok' && given.request.restaurant_hint, 'le-demo');
});

t('authorize: CUSTOMERS_WRITE without CUSTOMERS_READ is invalid_scope, saying so (spec §5)', () => {
  const writer: ApplicationState = {
    ...app,
    profile: {
      ...(app.profile as NonNullable<ApplicationState['profile']>),
      allowed_scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'],
    },
  };
  const lone = checkAuthorizeRequest({ ...good, scope: 'CUSTOMERS_WRITE' }, writer);
  assert.is(lone.kind === 'redirect' && lone.error, 'invalid_scope');
  assert.match(
    lone.kind === 'redirect' ? lone.description : '',
    /CUSTOMERS_WRITE also requires CUSTOMERS_READ/,
  );
  const both = checkAuthorizeRequest({ ...good, scope: 'CUSTOMERS_WRITE CUSTOMERS_READ' }, writer);
  assert.is(both.kind === 'ok' && both.request.scopes.join(' '), 'CUSTOMERS_READ CUSTOMERS_WRITE');
});

t('authorize: a RESERVATIONS_FORCE_* scope without RESERVATIONS_WRITE is invalid_scope, saying so', () => {
  // The privileged options of POST and PATCH /reservations (DESIGN.md §3), routes that need WRITE.
  const forcer: ApplicationState = {
    ...app,
    profile: {
      ...(app.profile as NonNullable<ApplicationState['profile']>),
      allowed_scopes: [
        'RESERVATIONS_READ',
        'RESERVATIONS_WRITE',
        'RESERVATIONS_FORCE_INSERT',
        'RESERVATIONS_FORCE_CONFIRM',
      ],
    },
  };
  for (const scope of ['RESERVATIONS_FORCE_INSERT', 'RESERVATIONS_FORCE_CONFIRM']) {
    const lone = checkAuthorizeRequest({ ...good, scope: `RESERVATIONS_READ ${scope}` }, forcer);
    assert.is(lone.kind === 'redirect' && lone.error, 'invalid_scope', scope);
    assert.match(
      lone.kind === 'redirect' ? lone.description : '',
      new RegExp(`${scope} also requires RESERVATIONS_WRITE`),
    );
    const both = checkAuthorizeRequest({ ...good, scope: `${scope} RESERVATIONS_WRITE` }, forcer);
    assert.is(both.kind, 'ok', scope);
  }
});

t('authorize: shown, never redirected — client and redirect_uri problems come first', () => {
  const shown = (q: Record<string, string | string[] | undefined>, a: ApplicationState | null = app) =>
    assert.is(checkAuthorizeRequest(q, a).kind, 'show', JSON.stringify(q));
  shown({ ...good, client_id: undefined });
  shown({ ...good, client_id: ['app_x', 'app_x'] });
  shown(good, null);
  shown(good, { ...app, disabled: true });
  shown({ ...good, redirect_uri: undefined, response_type: 'token' });
  shown({ ...good, redirect_uri: 'https://x.example/cb/' });
  shown({ ...good, redirect_uri: 'https://x.example/CB' });
  shown({ ...good, redirect_uri: ['https://x.example/cb', 'https://x.example/cb'] });
});

t('authorize: redirected errors, each with its RFC 6749 name and the state', () => {
  const cases: [Record<string, string | string[] | undefined>, string][] = [
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ response_type: undefined }, 'invalid_request'],
    [{ state: undefined }, 'invalid_request'],
    [{ state: 'x'.repeat(1025) }, 'invalid_request'],
    [{ scope: undefined }, 'invalid_request'],
    [{ scope: '' }, 'invalid_scope'],
    [{ scope: 'CATALOG_READ WHATEVER' }, 'invalid_scope'],
    [{ scope: 'CUSTOMERS_READ' }, 'invalid_scope'],
    [{ code_challenge: undefined }, 'invalid_request'],
    [{ code_challenge_method: undefined }, 'invalid_request'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge: `${CHALLENGE}=` }, 'invalid_request'],
    [{ code_challenge: CHALLENGE.slice(1) }, 'invalid_request'],
    [{ restaurant_hint: 'x'.repeat(65) }, 'invalid_request'],
    [{ state: ['a', 'b'] }, 'invalid_request'],
  ];
  for (const [change, error] of cases) {
    const out = checkAuthorizeRequest({ ...good, ...change }, app);
    assert.is(out.kind, 'redirect', JSON.stringify(change));
    if (out.kind !== 'redirect') continue;
    assert.is(out.error, error, JSON.stringify(change));
    assert.is(out.redirect_uri, 'https://x.example/cb');
    assert.is(
      out.state,
      typeof change.state === 'string' || !('state' in change) ? (change.state ?? 's1') : null,
    );
  }
});

t('the redirect keeps the registered query and appends ours and iss', () => {
  assert.is(
    redirectTo(
      'https://x.example/cb?t=1',
      { code: 'c&d', state: 's 1', error: null },
      'https://couvert.example',
    ),
    'https://x.example/cb?t=1&code=c%26d&state=s+1&iss=https%3A%2F%2Fcouvert.example',
  );
  // Kept as registered: not re-encoded as a form (a%20b stays, a bare flag gets no "=").
  assert.is(
    redirectTo('http://localhost:8080/cb?x=a%20b&flag&p=/v', { code: 'c' }, 'https://couvert.example'),
    'http://localhost:8080/cb?x=a%20b&flag&p=/v&code=c&iss=https%3A%2F%2Fcouvert.example',
  );
  assert.is(
    redirectTo('https://x.example/cb?', { code: 'c' }, 'https://i.example'),
    'https://x.example/cb?code=c&iss=https%3A%2F%2Fi.example',
  );
});

const issued = (over: Partial<CodeState['issued']> = {}): CodeState => ({
  ...initialCode,
  issued: {
    code_hash: 'h',
    client_id: 'app_x',
    restaurant_id: 'rest_x',
    user_id: 'usr_x',
    scopes: ['CATALOG_READ'],
    redirect_uri: 'https://x.example/cb',
    code_challenge: CHALLENGE,
    issued_at: '2026-01-01T12:00:00.000Z',
    expires_at: '2026-01-01T12:05:00.000Z',
    ...over,
  },
});
const redeem = (s: CodeState, at: string, over: object = {}) =>
  decideRedeem(s, {
    client_id: 'app_x',
    redirect_uri: 'https://x.example/cb',
    code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    key_id: 'key_1',
    now: new Date(at),
    ...over,
  });
const recorded = (e: NewEvent): RecordedEvent =>
  ({ ...e, id: 'x', metadata: {}, created: '', stream: 's', revision: 0, position: 1n }) as RecordedEvent;

t('a code: valid until 5 minutes, once; a second presentation is the replay event, once', () => {
  assert.throws(
    () => redeem(initialCode, '2026-01-01T12:00:00Z'),
    (e: Error) => e instanceof GrantRefused,
  );
  const used = redeem(issued(), '2026-01-01T12:04:59.999Z');
  assert.equal(
    used.map((e) => e.type),
    ['OAuthCodeRedeemed'],
  );
  assert.throws(() => redeem(issued(), '2026-01-01T12:05:00.000Z'), /expired/);
  const after = used.map(recorded).reduce(evolveCode, issued());
  const replay = redeem(after, '2026-01-01T12:06:00Z', { key_id: 'key_2' });
  assert.equal(
    replay.map((e) => [e.type, (e.data as { key_id: string }).key_id]),
    [['OAuthCodeReplayed', 'key_1']],
  );
  const replayed = replay.map(recorded).reduce(evolveCode, after);
  assert.equal(redeem(replayed, '2026-01-01T12:07:00Z', { key_id: 'key_3' }), [], 'recorded once');
  assert.throws(() => redeem(issued(), '2026-01-01T12:01:00Z', { client_id: 'app_y' }), /another client/);
  assert.throws(() => redeem(issued(), '2026-01-01T12:01:00Z', { redirect_uri: undefined }), /redirect_uri/);
  assert.throws(
    () => redeem(issued(), '2026-01-01T12:01:00Z', { code_verifier: undefined }),
    /code_verifier/,
  );
});

t(
  'a code_verifier outside 43-128 of A-Z a-z 0-9 - . _ ~ is refused as such, even when it hashes to the challenge',
  () => {
    for (const verifier of ['a'.repeat(42), `${'a'.repeat(42)}!`, 'a'.repeat(129), `${'a'.repeat(42)} `]) {
      const s = issued({ code_challenge: challengeOf(verifier) });
      assert.throws(
        () => redeem(s, '2026-01-01T12:01:00Z', { code_verifier: verifier }),
        (e: Error) => e instanceof GrantRefused && /43 to 128 characters among/.test(e.message),
        JSON.stringify(verifier),
      );
    }
    // A well-formed verifier of another challenge still "does not match".
    assert.throws(
      () => redeem(issued(), '2026-01-01T12:01:00Z', { code_verifier: 'b'.repeat(43) }),
      /does not match/,
    );
  },
);

t('the cap is 3 (spec §5): three tokens stay active, the fourth retires the oldest, and only it', () => {
  const ids = { restaurant_id: 'r', client_id: 'c' };
  let s: ConnectionState = initialConnection;
  for (const key_id of ['k0', 'k1', 'k2']) {
    const events = decideAddToken(s, { ...ids, key_id, scopes: [], at: '' });
    assert.is(events.filter((e) => e.type === 'OAuthTokenRemoved').length, 0, `${key_id}: nothing retired`);
    s = events.map(recorded).reduce(evolveConnection, s);
  }
  assert.equal(s.active, ['k0', 'k1', 'k2']);
  const fourth = decideAddToken(s, { ...ids, key_id: 'k3', scopes: [], at: '' });
  assert.equal(
    fourth
      .filter((e) => e.type === 'OAuthTokenRemoved')
      .map((e) => [(e.data as { key_id: string }).key_id, (e.data as { reason: string }).reason]),
    [['k0', 'token_cap']],
  );
  s = fourth.map(recorded).reduce(evolveConnection, s);
  assert.equal(s.active, ['k1', 'k2', 'k3']);
});

t('the 3-token cap holds over any history of issues, revocations and disconnections', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('add' as const) }),
    fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant('disconnect' as const) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      let s: ConnectionState = initialConnection;
      let n = 0;
      const ids = { restaurant_id: 'r', client_id: 'c' };
      for (const o of ops) {
        let events: NewEvent[] = [];
        if (o.kind === 'add') {
          const before = s.active;
          events = decideAddToken(s, { ...ids, key_id: `k${n++}`, scopes: [], at: '' });
          const retired = events
            .filter((e) => e.type === 'OAuthTokenRemoved')
            .map((e) => (e.data as { key_id: string }).key_id);
          // The oldest are the ones retired.
          assert.equal(retired, before.slice(0, retired.length));
        } else if (o.kind === 'remove' && s.active.length) {
          const key_id = s.active[o.pick % s.active.length] as string;
          events = decideRemoveToken(s, { ...ids, key_id }, 'revoked_by_client', '');
        } else if (o.kind === 'disconnect') events = decideDisconnect(s, ids, 'user:u', '');
        s = events.map(recorded).reduce(evolveConnection, s);
        if (s.active.length > 3) return false;
        if (!s.active.every((k) => s.all.includes(k))) return false;
        if (o.kind === 'disconnect' && s.active.length) return false;
        if (o.kind === 'add' && s.active.at(-1) !== `k${n - 1}`) return false;
      }
      return true;
    }),
    { numRuns: 300, seed: 20261126 },
  );
});

t('registration: redirect URIs are absolute https (http on loopback), no fragment, no credentials', () => {
  assert.is(redirectUriProblem('https://x.example/cb?a=1'), null);
  assert.is(redirectUriProblem('http://127.0.0.1:8080/cb'), null);
  assert.is(redirectUriProblem('http://localhost/cb'), null);
  assert.is(redirectUriProblem('http://[::1]:9/cb'), null);
  for (const bad of [
    'http://x.example/cb',
    'https://x.example/cb#f',
    '/cb',
    'javascript:alert(1)',
    'https://u:p@x.example/',
    // The URL parser drops these, so the URI shown would not be the one redirected to.
    'https://exa\tmple.example/cb',
    'https://x.example/c\nb',
    ' https://x.example/cb',
    'https://x.example/cb ',
    'https://x.example/c b',
  ])
    assert.ok(redirectUriProblem(bad), JSON.stringify(bad));
  assert.throws(() => checkProfile({ logo_url: 'https://logo.example/a\tb.png' }), /invalid/);
  assert.throws(() => checkProfile({ name: ' ' }), /invalid/);
  assert.throws(() => checkProfile({ allowed_scopes: [] }), /invalid/);
  assert.equal(checkProfile({ redirect_uris: ['https://a.example/', 'https://a.example/'] }).redirect_uris, [
    'https://a.example/',
  ]);
});

t(
  "registration: a redirect or logo URL whose host CSP cannot name (; , ' * …) is refused, saying why",
  () => {
    // The URL parser keeps these in a host; the consent page names the origin in its CSP, where `;` ends
    // the directive (the rest read as the host's own) and `,` starts a second policy.
    for (const bad of [
      'https://a;b.example/cb',
      'https://evil.example;script-src/cb',
      'https://a,b.example/cb',
      "https://a'b.example/cb",
      'https://a*b.example/cb',
      'https://a_b.example/cb',
    ])
      assert.match(redirectUriProblem(bad) ?? '', /Content-Security-Policy/, bad);
    const refused = (() => {
      try {
        checkProfile({ logo_url: 'https://cdn.example,img-src/logo.png' });
      } catch (err) {
        return err as { details?: { issues?: { path: string; message: string }[] } };
      }
      return null;
    })();
    assert.is(refused?.details?.issues?.[0]?.path, 'logo_url');
    assert.match(refused?.details?.issues?.[0]?.message ?? '', /Content-Security-Policy/);
    // Still accepted: names, IPv4 and the IPv6 loopback, ports, IDNs (the parser writes them xn--).
    for (const good of [
      'https://a-b.c9.example:8443/cb',
      'http://127.0.0.1:1/cb',
      'http://[::1]/cb',
      'https://café.example/',
    ])
      assert.is(redirectUriProblem(good), null, good);
    assert.is(
      checkProfile({ logo_url: 'https://cdn.example/logo.png' }).logo_url,
      'https://cdn.example/logo.png',
    );
  },
);

t('the CSP builder never writes a stored host CSP cannot hold: its scheme stands for it', () => {
  assert.is(originOf('https://pos.example:8443/cb'), 'https://pos.example:8443');
  assert.is(originOf('https://evil.example;script-src/cb'), 'https:');
  assert.is(originOf('https://a,b.example/logo.png'), 'https:');
  assert.is(originOf('http://[::1]:9/cb'), 'http:');
  const csp = pageHeaders({
    formTargets: [originOf('https://evil.example;script-src/cb') as string],
    imageOrigins: [originOf('https://a,b.example/logo.png') as string],
  })['content-security-policy'] as string;
  assert.not.match(csp, /,/);
  assert.is(csp.split('; ').length, 6, csp);
  assert.ok(csp.includes("form-action 'self' https:"), csp);
});

t('passwords: scrypt with its parameters stored; a changed parameter or hash never verifies', async () => {
  const stored = await hashPassword('correct horse battery staple');
  assert.ok(await verifyPassword('correct horse battery staple', stored));
  assert.not.ok(await verifyPassword('correct horse battery stapl', stored));
  assert.not.ok(await verifyPassword('correct horse battery staple', stored.replace('$8$3$', '$8$2$')));
  assert.not.ok(await verifyPassword('x', 'scrypt$1099511627776$8$1$a$b'), 'absurd parameters are refused');
  assert.not.ok(await verifyPassword('x', 'md5$abc'));
  const [one, two] = await Promise.all([hashPassword('same'), hashPassword('same')]);
  assert.is.not(one, two, 'salted');
  assert.is(userIdFor(' A@B.test'), userIdFor('a@b.test'));
});

t('pages: interpolated values are escaped; next= stays on this site', () => {
  assert.is(
    markup(html`<p title="${'"><script>'}">${'<b>&'}</p>`),
    '<p title="&quot;&gt;&lt;script&gt;">&lt;b&gt;&amp;</p>',
  );
  assert.is(safeNext('/oauth/authorize?client_id=x'), '/oauth/authorize?client_id=x');
  assert.is(safeNext('/dashboard?restaurant=r'), '/dashboard?restaurant=r');
  // A backslash a browser left raw in a query is kept, encoded (the same value to the query's reader).
  assert.is(safeNext('/oauth/authorize?state=a\\b'), '/oauth/authorize?state=a%5Cb');
  for (const bad of [
    'https://evil.example',
    '//evil.example',
    '/\\evil.example',
    '/dashboard/\\evil.example?x=1',
    '/dashboardx',
    '/sign-in',
    'javascript:x',
    42,
  ])
    assert.is(safeNext(bad), '/dashboard', String(bad));
});

t('disabling with --disconnect records a cut-off, again on a disabled application; enabling keeps it', () => {
  const at = '2026-01-02T00:00:00Z';
  const fold = (s: ApplicationState, events: NewEvent[], position: bigint) =>
    events.reduce((st, e) => evolveApplication(st, { ...e, position } as unknown as RecordedEvent), s);
  const plain = fold(app, decideSetDisabled(app, 'app_x', true, at), 5n);
  assert.equal([plain.disabled, plain.cut_off_position], [true, null], 'a plain disable cuts nothing off');
  assert.equal(decideSetDisabled(plain, 'app_x', true, at), [], 'disabling again appends nothing');
  const cut = fold(plain, decideSetDisabled(plain, 'app_x', true, at, true), 7n);
  assert.is(cut.cut_off_position, 7n, 'already disabled: the cut-off is still recorded');
  const enabled = fold(cut, decideSetDisabled(cut, 'app_x', false, at), 9n);
  assert.equal([enabled.disabled, enabled.cut_off_position], [false, 7n]);
});

t.run();
