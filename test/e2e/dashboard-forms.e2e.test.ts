// Dashboard forms with awkward input, over HTTP as a browser without JavaScript sends them: each is
// refused on the same page with its values kept and one clear sentence, or done exactly as written —
// never silently changed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Browser, formFields, oauthBootstrap, signIn } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const FRONT = 'couvert_pk_front_desk_forms_0123456789abcdefghijk';
const SPARE = 'couvert_pk_spare_till_forms_0123456789abcdefghijk';

interface Ctx {
  svc: TestService;
  b: Browser;
}
const t = suite<Ctx>('dashboard forms', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  Object.assign(bootstrap.restaurants[0] as object, {
    api_keys: [
      { id: 'key_front', name: 'Front desk', token: FRONT, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
      { id: 'key_spare', name: 'Spare till', token: SPARE, scopes: ['CUSTOMERS_READ'] },
    ],
  });
  ctx.svc = await startTestService({ bootstrap });
  ctx.b = new Browser(ctx.svc.url);
  const first = await ctx.b.get('/dashboard/webhooks?restaurant=rest_demo');
  assert.is((await signIn(ctx.b, await ctx.b.get(first.location as string), 'solo@demo.test')).status, 303);
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const alertOf = (html: string) =>
  (/<div class="alert" role="alert"(?: id="[^"]*")?>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '').replace(
    /<[^>]+>/g,
    '',
  );

t('custom headers: a name written twice is refused, not reduced to its last line', async ({ b, svc }) => {
  const page = await b.get('/dashboard/webhooks?restaurant=rest_demo');
  const fields = formFields(page.text, '/dashboard/webhooks/create');
  for (const headers of ['X-Till: 1\nX-Till: 2', 'X-Till: 1\r\nx-till: 2']) {
    const res = await b.post('/dashboard/webhooks/create', {
      ...fields,
      url: 'https://example.com/hook',
      key_id: 'key_front',
      headers,
    });
    assert.is(res.status, 400, res.text.slice(0, 300));
    assert.match(alertOf(res.text), /X-Till.*(twice|named twice)/i);
    assert.match(res.text, /X-Till: 1/, 'the form keeps what was typed');
  }
  const list = await svc.api('GET', '/webhook-endpoints', { token: FRONT });
  assert.is(list.body.data.length, 0);
});

t('deliveries: the filters survive the pager links, whatever they hold', async ({ b, svc }) => {
  const made = await svc.api('POST', '/webhook-endpoints', {
    token: FRONT,
    body: { url: 'https://example.com/pager' },
  });
  assert.is(made.status, 201, made.text);
  const id = made.body.data.id as string;
  const q = new URLSearchParams({
    restaurant: 'rest_demo',
    status: 'failed',
    // The event type is one of a list now (a typo is a 400 page); so is the cursor one the page
    // writes (a damaged one is said, 400, the newest shown: dashboard-query-values e2e).
    event_type: 'webhook_endpoint.test',
    before: '2026-01-01T00:00:00.000Z|whd_x',
  });
  const page = await b.get(`/dashboard/webhooks/${id}?${q}`);
  assert.is(page.status, 200);
  const href = /<a href="([^"]+)">Newest<\/a>/.exec(page.text)?.[1]?.replace(/&amp;/g, '&') as string;
  const back = new URL(href, svc.url).searchParams;
  assert.is(back.get('event_type'), 'webhook_endpoint.test');
  assert.is(back.get('status'), 'failed');
  assert.is(back.get('restaurant'), 'rest_demo');
});

t(
  'a link cannot make a page announce what did not happen (a key revoked, an endpoint disabled)',
  async ({ b, svc }) => {
    const keys = await b.get('/dashboard/api-keys?restaurant=rest_demo&revoked=Front%20desk');
    assert.is(keys.status, 200);
    assert.not.match(keys.text, /is revoked/, 'Front desk is active');
    const madeUp = await b.get('/dashboard/api-keys?restaurant=rest_demo&revoked=No%20such%20key');
    assert.not.match(madeUp.text, /is revoked/, 'no key of that name was ever revoked');
    const list = await b.get('/dashboard/webhooks?restaurant=rest_demo&done=disabled');
    assert.is(list.status, 200);
    assert.not.match(list.text, /The endpoint is disabled/, 'the list page names no endpoint');
    // A revocation that did happen is announced.
    const csrf = formFields(keys.text, '/dashboard/api-keys/revoke');
    const revoked = await b.post('/dashboard/api-keys/revoke', {
      ...csrf,
      key_id: 'key_spare',
      confirm: 'yes',
    });
    assert.is(revoked.status, 303);
    assert.match((await b.get(revoked.location as string)).text, /The key “Spare till” is revoked/);
    // An endpoint for that key (revoked in another tab), or for no key: the form again, saying why.
    const hooks = await b.get('/dashboard/webhooks?restaurant=rest_demo');
    const create = formFields(hooks.text, '/dashboard/webhooks/create');
    for (const [keyId, why] of [
      ['key_spare', /revoked: choose another/],
      [null, /Choose the API key/],
    ] as const) {
      const res = await b.post('/dashboard/webhooks/create', {
        ...create,
        url: 'https://example.com/spare',
        ...(keyId === null ? {} : { key_id: keyId }),
      });
      assert.is(res.status, 400, res.text.slice(0, 300));
      assert.match(alertOf(res.text), why);
      assert.match(res.text, /example\.com\/spare/, 'the form keeps what was typed');
    }
    const made = await svc.api('POST', '/webhook-endpoints', {
      token: FRONT,
      body: { url: 'https://example.com/notices' },
    });
    const id = made.body.data.id as string;
    const page = await b.get(`/dashboard/webhooks/${id}?restaurant=rest_demo&done=disabled`);
    assert.is(page.status, 200);
    assert.not.match(page.text, /The endpoint is disabled/, 'it is enabled');
    // What did happen is announced.
    const detail = await b.get(`/dashboard/webhooks/${id}?restaurant=rest_demo`);
    const toggled = await b.post(`/dashboard/webhooks/${id}/toggle`, {
      ...formFields(detail.text, `/dashboard/webhooks/${id}/toggle`),
    });
    assert.is(toggled.status, 303);
    assert.match((await b.get(toggled.location as string)).text, /The endpoint is disabled/);
  },
);

t(
  'a form sent in another format is refused with the formats a page takes, not told to send JSON',
  async ({ b, svc }) => {
    const page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
    const fields = formFields(page.text, '/dashboard/api-keys/create');
    const res = await fetch(`${svc.url}/dashboard/api-keys/create`, {
      method: 'POST',
      headers: {
        cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'text/plain',
      },
      body: new URLSearchParams({ ...fields, name: 'Plain', scopes: 'CUSTOMERS_READ' }).toString(),
    });
    assert.is(res.status, 415);
    const text = await res.text();
    assert.match(text, /application\/x-www-form-urlencoded/);
    assert.not.match(text, /Send the body as JSON/);
    assert.not.match((await b.get('/dashboard/api-keys?restaurant=rest_demo')).text, /Plain/);
  },
);

t(
  'a link cannot make the webhook pages announce a deletion or a resend that did not happen',
  async ({ b, svc }) => {
    const made = await svc.api('POST', '/webhook-endpoints', {
      token: FRONT,
      body: { url: 'https://example.com/notices' },
    });
    const id = made.body.data.id as string;
    const DELETED = /The endpoint is deleted/;
    const list = '/dashboard/webhooks?restaurant=rest_demo';
    assert.not.match((await b.get(`${list}&done=deleted`)).text, DELETED);
    assert.not.match((await b.get(`${list}&done=deleted&endpoint=${id}`)).text, DELETED, 'it is not deleted');
    const detail = `/dashboard/webhooks/${id}?restaurant=rest_demo`;
    assert.not.match((await b.get(`${detail}&done=resent`)).text, /sent again/, 'nothing was resent');
    // Deleted from the page: the notice is said.
    const page = await b.get(detail);
    const ask = await b.post(
      `/dashboard/webhooks/${id}/delete`,
      formFields(page.text, `/dashboard/webhooks/${id}/delete`),
    );
    const done = await b.post(
      `/dashboard/webhooks/${id}/delete`,
      formFields(ask.text, `/dashboard/webhooks/${id}/delete`),
    );
    assert.is(done.status, 303);
    assert.match((await b.get(done.location as string)).text, DELETED);
    // Another restaurant's deleted endpoint is not announced here either.
    assert.not.match((await b.get(`${list}&done=deleted&endpoint=we_elsewhere`)).text, DELETED);
  },
);

t(
  'the endpoint page says only what this manager did: no notice for an unknown or unchecked ?done=',
  async ({ b, svc }) => {
    const made = await svc.api('POST', '/webhook-endpoints', {
      token: FRONT,
      body: { url: 'https://example.com/said' },
    });
    const id = made.body.data.id as string;
    const detail = `/dashboard/webhooks/${id}?restaurant=rest_demo`;
    const noticeOf = async (query: string) => {
      const res = await b.get(`${detail}&${query}`);
      assert.is(res.status, 200, `${query}: ${res.status}`);
      return /<div class="notice" role="status">([\s\S]*?)<\/div>/.exec(res.text)?.[1] ?? null;
    };
    // Values no action sends (an object's own property names among them) say nothing, and never
    // echo themselves.
    for (const done of [
      'toString',
      'constructor',
      '__proto__',
      'valueOf',
      'hasOwnProperty',
      'Saved',
      'tested',
    ])
      assert.is(await noticeOf(`done=${encodeURIComponent(done)}`), null, done);
    // The partner made this endpoint and nobody changed it: a link cannot claim this manager did.
    for (const done of ['created', 'saved', 'enabled', 'disabled'])
      assert.is(await noticeOf(`done=${done}`), null, done);
    // A test's outcome is only that of a test delivery of this endpoint.
    assert.not.match((await b.get(`${detail}&done=tested&delivery=whd_nothing`)).text, /Test delivery/);
    // Saved from the page: said, on the page the form redirects to.
    const page = await b.get(detail);
    const saved = await b.post(`/dashboard/webhooks/${id}/edit`, {
      ...formFields(page.text, `/dashboard/webhooks/${id}/edit`),
      url: 'https://example.com/said',
      description: 'Till',
      events_mode: 'all',
      headers: '',
    });
    assert.is(saved.status, 303, saved.text.slice(0, 300));
    assert.match((await b.get(saved.location as string)).text, /Changes saved/);
    // Saved again unchanged: nothing was saved, and nothing says so.
    const again = await b.post(`/dashboard/webhooks/${id}/edit`, {
      ...formFields(page.text, `/dashboard/webhooks/${id}/edit`),
      url: 'https://example.com/said',
      description: 'Till',
      events_mode: 'all',
      headers: '',
    });
    assert.is(again.status, 303);
    assert.not.match((await b.get(again.location as string)).text, /Changes saved/);
    // A save by the partner since: the manager's "saved" no longer describes the last change.
    const patched = await svc.api('PATCH', `/webhook-endpoints/${id}`, {
      token: FRONT,
      body: { description: 'Partner' },
    });
    assert.is(patched.status, 200, patched.text);
    assert.is(await noticeOf('done=saved'), null);
  },
);

t(
  'a key that could create customers but not see them is refused, saying which to add (spec §5)',
  async ({ b }) => {
    const page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
    const res = await b.post('/dashboard/api-keys/create', {
      ...formFields(page.text, '/dashboard/api-keys/create'),
      name: 'Writer only',
      scopes: 'CUSTOMERS_WRITE',
    });
    assert.is(res.status, 400, res.text.slice(0, 300));
    assert.match(
      alertOf(res.text),
      /Create and change customer records.*works only with.*See your customer records/,
    );
    assert.match(res.text, /value="CUSTOMERS_WRITE" checked/, 'the form keeps what was ticked');
    assert.not.match(
      (await b.get('/dashboard/api-keys?restaurant=rest_demo')).text,
      /Writer only/,
      'no key made',
    );
  },
);

t('a refused API key form says why next to the field it is about, not atop the page', async ({ b }) => {
  const page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
  const send = (fields: Record<string, string>) =>
    b.post('/dashboard/api-keys/create', {
      ...formFields(page.text, '/dashboard/api-keys/create'),
      ...fields,
    });
  const card = (html: string) =>
    /<section class="card" aria-labelledby="new-key">[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
  const noName = await send({ name: ' ', scopes: 'CUSTOMERS_READ' });
  assert.is(noName.status, 400);
  assert.is((noName.text.match(/role="alert"/g) ?? []).length, 1, 'said once');
  // In the form, between the Name label and its input, which names it and is marked invalid.
  assert.match(
    card(noName.text),
    /<label for="key-name">Name<\/label>\s*<div class="alert" role="alert" id="key-error">Give the key a name[^<]*<\/div>\s*<input id="key-name"[^>]*aria-describedby="key-error key-name-help" aria-invalid="true" autofocus>/,
  );
  const noScope = await send({ name: 'Till' });
  assert.is(noScope.status, 400);
  assert.match(
    card(noScope.text),
    /<fieldset aria-describedby="key-error">\s*<legend>It can<\/legend>\s*<div class="alert" role="alert" id="key-error">Choose at least one thing the key can do\.<\/div>/,
  );
  assert.match(card(noScope.text), /value="Till"/, 'the name is kept');
});

t(
  'a scope the form never offers (scopes=ALL) is refused in a sentence naming those a key can have',
  async ({ b }) => {
    const page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
    const res = await b.post('/dashboard/api-keys/create', {
      ...formFields(page.text, '/dashboard/api-keys/create'),
      name: 'Everything',
      scopes: 'ALL',
    });
    assert.is(res.status, 400, res.text.slice(0, 300));
    assert.match(
      alertOf(res.text),
      /^“ALL” is not a permission a key can have: choose among CATALOG_READ, AVAILABILITY_READ, .*, WEBHOOKS_WRITE and MISSED_CALLS_WRITE\.$/,
    );
    assert.not.match(
      (await b.get('/dashboard/api-keys?restaurant=rest_demo')).text,
      /Everything/,
      'no key made',
    );
  },
);

t('a key that could force reservations but not write them is refused, saying which to add', async ({ b }) => {
  const page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
  const res = await b.post('/dashboard/api-keys/create', {
    ...formFields(page.text, '/dashboard/api-keys/create'),
    name: 'Forcer only',
    scopes: 'RESERVATIONS_FORCE_CONFIRM',
  });
  assert.is(res.status, 400, res.text.slice(0, 300));
  assert.match(
    alertOf(res.text),
    /Confirm reservations that would wait.*works only with.*Create and change reservations/,
  );
  assert.not.match(
    (await b.get('/dashboard/api-keys?restaurant=rest_demo')).text,
    /Forcer only/,
    'no key made',
  );
});

t(
  'revoking a key twice (a double click, the back button) lands on the list saying it is revoked',
  async ({ b, svc }) => {
    const page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
    const created = await b.post('/dashboard/api-keys/create', {
      ...formFields(page.text, '/dashboard/api-keys/create'),
      name: 'Twice clicked',
      scopes: 'CATALOG_READ',
    });
    assert.is(created.status, 303);
    const listed = await b.get(created.location as string);
    const token = /couvert_pk_[A-Za-z0-9_-]+/.exec(listed.text)?.[0] as string;
    assert.is((await svc.api('GET', '/me', { token })).status, 200);
    const id = (await svc.api('GET', '/me', { token })).body.data.credential.id as string;
    const form = { ...formFields(listed.text, '/dashboard/api-keys/revoke'), key_id: id };
    const confirmed = { ...form, confirm: 'yes' };
    const [first, second] = [
      await b.post('/dashboard/api-keys/revoke', confirmed),
      await b.post('/dashboard/api-keys/revoke', confirmed),
    ];
    assert.is(first.status, 303);
    assert.is(second.status, 303, second.text.slice(0, 300));
    assert.is(second.location, first.location);
    assert.match((await b.get(second.location as string)).text, /The key “Twice clicked” is revoked/);
    assert.is((await svc.api('GET', '/me', { token })).status, 401);
    // The list was stale (another tab revoked it): Revoke goes to the list too, with nothing to confirm.
    const stale = await b.post('/dashboard/api-keys/revoke', form);
    assert.is(stale.status, 303);
    assert.match((await b.get(stale.location as string)).text, /The key “Twice clicked” is revoked/);
  },
);

t('a page link with parameters of its own (a mail’s utm_source) opens the page', async ({ b, svc }) => {
  const made = await svc.api('POST', '/webhook-endpoints', {
    token: FRONT,
    body: { url: 'https://example.com/utm' },
  });
  const id = made.body.data.id as string;
  for (const path of [
    '/dashboard',
    '/dashboard/api-keys',
    '/dashboard/webhooks',
    `/dashboard/webhooks/${id}`,
    '/dashboard/import',
    '/dashboard/insights',
  ]) {
    const res = await b.get(`${path}?restaurant=rest_demo&utm_source=mail&fbclid=abc`);
    assert.is(res.status, 200, `${path}: ${res.status}`);
  }
  const signIn = await new Browser(svc.url).get('/sign-in?next=%2Fdashboard&utm_source=mail');
  assert.is(signIn.status, 200);
  // A parameter the page does read is still checked.
  assert.is((await b.get(`/dashboard/api-keys?restaurant=${'x'.repeat(100)}`)).status, 400);
  assert.is((await b.get('/dashboard/insights?restaurant=rest_demo&period=14&utm_source=mail')).status, 400);
  // Signed out, such a link leads to the sign-in page and back to itself.
  const anon = await new Browser(svc.url).get('/dashboard/insights?period=7&utm_source=mail');
  assert.is(anon.status, 303);
  assert.match(
    anon.location ?? '',
    /^\/sign-in\?next=%2Fdashboard%2Finsights%3Fperiod%3D7%26utm_source%3Dmail$/,
  );
});

t(
  'a form whose text is not UTF-8 (a %-escape of Latin-1 or a broken one, raw Latin-1 bytes, another charset) is refused, nothing stored',
  async ({ b, svc }) => {
    const page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
    const fields = new URLSearchParams({
      ...formFields(page.text, '/dashboard/api-keys/create'),
      scopes: 'CATALOG_READ',
    });
    const cookie = [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const send = (name: Buffer, type = 'application/x-www-form-urlencoded') =>
      fetch(`${svc.url}/dashboard/api-keys/create`, {
        method: 'POST',
        headers: { cookie, 'content-type': type },
        body: Buffer.concat([Buffer.from(`${fields}&name=`), name]),
        redirect: 'manual',
      });
    const latin1 = 'application/x-www-form-urlencoded; charset=ISO-8859-1';
    const cases: [string, Buffer, number, string?][] = [
      // The parser kept these as the escaped text itself: a key named "Caf%E9".
      ['Latin-1 escape', Buffer.from('Enc1 Caf%E9'), 400],
      ['half a surrogate pair', Buffer.from('Enc2 %ED%A0%80'), 400],
      // "%25" is "%", but a broken escape beside it left the whole value undecoded: "50%25%zz".
      ['a broken escape', Buffer.from('Enc3 50%25%zz'), 400],
      // Raw bytes that are not UTF-8 were read as U+FFFD.
      ['raw Latin-1', Buffer.from([0x45, 0x6e, 0x63, 0x34, 0x20, 0x43, 0x61, 0x66, 0xe9]), 400],
      // A declared Latin-1 charset is read when the body is ASCII (as both charsets spell it alike): its
      // escapes are then UTF-8's, and a Latin-1 one is refused as above, as is a raw Latin-1 byte.
      ['a declared Latin-1 charset, a Latin-1 escape', Buffer.from('Enc5 Caf%E9'), 400, latin1],
      [
        'a declared Latin-1 charset, a raw Latin-1 byte',
        Buffer.from([0x45, 0x6e, 0x63, 0x36, 0xe9]),
        400,
        latin1,
      ],
    ];
    for (const [what, name, status, type] of cases) {
      const res = await send(name, type);
      const html = await res.text();
      assert.is(res.status, status, `${what}: ${res.status} ${html.slice(0, 300)}`);
      assert.match(html, /not valid UTF-8|send the body as UTF-8/, what);
    }
    const list = (await b.get('/dashboard/api-keys?restaurant=rest_demo')).text;
    assert.not.match(list, /Enc\d/, 'no key made');
    // UTF-8 text, its escapes and a declared UTF-8 charset are taken as written.
    const ok = await send(
      Buffer.from('Caf%C3%A9 %EF%BF%BD 100%25'),
      'application/x-www-form-urlencoded; charset=UTF-8',
    );
    assert.is(ok.status, 303);
    assert.match((await b.get('/dashboard/api-keys?restaurant=rest_demo')).text, /Café \uFFFD 100%/);
    // An ASCII body under a declared Latin-1 charset is taken (Apache HttpClient 4's forms declare it).
    const ascii = await send(Buffer.from('Ascii Latin1'), latin1);
    assert.is(ascii.status, 303);
    assert.match((await b.get('/dashboard/api-keys?restaurant=rest_demo')).text, /Ascii Latin1/);
  },
);

t.run();
