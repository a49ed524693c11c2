// A marketing opt-out added or removed changes the customer partners read (`marketing_opt_outs`,
// `updated_at`: spec §2.1), so it publishes `customer.updated` like any other change of the customer
// (commands/customers/events.ts webhookTypeOf maps both events to it). The events are named
// MarketingOptOut*, not Customer*: the publisher must follow them by name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addMarketingOptOut, createCustomer, removeMarketingOptOut } from '../../commands/customers/handler';
import { applyBootstrap } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { type RunningWebhooks, startWebhooks } from '../../src/webhooks/runner';
import { demoBootstrap } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

interface Ctx {
  dir: string;
  rt: Runtime;
  rx: Receiver;
  running: RunningWebhooks;
}

const t = suite<Ctx>('webhooks: marketing opt-outs publish customer.updated');

t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-webhooks-opt-outs-'));
  ctx.rx = await startReceiver();
  const config = loadConfig({
    DATA_DIR: ctx.dir,
    LOG_LEVEL: 'silent',
    ROLES: 'webhooks',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  ctx.rt = await createRuntime(config, { logger: createLogger('silent') });
  const bootstrap = demoBootstrap({}, [
    { id: 'key_oo', token: 'couvert_pk_opt_outs_0000000000000000000001', scopes: ['CUSTOMERS_READ'] },
  ]);
  (bootstrap.restaurants[0] as Record<string, unknown>).webhook_endpoints = [
    {
      id: 'we_oo',
      url: ctx.rx.url('/oo'),
      api_version: 'v1',
      secret: 'whsec_opt_outs_test_secret_00001',
      api_key_id: 'key_oo',
    },
  ];
  await ctx.rt.settle((await applyBootstrap(ctx.rt, bootstrap, operatorMeta('bootstrap'))).position);
  ctx.running = startWebhooks(ctx.rt);
});

t.after(async (ctx) => {
  await ctx.running?.stop();
  await ctx.rt?.close();
  await ctx.rx?.close();
  rmSync(ctx.dir, { recursive: true, force: true });
});

t('an opt-out added, then removed: one customer.updated each, with what changed', async (ctx) => {
  const meta = operatorMeta('test');
  const created = await createCustomer(
    ctx.rt,
    { _id: 'rest_demo', country_code: 'FR', customer_matching: false },
    { name: 'Opting Out', email: 'opt.out@example.com' },
    meta,
  );
  const id = created.customerId as string;
  await ctx.rx.waitFor('/oo', 1);
  await addMarketingOptOut(ctx.rt, id, 'EMAIL', 'unsubscribed', meta);
  const [, added] = await ctx.rx.waitFor('/oo', 2);
  assert.is(added?.json.type, 'customer.updated');
  assert.is(added?.json.data.object.id, id);
  assert.equal(added?.json.data.object.marketing_opt_outs, ['EMAIL']);
  assert.equal(added?.json.data.previous_attributes, { marketing_opt_outs: [] });
  await removeMarketingOptOut(ctx.rt, id, 'EMAIL', meta);
  const [, , removed] = await ctx.rx.waitFor('/oo', 3);
  assert.is(removed?.json.type, 'customer.updated');
  assert.equal(removed?.json.data.object.marketing_opt_outs, []);
  assert.equal(removed?.json.data.previous_attributes, { marketing_opt_outs: ['EMAIL'] });
});

t.run();
