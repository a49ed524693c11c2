// Tenancy of every dashboard page and action, over HTTP as a browser without JavaScript drives it (the
// Chromium suite covers the common cases): a manager who types another restaurant's ids — an endpoint,
// a delivery, an upload, an import job, a restaurant that does not exist — into a URL or a form gets
// the 404 page, and nothing of the other restaurant changes. Also: an unknown page under /dashboard
// is an HTML page with the pages' headers, not the API's JSON.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import {
  authorizeQuery,
  Browser,
  CALLBACK,
  consent,
  formFields,
  oauthBootstrap,
  type PageResponse,
  pageText,
  pkce,
  signIn,
  tokenRequest,
} from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { publisherQuiet, type Receiver, startReceiver } from '../helpers/webhook-receiver';

const FRONT = 'couvert_pk_front_desk_tenancy_0123456789abcdefg';
const OTHER = 'couvert_pk_other_tenancy_0123456789abcdefghijklm';

interface Ctx {
  svc: TestService;
  rx: Receiver;
  /** solo@demo.test: manages Le Demo only. */
  solo: Browser;
  /** manager@demo.test: manages all three restaurants. */
  manager: Browser;
  otherDelivery: string;
  otherJob: string;
}
const t = suite<Ctx>('dashboard tenancy over HTTP', {} as Ctx);

async function signedInBrowser(svc: TestService, email: string): Promise<Browser> {
  const b = new Browser(svc.url);
  const first = await b.get('/dashboard/api-keys');
  const signed = await signIn(b, await b.get(first.location as string), email);
  assert.is(signed.status, 303);
  return b;
}

const within = async <T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 120_000) => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** Uploads a CSV through the page's multipart form; returns the preview page's HTML and address. */
async function upload(b: Browser, csv: string, restaurant: string): Promise<string> {
  return (await uploadAt(b, csv, restaurant)).html;
}
async function uploadAt(b: Browser, csv: string, restaurant: string) {
  const page = await b.get(`/dashboard/import?restaurant=${restaurant}`);
  const fields = formFields(page.text, '/dashboard/import/upload');
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'three.csv');
  const res = await b.postMultipart('/dashboard/import/upload', form);
  // 303 to the preview page (Post/Redirect/Get).
  assert.is(res.status, 303, res.text.slice(0, 800));
  const shown = await b.followed(res);
  assert.is(shown.status, 200, shown.text.slice(0, 800));
  return { html: shown.text, location: res.location as string };
}

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  const [demo, , three] = bootstrap.restaurants as Record<string, unknown>[];
  Object.assign(demo as object, {
    api_keys: [
      { id: 'key_front', name: 'Front desk', token: FRONT, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
    ],
    webhook_endpoints: [
      {
        id: 'we_mine',
        url: ctx.rx.url('/mine'),
        api_version: 'v1',
        secret: 'whsec_tenancy_mine_secret_000001',
        api_key_id: 'key_front',
      },
    ],
  });
  Object.assign(three as object, {
    api_keys: [
      { id: 'key_other', name: 'Other POS', token: OTHER, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
    ],
    webhook_endpoints: [
      {
        id: 'we_other',
        url: ctx.rx.url('/other'),
        api_version: 'legacy',
        secret: 'whsec_tenancy_other_secret_00001',
        api_key_id: 'key_other',
      },
    ],
  });
  ctx.svc = await startTestService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  // A delivery of the other restaurant's endpoint (its test), and an import job of the other restaurant.
  const tested = await ctx.svc.api('POST', '/webhook-endpoints/we_other/test', { token: OTHER });
  assert.is(tested.status, 200, tested.text);
  ctx.otherDelivery = tested.body.data.delivery_id;
  ctx.solo = await signedInBrowser(ctx.svc, 'solo@demo.test');
  ctx.manager = await signedInBrowser(ctx.svc, 'manager@demo.test');
  const preview = await upload(ctx.manager, 'name,email\nOther Guest,other@example.test\n', 'rest_three');
  const start = await ctx.manager.post(
    '/dashboard/import/start',
    formFields(preview, '/dashboard/import/start'),
  );
  assert.is(start.status, 303, start.text.slice(0, 500));
  ctx.otherJob = (start.location as string).split('/jobs/')[1]?.split('?')[0] as string;
  await within('the other import to finish', async () => {
    const p = await ctx.manager.get(start.location as string);
    return p.text.includes('Import finished') && p;
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
});

const notFoundPage = (res: PageResponse, what: string) => {
  assert.is(res.status, 404, `${what}: ${res.status} ${res.text.slice(0, 300)}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/, what);
  assert.match(res.text, /<title>Page not found · Couvert<\/title>/, what);
  assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, what);
  assert.match(res.text, /<a class="button secondary" href="\/dashboard">Back to the dashboard<\/a>/, what);
  // A sentence for a person (the API's "… not found" suffix is not glued to it).
  assert.not.match(res.text, /\. not found/, what);
};

t('pages: another restaurant, or one that does not exist, named in the URL answers 404', async (ctx) => {
  const { solo, manager, otherJob } = ctx;
  for (const path of [
    '/dashboard?restaurant=rest_three',
    '/dashboard?restaurant=rest_nope',
    '/dashboard/api-keys?restaurant=rest_nope',
    '/dashboard/webhooks/we_other?restaurant=rest_three',
    `/dashboard/import/jobs/${otherJob}?restaurant=rest_demo`,
    `/dashboard/import/jobs/${otherJob}?restaurant=rest_three`,
    `/dashboard/import/jobs/${otherJob}/summary.csv?restaurant=rest_demo`,
    `/dashboard/import/jobs/${otherJob}/summary.csv`,
  ])
    notFoundPage(await solo.get(path), `solo ${path}`);
  // The manager of both: a job or an endpoint named under the wrong restaurant is not found either.
  notFoundPage(
    await manager.get(`/dashboard/import/jobs/${otherJob}/summary.csv?restaurant=rest_demo`),
    'manager: job under rest_demo',
  );
  notFoundPage(await manager.get('/dashboard/webhooks/we_mine?restaurant=rest_three'), 'manager: we_mine');
  // …and under the right one it is there.
  assert.is((await manager.get(`/dashboard/import/jobs/${otherJob}?restaurant=rest_three`)).status, 200);
  assert.is((await solo.get('/dashboard?restaurant=rest_demo')).status, 200);
});

t(
  'actions: every endpoint action on another restaurant’s endpoint is refused and changes nothing',
  async (ctx) => {
    const { svc, solo, rx, otherDelivery } = ctx;
    const page = await solo.get('/dashboard/webhooks/we_mine?restaurant=rest_demo');
    assert.is(page.status, 200);
    const csrf = formFields(page.text, '/dashboard/webhooks/we_mine/edit').csrf_token as string;
    const before = await svc.api('GET', '/webhook-endpoints/we_other', { token: OTHER });
    const received = rx.for('/other').length;
    for (const restaurant_id of ['rest_demo', 'rest_three', 'rest_nope'])
      for (const action of ['edit', 'toggle', 'rotate', 'test', 'migrate', 'delete']) {
        const res = await solo.post(`/dashboard/webhooks/we_other/${action}`, {
          csrf_token: csrf,
          restaurant_id,
          confirm: 'yes',
          url: 'https://evil.example/',
        });
        notFoundPage(res, `${action} as ${restaurant_id}`);
      }
    // A delivery of the other restaurant's endpoint, resent through the manager's own endpoint or its own.
    for (const [endpoint, restaurant_id] of [
      ['we_mine', 'rest_demo'],
      ['we_other', 'rest_demo'],
      ['we_other', 'rest_three'],
    ] as const)
      notFoundPage(
        await solo.post(`/dashboard/webhooks/${endpoint}/deliveries/${otherDelivery}/resend`, {
          csrf_token: csrf,
          restaurant_id,
        }),
        `resend via ${endpoint} as ${restaurant_id}`,
      );
    const after = await svc.api('GET', '/webhook-endpoints/we_other', { token: OTHER });
    assert.equal(after.body, before.body);
    assert.is(after.body.data.api_version, 'legacy');
    const delivery = (await svc.rt.docs
      .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
      .findOne({ _id: otherDelivery })) as WebhookDeliveryDoc;
    assert.is(delivery.attempts.length, 1);
    await publisherQuiet(svc.rt, svc.webhooks);
    assert.is(rx.for('/other').length, received, 'nothing more was sent to the other endpoint');
  },
);

t(
  'import: another manager’s upload cannot be started; a job of another restaurant is not shown',
  async (ctx) => {
    const { solo, manager, svc } = ctx;
    // The manager's upload for rest_three, waiting for its start: solo presents its id.
    const { html: preview, location } = await uploadAt(
      manager,
      'name,email\nNot Yours,not-yours@example.test\n',
      'rest_three',
    );
    // Its preview page, by URL: the 404 page for another manager, under any restaurant of theirs,
    // and for its own manager under another restaurant; nothing of the file is shown.
    const uploadPath = location.split('?')[0] as string;
    for (const [who, restaurant] of [
      [solo, 'rest_demo'],
      [solo, 'rest_three'],
      [solo, ''],
      [manager, 'rest_demo'],
    ] as const) {
      const res = await who.get(restaurant ? `${uploadPath}?restaurant=${restaurant}` : uploadPath);
      assert.ok([403, 404].includes(res.status), `${uploadPath} as ${restaurant}: ${res.status}`);
      assert.not.match(res.text, /Not Yours|not-yours@|three\.csv/, 'nothing of the upload is shown');
      assert.not.match(res.text, /action="\/dashboard\/import\/start"/);
    }
    // Its manager sees it (the page is theirs).
    const own = await manager.get(location);
    assert.is(own.status, 200);
    assert.match(own.text, /Not Yours/);
    const fields = formFields(preview, '/dashboard/import/start');
    const soloPage = await solo.get('/dashboard/import?restaurant=rest_demo');
    const soloCsrf = formFields(soloPage.text, '/dashboard/import/upload').csrf_token as string;
    for (const restaurant_id of ['rest_demo', 'rest_three']) {
      const res = await solo.post('/dashboard/import/start', {
        ...fields,
        csrf_token: soloCsrf,
        restaurant_id,
      });
      assert.ok([400, 404].includes(res.status), `start as ${restaurant_id}: ${res.status}`);
      assert.is(res.location, null);
      assert.not.match(res.text, /Trois|another of your restaurants/, 'nothing of the upload is said');
    }
    // Previewed again with another on_match: not by another manager, under any restaurant.
    for (const restaurant_id of ['rest_demo', 'rest_three']) {
      const res = await solo.post('/dashboard/import/preview', {
        ...fields,
        csrf_token: soloCsrf,
        restaurant_id,
        on_match: 'update',
      });
      assert.ok([400, 404].includes(res.status), `preview again as ${restaurant_id}: ${res.status}`);
      assert.not.match(res.text, /Not Yours|not-yours@/, 'nothing of the upload is shown');
    }
    // The manager's own upload, named under another of the manager's restaurants: refused there, saying
    // whose it is (it said the upload was no longer here), and still waiting under its own.
    const wrong = await manager.post('/dashboard/import/start', { ...fields, restaurant_id: 'rest_demo' });
    assert.is(wrong.status, 400);
    assert.is(wrong.location, null);
    assert.match(
      pageText(wrong.text),
      /This file was uploaded for Trois Étoiles, another of your restaurants, not Le Demo/,
    );
    assert.not.match(wrong.text, /no longer here/);
    assert.is((await manager.get(location)).status, 200);
    const found = await svc.api('GET', '/customers?email=not-yours%40example.test', { token: OTHER });
    assert.is(found.status, 200, found.text);
    assert.is(found.body.data.length, 0);
  },
);

t(
  'CSRF: every dashboard action with another token changes nothing and says the form expired',
  async (ctx) => {
    const { svc, solo, rx } = ctx;
    const forged = { csrf_token: 'x'.repeat(43), restaurant_id: 'rest_demo', confirm: 'yes' };
    const received = rx.for('/mine').length;
    const before = await svc.api('GET', '/webhook-endpoints/we_mine', { token: FRONT });
    for (const [path, form] of [
      ['/dashboard/applications/disconnect', { client_id: 'app_demo' }],
      ['/dashboard/api-keys/create', { name: 'Forged', scopes: 'CUSTOMERS_READ' }],
      ['/dashboard/api-keys/revoke', { key_id: 'key_front' }],
      ['/dashboard/webhooks/create', { url: 'https://evil.example/', key_id: 'key_front' }],
      ...['edit', 'toggle', 'rotate', 'test', 'migrate', 'delete'].map(
        (a) => [`/dashboard/webhooks/we_mine/${a}`, { url: 'https://evil.example/' }] as const,
      ),
      ['/dashboard/webhooks/we_mine/deliveries/whd_any/resend', {}],
      ['/dashboard/import/start', { upload_id: 'anything' }],
      ['/dashboard/import/preview', { upload_id: 'anything', on_match: 'update' }],
    ] as const) {
      const res = await solo.post(path, { ...forged, ...form });
      assert.is(res.status, 403, `${path}: ${res.status}`);
      assert.match(res.text, /This form has expired/, path);
    }
    // The upload (multipart) too.
    const body = new FormData();
    for (const [k, v] of Object.entries(forged)) body.append(k, v);
    body.append('file', new Blob(['name\nForged\n']), 'f.csv');
    const upload = await solo.postMultipart('/dashboard/import/upload', body);
    assert.is(upload.status, 403);
    assert.equal((await svc.api('GET', '/webhook-endpoints/we_mine', { token: FRONT })).body, before.body);
    assert.is((await svc.api('GET', '/me', { token: FRONT })).status, 200);
    // A test delivery is sent within its request (answered by now); anything handed to the publisher
    // is sent, or not, once it is quiet.
    await publisherQuiet(svc.rt, svc.webhooks);
    assert.is(rx.for('/mine').length, received, 'no test was sent');
  },
);

t('an unknown page under /dashboard is the HTML 404 page with the pages’ headers', async (ctx) => {
  const missing = await ctx.solo.get('/dashboard/nope');
  notFoundPage(missing, '/dashboard/nope');
  assert.match(missing.text, /This page does not exist/);
  assert.not.match(missing.text, /No route for/);
  notFoundPage(await ctx.solo.get('/dashboard/webhooks/we_mine/nope/more'), 'deep path');
  const anon = new Browser(ctx.svc.url);
  notFoundPage(await anon.get('/dashboard/nope'), 'anonymous /dashboard/nope');
});

t('a link cannot make Connected applications say a connected application is disconnected', async (ctx) => {
  const { svc, solo } = ctx;
  const b = new Browser(svc.url);
  const { verifier, challenge } = pkce();
  const back = await consent(b, {
    query: authorizeQuery({ challenge, scope: 'CATALOG_READ' }),
    email: 'solo@demo.test',
    restaurant: 'rest_demo',
  });
  const token = await tokenRequest(svc.url, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code') as string,
    redirect_uri: CALLBACK,
    code_verifier: verifier,
  });
  assert.is(token.status, 200, token.text);
  const crafted = await solo.get('/dashboard?restaurant=rest_demo&disconnected=app_demo');
  assert.is(crafted.status, 200);
  assert.match(crafted.text, /<h2>Demo POS<\/h2>/, 'still connected, and listed');
  assert.not.match(crafted.text, /Demo POS is disconnected/);
  // Disconnected for real: then it says so.
  const form = formFields(crafted.text, '/dashboard/applications/disconnect');
  const done = await solo.post('/dashboard/applications/disconnect', { ...form, confirm: 'yes' });
  assert.is(done.status, 303);
  assert.match((await solo.get(done.location as string)).text, /Demo POS is disconnected/);
  assert.is((await svc.api('GET', '/me', { token: token.body.access_token })).status, 401);
  // A double click's second post changes nothing and lands on the same page; asking again is not found.
  const twice = await solo.post('/dashboard/applications/disconnect', { ...form, confirm: 'yes' });
  assert.is(twice.status, 303);
  notFoundPage(await solo.post('/dashboard/applications/disconnect', form), 'not connected any more');
});

t.run();
