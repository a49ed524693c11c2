// The operator's `webhooks deliveries` names a delivery's type as the API and the dashboard do: a test
// delivery's is `webhook_endpoint.test` (the type its body carried; the read model keeps `test`), and
// `--event-type` takes the types the API's filter takes, refusing any other rather than listing nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testWebhookEndpoint } from '../../commands/webhook-deliveries/handler';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { operatorMeta } from '../../src/core/command-meta';
import { refusedCli, runCli } from '../helpers/cli-in-process';
import { demoCustomer, startWebhooksWorld, until, type WebhooksWorld } from '../helpers/webhooks-world';

const t = suite<{ w: WebhooksWorld }>('webhooks deliveries (CLI): the types it shows and filters by');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-cli-deliveries',
    key: { id: 'key_cli', token: 'couvert_pk_cli_deliveries_000000000000001', scopes: ['CUSTOMERS_READ'] },
    endpoint: { id: 'we_cli', path: '/cli', secret: 'whsec_cli_deliveries_secret_0001' },
  });
});
t.after(async (ctx) => {
  await ctx.w?.close();
});

t('a test delivery is listed and found as webhook_endpoint.test', async ({ w }) => {
  await demoCustomer(w.rt, 'Listed');
  const endpoint = (await w.rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .findOne({ _id: 'we_cli' })) as WebhookEndpointDoc;
  const tested = await testWebhookEndpoint(w.rt, endpoint, operatorMeta('test'));
  await w.rt.settle(tested.position);
  const lines = await until('both deliveries listed', 120_000, async () => {
    const out = await runCli(w.rt, 'webhooks deliveries', { endpoint: 'we_cli' });
    return out.length === 2 && out;
  });
  const types = (out: string[]) => out.map((l) => l.split('\t')[2]).sort();
  assert.equal(types(lines), ['customer.created', 'webhook_endpoint.test']);
  for (const name of ['webhook_endpoint.test', 'test']) {
    const found = await runCli(w.rt, 'webhooks deliveries', { endpoint: 'we_cli', 'event-type': name });
    assert.equal(types(found), ['webhook_endpoint.test'], `--event-type ${name}`);
    assert.ok(found[0]?.startsWith(tested.deliveryId));
  }
  const refused = await refusedCli(w.rt, 'webhooks deliveries', {
    endpoint: 'we_cli',
    'event-type': 'bogus',
  });
  assert.match(refused.message, /--event-type takes one of .*customer\.created.*webhook_endpoint\.test/);
});

t.run();
