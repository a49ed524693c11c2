// The projection-versions contract on EventStoreDB + MongoDB (the scaled-out pair), in containers.
// Without a container runtime it skips visibly; REQUIRE_DOCKER=1 makes that a failure.
import { suite } from 'uvu';
import { MongoDocumentStore } from '../../src/adapters/document-store/mongodb';
import { EsdbEventStore } from '../../src/adapters/event-store/eventstoredb';
import { projectionVersionsContract } from '../contracts/projection-versions.contract';
import {
  containerRuntimeProblem,
  gateOnContainers,
  type ScaledStores,
  startScaledStores,
} from '../helpers/containers';

const problem = await containerRuntimeProblem();
const test = suite('projection versions: eventstoredb + mongodb');
let stores: ScaledStores | undefined;
let db = 0;

if (gateOnContainers(test, 'projection versions (scaled)', problem, ['projection versions contract'])) {
  test.before(async () => {
    stores = await startScaledStores();
  });
  test.after(async () => stores?.stop());
  projectionVersionsContract(test, async () => {
    const s = stores as ScaledStores;
    // A stream-name prefix per fixture keeps each test's log its own on the shared server.
    const events = await EsdbEventStore.connect(s.esdbUrl);
    const docs = await MongoDocumentStore.connect(s.mongoUrl, `versions_${db++}`);
    return {
      events,
      docs,
      close: async () => {
        await docs.close();
        await events.close();
      },
    };
  });
}
test.run();
