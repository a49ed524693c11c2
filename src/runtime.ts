// The composition root: one Runtime per process, holding the chosen adapters of both ports, the
// projection runner, the clock and the logger.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { allProjectionVersions } from '../projections/index';
import { EmbeddedDocumentStore } from './adapters/document-store/embedded';
import { SqliteEventStore } from './adapters/event-store/sqlite';
import { SqliteChangeDetector } from './adapters/event-store/sqlite-change-detector';
import { MemoryKeyStore } from './adapters/key-store/memory';
import { SqliteKeyStore } from './adapters/key-store/sqlite';
import type { Config } from './config';
import { AdjustableClock, type Clock, systemClock } from './core/clock';
import { stopController } from './core/stop-signal';
import type { WriteDeps } from './core/write-deps';
import { checkLogPresent, explainDamagedFiles } from './damaged-files';
import { writableDataDir } from './data-dir-lock';
import { type AccessLog, accessLogVia, createAccessLog, createLogger, type Logger } from './logger';
import type { DocumentStore } from './ports/document-store';
import type { EventStore } from './ports/event-store';
import type { KeyStore } from './ports/key-store';
import { upgradeLegacyLog } from './privacy/legacy';
import { SealingEventStore } from './privacy/sealing-event-store';
import type { Projection } from './projection/projection';
import { namedReplayFailure } from './projection/replay-failure';
import { CatchUpStopped, ProjectionRunner, type RunnerOptions } from './projection/runner';
import { AliasedDocumentStore, ProjectionVersions } from './projection/versions';
import { checkSecretsKeyFile, lazySecrets, loadSecretBox, type Secrets } from './secrets';

export interface Runtime extends WriteDeps {
  config: Config;
  clock: Clock;
  /** Present when TEST_CLOCK is on: the clock a test may move. */
  testClock: AdjustableClock | null;
  /** The log, with customers' personal fields sealed on append and opened on read (src/privacy). */
  events: EventStore;
  /** Customers' keys, outside the log: destroying one erases that customer everywhere. */
  keys: KeyStore;
  /** Read models as queries see them: versioned projections' collections resolve to their active version. */
  docs: DocumentStore;
  projections: ProjectionRunner;
  /** Seals and opens stored secrets (webhook signing secrets) with SECRETS_KEY or DATA_DIR/secrets.key. */
  secrets: Secrets;
  /** Versioned projections: their active versions, background rebuilds and switches (src/projection/versions.ts). */
  versions: ProjectionVersions;
  logger: Logger;
  /** One line per request (allow-listed fields only). */
  accessLog: AccessLog;
  /**
   * After a write: returns once the read models include `position` (read your writes); false when
   * they did not (scaled out, the bounded wait gave up: logged), true otherwise.
   */
  settle(position: bigint | null | undefined): Promise<boolean>;
  /** Before a read (embedded): applies what other processes appended to the same log. */
  refresh(): Promise<void>;
  /**
   * Aborted when the service begins to stop (src/app.ts, after a short grace) and at close: outbound
   * calls still waiting for an answer (webhook attempts, test deliveries) end at once rather than at
   * their timeout, and report it.
   */
  stopping: AbortController;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  logger?: Logger;
  projections?: Projection[];
  runner?: RunnerOptions;
  /** Use these stores instead of building them from the config (tests). */
  events?: EventStore;
  docs?: DocumentStore;
  keys?: KeyStore;
  /**
   * Benchmarks only (bench/privacy-cost.bench.ts): the log without the sealing layer, to measure what
   * sealing costs. Personal data would then be written in clear: never set by the service.
   */
  unsealedForBenchmark?: boolean;
  /**
   * Embedded: when the log's writer thread starts (~0.5 s of CPU, ~30 MB). 'open' (default, the
   * service): with the log, so that it is up before a request writes; 'first write' (the CLI): with
   * the first append, so a command that only reads never starts it.
   */
  logWriter?: 'open' | 'first write';
  /**
   * Aborted: the embedded start's replay of the log into the read models stops at its next event and
   * the start fails with CatchUpStopped (a SIGTERM while starting: src/main.ts), rather than finishing
   * a replay that may take minutes on a large log.
   */
  signal?: AbortSignal;
}

/**
 * DATA_DIR/keys.sqlite, refused when it is missing, empty or new while the log holds data sealed with
 * its keys (a backup restored without it, a file moved or deleted): opened anyway, every customer's
 * personal data read as erased ("[erased]") and new keys went into a file of their own, which a
 * restored keys.sqlite would then lose. Nothing is created or written before the refusal.
 */
function openKeyStore(file: string, log: SqliteEventStore): SqliteKeyStore {
  const refuse = (what: string) =>
    new Error(
      `${file} ${what}, but the event log beside it holds personal data sealed with its keys: restore keys.sqlite from the backup taken with events.sqlite (without it every customer would read as erased). The log was left as it was.`,
    );
  let size: number | null = null;
  try {
    size = statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if ((size === null || size === 0) && log.holdsSealedData())
    throw refuse(size === null ? 'is missing' : 'is empty');
  const keys = SqliteKeyStore.open(file);
  if (size !== null && size > 0 && keys.holdsNothing() && log.holdsSealedData()) {
    keys.close().catch(() => undefined);
    throw refuse('holds no key');
  }
  return keys;
}

export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  try {
    return await buildRuntime(config, options);
  } catch (err) {
    // A damaged DATA_DIR file is named (src/damaged-files.ts), not SQLite's bare "malformed".
    throw config.store === 'embedded' && !options.events ? explainDamagedFiles(err, config.dataDir) : err;
  }
}

/**
 * What a start opened, closed in reverse order when a later step of it fails (a damaged file met by
 * the catch-up, a missing keys.sqlite, a refused connection): the failed start then leaves no database
 * handle, connection, thread or timer behind, so an embedding process (tests, startService's caller)
 * does not hang on them nor keep DATA_DIR's files open. Each close is tried; the start's own error is
 * what the caller gets.
 */
async function releaseOnFailure(opened: (() => unknown)[]): Promise<void> {
  for (const close of opened.reverse()) {
    try {
      await close();
    } catch {
      // The start's error is the one to report; a close that fails on a half-opened store adds nothing.
    }
  }
}

async function buildRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const opened: (() => unknown)[] = [];
  try {
    return await openRuntime(config, options, opened);
  } catch (err) {
    await releaseOnFailure(opened);
    throw err;
  }
}

async function openRuntime(
  config: Config,
  options: RuntimeOptions,
  opened: (() => unknown)[],
): Promise<Runtime> {
  const testClock = config.testClock ? new AdjustableClock(options.clock ?? systemClock) : null;
  const clock = testClock ?? options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  const accessLog = options.logger ? accessLogVia(options.logger) : createAccessLog(config.logLevel);
  opened.push(() => {
    logger.flush?.();
    accessLog.close();
  });
  let stored = options.events;
  let docs = options.docs;
  let keys = options.keys;
  let detector: SqliteChangeDetector | null = null;
  if (config.store === 'embedded') {
    if (!stored) {
      writableDataDir(config.dataDir);
      checkLogPresent(config.dataDir);
      const file = join(config.dataDir, 'events.sqlite');
      // Every group commit is written by the log's writer thread: neither its fsync nor a wait for
      // SQLite's write lock (busy_timeout, 5 s a statement), held by a CSV import's thread, the CLI in
      // another process or a backup, holds the event loop (on the main thread, every request
      // in flight would stand still meanwhile).
      const log = await SqliteEventStore.open(file, { clock, writerThread: 'always' });
      if (options.logWriter !== 'first write') log.startWriterThread();
      stored = log;
      opened.push(() => log.close());
      const changes = new SqliteChangeDetector(file);
      detector = changes;
      opened.push(() => changes.close());
    }
    if (!options.events && !config.secretsKey)
      checkSecretsKeyFile(config.dataDir, () =>
        (stored as SqliteEventStore).holdsEventOfType('WebhookEndpointCreated'),
      );
    // A store given by a test keeps its keys in memory, unless the test gives a key store too.
    if (!keys) {
      const made = options.events
        ? new MemoryKeyStore()
        : openKeyStore(join(config.dataDir, 'keys.sqlite'), stored as SqliteEventStore);
      keys = made;
      opened.push(() => made.close());
    }
    if (!docs) {
      const made = new EmbeddedDocumentStore();
      docs = made;
      opened.push(() => made.close());
    }
  } else {
    // Loaded only when scaled out, so the embedded default never pays for the drivers.
    const { EsdbEventStore } = await import('./adapters/event-store/eventstoredb');
    const { MongoDocumentStore } = await import('./adapters/document-store/mongodb');
    const { MongoKeyStore, keysDatabaseName } = await import('./adapters/key-store/mongodb');
    if (!stored) {
      const made = await EsdbEventStore.connect(config.eventstoreUrl as string, { clock });
      stored = made;
      opened.push(() => made.close());
    }
    if (!docs) {
      const made = await MongoDocumentStore.connect(config.mongodbUrl as string, config.mongodbDb);
      docs = made;
      opened.push(() => made.close());
    }
    // As embedded: stand-in stores from a test keep their keys in memory.
    if (!keys) {
      const made = options.events
        ? new MemoryKeyStore()
        : await MongoKeyStore.connect(config.mongodbUrl as string, keysDatabaseName(config.mongodbDb));
      keys = made;
      opened.push(() => made.close());
    }
  }
  if (stored instanceof SqliteEventStore && stored.needsLegacyUpgrade) {
    const done = await upgradeLegacyLog(stored, keys, () => clock.now());
    logger.info(
      done,
      'event log upgraded: hash chain computed and personal data sealed for events written before',
    );
  }
  const events = options.unsealedForBenchmark
    ? stored
    : new SealingEventStore(stored, keys, () => clock.now());
  const aliased = new AliasedDocumentStore(docs);
  const versions = new ProjectionVersions(events, docs, aliased, { logger });
  opened.push(() => versions.stop());
  const prepared = await versions.prepare(options.projections ?? allProjectionVersions());
  const projections = new ProjectionRunner(events, docs, prepared, options.runner);
  opened.push(() => projections.stop());
  await projections.start();
  const embedded = config.store === 'embedded';
  // Without projections (the CLI's commands that read only the log) there is no one to catch up
  // for: reading the whole log for nothing cost `audit export` ~10 s of CPU on a 1M-event log.
  if (embedded && prepared.length > 0)
    await projections.catchUp(options.signal).catch((err: unknown) => {
      throw err instanceof CatchUpStopped ? err : namedReplayFailure(projections, err);
    });

  const settled = Promise.resolve();
  const noop = () => undefined;
  /** The catch-up the last look that found something asked for, while it runs. */
  let awaited: Promise<void> | null = null;
  const log = stored instanceof SqliteEventStore ? stored : null;
  const rt: Runtime = {
    config,
    clock,
    testClock,
    events,
    keys,
    docs: aliased,
    projections,
    versions,
    secrets: lazySecrets(() => loadSecretBox({ secretsKey: config.secretsKey, dataDir: config.dataDir })),
    logger,
    accessLog,
    stopping: stopController(),
    async settle(position) {
      if (position === null || position === undefined) return true;
      if (embedded) {
        await projections.catchUpTo(position);
        return true;
      }
      const ok = await projections.waitFor(position, config.readYourWritesTimeoutMs);
      if (!ok)
        logger.warn(
          { position: position.toString() },
          'read models lag behind a write beyond the configured wait',
        );
      return ok;
    },
    refresh() {
      if (!embedded) return settled;
      if (!detector || !log) return projections.catchUp().then(noop);
      // Only when the log changed since the last look, and only for commits nobody in this process is
      // applying already: another process's (the CLI's), or ours without settledByCaller. A CSV
      // import's appends are settled by the import itself, so a request does not wait for the read
      // models to take in its last slice. The look is taken when the request asks (a read of the WAL
      // index header, and of the log's head only when it moved: a few µs), so a commit made before
      // the request arrived (a key revoked by the CLI) is seen by it. Only while appends of this
      // process that nobody settles are queued or being written (asked for before this look, not yet
      // committed: the log's writer thread writes them) is the look deferred, until those are written
      // (SqliteEventStore.othersWritten(); not those asked for after it).
      const look = (): Promise<void> => {
        if (detector.changed() && log.unsettled()) {
          // Up to the head this look saw, not to wherever a catch-up chasing an import gets.
          const head = log.lookedHead;
          const caughtUp = head === null ? projections.catchUp().then(noop) : projections.catchUpTo(head);
          awaited = caughtUp;
          const done = () => {
            if (awaited === caughtUp) awaited = null;
          };
          caughtUp.then(done, done);
          return caughtUp;
        }
        // Nothing new to wait for, but a catch-up an earlier look asked for may still be applying.
        return awaited ?? settled;
      };
      if (log.othersPending) return log.othersWritten().then(look);
      try {
        return look();
      } catch (err) {
        return Promise.reject(err);
      }
    },
    async close() {
      rt.stopping.abort();
      detector?.close();
      await versions.stop();
      await projections.stop();
      await events.close();
      await keys.close();
      await docs.close();
      logger.flush?.();
      accessLog.close();
    },
  };
  return rt;
}
