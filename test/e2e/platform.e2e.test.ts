import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { revokeApiKey } from '../../commands/credentials/handler';
import { resumeRestaurant, suspendRestaurant } from '../../commands/restaurants/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import { requestWithRepeats } from '../helpers/repeated-headers';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const FULL = 'couvert_pk_full_0000000000000000000000000001';
const CATALOG = 'couvert_pk_catalog_00000000000000000000000002';
const ME = '/api/partner/v1/me';

const bootstrap = demoBootstrap({}, [
  { id: 'key_full', token: FULL, scopes: ['CATALOG_READ', 'CUSTOMERS_WRITE', 'RESERVATIONS_READ'] },
  { id: 'key_catalog', token: CATALOG, scopes: ['CATALOG_READ'] },
]);

const t = suite<{ svc: TestService; openapi: OpenApiChecker }>('platform');

t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap });
  const doc = await ctx.svc.api('GET', '/openapi.json');
  ctx.openapi = new OpenApiChecker(doc.body);
});
t.after(async (ctx) => {
  await ctx.svc.close();
});

t('the API root and openapi.json are public', async ({ svc, openapi }) => {
  const root = await svc.api('GET', '/api/partner/v1');
  assert.is(root.status, 200);
  assert.is(root.body.version, 'v1');
  assert.match(root.body.links.openapi, /\/api\/partner\/v1\/openapi\.json$/);
  openapi.check('GET', '/api/partner/v1', root);
  const doc = await svc.api('GET', '/openapi.json');
  assert.is(doc.status, 200);
  assert.is(doc.body.openapi, '3.0.3');
});

t('GET /me answers the restaurant, scopes and credential', async ({ svc, openapi }) => {
  const res = await svc.api('GET', '/me', { token: FULL });
  assert.is(res.status, 200);
  openapi.check('GET', ME, res);
  assert.equal(res.body.data.restaurant, {
    id: 'rest_demo',
    name: 'Le Demo',
    slug: 'le-demo',
    country_code: 'FR',
    timezone: 'Europe/Paris',
    currency: 'EUR',
  });
  // Exactly the scopes granted: CUSTOMERS_WRITE does not bring CUSTOMERS_READ with it.
  assert.equal(res.body.data.scopes, ['CATALOG_READ', 'RESERVATIONS_READ', 'CUSTOMERS_WRITE']);
  assert.equal(res.body.data.credential.id, 'key_full');
  assert.is(res.body.data.credential.type, 'API_KEY');
  assert.is(res.body.data.credential.application, null);
});

t('missing, malformed and unknown tokens are 401 in the envelope', async ({ svc, openapi }) => {
  const missing = await svc.api('GET', '/me');
  assert.is(missing.status, 401);
  assert.is(missing.body.error.code, 'AUTHENTICATION_REQUIRED');
  openapi.check('GET', ME, missing);
  const wrong = await svc.api('GET', '/me', { token: 'couvert_pk_nope_000000000000000000000' });
  assert.is(wrong.status, 401);
  assert.is(wrong.body.error.code, 'INVALID_AUTHENTICATION');
  const basic = await svc.api('GET', '/me', { headers: { authorization: `Basic ${FULL}` } });
  assert.is(basic.status, 401);
  assert.is(basic.body.error.code, 'INVALID_AUTHENTICATION');
  assert.is(typeof wrong.body.error.request_id, 'string');
  assert.is(wrong.headers.get('x-request-id'), wrong.body.error.request_id);
  // A 401 names its scheme (RFC 9110 §11.6.1: it MUST send WWW-Authenticate; RFC 6750 §3's Bearer form).
  assert.is(missing.headers.get('www-authenticate'), 'Bearer realm="Couvert Partner API"');
  assert.is(
    wrong.headers.get('www-authenticate'),
    'Bearer realm="Couvert Partner API", error="invalid_token"',
  );
  assert.is(
    basic.headers.get('www-authenticate'),
    'Bearer realm="Couvert Partner API", error="invalid_request"',
  );
  for (const res of [wrong, basic]) openapi.check('GET', ME, res);
});

t(
  'two Authorization headers are refused, whichever comes first: never read as one of them',
  async ({ svc }) => {
    for (const values of [
      [`Bearer ${FULL}`, 'Bearer couvert_pk_nope_000000000000000000000'],
      ['Bearer couvert_pk_nope_000000000000000000000', `Bearer ${FULL}`],
      [`Bearer ${FULL}`, `Bearer ${FULL}`],
    ]) {
      const res = await requestWithRepeats(`${svc.url}${ME}`, 'GET', { authorization: values });
      assert.is(res.status, 401, JSON.stringify(res.body));
      assert.is(res.body.error.code, 'INVALID_AUTHENTICATION');
      assert.match(res.body.error.message, /Authorization header is given more than once/);
      assert.is(
        res.headers['www-authenticate'],
        'Bearer realm="Couvert Partner API", error="invalid_request"',
      );
    }
    const once = await requestWithRepeats(`${svc.url}${ME}`, 'GET', { authorization: [`Bearer ${FULL}`] });
    assert.is(once.status, 200);
  },
);

t(
  'a token that opens nothing is told the fix: quotes, another value of the integration, or a new key',
  async ({ svc }) => {
    const cases: [string, RegExp][] = [
      [`"${FULL}"`, /without quotes or brackets/],
      [`<${FULL}>`, /without quotes or brackets/],
      [
        'couvert_cs_wd93zfOb32B5kp5Q-zcVMR2YpsFBvLavqB_nzPAyJPE',
        /OAuth client secret, not an access token: exchange an authorization code at POST \/api\/oauth\/token/,
      ],
      [
        'couvert_ac_NFNdXABzTFPT5CJI_shX6L1EdQiWQWv8h5Pu6ntfXWM',
        /OAuth authorization code, not an access token: exchange it at POST \/api\/oauth\/token/,
      ],
      ['whsec_3E3Ko-sc3gTEh8Cm5Huw0XxQAjXMrFRt_hmqCyuQeJM', /webhook signing secret, not an access token/],
      [
        'couvert_pk_nope_000000000000000000000',
        /ask the restaurant for a new API key, or connect again through OAuth/,
      ],
    ];
    for (const [token, fix] of cases) {
      const res = await svc.api('GET', '/me', { token });
      assert.is(res.status, 401, token);
      assert.is(res.body.error.code, 'INVALID_AUTHENTICATION');
      assert.match(res.body.error.message, fix);
      // The token itself is never echoed.
      assert.not.ok(res.text.includes(token.replace(/^["<]|[">]$/g, '')), token);
    }
  },
);

t('a revoked key fails on the very next request', async ({ svc }) => {
  const created = await svc.api('GET', '/me', { token: CATALOG });
  assert.is(created.status, 200);
  const out = await revokeApiKey(svc.rt, 'key_catalog', 'test', operatorMeta('test'));
  assert.ok(out.position !== null);
  const after = await svc.api('GET', '/me', { token: CATALOG });
  assert.is(after.status, 401);
  assert.is(after.body.error.code, 'INVALID_AUTHENTICATION');
});

t('a suspended restaurant answers 403 RESTAURANT_SUSPENDED until resumed', async ({ svc }) => {
  // Answered once first, so the credential this process remembers is the one suspension must beat.
  assert.is((await svc.api('GET', '/me', { token: FULL })).status, 200);
  await suspendRestaurant(svc.rt, 'rest_demo', 'unpaid', operatorMeta('test'));
  const res = await svc.api('GET', '/me', { token: FULL });
  assert.is(res.status, 403);
  assert.is(res.body.error.code, 'RESTAURANT_SUSPENDED');
  // Nothing the partner sends lifts it: the message says who can, and that nothing was done.
  assert.match(res.body.error.message, /until the service operator resumes it; nothing was done$/);
  await resumeRestaurant(svc.rt, 'rest_demo', operatorMeta('test'));
  assert.is((await svc.api('GET', '/me', { token: FULL })).status, 200);
});

t('unknown routes are 404 and wrong methods 405, in the envelope', async ({ svc }) => {
  const missing = await svc.api('GET', '/nope', { token: FULL });
  assert.is(missing.status, 404);
  assert.is(missing.body.error.code, 'RESOURCE_NOT_FOUND');
  assert.ok(missing.body.error.request_id);
  const outside = await svc.api('GET', '/elsewhere');
  assert.is(outside.status, 404);
  assert.is(outside.body.error.code, 'RESOURCE_NOT_FOUND');
  const method = await svc.api('DELETE', '/me', { token: FULL });
  assert.is(method.status, 405);
  assert.is(method.headers.get('allow'), 'HEAD, GET', 'HEAD is answered like GET, so it is allowed too');
  assert.is(method.body.error.code, 'VALIDATION_ERROR');
  assert.is(method.body.error.message, 'DELETE is not allowed here; use HEAD, GET');
  // A browser's CORS preflight is told why none is served, and what to do instead.
  const preflight = await svc.api('OPTIONS', '/me');
  assert.is(preflight.status, 405);
  assert.match(preflight.body.error.message, /no CORS preflight is served: call the API from your server/);
  // A path that does not exist lists no methods: a 404 with no (empty) allow header, whatever the method.
  for (const verb of ['OPTIONS', 'GET', 'DELETE']) {
    const nowhere = await svc.api(verb, '/nope', { token: FULL });
    assert.is(nowhere.status, 404, verb);
    assert.is(nowhere.headers.get('allow'), null, `${verb}: ${nowhere.headers.get('allow')}`);
  }
  // HEAD is answered as GET, and checked against the GET operation's document.
  const head = await svc.api('HEAD', '/me', { token: FULL });
  assert.equal([head.status, head.text], [200, '']);
  assert.is((await svc.api('HEAD', '/me')).status, 401);
});

t(
  'a path no route takes names the fix: the route most likely meant, and where every route is listed',
  async ({ svc }) => {
    const cases: [string, string, string][] = [
      ['GET', '/api/partner/v1/reservation', 'did you mean GET /api/partner/v1/reservations?'],
      ['GET', '/reservations', 'did you mean GET /api/partner/v1/reservations?'],
      ['GET', '/api/partner/v2/me', 'did you mean GET /api/partner/v1/me?'],
      ['GET', '/api/partner/me', 'did you mean GET /api/partner/v1/me?'],
      ['GET', '/api/partner/customers/cus_1', 'did you mean GET /api/partner/v1/customers/cus_1?'],
      ['GET', '/api/v1/reservations', 'did you mean GET /api/partner/v1/reservations?'],
      ['GET', '/api/partner', 'did you mean GET /api/partner/v1?'],
      ['POST', '/api/partner/v1/webhook_endpoints', 'did you mean POST /api/partner/v1/webhook-endpoints?'],
      [
        'POST',
        '/api/partner/v1/reservation/res_1/cancel',
        'did you mean POST /api/partner/v1/reservations/res_1/cancel?',
      ],
      ['POST', '/api/oauth/tokens', 'did you mean POST /api/oauth/token?'],
    ];
    for (const [method, path, meant] of cases) {
      // Whole URLs: the helper would put the API's prefix before a path without it.
      const res = await svc.api(method, `${svc.url}${path}`, {
        token: FULL,
        headers: { 'content-type': 'application/json' },
      });
      assert.is(res.status, 404, path);
      assert.is(res.body.error.code, 'RESOURCE_NOT_FOUND');
      assert.ok(res.body.error.message.includes(meant), `${path}: ${res.body.error.message}`);
      assert.match(res.body.error.message, /GET \/api\/partner\/v1\/openapi\.json/);
    }
    // Nothing close: the list's address alone; another method's route is never offered as the fix.
    const far: [string, string][] = [
      ['GET', '/api/partner/v1/nope'],
      ['DELETE', '/api/partner/v1/reservation'],
    ];
    for (const [method, path] of far) {
      const res = await svc.api(method, path, { token: FULL });
      assert.is(res.status, 404);
      assert.not.match(res.body.error.message, /did you mean/);
      assert.match(
        res.body.error.message,
        /every route is listed in the OpenAPI document, GET \/api\/partner\/v1\/openapi\.json/,
      );
    }
  },
);

t('a caller-supplied x-request-id is kept; otherwise one is made', async ({ svc }) => {
  const res = await svc.api('GET', '/me', {
    token: FULL,
    headers: { 'x-request-id': 'partner-trace-12345' },
  });
  assert.is(res.headers.get('x-request-id'), 'partner-trace-12345');
  const bad = await svc.api('GET', '/me', { token: FULL, headers: { 'x-request-id': 'x y' } });
  assert.match(bad.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
});

// The OpenAPI document itself (routes, headers, examples, validity): openapi.e2e.test.ts.

t.run();
