// The contract partners trust: where the server and the OpenAPI document it publishes judge the same
// input, they give the same verdict (an email address, a webhook endpoint's settings), and mistakes get
// the table's answer in clear words.

import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allRoutes } from '../../src/http/routes/index';
import { createApp } from '../../src/http/server';
import { alwaysRaced } from '../helpers/hooked-events';
import { OpenApiChecker, publishedDocument } from '../helpers/openapi';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';
import { startReceiver } from '../helpers/webhook-receiver';

const TOKEN = 'couvert_pk_contract_00000000000000000000000001';
/** A key holding one scope no operation below needs alone. */
const NARROW = 'couvert_pk_contract_00000000000000000000000002';
const PARTNER = '/api/partner/v1';

const bootstrap = demoBootstrap({}, [
  {
    id: 'key_contract',
    token: TOKEN,
    scopes: [
      'AVAILABILITY_READ',
      'CUSTOMERS_READ',
      'CUSTOMERS_WRITE',
      'RESERVATIONS_READ',
      'RESERVATIONS_WRITE',
      'WEBHOOKS_WRITE',
    ],
  },
  { id: 'key_narrow', token: NARROW, scopes: ['CATALOG_READ'] },
]);

const t = suite<{ svc: TestService; checker: OpenApiChecker }>('contract: the server and its document agree');

t.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap,
    // Loopback targets for the test delivery below; the URL rules compared with the document are the same.
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  ctx.checker = new OpenApiChecker(await publishedDocument(ctx.svc.rt));
});
t.after(async ({ svc }) => svc.close());

// biome-ignore lint/suspicious/noExplicitAny: the document is arbitrary JSON
type Json = any;

/** The document's own verdict on a request body of an operation. */
async function documentAccepts(
  ctx: { svc: TestService; checker: OpenApiChecker },
  method: string,
  path: string,
  body: unknown,
) {
  const doc = (await publishedDocument(ctx.svc.rt)) as Json;
  const schema =
    doc.paths[`${PARTNER}${path}`][method.toLowerCase()].requestBody.content['application/json'].schema;
  const validate = ctx.checker.validator(schema);
  return validate(body) as boolean;
}

const ADDRESSES = [
  // Every rule takes these.
  'camille@example.com',
  'Camille.Martin+resa@Example.COM',
  "o'brien@example.ie",
  'a@b-c.fr',
  'x@xn--mnchen-3ya.de',
  `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.fr`, // 254 characters
  // No rule takes these.
  'no-at.example.com',
  'a@b',
  'a b@c.de',
  'a@@b.cd',
  '',
  `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.fr`, // 255 characters
  // The server took these and the document's `format: email` refused them.
  'jérôme@exemple.fr',
  'a@exämple.fr',
  'a..b@c.de',
  '.a@b.cd',
  'a.@b.cd',
  '<a@b.cd>',
  'a,b@c.de',
  'a@b..cd',
  'a@-b.cd',
  'a@b_c.de',
  'a@b.cd.',
  'a@[127.0.0.1]',
  '"a"@b.cd',
];

t(
  'an email address: the server takes exactly what the document takes, on POST and PATCH /customers',
  async (ctx) => {
    const { svc } = ctx;
    const disagreements: string[] = [];
    const created = await svc.api('POST', '/customers', { token: TOKEN, body: { name: 'Email probe' } });
    assert.is(created.status, 201);
    const id = created.body.data.id as string;
    for (const [i, email] of ADDRESSES.entries()) {
      const body = { name: `Email ${i}`, email, on_match: 'create_new' };
      const expected = await documentAccepts(ctx, 'POST', '/customers', body);
      // anyBody: the body is not held to the document before it is sent (that is what is compared here);
      // the answer still is, so an address the server stores must fit the response schema too.
      const res = await svc.api('POST', '/customers', { token: TOKEN, body, anyBody: true });
      if ((res.status === 201) !== expected)
        disagreements.push(
          `POST ${JSON.stringify(email)}: document ${expected ? 'takes' : 'refuses'}, server ${res.status}`,
        );
      if (res.status === 400)
        assert.equal(
          res.body.error.details.issues.map((x: { path: string; code: string }) => `${x.path} ${x.code}`),
          [email.length > 254 ? 'email out_of_range' : 'email invalid_format'],
          email,
        );
      const patched = await svc.api('PATCH', `/customers/${id}`, {
        token: TOKEN,
        body: { email },
        anyBody: true,
      });
      if ((patched.status === 200) !== expected)
        disagreements.push(
          `PATCH ${JSON.stringify(email)}: document ${expected ? 'takes' : 'refuses'}, server ${patched.status}`,
        );
    }
    assert.equal(disagreements, []);
  },
);

t('the document states the email rule exactly: format email, a pattern and a length', async (ctx) => {
  const doc = (await publishedDocument(ctx.svc.rt)) as Json;
  const email =
    doc.paths[`${PARTNER}/customers`].post.requestBody.content['application/json'].schema.properties.email;
  assert.is(email.format, 'email');
  assert.is(email.maxLength, 254);
  assert.type(email.pattern, 'string');
  const pattern = new RegExp(email.pattern);
  for (const address of ADDRESSES)
    assert.is(
      pattern.test(address) && address.length <= 254,
      await documentAccepts(ctx, 'POST', '/customers', { name: 'x', email: address }),
      `the pattern alone judges ${JSON.stringify(address)} as the document does`,
    );
});

const HOOK = 'https://partner.example.com/hooks/couvert';
const headers = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-Partner-${i}`, 'v']));

const ENDPOINT_BODIES: unknown[] = [
  { url: HOOK },
  { url: HOOK, enabled_events: ['*'] },
  { url: HOOK, enabled_events: ['reservation.created', 'customer.merged'] },
  { url: HOOK, headers: headers(20) },
  { url: HOOK, headers: { 'X-Partner-Account': 'acct 42\tok' } },
  // The server refused these and the document took them.
  { url: HOOK, headers: headers(21) },
  { url: HOOK, headers: { 'X-Partner-Account': 'acct\r\nX-Injected: 1' } },
  { url: HOOK, headers: { 'X-Partner-Account': 'café' } },
  { url: HOOK, enabled_events: ['reservation.made'] },
  { url: HOOK, enabled_events: ['*', '*'] },
  { url: HOOK, enabled_events: ['*', 'reservation.created'] },
  { url: HOOK, enabled_events: ['customer.created', 'customer.created'] },
  // The server took these (and stored the URL as sent) and the document took them too.
  { url: ` ${HOOK}` },
  { url: `${HOOK} ` },
  { url: 'https://partner.exa\tmple.com/hooks' },
  { url: 'https://partner.example.com/my hooks' },
  // Lengths count characters (code points) on both sides: 2,048 emoji-laden characters, then 2,049.
  { url: `${HOOK}/${'🍽'.repeat(2048 - HOOK.length - 1)}` },
  { url: `${HOOK}/${'🍽'.repeat(2048 - HOOK.length)}` },
];

t('a webhook endpoint: the server takes exactly the settings the document takes', async (ctx) => {
  const { svc } = ctx;
  const disagreements: string[] = [];
  for (const body of ENDPOINT_BODIES) {
    const expected = await documentAccepts(ctx, 'POST', '/webhook-endpoints', body);
    const res = await svc.api('POST', '/webhook-endpoints', { token: TOKEN, body, anyBody: true });
    if ((res.status === 201) !== expected)
      disagreements.push(
        `${JSON.stringify(body).slice(0, 200)}: document ${expected ? 'takes' : 'refuses'}, server ${res.status} ${res.text.slice(0, 200)}`,
      );
    if (res.status === 201) {
      const patch = { url: (body as { url: string }).url };
      const patched = await svc.api('PATCH', `/webhook-endpoints/${res.body.data.id}`, {
        token: TOKEN,
        body: patch,
      });
      assert.is(patched.status, 200);
      assert.is(
        (await svc.api('DELETE', `/webhook-endpoints/${res.body.data.id}`, { token: TOKEN })).status,
        200,
      );
    } else assert.is(res.status, 400, res.text);
  }
  const spaced = await svc.api('PATCH', '/webhook-endpoints/we_none', {
    token: TOKEN,
    body: { url: ` ${HOOK}` },
    invalid: true,
  });
  assert.is(spaced.status, 400, 'the body is checked before the endpoint is looked up');
  assert.equal(disagreements, []);
});

t(
  'a value outside a list is named in words: invalid_enum for a string, invalid_type for anything else',
  async ({ svc }) => {
    const issue = async (path: string, body: unknown) => {
      const res = await svc.api('POST', path, { token: TOKEN, body, invalid: true });
      assert.is(res.status, 400, res.text);
      return res.body.error.details.issues[0] as { path: string; code: string; message: string };
    };
    const langs = '"FR","EN","IT","ES","DE","PT"';
    assert.equal(await issue('/customers', { name: 'A', lang: 'fr' }), {
      path: 'lang',
      code: 'invalid_enum',
      message: `lang must be one of ${langs}`,
    });
    assert.equal(await issue('/customers', { name: 'A', lang: null }), {
      path: 'lang',
      code: 'invalid_type',
      message: `lang must be one of ${langs}, not null`,
    });
    assert.equal(await issue('/customers', { name: 'A', on_match: 3 }), {
      path: 'on_match',
      code: 'invalid_type',
      message: 'on_match must be one of "return_existing","update","create_new", not an integer',
    });
    const query = await svc.api('GET', '/webhook-endpoints/we_x/deliveries?status=done', { token: TOKEN });
    assert.equal(query.body.error.details.issues, [
      {
        path: 'status',
        code: 'invalid_enum',
        message: 'status must be one of "pending","succeeded","failed","canceled"',
      },
    ]);
  },
);

t(
  'an action that takes no settings refuses a property instead of ignoring it (test delivery, resend)',
  async ({ svc }) => {
    for (const path of [
      '/webhook-endpoints/we_none/test',
      '/webhook-endpoints/we_none/deliveries/whd_none/resend',
    ]) {
      const sent = await svc.api('POST', path, {
        token: TOKEN,
        body: { event_type: 'reservation.created' },
        invalid: true,
      });
      assert.is(sent.status, 400, `${path}: ${sent.text}`);
      assert.equal(sent.body.error.details.issues, [
        { path: 'event_type', code: 'unknown_property', message: 'event_type is not a known property' },
      ]);
      // No body, or an empty object, is the action itself (here: an endpoint that does not exist).
      assert.is((await svc.api('POST', path, { token: TOKEN })).status, 404);
      assert.is((await svc.api('POST', path, { token: TOKEN, body: {} })).status, 404);
      const text = await svc.api('POST', path, {
        token: TOKEN,
        rawBody: 'event_type=x',
        headers: { 'content-type': 'text/plain' },
      });
      assert.is(text.status, 415);
    }
  },
);

t(
  "a search window longer than 31 days is the query string's 400, before an unknown shift's 422",
  async ({ svc }) => {
    const wide = 'start_at_from=2026-12-01T00:00:00Z&start_at_to=2027-01-05T00:00:00Z&party_size=2';
    for (const extra of ['', '&shift_id=shift_none', '&room_id=room_none']) {
      const res = await svc.api('GET', `/availability?${wide}${extra}`, { token: TOKEN });
      assert.is(res.status, 400, `${extra}: ${res.text}`);
      assert.is(res.body.error.message, 'The query string is invalid');
      assert.equal(res.body.error.details.issues, [
        {
          path: 'start_at_to',
          code: 'out_of_range',
          message: 'the window spans at most 31 days; split longer searches',
        },
      ]);
    }
    // Exactly 31 days is a window, and then the unknown shift is named.
    const edge = 'start_at_from=2026-12-01T00:00:00Z&start_at_to=2027-01-01T00:00:00Z&party_size=2';
    const unknown = await svc.api('GET', `/availability?${edge}&shift_id=shift_none`, { token: TOKEN });
    assert.is(unknown.status, 422);
    assert.is(unknown.body.error.details.issues[0].code, 'unknown_reference');
  },
);

t(
  "README's order: a body's 400 and a privileged option's 403 come before an unknown id's 422 and the path's 404",
  async ({ svc }) => {
    const only = (res: { status: number; body: Json; text: string }, status: number, issue?: string) => {
      assert.is(res.status, status, res.text);
      if (issue)
        assert.equal(
          res.body.error.details.issues.map((i: { path: string; code: string }) => `${i.path} ${i.code}`),
          [issue],
        );
    };
    // A phone number no country reads is the body's mistake, whatever the id in the path or the body.
    only(
      await svc.api('PATCH', '/customers/cus_none', { token: TOKEN, body: { phone_number: '123' } }),
      400,
      'phone_number invalid_format',
    );
    const booking = { party_size: 2, start_at: '2027-06-01T19:00:00+02:00', shift_id: 'shift_none' };
    only(
      await svc.api('POST', '/reservations', {
        token: TOKEN,
        body: { ...booking, customer: { name: 'Ann', phone_number: '123' } },
      }),
      400,
      'customer.phone_number invalid_format',
    );
    for (const customer of [{ name: 'Ann', phone_number: '123' }, { phone_number: '123' }])
      only(
        await svc.api('PATCH', '/reservations/res_none', { token: TOKEN, body: { customer } }),
        400,
        'customer.phone_number invalid_format',
      );
    // An empty inline phone is "not given": the unknown shift is then what is wrong.
    only(
      await svc.api('POST', '/reservations', {
        token: TOKEN,
        body: { ...booking, customer: { name: 'Ann', phone_number: '' } },
      }),
      422,
      'shift_id unknown_reference',
    );
    // A privileged option this key may not use is its scope's 403, before the unknown shift's 422.
    const forced = await svc.api('POST', '/reservations', {
      token: TOKEN,
      body: { ...booking, initial_status: 'CONFIRMED' },
    });
    assert.is(forced.status, 403, forced.text);
    assert.equal(forced.body.error.details.missing_scopes, ['RESERVATIONS_FORCE_INSERT']);
  },
);

t(
  'a delivery cursor that names nothing is 400 invalid_cursor, as every feed cursor, not a 404',
  async ({ svc }) => {
    const created = await svc.api('POST', '/webhook-endpoints', { token: TOKEN, body: { url: HOOK } });
    assert.is(created.status, 201);
    const id = created.body.data.id as string;
    const res = await svc.api('GET', `/webhook-endpoints/${id}/deliveries?starting_after=whd_none`, {
      token: TOKEN,
    });
    assert.is(res.status, 400, res.text);
    assert.equal(
      res.body.error.details.issues.map((i: { path: string; code: string }) => `${i.path} ${i.code}`),
      ['starting_after invalid_cursor'],
    );
    // By the name the other feeds take it: the same answer, on the name given.
    const byCursor = await svc.api('GET', `/webhook-endpoints/${id}/deliveries?cursor=whd_none`, {
      token: TOKEN,
    });
    assert.equal(
      byCursor.body.error.details.issues.map((i: { path: string; code: string }) => `${i.path} ${i.code}`),
      ['cursor invalid_cursor'],
    );
    // Both names at once: one value given twice, never one read and the other dropped.
    const both = await svc.api(
      'GET',
      `/webhook-endpoints/${id}/deliveries?cursor=whd_a&starting_after=whd_a`,
      {
        token: TOKEN,
      },
    );
    assert.is(both.status, 400, both.text);
    assert.equal(
      both.body.error.details.issues.map((i: { path: string; code: string }) => `${i.path} ${i.code}`),
      ['starting_after duplicate_property'],
    );
    const customers = await svc.api('GET', '/customers?cursor=nope', { token: TOKEN });
    assert.is(customers.body.error.details.issues[0].code, 'invalid_cursor');
    assert.is((await svc.api('DELETE', `/webhook-endpoints/${id}`, { token: TOKEN })).status, 200);
  },
);

t(
  'an unknown reservation status in the filter is named in words, not by a 700-character pattern',
  async ({ svc }) => {
    const res = await svc.api('GET', '/reservations?status=CONFIRMED,SEATED_NOW', { token: TOKEN });
    assert.is(res.status, 400);
    const [issue] = res.body.error.details.issues;
    assert.is(issue.path, 'status');
    // As every value outside a list (the deliveries' status filter, an enum): one code for one mistake.
    assert.is(issue.code, 'invalid_enum');
    assert.match(issue.message, /^status must be one status or several, comma-separated, among PENDING, /);
    assert.match(issue.message, /CANCELED_BY_RESTAURANT$/);
    assert.is((await svc.api('GET', '/reservations?status=CONFIRMED,SEATED', { token: TOKEN })).status, 200);
  },
);

t(
  'a write that keeps losing its race answers 409, and each write operation documents it',
  async ({ svc, checker }) => {
    const customer = await svc.api('POST', '/customers', {
      token: TOKEN,
      body: { name: 'Raced', email: 'raced@example.com' },
    });
    const endpoint = await svc.api('POST', '/webhook-endpoints', { token: TOKEN, body: { url: HOOK } });
    assert.equal([customer.status, endpoint.status], [201, 201]);
    // The same service, whose appends to these two records always find another writer landed first.
    const ids = [customer.body.data.id as string, endpoint.body.data.id as string];
    const raced = alwaysRaced(svc.rt, (stream) => ids.some((id) => stream.endsWith(id)));
    const server = createApp(raced, allRoutes(raced)).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${PARTNER}`;
    try {
      const writes: [string, string, string, unknown][] = [
        [
          'POST',
          '/customers',
          '/customers',
          { name: 'Raced', email: 'raced@example.com', on_match: 'update', note: 'x' },
        ],
        ['PATCH', `/customers/${ids[0]}`, '/customers/{id}', { note: 'x' }],
        ['PATCH', `/webhook-endpoints/${ids[1]}`, '/webhook-endpoints/{id}', { description: 'x' }],
        ['POST', `/webhook-endpoints/${ids[1]}/rotate-secret`, '/webhook-endpoints/{id}/rotate-secret', {}],
        ['DELETE', `/webhook-endpoints/${ids[1]}`, '/webhook-endpoints/{id}', undefined],
      ];
      for (const [method, path, template, body] of writes) {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        assert.is(res.status, 409, `${method} ${path}: ${text}`);
        const answer = { status: res.status, headers: res.headers, body: JSON.parse(text), text };
        assert.is(answer.body.error.code, 'RESOURCE_CONFLICT');
        checker.check(method, `${PARTNER}${template}`, answer);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  },
);

t(
  'unknown paths, HEAD, OPTIONS and Accept get one answer each, in the envelope, as the document says',
  async ({ svc }) => {
    const doc = (await publishedDocument(svc.rt)) as Json;
    const said = doc.info.description as string;
    const url = (path: string) => `${svc.url}${PARTNER}${path}`;
    const envelope = async (res: Response, status: number, code: string) => {
      assert.is(res.status, status);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json; charset=utf-8$/);
      const body = (await res.json()) as Json;
      assert.is(body.error.code, code);
      assert.is(body.error.request_id, res.headers.get('x-request-id'));
    };
    await envelope(
      await fetch(url('/reservatons'), { headers: { authorization: `Bearer ${TOKEN}` } }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    assert.match(said, 'A path this document does not list answers 404 RESOURCE_NOT_FOUND in the envelope');

    const head = await fetch(url('/me'), { method: 'HEAD', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.is(head.status, 200);
    assert.is(await head.text(), '');
    const get = await fetch(url('/me'), { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.is(head.headers.get('content-length'), get.headers.get('content-length'));
    assert.match(said, 'HEAD is answered as GET, without the body');

    const options = await fetch(url('/customers'), {
      method: 'OPTIONS',
      headers: { origin: 'https://partner.example.com' },
    });
    assert.is(options.headers.get('allow'), 'HEAD, GET, POST');
    await envelope(options, 405, 'VALIDATION_ERROR');
    assert.match(said, 'OPTIONS (no CORS preflight is served)');

    for (const accept of ['application/xml', 'text/html', 'application/json;q=0'])
      assert.match(
        (await fetch(url('/me'), { headers: { authorization: `Bearer ${TOKEN}`, accept } })).headers.get(
          'content-type',
        ) ?? '',
        /^application\/json; charset=utf-8$/,
        accept,
      );
    assert.match(
      said,
      'Every answer is JSON (application/json; charset=utf-8), whatever the Accept header asks for',
    );
  },
);

t(
  'every protected operation answers 401 and 403 as documented, and a delivery read answers its 200',
  async ({ svc }) => {
    // Before this test, these were never checked against the document by any suite (OPENAPI coverage of a
    // full run): 401 or 403 of 19 operations, and GET …/deliveries/{delivery_id}'s 200.
    const doc = (await publishedDocument(svc.rt)) as Json;
    let checked = 0;
    for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      if (!template.startsWith(`${PARTNER}/`)) continue;
      for (const [method, op] of Object.entries(ops)) {
        const scopes = op['x-required-scopes'] as string[] | undefined;
        if (!scopes) continue;
        const path = template.slice(PARTNER.length).replace(/\{\w+\}/g, 'zz_none');
        const example = op.requestBody?.content?.['application/json']?.example;
        const body = example === undefined ? {} : { body: example };
        const none = await svc.api(method.toUpperCase(), path, { ...body });
        assert.is(none.status, 401, `${method} ${template} without a token: ${none.text}`);
        if (scopes.length && !scopes.every((x) => x === 'CATALOG_READ')) {
          const narrow = await svc.api(method.toUpperCase(), path, { token: NARROW, ...body });
          assert.is(narrow.status, 403, `${method} ${template} without its scope: ${narrow.text}`);
          checked++;
        }
      }
    }
    assert.ok(checked >= 25, `${checked} operations answered 403`);

    const rx = await startReceiver();
    try {
      const created = await svc.api('POST', '/webhook-endpoints', {
        token: TOKEN,
        body: { url: rx.url('/hook') },
      });
      const id = created.body.data.id as string;
      const test = await svc.api('POST', `/webhook-endpoints/${id}/test`, { token: TOKEN });
      assert.is(test.status, 200, test.text);
      const delivery = test.body.data.delivery_id as string;
      const read = await svc.api('GET', `/webhook-endpoints/${id}/deliveries/${delivery}`, { token: TOKEN });
      assert.is(read.status, 200, read.text);
      assert.is(read.body.data.id, delivery);
      assert.is((await svc.api('DELETE', `/webhook-endpoints/${id}`, { token: TOKEN })).status, 200);
    } finally {
      await rx.close();
    }
  },
);

t.run();
