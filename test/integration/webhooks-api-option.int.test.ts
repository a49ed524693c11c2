// A third-party OAuth application acts for a restaurant only while its API option is on (spec §5): its
// tokens answer 401 meanwhile, and its webhook endpoints receive nothing either — neither new events
// nor the retries of earlier ones. An application the operator published is not concerned. The
// service clock is frozen: only the test moves it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer } from '../../commands/customers/handler';
import { createRestaurant, updateRestaurant } from '../../commands/restaurants/handler';
import { createWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { loadConfig } from '../../src/config';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { type RunningWebhooks, startWebhooks } from '../../src/webhooks/runner';
import { issueToken, registerTestApplication } from '../helpers/oauth-commands';
import { restaurantProfile } from '../helpers/restaurants';
import { publisherQuiet, type Receiver, startReceiver } from '../helpers/webhook-receiver';

const meta = operatorMeta('test');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ctx {
  dir: string;
  rt: Runtime;
  clock: FixedClock;
  rx: Receiver;
  running: RunningWebhooks;
}

const t = suite<Ctx>('webhooks: a third-party application receives nothing while the API option is off');

t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-webhooks-option-'));
  ctx.rx = await startReceiver();
  ctx.clock = new FixedClock('2026-06-02T10:00:00.000Z');
  ctx.rt = await createRuntime(
    loadConfig({
      DATA_DIR: ctx.dir,
      LOG_LEVEL: 'silent',
      ROLES: 'webhooks',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    }),
    { logger: createLogger('silent'), clock: ctx.clock },
  );
  await createRestaurant(ctx.rt, 'rest_opt', restaurantProfile('rest-opt', { api_option: true }), meta);
  for (const [clientId, published] of [
    ['app_third', false],
    ['app_ours', true],
  ] as const) {
    await registerTestApplication(ctx.rt, clientId, ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'], published);
    const issued = await issueToken(ctx.rt, clientId, 'rest_opt', ['CUSTOMERS_READ', 'WEBHOOKS_WRITE']);
    await createWebhookEndpoint(
      ctx.rt,
      {
        restaurantId: 'rest_opt',
        url: ctx.rx.url(`/${clientId}`),
        credential: { id: issued.keyId, scopes: issued.scopes },
      },
      meta,
    );
  }
  await ctx.rt.projections.catchUp();
  ctx.running = startWebhooks(ctx.rt);
});

t.after(async (ctx) => {
  await ctx.running?.stop();
  await ctx.rt?.close();
  await ctx.rx?.close();
  rmSync(ctx.dir, { recursive: true, force: true });
});

const customer = (ctx: Ctx, name: string) =>
  createCustomer(ctx.rt, { _id: 'rest_opt', country_code: 'FR', customer_matching: false }, { name }, meta);

const setOption = async (ctx: Ctx, on: boolean) =>
  ctx.rt.settle((await updateRestaurant(ctx.rt, 'rest_opt', { api_option: on }, meta)).position);

t('option off: the published application still receives events, the third-party one nothing', async (ctx) => {
  await customer(ctx, 'Before');
  await ctx.rx.waitFor('/app_third', 1);
  await ctx.rx.waitFor('/app_ours', 1);
  await setOption(ctx, false);
  await customer(ctx, 'While off');
  // The same fan-out sends to both: once the published one has it, the other would have too.
  await ctx.rx.waitFor('/app_ours', 2);
  await publisherQuiet(ctx.rt, ctx.running);
  assert.is(
    ctx.rx.for('/app_third').length,
    1,
    'the third-party endpoint received an event while the option was off',
  );
  await setOption(ctx, true);
  await customer(ctx, 'After');
  await ctx.rx.waitFor('/app_third', 2);
  await ctx.rx.waitFor('/app_ours', 3);
});

t('a retry due while the option is off is canceled, not sent', async (ctx) => {
  ctx.rx.on('/app_third', { statuses: [503, 200] });
  await customer(ctx, 'Retried');
  await ctx.rx.waitFor('/app_third', 3);
  await ctx.rx.waitFor('/app_ours', 4);
  const deliveries = ctx.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
  const failed = async () => {
    await ctx.rt.refresh();
    return (await deliveries.find({ status: 'pending' })).find((d) => d.attempt_count === 1);
  };
  let doc = await failed();
  for (let i = 0; doc === undefined; i++) {
    if (i > 12_000) assert.unreachable('the failed first attempt was never recorded');
    await sleep(10);
    doc = await failed();
  }
  await setOption(ctx, false);
  ctx.clock.advance(6);
  let after = await deliveries.findOne({ _id: doc._id });
  for (let i = 0; after?.status === 'pending'; i++) {
    if (i > 12_000) assert.unreachable('the retry never settled');
    await sleep(10);
    await ctx.rt.refresh();
    after = await deliveries.findOne({ _id: doc._id });
  }
  assert.is(after?.status, 'canceled');
  assert.is(ctx.rx.for('/app_third').length, 3, 'the retry was sent while the option was off');
});

t.run();
