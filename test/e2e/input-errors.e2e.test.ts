// Issue 11 points 4 and 5, issue 18 (null body) through the real server: issue paths name the field
// (down to the customers module's own checks under `customer`), and hostile bodies answer 400 in the
// envelope, never 500.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  create,
  DINNER,
  type ReservationService,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';

const t = suite<{ svc: ReservationService }>('input errors', {} as { svc: ReservationService });
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const paths = (r: { body: { error: { details?: { issues?: { path: string }[] } } } }) =>
  (r.body.error.details?.issues ?? []).map((i) => i.path);

const raw = (svc: ReservationService, method: string, path: string, rawBody: string) =>
  svc.api(method, path, {
    token: TOKENS.full,
    rawBody,
    headers: { 'content-type': 'application/json' },
    unchecked: true,
  });

t('an inline reservation customer without a name: 400 at customer.name', async ({ svc }) => {
  const r = await create(svc, { customer: { email: 'no-name@example.com' } }, TOKENS.full, undefined, true);
  assert.is(r.status, 400);
  assert.equal(r.body.error.details.issues, [
    { path: 'customer.name', code: 'required', message: 'customer.name is required' },
  ]);
  const withId = await create(
    svc,
    { customer: { id: 'cus_x', phone_number: '+33612345678' } },
    TOKENS.full,
    undefined,
    true,
  );
  assert.equal([withId.status, paths(withId)], [400, ['customer.phone_number']]);
});

t("the customers module's own checks are named under customer", async ({ svc }) => {
  const created = await create(svc, { customer: { name: 'Ana', custom_fields: { cf_nope: 'x' } } });
  assert.is(created.status, 422, created.text);
  assert.equal(paths(created), ['customer.custom_fields.cf_nope']);
  const booked = await create(svc, { customer: { name: 'Bea' } });
  assert.is(booked.status, 201, booked.text);
  const patched = await svc.api('PATCH', `/reservations/${booked.body.data.id}`, {
    token: TOKENS.full,
    body: { customer: { custom_fields: { cf_nope: 'x' } } },
  });
  assert.is(patched.status, 422, patched.text);
  assert.equal(paths(patched), ['customer.custom_fields.cf_nope']);
});

t('a JSON body of null is valid JSON that must be an object', async ({ svc }) => {
  for (const path of ['/reservations', '/customers', '/availability/check']) {
    const r = await svc.api('POST', path, {
      token: TOKENS.full,
      rawBody: 'null',
      headers: { 'content-type': 'application/json' },
    });
    assert.is(r.status, 400);
    assert.is(r.body.error.code, 'VALIDATION_ERROR');
    assert.is(r.body.error.message, 'The request body must be a JSON object');
    assert.equal(r.body.error.details.issues, [
      { path: '', code: 'invalid_type', message: 'body must be a JSON object, not null' },
    ]);
  }
});

t('5,000 levels of nesting, unprintable values, prototype keys: 400, never 500', async ({ svc }) => {
  const deep = await raw(svc, 'POST', '/reservations', `${'['.repeat(5000)}${']'.repeat(5000)}`);
  assert.equal([deep.status, deep.body.error.code], [400, 'VALIDATION_ERROR']);
  const deepField = await raw(
    svc,
    'POST',
    '/reservations',
    `{"party_size":2,"start_at":"${DINNER}","metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
  );
  assert.is(deepField.status, 400);
  assert.is(deepField.body.error.details.issues[0].code, 'too_deep');
  assert.match(deepField.body.error.details.issues[0].path, /^metadata\.a\.a/);
  for (const body of [
    '[{"toString":null}]',
    '{"party_size":{"toString":null},"start_at":[{"valueOf":null,"toString":1}]}',
  ]) {
    const r = await raw(svc, 'POST', '/reservations', body);
    assert.equal([r.status, r.body.error.code], [400, 'VALIDATION_ERROR'], r.text);
  }
  for (const [body, at] of [
    ['{"__proto__":{"polluted":true}}', '__proto__'],
    [
      '{"customer":{"name":"x","custom_fields":{"constructor":{"prototype":{"polluted":true}}}}}',
      'customer.custom_fields.constructor',
    ],
    ['{"metadata":{"\\u005f_proto__":{"polluted":true}}}', 'metadata.__proto__'],
  ]) {
    const r = await raw(svc, 'POST', '/reservations', body as string);
    assert.is(r.status, 400, r.text);
    assert.equal(r.body.error.details.issues, [
      {
        path: at,
        code: 'forbidden_property',
        message: `${at?.split('.').pop()} is not allowed as a property name`,
      },
    ]);
  }
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  // Still serving.
  assert.is((await create(svc)).status, 201);
});

t(
  'a number past the double range, or an integer past 2^53, in an open value (metadata): 400 at its path, not 500 nor an altered number',
  async ({ svc }) => {
    const before = await svc.api('GET', '/reservations?per_page=100', { token: TOKENS.full });
    for (const [metadata, at] of [
      ['{"a":1e400}', 'metadata.a'],
      ['{"list":[1,-1e999]}', 'metadata.list.1'],
      // Past 2^53: booked, it came back as 9007199254740992.
      ['{"pos_id":9007199254740993}', 'metadata.pos_id'],
    ]) {
      const r = await raw(
        svc,
        'POST',
        '/reservations',
        `{"party_size":2,"start_at":"${DINNER}","metadata":${metadata}}`,
      );
      assert.is(r.status, 400, r.text);
      assert.equal(
        r.body.error.details.issues.map((i: { path: string; code: string }) => [i.path, i.code]),
        [[at, 'out_of_range']],
      );
    }
    const after = await svc.api('GET', '/reservations?per_page=100', { token: TOKENS.full });
    assert.is(after.body.data.length, before.body.data.length, 'nothing booked');
  },
);

t(
  'an integer past 2^53 is told to be sent as a string only where the field takes a string, else its bound',
  async ({ svc }) => {
    const issue = async (json: string) => {
      const r = await raw(svc, 'POST', '/reservations', `{"party_size":2,"start_at":"${DINNER}",${json}}`);
      assert.is(r.status, 400, r.text);
      return r.body.error.details.issues[0] as { path: string; code: string; message: string };
    };
    // An open value takes a string: the number's digits are kept that way.
    const open = await issue('"metadata":{"pos_id":9007199254740993}');
    assert.match(open.message, /send it as a string/);
    // An integer field refuses a string (invalid_type): its bound is the advice.
    const amount = await issue('"total_amount_paid":9007199254740993');
    assert.equal([amount.path, amount.code], ['total_amount_paid', 'out_of_range']);
    assert.not.match(amount.message, /string/);
    assert.match(amount.message, /must be an integer from 0 to 9007199254740991/);
    const asString = await issue('"total_amount_paid":"9007199254740993"');
    assert.is(asString.code, 'invalid_type');
  },
);

/** POST /customers with these bytes and this Content-Type, as a partner's HTTP client would send them. */
const postBytes = async (svc: ReservationService, bytes: Buffer, contentType: string) => {
  const res = await fetch(`${svc.url}/api/partner/v1/customers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.full}`, 'content-type': contentType },
    body: bytes,
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  const body: any = await res.json();
  return { status: res.status, body };
};

const customersNamed = async (svc: ReservationService, prefix: string) => {
  const feed = await svc.api('GET', '/customers?limit=100', { token: TOKENS.full });
  return feed.body.data.map((c: { name: string }) => c.name).filter((n: string) => n.startsWith(prefix));
};

t(
  'a JSON body that is not UTF-8 is refused, never stored with its letters replaced by U+FFFD',
  async ({ svc }) => {
    // Declared Latin-1: refused before it is read (RFC 8259: JSON is UTF-8).
    const latin1 = await postBytes(
      svc,
      Buffer.from('{"name":"Enc Zoë Latin"}', 'latin1'),
      'application/json; charset=iso-8859-1',
    );
    assert.is(latin1.status, 415);
    assert.is(latin1.body.error.code, 'VALIDATION_ERROR');
    // Latin-1 bytes sent as UTF-8 (no charset): 400, nothing written.
    const undeclared = await postBytes(
      svc,
      Buffer.from('{"name":"Enc Zoë Bytes"}', 'latin1'),
      'application/json',
    );
    assert.is(undeclared.status, 400);
    assert.equal(undeclared.body.error.details.issues, [
      { path: '', code: 'invalid_encoding', message: 'The body must be UTF-8 text' },
    ]);
    // A truncated 4-byte sequence replaced by one U+FFFD of the same length is caught too.
    const truncated = await postBytes(
      svc,
      Buffer.concat([Buffer.from('{"name":"Enc '), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from('x"}')]),
      'application/json',
    );
    assert.is(truncated.status, 400);
    assert.equal(await customersNamed(svc, 'Enc '), []);
    // US-ASCII bytes are UTF-8 already.
    const ascii = await postBytes(
      svc,
      Buffer.from('{"name":"Enc Plain"}'),
      'application/json; charset=us-ascii',
    );
    assert.is(ascii.status, 201);
    // UTF-8 (declared or not) is taken, a U+FFFD the partner really sent included.
    const utf8 = await postBytes(
      svc,
      Buffer.from('{"name":"Enc Zoë \uFFFD"}', 'utf8'),
      'application/json; charset=UTF-8',
    );
    assert.is(utf8.status, 201);
    assert.is(utf8.body.data.name, 'Enc Zoë \uFFFD');
    assert.equal(await customersNamed(svc, 'Enc '), ['Enc Plain', 'Enc Zoë \uFFFD']);
  },
);

t(
  'half of a surrogate pair in a body is refused at its path, never stored for the sync feed to return',
  async ({ svc }) => {
    // "\ud800" alone parses to a string UTF-8 cannot carry; returned, it made GET /customers pages that
    // strict JSON readers (serde_json, System.Text.Json) refuse whole, the next cursor with them.
    const refused = await raw(svc, 'POST', '/customers', '{"name":"Lone \\ud800 Half"}');
    assert.is(refused.status, 400, refused.text);
    assert.equal(refused.body.error.details.issues, [
      {
        path: 'name',
        code: 'invalid_encoding',
        message:
          'name holds half of a surrogate pair (a \\uD800-\\uDFFF escape without its other half): send Unicode text',
      },
    ]);
    const created = await svc.api('POST', '/customers', { token: TOKENS.full, body: { name: 'Lone Whole' } });
    assert.is(created.status, 201, created.text);
    const patched = await raw(
      svc,
      'PATCH',
      `/customers/${created.body.data.id}`,
      '{"tags":["vip","\\udc00"]}',
    );
    assert.equal([patched.status, paths(patched)], [400, ['tags.1']]);
    const booked = await raw(
      svc,
      'POST',
      '/reservations',
      JSON.stringify({
        party_size: 2,
        start_at: DINNER,
        customer: { name: 'Lone' },
        metadata: { note: 'x' },
      }).replace('"x"', '"\\udbff"'),
    );
    assert.equal([booked.status, paths(booked)], [400, ['metadata.note']]);
    // A whole pair sent as two escapes is one character: taken, and returned as that character.
    const pair = await raw(svc, 'POST', '/customers', '{"name":"Lone \\ud83d\\ude00"}');
    assert.is(pair.status, 201, pair.text);
    assert.is(pair.body.data.name, 'Lone 😀');
    assert.equal(await customersNamed(svc, 'Lone'), ['Lone Whole', 'Lone 😀']);
  },
);

t.run();
