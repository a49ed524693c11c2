// Custom header values are secrets (commands/webhook-endpoints/header-secrets.ts): the API and the
// dashboard answer them by name, `[redacted]`; sent back as shown (a GET's answer PATCHed, the edit form
// saved as it is), each keeps its value; `[redacted]` for a header the endpoint lacks is refused.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openHeaders } from '../../commands/webhook-endpoints/header-secrets';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { Browser, formFields, oauthBootstrap, signIn } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const TOKEN = 'couvert_pk_header_values_0123456789abcdefghijklm';
const SECRET = 'hdr-secret-value-123';
const AUTH = 'auth-token-value-456789';

interface Ctx {
  svc: TestService;
  b: Browser;
}
const t = suite<Ctx>('webhook custom header values: answered by name only', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  Object.assign(bootstrap.restaurants[0] as object, {
    api_keys: [
      { id: 'key_hv', name: 'Header values', token: TOKEN, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
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

const stored = async (svc: TestService, id: string) => {
  await svc.rt.refresh();
  const doc = (await svc.rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .findOne({ _id: id })) as WebhookEndpointDoc;
  return openHeaders(doc.headers, svc.rt.secrets);
};

t(
  'the API and the dashboard show names only; what they show, sent back, keeps the values',
  async ({ svc, b }) => {
    const made = await svc.api('POST', '/webhook-endpoints', {
      token: TOKEN,
      body: { url: 'https://example.com/hv', headers: { 'X-Api-Key': SECRET, 'X-Auth-Token': AUTH } },
    });
    assert.is(made.status, 201, made.text);
    assert.equal(made.body.data.headers, { 'X-Api-Key': '[redacted]', 'X-Auth-Token': '[redacted]' });
    assert.not.ok(made.text.includes(SECRET));
    const id = made.body.data.id as string;

    const got = await svc.api('GET', `/webhook-endpoints/${id}`, { token: TOKEN });
    assert.is(got.status, 200);
    assert.not.ok(got.text.includes(SECRET) || got.text.includes(AUTH));
    const list = await svc.api('GET', '/webhook-endpoints', { token: TOKEN });
    assert.not.ok(list.text.includes(SECRET) || list.text.includes(AUTH));

    const back = await svc.api('PATCH', `/webhook-endpoints/${id}`, {
      token: TOKEN,
      body: { headers: got.body.data.headers },
    });
    assert.is(back.status, 200, back.text);
    assert.is(back.body.data.updated_at, got.body.data.updated_at, 'nothing changed');
    assert.equal(await stored(svc, id), { 'X-Api-Key': SECRET, 'X-Auth-Token': AUTH });

    const changed = await svc.api('PATCH', `/webhook-endpoints/${id}`, {
      token: TOKEN,
      body: { headers: { 'X-Api-Key': 'hdr-new-value-000', 'X-Auth-Token': '[redacted]' } },
    });
    assert.is(changed.status, 200, changed.text);
    assert.equal(await stored(svc, id), { 'X-Api-Key': 'hdr-new-value-000', 'X-Auth-Token': AUTH });

    const unknown = await svc.api('PATCH', `/webhook-endpoints/${id}`, {
      token: TOKEN,
      body: { headers: { 'X-Other': '[redacted]' } },
    });
    assert.is(unknown.status, 400, unknown.text);
    assert.is(unknown.body.error.details.issues[0].path, 'headers.X-Other');
    const create = await svc.api('POST', '/webhook-endpoints', {
      token: TOKEN,
      body: { url: 'https://example.com/hv2', headers: { 'X-Api-Key': '[redacted]' } },
    });
    assert.is(create.status, 400, create.text);

    const page = await b.get(`/dashboard/webhooks/${id}?restaurant=rest_demo`);
    assert.is(page.status, 200);
    assert.not.ok(
      page.text.includes('hdr-new-value-000') || page.text.includes(AUTH),
      'the page shows a value',
    );
    const fields = formFields(page.text, `/dashboard/webhooks/${id}/edit`);
    // formFields reads inputs; the headers are a textarea's text.
    const headers = /<textarea id="edit-headers"[^>]*>([\s\S]*?)<\/textarea>/.exec(page.text)?.[1];
    assert.is(headers, 'X-Api-Key: [redacted]\nX-Auth-Token: [redacted]');
    const saved = await b.post(`/dashboard/webhooks/${id}/edit`, {
      ...fields,
      url: 'https://example.com/hv',
      headers: headers as string,
      description: 'Renamed',
    });
    assert.is(
      saved.status,
      303,
      `${saved.status} ${/role="alert"[^>]*>([\s\S]*?)<\/(div|p)>/.exec(saved.text)?.[1] ?? saved.text.slice(0, 300)}`,
    );
    assert.equal(await stored(svc, id), { 'X-Api-Key': 'hdr-new-value-000', 'X-Auth-Token': AUTH });
  },
);

t.run();
