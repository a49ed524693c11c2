// A retry or a resend sends a body built when the event was fanned out. If the endpoint's credential
// has lost the scope that reads it since (a manager took RESERVATIONS_READ_SENSITIVE, CUSTOMERS_READ…
// away), it is not sent: spec §5, an endpoint receives only what its key can read. The delivery is
// canceled at that attempt instead. The service clock is frozen: only the test moves it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { updateApiKey } from '../../commands/credentials/handler';
import { createCustomer } from '../../commands/customers/handler';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { applyBootstrap } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { FixedClock } from '../../src/core/clock';
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
  clock: FixedClock;
  rx: Receiver;
  running: RunningWebhooks;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const t = suite<Ctx>('webhooks: a retry is not sent once the credential cannot read it');

t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-webhooks-scopes-'));
  ctx.rx = await startReceiver();
  // The first attempt fails: a retry is due 5 s later.
  ctx.rx.on('/sc', { statuses: [503, 200] });
  ctx.clock = new FixedClock('2026-06-02T10:00:00.000Z');
  const config = loadConfig({
    DATA_DIR: ctx.dir,
    LOG_LEVEL: 'silent',
    ROLES: 'webhooks',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  ctx.rt = await createRuntime(config, { logger: createLogger('silent'), clock: ctx.clock });
  const bootstrap = demoBootstrap({}, [
    {
      id: 'key_sc',
      token: 'couvert_pk_scopes_000000000000000000000001',
      scopes: ['CUSTOMERS_READ', 'RESERVATIONS_READ'],
    },
  ]);
  (bootstrap.restaurants[0] as Record<string, unknown>).webhook_endpoints = [
    {
      id: 'we_sc',
      url: ctx.rx.url('/sc'),
      api_version: 'v1',
      secret: 'whsec_scopes_test_secret_0000001',
      api_key_id: 'key_sc',
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

t('CUSTOMERS_READ taken away before a customer.created retry: canceled, not sent', async (ctx) => {
  await createCustomer(
    ctx.rt,
    { _id: 'rest_demo', country_code: 'FR', customer_matching: false },
    { name: 'Scoped Out', email: 'scoped.out@example.com' },
    operatorMeta('test'),
  );
  await ctx.rx.waitFor('/sc', 1);
  const deliveries = ctx.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
  const recorded = async () => {
    await ctx.rt.refresh();
    return (await deliveries.find({}))[0];
  };
  for (let i = 0; (await recorded())?.attempt_count !== 1; i++) {
    if (i > 1_000) assert.unreachable('attempt 1 never recorded');
    await sleep(10);
  }
  const updated = await updateApiKey(
    ctx.rt,
    'key_sc',
    { scopes: ['RESERVATIONS_READ'] },
    operatorMeta('test'),
  );
  await ctx.rt.settle(updated.position);
  ctx.clock.advance(6);
  let doc = await recorded();
  for (let i = 0; doc?.status === 'pending'; i++) {
    if (i > 1_000) assert.unreachable('the retry never settled');
    await sleep(10);
    doc = await recorded();
  }
  assert.is(doc?.status, 'canceled');
  assert.is(ctx.rx.for('/sc').length, 1, 'the retry was sent to a credential that cannot read customers');
});

t.run();
