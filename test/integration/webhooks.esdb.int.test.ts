// The webhooks role scaled out, against EventStoreDB and MongoDB in containers: two webhooks processes
// share one persistent subscription; every event is delivered once, retries are asked for once (both
// sweepers race for each), and a revocation deletes the credential's endpoints. Without a container
// runtime the suite skips visibly (REQUIRE_DOCKER=1 makes that a failure).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { revokeApiKey } from '../../commands/credentials/handler';
import { operatorMeta } from '../../src/core/command-meta';
import {
  containerRuntimeProblem,
  gateOnContainers,
  type ScaledStores,
  startScaledStores,
} from '../helpers/containers';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const TOKEN = 'couvert_pk_esdb_hooks_000000000000000000001';
const NAMES = [
  'two webhooks processes share the work: each event once, each retry once',
  'a revoked credential loses its endpoints',
];

const problem = await containerRuntimeProblem();
const t = suite<{
  stores: ScaledStores;
  rx: Receiver;
  api: TestService;
  workers: TestService[];
  projector: TestService;
}>('webhooks: eventstoredb + mongodb');

if (gateOnContainers(t, 'webhooks scaled-out suite', problem, NAMES)) {
  t.before(async (ctx) => {
    ctx.stores = await startScaledStores();
    ctx.rx = await startReceiver();
    const env = {
      STORE: 'eventstoredb',
      EVENTSTORE_URL: ctx.stores.esdbUrl,
      MONGODB_URL: ctx.stores.mongoUrl,
      MONGODB_DB: 'hooks',
      SECRETS_KEY: 'cd'.repeat(32),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      TEST_CLOCK: 'true',
    };
    ctx.projector = await startTestService({ env: { ...env, ROLES: 'projector' } });
    ctx.api = await startTestService({
      env: { ...env, ROLES: 'api' },
      bootstrap: demoBootstrap({}, [
        { id: 'key_h', token: TOKEN, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'] },
      ]),
    });
    ctx.workers = [
      await startTestService({ env: { ...env, ROLES: 'webhooks' } }),
      await startTestService({ env: { ...env, ROLES: 'webhooks' } }),
    ];
  });
  t.after(async (ctx) => {
    await Promise.all([ctx.api.close(), ctx.projector.close(), ...ctx.workers.map((w) => w.close())]);
    await ctx.rx.close();
    await ctx.stores.stop();
  });

  t(NAMES[0] as string, async ({ api, workers, rx }) => {
    rx.on('/shared', { statuses: [200] });
    const ep = await api.api('POST', '/webhook-endpoints', {
      token: TOKEN,
      body: { url: rx.url('/shared') },
    });
    assert.is(ep.status, 201);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++)
      ids.push(
        (await api.api('POST', '/customers', { token: TOKEN, body: { name: `G ${i}` } })).body.data.id,
      );
    const got = await rx.waitFor('/shared', 40);
    const perDelivery = new Map<string, number>();
    for (const r of got)
      perDelivery.set(
        r.headers['x-service-delivery'] as string,
        (perDelivery.get(r.headers['x-service-delivery'] as string) ?? 0) + 1,
      );
    assert.is(perDelivery.size, 40);
    assert.ok(
      [...perDelivery.values()].every((n) => n === 1),
      'no delivery sent twice',
    );
    assert.equal(new Set(got.map((r) => r.json.data.object.id)), new Set(ids));
    // A retry: both workers' sweepers race for it; the log lets one ask, one worker sends it.
    rx.on('/retry', { statuses: [503, 200] });
    await api.api('POST', '/webhook-endpoints', {
      token: TOKEN,
      body: { url: rx.url('/retry'), enabled_events: ['customer.created'] },
    });
    await api.api('POST', '/customers', { token: TOKEN, body: { name: 'Retry' } });
    await rx.waitFor('/retry', 1);
    for (const w of workers) w.rt.testClock?.advance(10);
    await rx.waitFor('/retry', 2);
    // A fixed wait on purpose: scaled out, the workers share EventStoreDB's persistent subscription and
    // no process reports a handled position (publisherQuiet is for the embedded publisher).
    await new Promise((r) => setTimeout(r, 3_000));
    assert.is(rx.for('/retry').length, 2, 'the retry was sent once');
    assert.equal(
      rx.for('/retry').map((r) => r.headers['x-service-attempt']),
      ['1', '2'],
    );
  });

  t(NAMES[1] as string, async ({ api }) => {
    const ep = await api.api('POST', '/webhook-endpoints', {
      token: TOKEN,
      body: { url: 'http://127.0.0.1:9/x' },
    });
    await revokeApiKey(api.rt, 'key_h', 'test', operatorMeta('test'));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const types = (await api.rt.events.readStream(`webhook-endpoint-${ep.body.data.id}`)).map(
        (e) => e.type,
      );
      if (types.includes('WebhookEndpointDeleted')) break;
      if (Date.now() > deadline) assert.unreachable('the endpoint was not deleted');
      await new Promise((r) => setTimeout(r, 200));
    }
  });
}

t.run();
