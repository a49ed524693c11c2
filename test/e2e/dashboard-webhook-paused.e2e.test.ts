// The webhook pages say an endpoint is paused when the restaurant's API option is off and it belongs to
// a third-party application (its events are not sent: the publisher's barredByApiOption), as
// Connected applications does, instead of showing it "Enabled"; a restaurant's own key's endpoint and
// the option on again read as before.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/cli-in-process';
import {
  authorizeQuery,
  Browser,
  CALLBACK,
  consent,
  oauthBootstrap,
  pageText,
  pkce,
  SECRETS,
  signIn,
  tokenRequest,
} from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const OWN = 'couvert_pk_own_key_paused_0123456789abcdefghijklm';

interface Ctx {
  svc: TestService;
  rx: Receiver;
}
const t = suite<Ctx>('dashboard webhooks: endpoints paused by the API option', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  Object.assign(bootstrap.restaurants[0] as object, {
    api_keys: [
      { id: 'key_own', name: 'Own key', token: OWN, scopes: ['RESERVATIONS_READ', 'WEBHOOKS_WRITE'] },
    ],
  });
  ctx.rx = await startReceiver();
  ctx.svc = await startTestService({ bootstrap, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
});

/** An access token of Demo POS (a third-party application) at Le Demo. */
async function demoPosToken(svc: TestService): Promise<string> {
  const b = new Browser(svc.url);
  const { verifier, challenge } = pkce();
  const back = await consent(b, {
    query: authorizeQuery({ challenge, scope: 'RESERVATIONS_READ WEBHOOKS_WRITE' }),
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

t.run();
