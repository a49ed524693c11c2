// The published OpenAPI document is complete for a partner developer: valid for a real parser, every
// header the server sends documented where it is sent, an example for every response that validates
// against its schema, and error answers of the live server that fit it, headers included.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Doc, OpenApiChecker, publishedDocument } from '../helpers/openapi';
import { collectExamples, resolveRef } from '../helpers/openapi-examples';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const WRITER = 'couvert_pk_openapi_writer_000000000000000001';
const ME = '/api/partner/v1/me';
const PARTNER = '/api/partner/v1';
const CUSTOMERS = `${PARTNER}/customers`;

// biome-ignore lint/suspicious/noExplicitAny: the document is arbitrary JSON
type Json = any;
type Op = { method: string; path: string; op: Json };

const operations = (doc: Json): Op[] =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );

/** Each error status and the codes the server answers it with (src/core/errors.ts, src/http). */
const CODES: Record<number, string[]> = {
  400: ['VALIDATION_ERROR'],
  401: ['AUTHENTICATION_REQUIRED', 'INVALID_AUTHENTICATION'],
  403: ['INSUFFICIENT_SCOPE', 'RESTAURANT_SUSPENDED'],
  404: ['RESOURCE_NOT_FOUND'],
  405: ['VALIDATION_ERROR'],
  408: ['VALIDATION_ERROR'],
  409: ['RESOURCE_CONFLICT'],
  413: ['VALIDATION_ERROR'],
  415: ['VALIDATION_ERROR'],
  422: ['VALIDATION_ERROR'],
  429: ['RATE_LIMITED'],
  500: ['INTERNAL_ERROR'],
  502: ['INTERNAL_ERROR'],
  503: ['INTERNAL_ERROR'],
};

const bootstrap = demoBootstrap({}, [
  { id: 'key_writer', token: WRITER, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'] },
]);

const doc = suite<{ svc: TestService; doc: Json }>('openapi document');

doc.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap });
  ctx.doc = (await ctx.svc.api('GET', '/openapi.json')).body;
});
doc.after(async (ctx) => {
  await ctx.svc.close();
});

doc('is valid OpenAPI 3.0.3 for a real parser', async ({ doc }) => {
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  const api = await SwaggerParser.validate(structuredClone(doc));
  assert.is((api as { openapi: string }).openapi, '3.0.3');
  for (const { method, path, op } of operations(doc))
    assert.ok(op.operationId && op.summary, `${method} ${path} has an id and a summary`);
});

doc('is the document every e2e response is checked against', async ({ svc, doc }) => {
  assert.equal(doc, await publishedDocument(svc.rt));
});

doc('documents every route the server mounts, with its access', async ({ doc }) => {
  const { partnerRoutes } = await import('../../src/http/routes/index');
  for (const r of partnerRoutes()) {
    if (r.hidden) continue;
    const path = r.absolute ? r.path : `${PARTNER}${r.path === '/' ? '' : r.path}`;
    const op = doc.paths[path]?.[r.method.toLowerCase()];
    assert.ok(op, `${r.method} ${path} is documented`);
    if (r.access.kind !== 'public') assert.equal(op.security, [{ bearerAuth: [] }]);
    if (r.access.kind === 'scopes') assert.equal(op['x-required-scopes'], [...r.access.scopes]);
  }
});

doc('every response documents the headers the server sends with it', ({ doc }) => {
  const headersOf = (response: Json): Record<string, string> =>
    Object.fromEntries(
      Object.entries((resolveRef(doc, response) as Json).headers ?? {}).map(([name, h]) => [
        name,
        (h as { $ref?: string }).$ref ?? 'inline',
      ]),
    );
  const expect = (where: string, response: Json, metered: boolean, extra: Record<string, string> = {}) => {
    const h = headersOf(response);
    assert.is(h['x-request-id'], '#/components/headers/RequestId', `${where}: x-request-id`);
    assert.is(h['cache-control'], '#/components/headers/CacheControl', `${where}: cache-control`);
    assert.is(
      h['x-content-type-options'],
      '#/components/headers/ContentTypeOptions',
      `${where}: x-content-type-options`,
    );
    const limits = metered
      ? {
          'x-ratelimit-limit': '#/components/headers/RateLimitLimit',
          'x-ratelimit-remaining': '#/components/headers/RateLimitRemaining',
        }
      : {};
    for (const [name, ref] of Object.entries({ ...limits, ...extra }))
      assert.is(h[name], ref, `${where}: ${name}`);
    if (!metered) assert.not.ok(h['x-ratelimit-limit'], `${where}: no rate limit outside ${PARTNER}`);
  };
  const on429 = {
    'x-ratelimit-reset': '#/components/headers/RateLimitReset',
    'retry-after': '#/components/headers/RetryAfter',
  };
  for (const { method, path, op } of operations(doc)) {
    // The OAuth token and revocation endpoints have a budget of their own (OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE).
    const metered = path === PARTNER || path.startsWith(`${PARTNER}/`) || path.startsWith('/api/oauth/');
    const statuses = Object.keys(op.responses);
    assert.ok(statuses.includes('500'), `${method} ${path} documents 500`);
    if (metered) assert.ok(statuses.includes('429'), `${method} ${path} documents 429`);
    if (op.security?.length) assert.ok(statuses.includes('401') && statuses.includes('403'));
    for (const status of statuses)
      expect(`${method} ${path} ${status}`, op.responses[status], metered, status === '429' ? on429 : {});
  }
  expect('405', { $ref: '#/components/responses/MethodNotAllowed' }, true, {
    allow: '#/components/headers/Allow',
  });
  expect('405 outside the prefix', { $ref: '#/components/responses/MethodNotAllowedNoRateLimit' }, false, {
    allow: '#/components/headers/Allow',
  });
});

doc('every error response has examples in the envelope, with the codes of its status', ({ doc }) => {
  const seen = new Map<number, Json[]>();
  // The OAuth token and revocation endpoints answer RFC 6749 §5.2 bodies instead (checked below).
  const oauth = operations(doc).filter(({ path }) => path.startsWith('/api/oauth/'));
  assert.equal(oauth.map((o) => o.path).sort(), ['/api/oauth/revoke', '/api/oauth/token']);
  for (const { path, op } of oauth)
    for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
      if (Number(status) < 400 || status === '500' || status === '503') continue;
      const media = (resolveRef(doc, response) as Json).content['application/json'];
      assert.equal(media.schema.required, ['error', 'error_description'], `${path} ${status}`);
      assert.ok(media.schema.properties.error.enum.includes(media.example.error), `${path} ${status}`);
    }
  const errors = [
    ...operations(doc)
      .filter(({ path }) => !path.startsWith('/api/oauth/'))
      .flatMap(({ op }) => Object.entries(op.responses as Record<string, Json>)),
    ['405', doc.components.responses.MethodNotAllowed] as [string, Json],
  ].filter(([status]) => Number(status) >= 400);
  for (const [status, response] of errors) {
    const media = (resolveRef(doc, response) as Json).content['application/json'];
    assert.equal(media.schema, { $ref: '#/components/schemas/Error' });
    const values = Object.values(media.examples ?? {}).map((e) => (resolveRef(doc, e) as Json).value);
    assert.ok(values.length, `${status} has examples`);
    for (const v of values) {
      assert.ok(CODES[Number(status)]?.includes(v.error.code), `${status} answers ${v.error.code}`);
      assert.type(v.error.request_id, 'string');
    }
    seen.set(Number(status), values);
  }
  const codes = (status: number) => (seen.get(status) ?? []).map((v) => v.error.code).sort();
  assert.equal(codes(401), ['AUTHENTICATION_REQUIRED', 'INVALID_AUTHENTICATION']);
  assert.equal(codes(403), ['INSUFFICIENT_SCOPE', 'RESTAURANT_SUSPENDED']);
  const scope = seen.get(403)?.find((v) => v.error.code === 'INSUFFICIENT_SCOPE').error.details;
  assert.ok(scope.missing_scopes.length && scope.required_scopes.length, 'missing and required scopes');
  const issue = seen.get(400)?.find((v) => v.error.details?.issues).error.details.issues[0];
  assert.equal(Object.keys(issue).sort(), ['code', 'message', 'path']);
  for (const status of Object.keys(CODES)) assert.ok(seen.has(Number(status)), `${status} is documented`);
});

doc('every success response has an example', ({ doc }) => {
  for (const { method, path, op } of operations(doc))
    for (const [status, response] of Object.entries(op.responses as Record<string, Json>))
      if (status.startsWith('2'))
        assert.ok(
          response.content?.['application/json']?.example !== undefined,
          `${method} ${path} ${status}`,
        );
});

doc('a reservation answer lists every field it always carries as required', ({ doc }) => {
  // The server sends every field of a reservation (null when empty), at every depth; only the
  // customer's contact fields depend on the token (RESERVATIONS_READ_SENSITIVE). A generated client
  // would otherwise type duration_minutes, customer, payments… as possibly absent.
  const scoped = new Set(['customer.email', 'customer.phone_number']);
  const check = (schema: Json, at: string) => {
    const s = resolveRef(doc, schema) as Json;
    if (s.type === 'array') return check(s.items, at);
    if (!s.properties) return;
    for (const name of Object.keys(s.properties)) {
      const path = at ? `${at}.${name}` : name;
      if (scoped.has(path)) assert.not.ok(s.required?.includes(name), `${path} depends on the scope`);
      else assert.ok(s.required?.includes(name), `${path} is required`);
      check(s.properties[name], path);
    }
  };
  const reservation = (method: string, path: string, status: string) =>
    (resolveRef(doc, doc.paths[`${PARTNER}${path}`][method].responses[status]) as Json).content[
      'application/json'
    ].schema.properties.data;
  check(reservation('get', '/reservations/{id}', '200'), '');
  check(reservation('post', '/reservations', '201'), '');
  check(reservation('get', '/reservations', '200'), '');
});

doc(
  'every operation reads as a reference: summary, its errors described, request and response examples',
  ({ doc }) => {
    for (const { method, path, op } of operations(doc)) {
      const at = `${method} ${path}`;
      assert.ok(op.summary && op.summary.length <= 80, `${at} has a short summary`);
      const errors = Object.keys(op.responses).filter((s) => Number(s) >= 400);
      assert.ok(errors.length, `${at} documents its errors`);
      const [, listed = ''] = (op.description as string).split('**Errors**');
      for (const status of errors)
        assert.match(listed, new RegExp(`^- \`${status}\` \\S`, 'm'), `${at}: ${status} is described`);
      const media = op.requestBody?.content?.['application/json'];
      if (media) assert.ok(media.example !== undefined, `${at} has a request example`);
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      assert.ok(success.length, `${at} has a success response`);
      for (const status of success)
        assert.ok(
          op.responses[status].content?.['application/json']?.example !== undefined,
          `${at} ${status} has an example`,
        );
    }
    const bodies = operations(doc).filter(({ op }) => op.requestBody).length;
    assert.ok(bodies >= 6, `${bodies} operations take a body`);
  },
);

doc('every example validates against its schema', ({ doc }) => {
  const openapi = new OpenApiChecker(doc);
  const found = collectExamples(doc);
  for (const e of found) {
    const validate = openapi.validator(e.schema);
    assert.ok(validate(e.value), `${e.where}: ${openapi.errorsText(validate)}`);
  }
  const successes = operations(doc).flatMap(({ op }) => Object.keys(op.responses).filter((s) => s < '300'));
  assert.ok(found.length > successes.length, `${found.length} examples validated`);
  // Shared examples are validated through the responses that use them: none may be left unused.
  const text = JSON.stringify(doc.paths) + JSON.stringify(doc.components.responses);
  for (const name of Object.keys(doc.components.examples))
    assert.ok(text.includes(`"#/components/examples/${name}"`), `components.examples.${name} is used`);
});

doc('speaks OpenAPI 3.0.3: a nullable has a type beside it, and a nullable enum lists null', ({ doc }) => {
  let nullables = 0;
  const walk = (node: Json, at: string): void => {
    if (!node || typeof node !== 'object') return;
    if (node.nullable === true) {
      nullables++;
      assert.type(node.type, 'string', `${at}: nullable without a type`);
      if (node.enum) assert.ok(node.enum.includes(null), `${at}: nullable enum without null`);
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'example' && k !== 'examples') walk(v, `${at}/${k}`);
  };
  walk(doc, '#');
  assert.ok(nullables > 20, `${nullables} nullable schemas`);
  const check = doc.paths[`${PARTNER}/availability/check`].post.responses['200'];
  const reason = check.content['application/json'].schema.properties.data.properties.failure_reason;
  assert.ok(reason.enum.includes(null), 'failure_reason: null is documented');
});

doc('what redocly.yaml turns off is checked here instead', ({ doc }) => {
  // no-unused-components: only the 405 responses, which belong to no operation, are not referenced.
  const text = JSON.stringify(doc.paths) + JSON.stringify(doc.components);
  for (const [kind, entries] of Object.entries(doc.components as Record<string, object>))
    for (const name of Object.keys(entries))
      if (kind !== 'securitySchemes' && !name.startsWith('MethodNotAllowed'))
        assert.ok(text.includes(`"#/components/${kind}/${name}"`), `components.${kind}.${name} is used`);
  for (const tag of doc.tags) assert.ok(tag.description, `tag ${tag.name} has a description`);
});

doc('request bodies are checked too: one off the document fails before it is sent', ({ doc }) => {
  const openapi = new OpenApiChecker(doc as Doc);
  openapi.checkRequest('POST', CUSTOMERS, { name: 'Ada', custom_fields: { cf_vip: null } });
  assert.throws(() => openapi.checkRequest('POST', CUSTOMERS, { name: 42 }), /does not fit/);
  assert.throws(() => openapi.checkRequest('POST', CUSTOMERS, { name: 'Ada' }, true), /marked invalid/);
  openapi.checkRequest('POST', CUSTOMERS, { name: 42 }, true);
  assert.throws(() => openapi.checkRequest('GET', ME, {}), /no request body/);
});

doc('the response check is not vacuous: bodies, statuses and headers off the document fail', ({ doc }) => {
  const openapi = new OpenApiChecker(doc as Doc);
  const headers = (extra: Record<string, string> = {}) =>
    new Headers({
      'x-request-id': 'req_0123456789',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-ratelimit-limit': '600',
      'x-ratelimit-remaining': '3',
      ...extra,
    });
  /** A 401's headers: the common ones and its Bearer challenge. */
  const challenged = (extra: Record<string, string> = {}) =>
    headers({ 'www-authenticate': 'Bearer realm="Couvert Partner API", error="invalid_token"', ...extra });
  const fake = (status: number, body: unknown, h = status === 401 ? challenged() : headers()) => ({
    status,
    body,
    headers: h,
    text: JSON.stringify(body),
  });
  const denied = { error: { code: 'INVALID_AUTHENTICATION', message: 'x', request_id: 'req_0123456789' } };
  openapi.check('GET', ME, fake(401, denied));
  assert.throws(() => openapi.check('GET', ME, fake(200, { data: { restaurant: {} } })), /does not match/);
  assert.throws(() => openapi.check('GET', ME, fake(418, {})), /418/);
  assert.throws(() => openapi.check('GET', ME, fake(401, { error: { ...denied.error, code: 'NOPE' } })));
  const without = challenged();
  without.delete('x-request-id');
  assert.throws(() => openapi.check('GET', ME, fake(401, denied, headers())), /lacks .*www-authenticate/);
  assert.throws(() => openapi.check('GET', ME, fake(401, denied, without)), /lacks .*x-request-id/);
  assert.throws(
    () => openapi.check('GET', ME, fake(401, denied, challenged({ 'x-debug': '1' }))),
    /undocumented header x-debug/,
  );
  assert.throws(
    () => openapi.check('GET', ME, fake(401, denied, challenged({ 'x-ratelimit-remaining': 'many' }))),
    /x-ratelimit-remaining/,
  );
  assert.throws(
    () => openapi.check('GET', ME, fake(401, denied, challenged({ 'x-request-id': 'req_another_id' }))),
    /differs from x-request-id/,
  );
  const limited = { error: { code: 'RATE_LIMITED', message: 'x', request_id: 'req_0123456789' } };
  assert.throws(() => openapi.check('GET', ME, fake(429, limited)), /x-ratelimit-reset/);
  const notAllowed = { error: { code: 'VALIDATION_ERROR', message: 'x', request_id: 'req_0123456789' } };
  assert.throws(() => openapi.checkUnrouted('DELETE', ME, fake(405, notAllowed)), /allow/);
  openapi.checkUnrouted('DELETE', ME, fake(405, notAllowed, headers({ allow: 'GET' })));
  // Each error status with the codes its examples give, not any code of the envelope.
  const missing = { error: { code: 'RESOURCE_NOT_FOUND', message: 'x', request_id: 'req_0123456789' } };
  const customer = `${CUSTOMERS}/{id}`;
  openapi.check('GET', customer, fake(404, missing));
  assert.throws(
    () => openapi.check('GET', customer, fake(404, notAllowed)),
    /answers VALIDATION_ERROR, not a code this status documents \(RESOURCE_NOT_FOUND\)/,
  );
  assert.throws(() =>
    openapi.check('GET', ME, fake(401, { error: { ...denied.error, code: 'RATE_LIMITED' } })),
  );
  // HEAD: as GET's answer, without a body.
  openapi.check('HEAD', ME, { ...fake(401, null), text: '' });
  assert.throws(() => openapi.check('HEAD', ME, fake(401, denied)), /has a body/);
  assert.throws(() => openapi.check('HEAD', ME, { ...fake(401, null, without), text: '' }), /x-request-id/);
  // A path the document does not list: under the prefix, the documented 404 and nothing else.
  openapi.checkUnlisted('GET', `${PARTNER}/nope`, fake(404, missing));
  openapi.checkUnlisted('GET', '/dashboard/nope', fake(404, null));
  assert.throws(() => openapi.checkUnlisted('GET', `${PARTNER}/nope`, fake(200, {})), /answered 200/);
  assert.throws(
    () => openapi.checkUnlisted('OPTIONS', `${PARTNER}/nope`, fake(404, missing, headers({ allow: '' }))),
    /undocumented header allow/,
  );
});

doc.run();

// Errors the HTTP layer answers before or around the route, from the real server, checked against the
// document (startTestService checks every response; the explicit checks keep this suite meaningful
// should that ever be switched off here).
const live = suite<{ svc: TestService; openapi: OpenApiChecker }>('openapi: live error answers');

live.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap,
    env: { BODY_LIMIT_BYTES: '2048', RATE_LIMIT_PER_MINUTE: '8' },
  });
  ctx.openapi = new OpenApiChecker(await publishedDocument(ctx.svc.rt));
});
live.after(async (ctx) => {
  await ctx.svc.close();
});

const post = (svc: TestService, rawBody: string, contentType: string) =>
  svc.api('POST', '/customers', { token: WRITER, rawBody, headers: { 'content-type': contentType } });

const sameRequestId = (res: { headers: Headers; body: Json }) =>
  assert.is(res.headers.get('x-request-id'), res.body.error.request_id);

live('400 invalid JSON, 413 and 415 fit the document, headers included', async ({ svc, openapi }) => {
  const invalid = await post(svc, '{"name": ', 'application/json');
  assert.is(invalid.status, 400);
  assert.is(invalid.body.error.details.issues[0].code, 'invalid_json');
  const large = await post(svc, JSON.stringify({ name: 'x'.repeat(5000) }), 'application/json');
  assert.is(large.status, 413);
  const text = await post(svc, 'name=x', 'text/plain');
  assert.is(text.status, 415);
  for (const res of [invalid, large, text]) {
    openapi.check('POST', CUSTOMERS, res);
    sameRequestId(res);
    assert.ok(res.headers.get('x-ratelimit-limit'));
  }
});

live('405 fits components.responses.MethodNotAllowed, with allow', async ({ svc, openapi }) => {
  const res = await svc.api('DELETE', '/me', { token: WRITER });
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'HEAD, GET');
  // Even an answer no route gave: nothing keeps it, nothing sniffs it.
  assert.is(res.headers.get('cache-control'), 'no-store');
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  openapi.checkUnrouted('DELETE', ME, res);
  sameRequestId(res);
});

live(
  '429 fits the document: budget headers, x-ratelimit-reset in epoch ms, retry-after',
  async ({ svc, openapi }) => {
    let res = await svc.api('GET', '/me', { token: WRITER });
    let previous = Number(res.headers.get('x-ratelimit-remaining')) + 1;
    for (let i = 0; res.status === 200 && i < 10; i++) {
      openapi.check('GET', ME, res);
      const remaining = Number(res.headers.get('x-ratelimit-remaining'));
      assert.is(remaining, previous - 1, 'one point per request, none for the response check');
      previous = remaining;
      res = await svc.api('GET', '/me', { token: WRITER });
    }
    assert.is(res.status, 429);
    openapi.check('GET', ME, res);
    sameRequestId(res);
    assert.is(res.headers.get('x-ratelimit-limit'), '8');
    assert.is(res.headers.get('x-ratelimit-remaining'), '0');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    assert.ok(Math.abs(reset - Date.parse(res.body.error.details.reset_at)) < 1000, 'reset is epoch ms');
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    // Before routing too: a method the path does not answer is refused for the budget, not the method.
    const unrouted = await svc.api('DELETE', '/me', { token: WRITER });
    assert.is(unrouted.status, 429);
    openapi.checkUnrouted('DELETE', ME, unrouted);
  },
);

live.run();

// The answers every operation shares, sent to every operation that can give them, through the checked
// helper: a full run had never checked 413, 415 or 429 of most operations, nor any error of the OAuth
// token endpoint (its suites call it with fetch), against the document (test/helpers/openapi-coverage.ts).
const ALL = 'couvert_pk_openapi_every_scope_0000000000001';
const APP_SECRET = 'openapi-app-secret';
const shared = suite<{ svc: TestService; doc: Json }>("openapi: every operation's shared errors");

shared.before(async (ctx) => {
  const { SCOPES } = await import('../../src/core/scopes');
  ctx.svc = await startTestService({
    bootstrap: {
      ...demoBootstrap({}, [{ id: 'key_all', token: ALL, scopes: [...SCOPES] }]),
      oauth_applications: [
        {
          client_id: 'app_openapi',
          client_secret: APP_SECRET,
          name: 'OpenAPI check',
          logo_url: null,
          redirect_uris: ['https://pos.example.test/callback'],
          allowed_scopes: ['CATALOG_READ'],
          published_by_operator: true,
          disabled: false,
        },
      ],
    },
    env: {
      BODY_LIMIT_BYTES: '2048',
      RATE_LIMIT_PER_MINUTE: '100000',
      OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE: '5',
      // The 429 checks give each budget they spend a client address of its own (X-Forwarded-For).
      TRUST_PROXY: 'true',
    },
  });
  ctx.doc = await publishedDocument(ctx.svc.rt);
});
shared.after(async (ctx) => {
  await ctx.svc.close();
});

shared('every operation taking a body answers 413 and 415 as documented', async ({ svc, doc }) => {
  let checked = 0;
  for (const { method, path, op } of operations(doc)) {
    if (!op.requestBody || !path.startsWith(`${PARTNER}/`)) continue;
    const target = path.replace(/\{\w+\}/g, 'zz_none');
    const send = (rawBody: string, contentType: string) =>
      svc.api(method, `${svc.url}${target}`, {
        token: ALL,
        rawBody,
        headers: { 'content-type': contentType },
      });
    const large = await send(JSON.stringify({ note: 'x'.repeat(5000) }), 'application/json');
    assert.is(large.status, 413, `${method} ${path}: ${large.text}`);
    const text = await send('note=x', 'text/plain');
    assert.is(text.status, 415, `${method} ${path}: ${text.text}`);
    checked++;
  }
  assert.ok(checked >= 12, `${checked} operations`);
});

shared(
  'the OAuth token and revocation endpoints answer 400, 401, 413 and 429 as documented',
  async ({ svc }) => {
    const form = (path: string, body: string, headers: Record<string, string> = {}) =>
      svc.api('POST', path, {
        rawBody: body,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      });
    const basic = `Basic ${Buffer.from(`app_openapi:${APP_SECRET}`).toString('base64')}`;
    const unknown = await form(
      '/api/oauth/token',
      'grant_type=authorization_code&code=x&client_id=nope&client_secret=x',
    );
    assert.equal([unknown.status, unknown.body.error], [401, 'invalid_client']);
    const both = await form('/api/oauth/token', `grant_type=authorization_code&client_secret=${APP_SECRET}`, {
      authorization: basic,
    });
    assert.equal([both.status, both.body.error], [400, 'invalid_request']);
    const large = await form('/api/oauth/revoke', `token=${'x'.repeat(5000)}`, { authorization: basic });
    assert.equal([large.status, large.body.error], [413, 'invalid_request']);
    // A client address whose budget (5 a minute) starts with the first of these requests, made one
    // after the other: the window (60 s from its first request) cannot run out between them, however
    // long the requests above took.
    const client = { authorization: basic, 'x-forwarded-for': '198.51.100.7' };
    for (let i = 0; i < 5; i++) {
      const spent = await form('/api/oauth/token', 'grant_type=authorization_code', client);
      assert.is.not(spent.status, 429, `request ${i + 1} of a budget of 5: ${spent.text}`);
    }
    const limited = await form('/api/oauth/token', 'grant_type=authorization_code', client);
    assert.equal([limited.status, limited.body.error], [429, 'rate_limited']);
    const revoke = await form('/api/oauth/revoke', 'token=x', client);
    assert.is(revoke.status, 429);
  },
);

shared('every operation under the rate limit answers 429 as documented', async ({ doc }) => {
  // A budget of one request a minute. Each operation is checked from a client address of its own
  // (X-Forwarded-For), whose budget the request just before spends: its window (60 s from that
  // request) starts right before the check, however long the loop over every operation takes.
  const limited = await startTestService({
    bootstrap,
    env: { RATE_LIMIT_PER_MINUTE: '1', TRUST_PROXY: 'true' },
  });
  try {
    let checked = 0;
    for (const { method, path, op } of operations(doc)) {
      if (!(path === PARTNER || path.startsWith(`${PARTNER}/`))) continue;
      const client = { 'x-forwarded-for': `10.20.${checked >> 8}.${checked & 255}` };
      const spent = await limited.api('GET', `${limited.url}${PARTNER}`, { token: WRITER, headers: client });
      assert.is(spent.status, 200, `the budget's one request: ${spent.text}`);
      const example = op.requestBody?.content?.['application/json']?.example;
      const res = await limited.api(method, `${limited.url}${path.replace(/\{\w+\}/g, 'zz_none')}`, {
        token: WRITER,
        headers: client,
        ...(example === undefined ? {} : { body: example }),
      });
      assert.is(res.status, 429, `${method} ${path}: ${res.text}`);
      checked++;
    }
    assert.ok(checked >= 30, `${checked} operations`);
  } finally {
    await limited.close();
  }
});

shared.run();
