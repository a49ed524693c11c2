// A marketing opt-out added or removed changes the customer partners read (`marketing_opt_outs`,
// `updated_at`: spec §2.1), so it publishes `customer.updated` like any other change of the customer
// (commands/customers/events.ts webhookTypeOf maps both events to it). The events are named
// MarketingOptOut*, not Customer*: the publisher must follow them by name.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addMarketingOptOut, removeMarketingOptOut } from '../../commands/customers/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { demoCustomer, startWebhooksWorld, type WebhooksWorld } from '../helpers/webhooks-world';

const t = suite<{ w: WebhooksWorld }>('webhooks: marketing opt-outs publish customer.updated');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-opt-outs',
    key: { id: 'key_oo', token: 'couvert_pk_opt_outs_0000000000000000000001', scopes: ['CUSTOMERS_READ'] },
    endpoint: { id: 'we_oo', path: '/oo', secret: 'whsec_opt_outs_test_secret_00001' },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('an opt-out added, then removed: one customer.updated each, with what changed', async ({ w }) => {
  const meta = operatorMeta('test');
  const id = await demoCustomer(w.rt, 'Opting Out', 'opt.out@example.com');
  await w.rx.waitFor('/oo', 1);
  await addMarketingOptOut(w.rt, id, 'EMAIL', 'unsubscribed', meta);
  const [, added] = await w.rx.waitFor('/oo', 2);
  assert.is(added?.json.type, 'customer.updated');
  assert.is(added?.json.data.object.id, id);
  assert.equal(added?.json.data.object.marketing_opt_outs, ['EMAIL']);
  assert.equal(added?.json.data.previous_attributes, { marketing_opt_outs: [] });
  await removeMarketingOptOut(w.rt, id, 'EMAIL', meta);
  const [, , removed] = await w.rx.waitFor('/oo', 3);
  assert.is(removed?.json.type, 'customer.updated');
  assert.equal(removed?.json.data.object.marketing_opt_outs, []);
  assert.equal(removed?.json.data.previous_attributes, { marketing_opt_outs: ['EMAIL'] });
});

t.run();
