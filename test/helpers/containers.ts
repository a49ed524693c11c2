// EventStoreDB and MongoDB in containers for the scaled-out suites. Without a container runtime the
// suites skip visibly; REQUIRE_DOCKER=1 turns the skip into a failure.
import { MongoDBContainer, type StartedMongoDBContainer } from '@testcontainers/mongodb';
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from 'testcontainers';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { withTimeout } from '../contracts/event-store.helpers';

export async function containerRuntimeProblem(): Promise<string | null> {
  try {
    await withTimeout(getContainerRuntimeClient(), 15_000, 'the container runtime');
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Registers the visible skip (or the REQUIRE_DOCKER failure); returns true when the suite can run. */
export function gateOnContainers(test: Test, what: string, problem: string | null, names: string[]): boolean {
  if (!problem) return true;
  if (process.env.REQUIRE_DOCKER === '1') {
    test('a container runtime is available (REQUIRE_DOCKER=1)', () => {
      assert.unreachable(`no container runtime: ${problem}`);
    });
  } else {
    console.log(`SKIP ${what}: no container runtime (${problem}); REQUIRE_DOCKER=1 makes this fail`);
    for (const name of names) test.skip(name, () => undefined);
  }
  return false;
}

/** EventStoreDB's maximum append size, as docker-compose.yml sets it (EVENTSTORE_MAX_APPEND_SIZE). */
export const ESDB_MAX_APPEND_SIZE = String(12 * 1024 * 1024);

export interface ScaledStores {
  esdbUrl: string;
  mongoUrl: string;
  stop(): Promise<void>;
}

export async function startScaledStores(): Promise<ScaledStores> {
  // Both start at once; when one fails (an image that cannot be pulled, a start past its timeout) the
  // other is stopped before the failure is thrown, not left running for the rest of the test run.
  const started = await Promise.allSettled([
    withTimeout(
      new GenericContainer(process.env.ESDB_IMAGE ?? 'eventstore/eventstore:24.10')
        .withEnvironment({
          EVENTSTORE_INSECURE: 'true',
          EVENTSTORE_MEM_DB: 'true',
          EVENTSTORE_CLUSTER_SIZE: '1',
          EVENTSTORE_RUN_PROJECTIONS: 'All',
          // As docker-compose.yml: the service's largest appends exceed the default 1 MiB.
          EVENTSTORE_MAX_APPEND_SIZE: ESDB_MAX_APPEND_SIZE,
        })
        .withExposedPorts(2113)
        .withWaitStrategy(
          Wait.forHttp('/health/live', 2113).forStatusCodeMatching((s) => s >= 200 && s < 300),
        )
        .withStartupTimeout(120_000)
        .start(),
      180_000,
      'EventStoreDB',
    ),
    withTimeout(new MongoDBContainer(process.env.MONGO_IMAGE ?? 'mongo:7').start(), 180_000, 'MongoDB'),
  ]);
  const [esdbStart, mongoStart] = started;
  if (esdbStart.status === 'rejected' || mongoStart.status === 'rejected') {
    await Promise.all(
      started.map((s) => (s.status === 'fulfilled' ? s.value.stop().catch(() => undefined) : undefined)),
    );
    throw esdbStart.status === 'rejected' ? esdbStart.reason : (mongoStart as PromiseRejectedResult).reason;
  }
  const esdb: StartedTestContainer = esdbStart.value;
  const mongo: StartedMongoDBContainer = mongoStart.value;
  return {
    esdbUrl: `esdb://${esdb.getHost()}:${esdb.getMappedPort(2113)}?tls=false`,
    mongoUrl: `${mongo.getConnectionString()}/?directConnection=true`,
    stop: async () => {
      await Promise.all([esdb.stop(), mongo.stop()]);
    },
  };
}
