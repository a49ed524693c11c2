// What a partner sees over HTTP when the credential behind its webhook endpoint is revoked (docs/WEBHOOKS.md,
// "What each endpoint receives" and "Resending"). An OAuth application's endpoint is visible to every
// token of the application at that restaurant: with the token that created it revoked, the revoked token
// answers 401, and until the webhook worker has deleted the endpoint (it follows the revocation; here
// the worker is down, as a scaled-out worker may be behind) another token still reads it and its
// history, but a resend or a test is refused at once with 409 RESOURCE_CONFLICT, details.reason
// `credential_revoked`, appending and sending nothing. Once the worker runs, the endpoint is deleted
// (reason CREDENTIAL_REVOKED): 404, and nothing more is sent to it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Browser, basic, consent, oauthBootstrapWith, pkce, SECRETS, tokenRequest } from '../helpers/oauth';
import { REQUEST_HANG_MS, startTestService, type TestService } from '../helpers/service';
import { quietNow, type Receiver, startReceiver } from '../helpers/webhook-receiver';
import { until } from '../helpers/webhooks-world';

const FRONT = 'couvert_pk_front_desk_revoked_0123456789abcdefgh';
const WITH_WEBHOOKS = { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
// The webhook worker down (scaled out, a worker behind or stopped): the revocation is in the log, the
// endpoints' deletion that follows it is not yet.
const WITHOUT_WEBHOOKS = { ROLES: 'api,projector', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };

function bootstrap() {
  const b = oauthBootstrapWith({
    api_keys: [
      { id: 'key_front', name: 'Front desk', token: FRONT, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'] },
    ],
  });
  // The application may read customers: its endpoint receives customer.created.
  const app = b.oauth_applications.find((a) => a.client_id === 'app_demo');
  app?.allowed_scopes.push('CUSTOMERS_READ');
  return b;
}

interface Ctx {
  dir: string;
  svc: TestService;
  rx: Receiver;
}
const t = suite<Ctx>('webhooks: the credential behind an endpoint revoked', {} as Ctx);

t.before(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-credential-revoked-'));
  ctx.rx = await startReceiver();
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
  rmSync(ctx.dir, { recursive: true, force: true });
});

/** The service on the suite's data directory, with or without the webhook worker. */
async function restart(ctx: Ctx, env: Record<string, string>) {
  await ctx.svc?.close({ keepData: true });
  ctx.svc = await startTestService({ dataDir: ctx.dir, bootstrap: bootstrap(), env });
}

/** A token of app_demo at rest_demo, through the consent pages. */
async function connect(svc: TestService): Promise<string> {
  const { verifier, challenge } = pkce();
  const back = await consent(new Browser(svc.url), {
    query: new URLSearchParams({
      client_id: 'app_demo',
      redirect_uri: 'https://pos.example.test/callback',
      response_type: 'code',
      scope: 'CUSTOMERS_READ WEBHOOKS_WRITE',
      state: 'st',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString(),
    restaurant: 'rest_demo',
  });
  const token = await tokenRequest(svc.url, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code') as string,
    redirect_uri: 'https://pos.example.test/callback',
    code_verifier: verifier,
  });
  assert.is(token.status, 200, token.text);
  return token.body.access_token as string;
}

/** The application revokes its token (RFC 7009), as a disconnection does. */
async function revoke(svc: TestService, token: string) {
  const res = await fetch(`${svc.url}/api/oauth/revoke`, {
    method: 'POST',
    headers: {
      authorization: basic('app_demo', SECRETS.app_demo),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token }).toString(),
    signal: AbortSignal.timeout(REQUEST_HANG_MS),
  });
  assert.is(res.status, 200, await res.text());
}

t('resend and test answer 409 credential_revoked until the endpoint is deleted; then 404', async (ctx) => {
  await restart(ctx, WITH_WEBHOOKS);
  const creator = await connect(ctx.svc);
  const other = await connect(ctx.svc);
  const made = await ctx.svc.api('POST', '/webhook-endpoints', {
    token: creator,
    body: { url: ctx.rx.url('/hook'), enabled_events: ['customer.created'] },
  });
  assert.is(made.status, 201, made.text);
  const endpoint = made.body.data.id as string;
  const customer = await ctx.svc.api('POST', '/customers', {
    token: FRONT,
    body: { name: 'Rhea Revoked', on_match: 'create_new' },
  });
  assert.is(customer.status, 201, customer.text);
  const history = `/webhook-endpoints/${endpoint}/deliveries`;
  const delivered = await until('the delivery succeeded', REQUEST_HANG_MS, async () => {
    const list = await ctx.svc.api('GET', history, { token: other });
    const row = (list.body.data as { id: string; status: string }[])[0];
    return row?.status === 'succeeded' ? row : null;
  });
  const sent = ctx.rx.for('/hook').length;

  await restart(ctx, WITHOUT_WEBHOOKS);
  await revoke(ctx.svc, creator);

  // The revoked token itself: 401, as on every route.
  const revoked = await ctx.svc.api('GET', `/webhook-endpoints/${endpoint}`, { token: creator });
  assert.is(revoked.status, 401, revoked.text);
  assert.is(revoked.body.error.code, 'INVALID_AUTHENTICATION');
  // Another token of the application: the endpoint and its history, not deleted yet.
  assert.is((await ctx.svc.api('GET', `/webhook-endpoints/${endpoint}`, { token: other })).status, 200);
  const stream = `webhook-delivery-${delivered.id}`;
  const appended = (await ctx.svc.rt.events.readStream(stream)).length;
  const resend = await ctx.svc.api('POST', `${history}/${delivered.id}/resend`, { token: other });
  assert.is(resend.status, 409, resend.text);
  assert.is(resend.body.error.code, 'RESOURCE_CONFLICT');
  assert.equal(resend.body.error.details, { reason: 'credential_revoked' });
  assert.match(resend.body.error.message, /revoked/);
  assert.ok(resend.body.error.request_id);
  assert.is((await ctx.svc.rt.events.readStream(stream)).length, appended, 'the refusal appended nothing');
  const still = await ctx.svc.api('GET', `${history}/${delivered.id}`, { token: other });
  assert.is(still.body.data.status, 'succeeded', 'the delivery is as it was');
  const test = await ctx.svc.api('POST', `/webhook-endpoints/${endpoint}/test`, { token: other });
  assert.is(test.status, 409, test.text);
  assert.is(test.body.error.code, 'RESOURCE_CONFLICT');
  assert.equal(test.body.error.details, { reason: 'credential_revoked' });
  assert.is(ctx.rx.for('/hook').length, sent, 'no test sent');

  // The worker back: it deletes the revoked credential's endpoint, and sends it nothing more.
  await restart(ctx, WITH_WEBHOOKS);
  await until('the endpoint deleted', REQUEST_HANG_MS, async () =>
    (await ctx.svc.api('GET', `/webhook-endpoints/${endpoint}`, { token: other })).status === 404
      ? true
      : null,
  );
  const deleted = (await ctx.svc.rt.events.readStream(`webhook-endpoint-${endpoint}`)).at(-1);
  assert.is(deleted?.type, 'WebhookEndpointDeleted');
  assert.is(deleted?.data.reason, 'CREDENTIAL_REVOKED');
  const gone = await ctx.svc.api('POST', `${history}/${delivered.id}/resend`, { token: other });
  assert.is(gone.status, 404, gone.text);
  assert.is(gone.body.error.code, 'RESOURCE_NOT_FOUND');
  assert.equal((await ctx.svc.api('GET', '/webhook-endpoints', { token: other })).body.data, []);
  const next = await ctx.svc.api('POST', '/customers', {
    token: FRONT,
    body: { name: 'After Revocation', on_match: 'create_new' },
  });
  assert.is(next.status, 201);
  assert.ok(await quietNow(ctx.svc.rt, ctx.svc.webhooks, ctx.rx, '/hook', sent), 'nothing more sent');
});

t.run();
