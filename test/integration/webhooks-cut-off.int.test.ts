// A webhook endpoint an OAuth token created receives nothing once the operator cut the token's
// application off (`applications disable --disconnect`), even before the cut-off's sweep revokes the
// token and deletes its endpoints (the sweep held back here: only the cut-off is recorded, as a CLI
// that stopped right after it leaves it). The restaurant's own key's endpoint keeps receiving, and a
// resend or a test of the cut-off token's endpoint is refused as for a revoked credential.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setApplicationDisabled } from '../../commands/oauth/application-handler';
import { resendDelivery, testWebhookEndpoint } from '../../commands/webhook-deliveries/handler';
import { createWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import type { WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { listConnections } from '../../queries/oauth';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { runCli } from '../helpers/cli-in-process';
import { issueToken, registerTestApplication } from '../helpers/oauth-commands';
import { publisherQuiet } from '../helpers/webhook-receiver';
import { deliveries, demoCustomer, startWebhooksWorld, type WebhooksWorld } from '../helpers/webhooks-world';

let cutOffKey = '';
const t = suite<{ w: WebhooksWorld }>('webhooks: an endpoint of a token its application cut off');
const meta = operatorMeta('test');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-cut-off',
    key: {
      id: 'key_front',
      token: 'couvert_pk_front_cut_off_hooks_0123456789abcdef',
      scopes: ['CUSTOMERS_READ'],
    },
    endpoint: { id: 'we_front', path: '/front', secret: 'whsec_front_cut_off_0123456789' },
  });
});
t.after(async ({ w }) => {
  await w?.close();
});

const refusedReason = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: unknown) =>
      err instanceof ApiError ? (err.details as { reason?: string } | undefined)?.reason : String(err),
  );

t('nothing is sent on behalf of a token issued before the cut-off, swept or not', async ({ w }) => {
  const { rt, rx } = w;
  await registerTestApplication(rt, 'app_hooks', ['CUSTOMERS_READ'], true);
  const token = await issueToken(rt, 'app_hooks', 'rest_demo', ['CUSTOMERS_READ']);
  cutOffKey = token.keyId;
  const made = await createWebhookEndpoint(
    rt,
    {
      restaurantId: 'rest_demo',
      url: rx.url('/app'),
      credential: { id: token.keyId, scopes: ['CUSTOMERS_READ'] },
      endpointId: 'we_app',
    },
    { ...meta, restaurant_id: 'rest_demo' },
  );
  await rt.settle(made.position);
  await demoCustomer(rt, 'Before the cut-off');
  await rx.waitFor('/app', 1);
  await rx.waitFor('/front', 1);

  const cut = await setApplicationDisabled(rt, 'app_hooks', true, meta, true);
  await rt.settle(cut.position);
  await demoCustomer(rt, 'After the cut-off');
  await rx.waitFor('/front', 2);
  await publisherQuiet(rt, w.running);
  assert.is(rx.for('/app').length, 1, 'the cut-off token’s endpoint receives nothing more');
  const appDeliveries = await deliveries(rt, { endpoint_id: 'we_app' });
  assert.is(appDeliveries.length, 1, 'none made for it');

  const endpoint = (await rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .findOne({ _id: 'we_app' })) as WebhookEndpointDoc;
  assert.ok(endpoint, 'the sweep that deletes it was held back');
  assert.is(await refusedReason(testWebhookEndpoint(rt, endpoint, meta)), 'credential_revoked');
  assert.is(
    await refusedReason(resendDelivery(rt, appDeliveries[0] as WebhookDeliveryDoc, endpoint, meta)),
    'credential_revoked',
  );
});

// Every place uses authentication's rule (keyWithdrawn): the token answers 401, so it is not active.
t(
  'a cut-off token, not swept yet, gets no new endpoint, connects nothing and is listed cut off',
  async ({ w }) => {
    const { rt, rx } = w;
    assert.ok(cutOffKey, 'the test before issued it');
    const made = createWebhookEndpoint(
      rt,
      {
        restaurantId: 'rest_demo',
        url: rx.url('/app2'),
        credential: { id: cutOffKey, scopes: ['CUSTOMERS_READ'] },
        endpointId: 'we_app2',
      },
      { ...meta, restaurant_id: 'rest_demo' },
    );
    const refused = await made.then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(refused instanceof ApiError, `refused as for a revoked credential, got ${String(refused)}`);
    assert.is(refused.status, 401);
    assert.is(refused.code, 'INVALID_AUTHENTICATION');
    await rt.projections.catchUp();
    const left = await rt.docs.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS).findOne({ _id: 'we_app2' });
    assert.is(left, null, 'no endpoint left for it');
    const connected = (await listConnections(rt.docs, 'rest_demo')).map((c) => c.client_id);
    assert.not.ok(connected.includes('app_hooks'), `connections: ${connected.join(', ')}`);
    const line = (await runCli(rt, 'keys list', {})).find((l) => l.startsWith(`${cutOffKey}\t`));
    assert.ok(line?.includes('\tCUT OFF '), `keys list: ${line}`);
  },
);

t.run();
