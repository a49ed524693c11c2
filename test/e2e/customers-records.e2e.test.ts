// Customer records over HTTP: the detail shape, every bound on both sides of its limit, PATCH
// semantics, custom fields of each type, tenancy (404), scopes (403) and drafts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { flagCustomerDraft } from '../../commands/customers/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { startCustomerService, TOKENS } from '../helpers/customer-service';
import { OpenApiChecker } from '../helpers/openapi';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: TestService; openapi: OpenApiChecker; id: string }>('customers: records');
const ONE = '/api/partner/v1/customers/{id}';

t.before(async (ctx) => {
  ctx.svc = await startCustomerService({ TEST_CLOCK: 'true' });
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
  const res = await ctx.svc.api('POST', '/customers', {
    token: TOKENS.write,
    body: { name: 'Base', on_match: 'create_new' },
  });
  ctx.id = res.body.data.id;
});
t.after(async ({ svc }) => svc.close());

/** `invalid`: the body breaks the documented schema on purpose. */
const patch = (svc: TestService, id: string, body: unknown, token: string = TOKENS.write, invalid = false) =>
  svc.api('PATCH', `/customers/${id}`, { token, body, invalid });

t('the detail carries every field of the spec, null or empty when unset', async ({ svc, openapi, id }) => {
  const res = await svc.api('GET', `/customers/${id}`, { token: TOKENS.read });
  assert.is(res.status, 200);
  openapi.check('GET', ONE, res);
  const d = res.body.data;
  assert.equal(Object.keys(d), [
    'id',
    'external_id',
    'name',
    'email',
    'phone_number',
    'country_code',
    'lang',
    'tags',
    'note',
    'custom_fields',
    'newsletter_consent',
    'marketing_opt_outs',
    'blacklisted',
    'stats',
    'created_at',
    'updated_at',
  ]);
  assert.equal(
    { ...d, id: undefined, created_at: undefined, updated_at: undefined },
    {
      id: undefined,
      external_id: null,
      name: 'Base',
      email: null,
      phone_number: null,
      country_code: null,
      lang: 'FR',
      tags: [],
      note: null,
      custom_fields: {},
      newsletter_consent: false,
      marketing_opt_outs: [],
      blacklisted: false,
      stats: {
        reservation_count: 0,
        confirmed_count: 0,
        no_show_count: 0,
        feedback_count: 0,
        average_feedback_score: null,
        total_amount_paid: 0,
        average_basket: 0,
        last_reservation_date: null,
      },
      created_at: undefined,
      updated_at: undefined,
    },
  );
});

const s = (n: number, c = 'x') => c.repeat(n);
/** [field, a value just inside the bound, a value just outside]. */
const BOUNDS: [string, unknown, unknown][] = [
  ['name', s(1), ''],
  ['name', s(200), s(201)],
  // Within 3 to 40 characters a number must also be a possible one (no 3-character number is).
  ['phone_number', '0612345678', '12'],
  ['phone_number', `+33${s(24, ' ')}6 12 34 56 78`, `+33${s(25, ' ')}6 12 34 56 78`],
  ['phone_number', '+33 6 12 34 56 78', 'hello world'],
  ['external_id', s(1), ''],
  ['external_id', s(255), s(256)],
  ['tags', Array.from({ length: 100 }, (_, i) => `t${i}`), Array.from({ length: 101 }, (_, i) => `t${i}`)],
  ['tags', [s(1)], ['']],
  ['tags', [s(100)], [s(101)]],
  ['note', s(10_000), s(10_001)],
  ['email', 'a@b.co', 'not-an-email'],
  ['lang', 'PT', 'NL'],
  ['newsletter_consent', true, 'yes'],
];

for (const [field, inside, outside] of BOUNDS) {
  const label = (v: unknown) =>
    typeof v === 'string' ? `${v.length} chars` : Array.isArray(v) ? `${v.length} items` : String(v);
  t(
    `${field}: ${label(inside)} is accepted, ${label(outside)} is 400 (PATCH and POST)`,
    async ({ svc, openapi, id }) => {
      const ok = await patch(svc, id, { [field]: inside });
      assert.is(ok.status, 200, ok.text);
      openapi.check('PATCH', ONE, ok);
      // A phone number the document's length allows but no country reads is refused by the server only.
      const documentRefuses = !(field === 'phone_number' && outside === 'hello world');
      const bad = await patch(svc, id, { [field]: outside }, TOKENS.write, documentRefuses);
      assert.is(bad.status, 400, bad.text);
      openapi.check('PATCH', ONE, bad);
      assert.is(bad.body.error.code, 'VALIDATION_ERROR');
      assert.ok(
        bad.body.error.details.issues.some(
          (i: { path: string }) => i.path === field || i.path.startsWith(`${field}.`),
        ),
        JSON.stringify(bad.body.error.details.issues),
      );
      const name = field === 'name' ? {} : { name: 'Bounds' };
      const created = await svc.api('POST', '/customers', {
        token: TOKENS.write,
        body: { ...name, [field]: inside, on_match: 'create_new' },
      });
      assert.is(created.status, 201, created.text);
      const refused = await svc.api('POST', '/customers', {
        token: TOKENS.write,
        body: { ...name, [field]: outside, on_match: 'create_new' },
        invalid: documentRefuses,
      });
      assert.is(refused.status, 400, refused.text);
    },
  );
}

t('unknown properties are 400 on PATCH and POST; name is required on POST', async ({ svc, id }) => {
  const p = await patch(svc, id, { name: 'x', nickname: 'y' }, TOKENS.write, true);
  assert.is(p.status, 400);
  assert.equal(p.body.error.details.issues, [
    { path: 'nickname', code: 'unknown_property', message: 'nickname is not a known property' },
  ]);
  const c = await svc.api('POST', '/customers', {
    token: TOKENS.write,
    body: { name: 'x', stats: {} },
    invalid: true,
  });
  assert.is(c.status, 400);
  const noName = await svc.api('POST', '/customers', {
    token: TOKENS.write,
    body: { email: 'a@b.co' },
    invalid: true,
  });
  assert.is(noName.status, 400);
  assert.is(noName.body.error.details.issues[0].path, 'name');
});

t('PATCH: only given fields change, null clears, tags replace, phone is normalised', async ({ svc }) => {
  const created = await svc.api('POST', '/customers', {
    token: TOKENS.write,
    body: {
      name: 'Pat',
      email: 'pat@example.com',
      phone_number: '06 11 22 33 44',
      tags: ['a', 'b'],
      note: 'n',
    },
  });
  const id = created.body.data.id;
  await svc.api('POST', '/__test/clock', { body: { advance_seconds: 30 } });
  const res = await patch(svc, id, { email: null, tags: ['c'], phone_number: '+44 7700 900123' });
  assert.is(res.status, 200);
  const d = res.body.data;
  assert.is(d.name, 'Pat');
  assert.is(d.note, 'n');
  assert.is(d.email, null);
  assert.equal(d.tags, ['c']);
  assert.is(d.phone_number, '+447700900123');
  assert.is(d.country_code, 'GB');
  assert.ok(d.updated_at > created.body.data.updated_at);
  // The same values again change nothing, not even updated_at.
  await svc.api('POST', '/__test/clock', { body: { advance_seconds: 30 } });
  const same = await patch(svc, id, { email: null, tags: ['c'], phone_number: '+447700900123' });
  assert.is(same.body.data.updated_at, d.updated_at);
  const empty = await patch(svc, id, {});
  assert.is(empty.status, 200);
  assert.is(empty.body.data.updated_at, d.updated_at);
});

/** [field, valid values, invalid values] for each custom field type. */
const CUSTOM: [string, unknown[], unknown[]][] = [
  ['cf_text', ['Sole meunière', ''], [12, true, ['a']]],
  ['cf_kids', [0, 10, 2.5], [-1, 11, '3', true]],
  ['cf_birthday', ['1990-02-28', '2000-02-29'], ['1990-02-30', '28/02/1990', '1990-2-28', 19900228]],
  ['cf_terrace', [true, false], ['true', 1]],
  ['cf_vip', ['gold', 'silver'], ['bronze', 'GOLD', ['gold']]],
  [
    'cf_diet',
    [[], ['vegan'], ['vegan', 'halal']],
    [['vegan', 'vegan'], ['vegan', 'halal', 'kosher'], ['paleo'], 'vegan'],
  ],
];

for (const [fieldId, valid, invalid] of CUSTOM) {
  t(
    `custom field ${fieldId}: valid values stored with the field name, invalid ones 422`,
    async ({ svc, openapi, id }) => {
      for (const value of valid) {
        const ok = await patch(svc, id, { custom_fields: { [fieldId]: value } });
        assert.is(ok.status, 200, `${JSON.stringify(value)}: ${ok.text}`);
        assert.equal(ok.body.data.custom_fields[fieldId].value, value);
        assert.is(typeof ok.body.data.custom_fields[fieldId].name, 'string');
      }
      for (const value of invalid) {
        const bad = await patch(svc, id, { custom_fields: { [fieldId]: value } });
        assert.is(bad.status, 422, `${JSON.stringify(value)}: ${bad.text}`);
        openapi.check('PATCH', ONE, bad);
        assert.equal(
          bad.body.error.details.issues.map((i: { path: string }) => i.path),
          [`custom_fields.${fieldId}`],
        );
      }
      const cleared = await patch(svc, id, { custom_fields: { [fieldId]: null } });
      assert.is(cleared.status, 200);
      assert.not.ok(fieldId in cleared.body.data.custom_fields);
    },
  );
}

t('custom fields: one issue per faulty field, unknown ids 422, others untouched', async ({ svc, id }) => {
  await patch(svc, id, { custom_fields: { cf_vip: 'gold', cf_kids: 1 } });
  const bad = await patch(svc, id, {
    custom_fields: { cf_vip: 'bronze', cf_kids: 99, cf_nope: 'x', cf_terrace: true },
  });
  assert.is(bad.status, 422);
  assert.equal(
    bad.body.error.details.issues.map((i: { path: string; code: string }) => [i.path, i.code]).sort(),
    [
      ['custom_fields.cf_kids', 'out_of_range'],
      ['custom_fields.cf_nope', 'unknown_field'],
      ['custom_fields.cf_vip', 'invalid_option'],
    ],
  );
  // Nothing of a refused PATCH is written.
  const d = (await svc.api('GET', `/customers/${id}`, { token: TOKENS.read })).body.data;
  assert.is(d.custom_fields.cf_vip.value, 'gold');
  assert.not.ok('cf_terrace' in d.custom_fields);
  const changed = await patch(svc, id, { custom_fields: { cf_terrace: true } });
  assert.equal(Object.keys(changed.body.data.custom_fields).sort(), ['cf_kids', 'cf_terrace', 'cf_vip']);
  // A custom field value of no JSON type the spec allows is a 400 (shape), not a 422.
  assert.is((await patch(svc, id, { custom_fields: { cf_text: { a: 1 } } }, TOKENS.write, true)).status, 400);
  // The Italian restaurant defines none of them.
  const it = await svc.api('POST', '/customers', {
    token: TOKENS.other,
    body: { name: 'It', custom_fields: { cf_vip: 'gold' } },
  });
  assert.is(it.status, 422);
});

t("another restaurant's customer, an unknown id and a draft answer 404", async ({ svc, openapi, id }) => {
  const other = await svc.api('GET', `/customers/${id}`, { token: TOKENS.other });
  assert.is(other.status, 404);
  openapi.check('GET', ONE, other);
  assert.is(other.body.error.code, 'RESOURCE_NOT_FOUND');
  assert.is((await patch(svc, id, { note: 'x' }, TOKENS.other)).status, 404);
  assert.is((await svc.api('GET', '/customers/cus_nope', { token: TOKENS.read })).status, 404);
  assert.is((await patch(svc, 'cus_nope', { note: 'x' })).status, 404);
  const draft = await svc.api('POST', '/customers', {
    token: TOKENS.write,
    body: { name: 'Draft', on_match: 'create_new' },
  });
  const flagged = await flagCustomerDraft(svc.rt, draft.body.data.id, 'WHATSAPP', operatorMeta('test'));
  await svc.rt.settle(flagged.position);
  assert.is((await svc.api('GET', `/customers/${draft.body.data.id}`, { token: TOKENS.read })).status, 404);
  assert.is((await patch(svc, draft.body.data.id, { note: 'x' })).status, 404);
  const list = await svc.api('GET', '/customers?limit=100', { token: TOKENS.read });
  assert.not.ok(list.body.data.some((c: { id: string }) => c.id === draft.body.data.id));
});

t(
  'scopes: reads need CUSTOMERS_READ, writes need CUSTOMERS_WRITE and CUSTOMERS_READ',
  async ({ svc, openapi, id }) => {
    const cases: [string, string, unknown, string, number][] = [
      ['GET', '/customers', undefined, TOKENS.none, 403],
      ['GET', `/customers/${id}`, undefined, TOKENS.none, 403],
      ['POST', '/customers', { name: 'S' }, TOKENS.read, 403],
      ['PATCH', `/customers/${id}`, { note: 's' }, TOKENS.read, 403],
      ['POST', '/customers', { name: 'S' }, TOKENS.none, 403],
      ['GET', '/customers', undefined, TOKENS.read, 200],
      ['GET', `/customers/${id}`, undefined, TOKENS.read, 200],
      ['PATCH', `/customers/${id}`, { note: 's' }, TOKENS.write, 200],
    ];
    for (const [method, path, body, token, status] of cases) {
      const res = await svc.api(method, path, { token, body });
      assert.is(res.status, status, `${method} ${path} with ${token}: ${res.text}`);
      if (status === 403) {
        assert.is(res.body.error.code, 'INSUFFICIENT_SCOPE');
        openapi.check(method, path.startsWith('/customers/') ? ONE : '/api/partner/v1/customers', res);
      }
    }
    const denied = await svc.api('POST', '/customers', { token: TOKENS.read, body: { name: 'S' } });
    assert.equal(denied.body.error.details.missing_scopes, ['CUSTOMERS_WRITE']);
    // A credential granted CUSTOMERS_WRITE alone holds exactly that: writes need READ too, and nothing is written.
    const before = await svc.api('GET', '/customers?limit=100', { token: TOKENS.read });
    const writeOnly = [
      await svc.api('POST', '/customers', {
        token: TOKENS.writeOnly,
        body: { name: 'Nobody', email: 'w@o.test' },
      }),
      await svc.api('PATCH', `/customers/${id}`, { token: TOKENS.writeOnly, body: { note: 'never' } }),
    ];
    for (const res of writeOnly) {
      assert.is(res.status, 403);
      assert.is(res.body.error.code, 'INSUFFICIENT_SCOPE');
      assert.equal(res.body.error.details.missing_scopes, ['CUSTOMERS_READ']);
      assert.match(res.body.error.message, /CUSTOMERS_READ/);
    }
    const after = await svc.api('GET', '/customers?limit=100', { token: TOKENS.read });
    assert.equal(after.body.data, before.body.data);
    const me = await svc.api('GET', '/me', { token: TOKENS.writeOnly });
    assert.equal(me.body.data.scopes, ['CUSTOMERS_WRITE']);
    assert.is((await svc.api('GET', '/customers')).status, 401);
  },
);

t.run();
