// The webhook pages say an endpoint is paused when the restaurant's API option is off and it belongs to
// a third-party application (its events are not sent: the publisher's barredByApiOption), as
// Connected applications does, instead of showing it "Enabled"; a restaurant's own key's endpoint and
// the option on again read as before. While paused, a delivery of such an endpoint is not resent: no
// Resend offered (the page says why), and a resend is refused at once (409 api_option_off) through the
// dashboard, the CLI and the command the API route calls, appending nothing (it used to be accepted and
// canceled at its attempt); a test a manager sends still goes, and the page says so by its button.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { resendDelivery } from '../../commands/webhook-deliveries/handler';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { refusedCli, runCli } from '../helpers/cli-in-process';
import {
  authorizeQuery,
  Browser,
  CALLBACK,
  consent,
  formFields,
  oauthBootstrap,
  pageText,
  pkce,
  SECRETS,
  signIn,
  tokenRequest,
} from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { quietNow, type Receiver, startReceiver } from '../helpers/webhook-receiver';

const OWN = 'couvert_pk_own_key_paused_0123456789abcdefghijklm';

interface Ctx {
  svc: TestService;
  rx: Receiver;
}
const t = suite<Ctx>('dashboard webhooks: endpoints paused by the API option', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
    oauth_applications: { client_id: string; allowed_scopes: string[] }[];
  };
  Object.assign(bootstrap.restaurants[0] as object, {
    api_keys: [
      {
        id: 'key_own',
        name: 'Own key',
        token: OWN,
        scopes: ['RESERVATIONS_READ', 'WEBHOOKS_WRITE', 'CUSTOMERS_READ', 'CUSTOMERS_WRITE'],
      },
    ],
  });
  // Demo POS reads customers too: its endpoint gets customer.created, which the own key makes.
  bootstrap.oauth_applications.find((a) => a.client_id === 'app_demo')?.allowed_scopes.push('CUSTOMERS_READ');
  ctx.rx = await startReceiver();
  ctx.svc = await startTestService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
});

/** An access token of Demo POS (a third-party application) at Le Demo. */
async function demoPosToken(svc: TestService, scope = 'RESERVATIONS_READ WEBHOOKS_WRITE'): Promise<string> {
  const b = new Browser(svc.url);
  const { verifier, challenge } = pkce();
  const back = await consent(b, {
    query: authorizeQuery({ challenge, scope }),
    restaurant: 'rest_demo',
  });
  const res = await tokenRequest(
    svc.url,
    {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      redirect_uri: CALLBACK,
      code_verifier: verifier,
    },
    { client: ['app_demo', SECRETS.app_demo] },
  );
  assert.is(res.status, 200, res.text);
  return res.body.access_token as string;
}

t('a third-party application’s endpoint reads Paused while the option is off', async ({ svc, rx }) => {
  const token = await demoPosToken(svc);
  const endpoint = async (tok: string, path: string) => {
    const made = await svc.api('POST', '/webhook-endpoints', {
      token: tok,
      body: { url: rx.url(path), enabled_events: ['reservation.created'] },
    });
    assert.is(made.status, 201, made.text);
    return made.body.data.id as string;
  };
  const app = await endpoint(token, '/app');
  const own = await endpoint(OWN, '/own');
  const b = new Browser(svc.url);
  assert.is((await signIn(b, await b.get('/sign-in'), 'solo@demo.test')).status, 303);
  /** The list's item of an endpoint, and its detail page's first card, as read. */
  const shown = async (id: string) => {
    const list = (await b.get('/dashboard/webhooks?restaurant=rest_demo')).text;
    const li = list.split('<li>').find((x) => x.includes(`/dashboard/webhooks/${id}?`)) ?? '';
    const detail = (await b.get(`/dashboard/webhooks/${id}?restaurant=rest_demo`)).text;
    const card = detail.split('aria-labelledby="ep-url">')[1]?.split('</section>')[0] ?? '';
    return { list: pageText(li.split('</li>')[0] as string), detail: pageText(card) };
  };
  const before = await shown(app);
  assert.match(before.list, /Enabled/);
  assert.not.match(before.list + before.detail, /Paused/, 'the option is on');

  await runCli(svc, 'restaurants api-option', { id: 'rest_demo', enabled: 'false' });
  try {
    for (const [where, text] of Object.entries(await shown(app))) {
      assert.match(text, /Paused/, where);
      assert.not.match(text, /Enabled/, where);
      assert.match(text, /Demo POS is a third-party application, and Le Demo’s API option is off/, where);
    }
    // The restaurant's own key is not an application's: its endpoint still receives.
    const mine = await shown(own);
    assert.match(mine.list, /Enabled/);
    assert.not.match(mine.list + mine.detail, /Paused/);
  } finally {
    await runCli(svc, 'restaurants api-option', { id: 'rest_demo', enabled: 'true' });
  }
  const after = await shown(app);
  assert.not.match(after.list + after.detail, /Paused/);
});

/** Waits for a condition; the bound only ends a hang (CONTRIBUTING: tests wait, never time). */
const until = async <T>(what: string, check: () => Promise<T | null | undefined | false>) => {
  const end = Date.now() + 120_000;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

t(
  'a paused endpoint’s delivery is not resent (refused at once); a test still goes, as the page says',
  async ({ svc, rx }) => {
    const token = await demoPosToken(svc, 'RESERVATIONS_READ WEBHOOKS_WRITE CUSTOMERS_READ');
    const made = await svc.api('POST', '/webhook-endpoints', {
      token,
      body: { url: rx.url('/paused-resend'), enabled_events: ['customer.created'] },
    });
    assert.is(made.status, 201, made.text);
    const endpoint = made.body.data.id as string;
    const customer = await svc.api('POST', '/customers', {
      token: OWN,
      body: { name: 'Paula Paused', on_match: 'create_new' },
    });
    assert.is(customer.status, 201, customer.text);
    await rx.waitFor('/paused-resend', 1);
    // Read from the service's read model (its history says succeeded once the answer is recorded).
    const delivery = await until('the delivery recorded', async () => {
      await svc.rt.refresh();
      const found = await svc.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .findOne({ endpoint_id: endpoint, status: 'succeeded' });
      return found?._id;
    });
    const page = `/dashboard/webhooks/${endpoint}?restaurant=rest_demo`;
    const resendPath = `/dashboard/webhooks/${endpoint}/deliveries/${delivery}/resend`;
    const b = new Browser(svc.url);
    assert.is((await signIn(b, await b.get('/sign-in'), 'solo@demo.test')).status, 303);
    const before = (await b.get(page)).text;
    assert.ok(before.includes(`action="${resendPath}"`), 'Resend offered while the option is on');
    assert.not.match(pageText(before), /While paused/);
    const csrf = formFields(before, resendPath);
    const testForm = formFields(before, `/dashboard/webhooks/${endpoint}/test`);

    await runCli(svc, 'restaurants api-option', { id: 'rest_demo', enabled: 'false' });
    try {
      const sent = rx.for('/paused-resend').length;
      const view = (await b.get(page)).text;
      assert.not.ok(view.includes(`action="${resendPath}"`), 'no Resend offered while paused');
      // The endpoint's one delivery so far, its item on the page.
      const row = pageText(
        view.split('<div class="item-head">').find((li) => li.startsWith('<h3><code>customer.created')) ?? '',
      );
      assert.match(
        row,
        /The endpoint is paused: Demo POS is a third-party application/,
        'the delivery says why',
      );
      // The Send a test button's help says what it does while paused.
      assert.match(view, /aria-describedby="test-help">Send a test</);
      assert.match(
        pageText(view),
        /While paused, Send a test \(below\) still sends one test delivery to this URL/,
      );

      // The dashboard (a tab left open): refused at once, the page with the reason.
      const posted = await b.post(resendPath, csrf);
      assert.is(posted.status, 409);
      assert.match(pageText(posted.text), /The endpoint is paused: Demo POS is a third-party application/);
      // The CLI: refused, appending nothing (refusedCli checks the log).
      const cli = await refusedCli(svc, 'webhooks resend', { delivery });
      assert.match(cli.message, /paused/);
      // The command behind the API route: 409 with its reason.
      const doc = await svc.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .findOne({ _id: delivery });
      const ep = await svc.rt.docs
        .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
        .findOne({ _id: endpoint });
      const refused = await resendDelivery(
        svc.rt,
        doc as WebhookDeliveryDoc,
        ep as WebhookEndpointDoc,
        operatorMeta('test'),
      ).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(refused instanceof ApiError, 'refused');
      assert.is((refused as ApiError).status, 409);
      assert.is((refused as ApiError).code, 'RESOURCE_CONFLICT');
      assert.equal((refused as ApiError).details, { reason: 'api_option_off' });
      const now = await svc.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .findOne({ _id: delivery });
      assert.is(now?.status, 'succeeded', 'the delivery is as it was: no resend accepted');
      assert.is(now?.attempt_count, doc?.attempt_count);

      // A test still goes, and its outcome says events still do not.
      const tested = await b.post(`/dashboard/webhooks/${endpoint}/test`, testForm);
      assert.is(tested.status, 303);
      const got = await rx.waitFor('/paused-resend', sent + 1);
      assert.is(got.at(-1)?.headers['x-service-test'], 'true', 'the one request sent is the test');
      const outcome = pageText((await b.get(tested.location as string)).text);
      assert.match(outcome, /Test delivery succeeded/);
      assert.match(outcome, /still paused: events are not sent to it until the API option is on again/);
      assert.ok(await quietNow(svc.rt, svc.webhooks, rx, '/paused-resend', sent + 1), 'nothing else sent');
    } finally {
      await runCli(svc, 'restaurants api-option', { id: 'rest_demo', enabled: 'true' });
    }
    const after = (await b.get(page)).text;
    assert.ok(after.includes(`action="${resendPath}"`), 'Resend offered again once the option is on');
    assert.not.match(pageText(after), /While paused/);
  },
);

t.run();
