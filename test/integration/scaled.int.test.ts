// The scaled-out deployment against real engines: the projection-runner contract on EventStoreDB +
// MongoDB, and the service in two roles (api, projector) sharing them, where a partner still reads its
// own writes and several API processes share one rate-limit budget.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { revokeApiKey } from '../../commands/credentials/handler';
import { MongoDocumentStore } from '../../src/adapters/document-store/mongodb';
import { EsdbEventStore } from '../../src/adapters/event-store/eventstoredb';
import { operatorMeta } from '../../src/core/command-meta';
import { projectionRunnerContract } from '../contracts/projection-runner.contract';
import {
  containerRuntimeProblem,
  gateOnContainers,
  type ScaledStores,
  startScaledStores,
} from '../helpers/containers';
import { demoBootstrap, orClose, startTestService } from '../helpers/service';

const problem = await containerRuntimeProblem();
let stores: ScaledStores | undefined;
let db = 0;

const runner = suite('projection runner: eventstoredb + mongodb');
const service = suite('scaled service: api + projector');

const serviceTests = [
  'a write is readable at once through another API process',
  'two API processes share one rate-limit budget',
];

if (gateOnContainers(runner, 'scaled-out suites', problem, ['projection runner contract'])) {
  runner.before(async () => {
    stores = await startScaledStores();
  });
  projectionRunnerContract(runner, async () => {
    const name = `runner_${db++}`;
    const s = stores as ScaledStores;
    const events = await EsdbEventStore.connect(s.esdbUrl);
    const docs = await MongoDocumentStore.connect(s.mongoUrl, name);
    return {
      events,
      docs,
      reopenDocs: () => MongoDocumentStore.connect(s.mongoUrl, name),
      close: async () => {
        await docs.close();
        await events.close();
      },
    };
  });

  const TOKEN = 'couvert_pk_scaled_00000000000000000000000001';
  service('a write is readable at once through another API process', async () => {
    const s = stores as ScaledStores;
    const env = {
      STORE: 'eventstoredb',
      EVENTSTORE_URL: s.esdbUrl,
      MONGODB_URL: s.mongoUrl,
      SECRETS_KEY: 'ab'.repeat(32),
      MONGODB_DB: 'svc',
    };
    const projector = await startTestService({ env: { ...env, ROLES: 'projector' } });
    const a = await orClose(
      startTestService({
        env: { ...env, ROLES: 'api' },
        bootstrap: demoBootstrap({}, [{ id: 'k', token: TOKEN, scopes: ['CATALOG_READ'] }]),
      }),
      () => projector.close(),
    );
    const b = await orClose(
      startTestService({ env: { ...env, ROLES: 'api' } }),
      () => a.close(),
      () => projector.close(),
    );
    try {
      assert.is(
        (await b.api('GET', '/me', { token: TOKEN })).status,
        200,
        'bootstrap visible through the other process',
      );
      const out = await revokeApiKey(a.rt, 'k', 'test', operatorMeta());
      await a.rt.settle(out.position);
      assert.is(
        (await b.api('GET', '/me', { token: TOKEN })).status,
        401,
        'the revocation is visible everywhere',
      );
      assert.is((await projector.api('GET', '/healthz')).status, 200);
      assert.is(
        (await projector.api('GET', '/me', { token: TOKEN })).status,
        404,
        'a projector serves no partner routes',
      );
    } finally {
      await Promise.all([a.close(), b.close(), projector.close()]);
    }
  });
  service('two API processes share one rate-limit budget', async () => {
    const s = stores as ScaledStores;
    const env = {
      STORE: 'eventstoredb',
      EVENTSTORE_URL: s.esdbUrl,
      MONGODB_URL: s.mongoUrl,
      SECRETS_KEY: 'ab'.repeat(32),
      MONGODB_DB: 'rl',
      RATE_LIMIT_PER_MINUTE: '4',
      ROLES: 'api,projector',
    };
    const a = await startTestService({ env });
    const b = await orClose(startTestService({ env: { ...env, ROLES: 'api' } }), () => a.close());
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push(
          (await a.api('GET', '/api/partner/v1')).status,
          (await b.api('GET', '/api/partner/v1')).status,
        );
      assert.equal(statuses.filter((x) => x === 429).length, 2, `4 allowed across both, got ${statuses}`);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
  runner.after(async () => undefined);
  service.after(async () => {
    await stores?.stop();
  });
} else {
  gateOnContainers(service, 'scaled service', problem, serviceTests);
}

runner.run();
service.run();
