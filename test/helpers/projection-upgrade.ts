// A versioned projection's upgrade, as a service started on a store an earlier one built sees it (a
// MongoDB store keeps its read models across restarts): the old store, the upgraded service that
// rebuilds the newest version beside it and switches, and what `audit verify` then compares.
import { allProjections, allProjectionVersions } from '../../projections/index';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { compareReadModels, replayInto } from '../../src/audit/replay';
import type { EventStore } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';
import { AliasedDocumentStore, ProjectionVersions } from '../../src/projection/versions';
import { captureLog } from './log-sink';

/** The store as the service left it before the upgrade: `projection` caught up on the log. */
export async function builtBefore(events: EventStore, docs: EmbeddedDocumentStore, projection: Projection) {
  const before = new ProjectionRunner(events, docs, [projection]);
  await before.start();
  await before.catchUp();
  await before.stop();
}

/**
 * The upgraded service on `docs`: every version of projection `name` it lists, the newest rebuilt in
 * the background (nothing on a fresh store, which serves it at once) and switched to, caught up.
 * Queries read `aliased`; `stop` ends the rebuild's grace period and the runner.
 */
export async function upgraded(
  events: EventStore,
  docs: EmbeddedDocumentStore,
  name: string,
  /** The versions the service's code holds: by default every one the code lists now. */
  versionsInCode: readonly Projection[] = allProjectionVersions().filter((p) => p.name === name),
) {
  const { logger } = captureLog();
  const aliased = new AliasedDocumentStore(docs);
  const versions = new ProjectionVersions(events, docs, aliased, { logger, graceMs: 10, batchSize: 100 });
  const runner = new ProjectionRunner(events, docs, await versions.prepare(versionsInCode));
  await runner.start();
  versions.startPendingBuilds();
  await versions.whenBuilt(name);
  await runner.catchUp();
  return {
    aliased,
    runner,
    /** `whenRetired()`: the replaced version's collections dropped after the grace period. */
    versions,
    stop: async () => {
      await versions.stop();
      await runner.stop();
    },
  };
}

/** What `audit verify` compares: the served read model of projection `name` against a replay of the log. */
export async function comparedWithReplay(
  events: EventStore,
  aliased: AliasedDocumentStore,
  name: string,
  collections: readonly string[],
) {
  const scratch = new EmbeddedDocumentStore();
  await replayInto(
    events,
    scratch,
    allProjections().filter((p) => p.name === name),
    null,
  );
  // The replay writes the logical names; the served version is read through the alias.
  return compareReadModels(scratch, aliased, collections);
}
