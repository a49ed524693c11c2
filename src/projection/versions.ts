// Projection versions: changing a read model never stops the API.
//
// A projection that names its collections (`Projection.collections`) can be versioned. Version 1
// writes the collections under their own names; version N ≥ 2 writes `<name>_vN`. The runner holds a
// *slot* per versioned projection, under the projection's name (so its checkpoint and read-your-writes
// wait are unchanged): the slot applies the active version. When the code holds a higher version than
// the active one, that version is rebuilt from position 0 in the background by a runner of its own
// (checkpoint `<name>@vN`), in batches that yield to the event loop, logging progress (events/s, ETA).
// Once it has applied at least every event the active version has, the slot switches to it and
// queries, which read through `AliasedDocumentStore`, read its collections from that instant; the
// `projection_versions` document records the switch for other processes (scaled out, API processes
// re-read it every second). The old version keeps being applied for a grace period (readers that
// resolved the old name just before the switch, processes that have not re-read the alias yet), then
// its collections are dropped (one oplog entry each, where emptying them logged one per document). A
// reader still on an old name after the grace period reads nothing either way; one whose cursor spans
// the drop is stopped (MongoDB kills it) where it read on through a shrinking collection before: past
// 10 s of grace, a query that long is the one a restart would cut as well. The switch records the
// collections it retires in the versions document (`retired`), cleared once they are dropped and
// found empty, so a process stopped within the grace period, or an old-version write that recreated
// one after the drop (a process still on the old code), leaves them recorded: the next start that
// rebuilds (embedded, or the projector) drops them after a grace period of its own, with those of every
// version below the active one still in the code (a switch made before `retired` was recorded). A
// write landing after that check is not seen: it leaves the collection behind, unless the old version
// is still in the code at a later start.
import { renameSync, writeFileSync } from 'node:fs';
import type { Logger } from '../logger';
import type { Collection, Doc, DocumentStore } from '../ports/document-store';
import type { EventStore, RecordedEvent } from '../ports/event-store';
import type { Projection } from './projection';
import { ProjectionRunner } from './runner';

/** One document per versioned projection: which version queries read. */
export const PROJECTION_VERSIONS = 'projection_versions';
/** Embedded: the file in DATA_DIR where the server keeps status() for `projections status`. */
export const VERSIONS_STATUS_FILE = 'projection-versions.json';

export interface BuildProgress {
  version: number;
  position: string;
  head: string | null;
  events: number;
  events_per_s: number;
  eta_s: number | null;
  started_at: string;
  updated_at: string;
}

export interface VersionDoc extends Doc {
  active: number;
  /** Logical name → the collection queries read. */
  collections: Record<string, string>;
  switched_at: string | null;
  building: BuildProgress | null;
  /** Collections of replaced versions not dropped yet (absent: none, or written before it existed). */
  retired?: string[];
}

export const versionOf = (p: Projection) => p.version ?? 1;

/** The collection a version of a projection writes for a logical collection name. */
export const physicalName = (logical: string, version: number) =>
  version <= 1 ? logical : `${logical}_v${version}`;

export const isVersioned = (p: Projection) => p.collections !== undefined;

/**
 * The collections `dropAll(keep)` keeps through a renaming view: each name kept, and the collection it
 * stands for (a name is both a logical name and maybe another version's physical one: both stay).
 */
function keepAliased(keep: readonly string[] | undefined, names: ReadonlyMap<string, string>) {
  if (keep === undefined || keep.length === 0) return keep;
  const physical = keep.flatMap((k) => {
    const to = names.get(k);
    return to === undefined ? [] : [to];
  });
  return physical.length === 0 ? keep : [...new Set([...keep, ...physical])];
}

/** A DocumentStore whose collections, for the names in `names`, are other collections. */
function renamed(docs: DocumentStore, names: ReadonlyMap<string, string>): DocumentStore {
  return {
    kind: docs.kind,
    collection: <T extends Doc>(name: string): Collection<T> => docs.collection<T>(names.get(name) ?? name),
    getCheckpoint: (p) => docs.getCheckpoint(p),
    setCheckpoint: (p, pos) => docs.setCheckpoint(p, pos),
    getCheckpoints: (ps) => docs.getCheckpoints(ps),
    setCheckpoints: (entries) => docs.setCheckpoints(entries),
    dropAll: (keep) => docs.dropAll(keepAliased(keep, names)),
    dropCollections: (list) => docs.dropCollections(list.map((n) => names.get(n) ?? n)),
    close: () => docs.close(),
  };
}

/** A version of a projection writing its own collections, under the checkpoint name `<name>@vN`. */
export function scoped(p: Projection, checkpointName = `${p.name}@v${versionOf(p)}`): Projection {
  const v = versionOf(p);
  const collections = p.collections?.map((c) => physicalName(c, v));
  // Version 1 writes its collections under their own names: nothing to rename on the hot path.
  if (v <= 1)
    return {
      name: checkpointName,
      version: v,
      collections,
      eventTypes: p.eventTypes,
      setup: p.setup ? (docs) => (p.setup as NonNullable<Projection['setup']>).call(p, docs) : undefined,
      apply: (event, docs) => p.apply(event, docs),
    };
  const names = new Map((p.collections ?? []).map((c) => [c, physicalName(c, v)]));
  // The renaming view of the store last given, kept: the runner gives the same store event after
  // event, and a hot projection (reservations) should not build a view per event.
  let given: DocumentStore | null = null;
  let view: DocumentStore | null = null;
  const viewOf = (docs: DocumentStore): DocumentStore => {
    if (docs !== given || view === null) {
      given = docs;
      view = renamed(docs, names);
    }
    return view;
  };
  return {
    name: checkpointName,
    version: v,
    collections,
    eventTypes: p.eventTypes,
    setup: p.setup ? (docs) => (p.setup as NonNullable<Projection['setup']>)(viewOf(docs)) : undefined,
    apply: (event, docs) => p.apply(event, viewOf(docs)),
  };
}

/**
 * What queries read through: logical collection names resolve to the active version's collections.
 * Everything else passes through untouched.
 */
export class AliasedDocumentStore implements DocumentStore {
  private readonly aliases = new Map<string, string>();
  constructor(readonly inner: DocumentStore) {}
  get kind() {
    return this.inner.kind;
  }
  /** The MongoDB client, for code that shares the connection (the rate limiter). */
  get client(): unknown {
    return (this.inner as { client?: unknown }).client;
  }
  setAliases(collections: Record<string, string>): void {
    for (const [logical, physical] of Object.entries(collections)) this.aliases.set(logical, physical);
  }
  resolve(name: string): string {
    return this.aliases.get(name) ?? name;
  }
  collection<T extends Doc = Doc>(name: string): Collection<T> {
    return this.inner.collection<T>(this.aliases.get(name) ?? name);
  }
  getCheckpoint(projection: string) {
    return this.inner.getCheckpoint(projection);
  }
  setCheckpoint(projection: string, position: bigint) {
    return this.inner.setCheckpoint(projection, position);
  }
  getCheckpoints(projections: readonly string[]) {
    return this.inner.getCheckpoints(projections);
  }
  setCheckpoints(entries: readonly (readonly [string, bigint])[]) {
    return this.inner.setCheckpoints(entries);
  }
  dropAll(keep?: readonly string[]) {
    return this.inner.dropAll(keepAliased(keep, this.aliases));
  }
  dropCollections(names: readonly string[]) {
    return this.inner.dropCollections(names.map((n) => this.resolve(n)));
  }
  close() {
    return this.inner.close();
  }
}

/** Stands in the main runner for a versioned projection; applies whichever version is active. */
export class ProjectionSlot implements Projection {
  readonly eventTypes: readonly string[];
  readonly collections: readonly string[];
  active: Projection | null;
  activeVersion: number;
  /** The version just replaced, still applied during the grace period. */
  retiring: Projection | null = null;
  /** Highest position handed to this slot in this process. */
  lastApplied: bigint | null = null;
  constructor(
    readonly name: string,
    versions: readonly Projection[],
    activeVersion: number,
  ) {
    this.eventTypes = [...new Set(versions.flatMap((v) => v.eventTypes))];
    this.collections = [...new Set(versions.flatMap((v) => v.collections ?? []))];
    const code = versions.find((v) => versionOf(v) === activeVersion);
    this.active = code ? scoped(code) : null;
    this.activeVersion = activeVersion;
  }
  get version() {
    return this.activeVersion;
  }
  async setup(docs: DocumentStore) {
    await this.active?.setup?.(docs);
  }
  async apply(event: RecordedEvent, docs: DocumentStore) {
    if (this.lastApplied === null || event.position > this.lastApplied) this.lastApplied = event.position;
    const active = this.active;
    const retiring = this.retiring;
    if (active?.eventTypes.includes(event.type)) await active.apply(event, docs);
    if (retiring?.eventTypes.includes(event.type)) await retiring.apply(event, docs);
  }
}

export interface VersionsOptions {
  logger: Logger;
  /** How long the replaced version is still applied after a switch (default 5 s embedded, 10 s scaled). */
  graceMs?: number;
  /** Events per batch of a background rebuild, between two yields to the event loop (default 250). */
  batchSize?: number;
  /** Embedded: where the server writes the versions' status for `projections status` (another process). */
  statusFile?: string | null;
  /** Minimum time between two progress lines (default 2 s). */
  progressEveryMs?: number;
}

export interface ProjectionStatus {
  name: string;
  active: number;
  versions: number[];
  collections: Record<string, string>;
  switched_at: string | null;
  building: BuildProgress | null;
}

interface Build {
  name: string;
  version: number;
  runner: ProjectionRunner;
  done: Promise<void>;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Every versioned projection of the process: their slots (given to the main runner), the alias that
 * queries read through, and the background rebuilds.
 */
export class ProjectionVersions {
  readonly slots = new Map<string, ProjectionSlot>();
  private readonly code = new Map<string, Projection[]>();
  private readonly state = new Map<string, VersionDoc>();
  private readonly builds = new Map<string, Build>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly retirements = new Set<Promise<void>>();
  private readonly cancels = new Map<NodeJS.Timeout, () => void>();
  private stopped = false;
  private refreshTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly events: EventStore,
    /** The raw store: projections write physical names. */
    private readonly docs: DocumentStore,
    readonly aliased: AliasedDocumentStore,
    private readonly options: VersionsOptions,
  ) {}

  /**
   * Splits `projections` into plain ones and versioned ones (grouped by name), reads which version
   * of each is active, and returns what the main runner runs: plain projections and one slot per
   * versioned name. A versioned projection seen for the first time on a store that has its
   * checkpoint was built before versions existed: its active version is 1. On an empty store the
   * highest version is active at once (there is nothing to serve meanwhile).
   */
  async prepare(projections: readonly Projection[]): Promise<Projection[]> {
    const out: Projection[] = [];
    for (const p of projections) {
      if (!isVersioned(p)) {
        out.push(p);
        continue;
      }
      const list = this.code.get(p.name);
      if (list) {
        if (list.some((q) => versionOf(q) === versionOf(p)))
          throw new Error(`projection ${p.name} version ${versionOf(p)} is listed twice`);
        list.push(p);
        continue;
      }
      this.code.set(p.name, [p]);
      out.push(p); // replaced by its slot below, in the same place
    }
    const versions = this.docs.collection<VersionDoc>(PROJECTION_VERSIONS);
    for (const [name, list] of this.code) {
      const target = Math.max(...list.map(versionOf));
      let doc = await versions.findOne({ _id: name });
      if (!doc) {
        const built = (await this.docs.getCheckpoint(name)) !== null;
        const active = built ? Math.min(...list.map(versionOf), 1) : target;
        doc = this.docFor(name, active, list);
        await versions.replaceOne({ _id: name }, doc, { upsert: true });
      }
      this.state.set(name, doc);
      this.aliased.setAliases(doc.collections);
      const slot = new ProjectionSlot(name, list, doc.active);
      if (!slot.active)
        this.options.logger.warn(
          { projection: name, active: doc.active },
          'the active version of this projection is no longer in the code: its read model stays as it is until a newer version takes over',
        );
      this.slots.set(name, slot);
      out[out.findIndex((p) => p.name === name)] = slot;
    }
    return out;
  }

  private docFor(name: string, version: number, list: readonly Projection[]): VersionDoc {
    const collections: Record<string, string> = {};
    for (const c of new Set(list.flatMap((p) => p.collections ?? [])))
      collections[c] = physicalName(c, version);
    return { _id: name, active: version, collections, switched_at: null, building: null };
  }

  /** Starts a background rebuild of every projection whose code holds a version above the active one. */
  startPendingBuilds(): void {
    for (const [name, list] of this.code) {
      const target = Math.max(...list.map(versionOf));
      const doc = this.state.get(name);
      const active = doc?.active ?? target;
      if (doc) {
        const serving = new Set(Object.values(doc.collections));
        const left = new Set(doc.retired ?? []);
        for (const p of list)
          if (versionOf(p) < active)
            for (const c of p.collections ?? []) left.add(physicalName(c, versionOf(p)));
        const leftovers = [...left].filter((c) => !serving.has(c));
        if (leftovers.length > 0) this.retireLater(name, doc, leftovers, active);
      }
      if (target > active) this.startBuild(name, list.find((p) => versionOf(p) === target) as Projection);
    }
    this.writeStatusFile();
  }

  /** Settles once every retirement scheduled so far has dropped its collections (or failed: logged). */
  async whenRetired(): Promise<void> {
    while (this.retirements.size > 0) await Promise.all([...this.retirements]);
  }

  /**
   * After the grace period, drops `collections` (a replaced version's) and clears `retired` in the
   * versions document if it is still `doc` (a later switch records its own, ours among them).
   */
  private retireLater(name: string, doc: VersionDoc, collections: readonly string[], version: number): void {
    const grace = this.options.graceMs ?? (this.docs.kind === 'embedded' ? 5_000 : 10_000);
    const log = this.options.logger;
    let release!: () => void;
    const settled = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.retirements.add(settled);
    const done = () => {
      this.retirements.delete(settled);
      release();
    };
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.cancels.delete(timer);
      void (async () => {
        await this.docs.dropCollections(collections);
        // Written again since the drop (an apply of the old version still in flight, a process on
        // the old code): still recorded, so the next start drops them again. An empty one is no
        // leftover; one written after this look is missed (the file's header).
        const rewritten: string[] = [];
        for (const c of collections)
          if ((await this.docs.collection(c).findOne({})) !== null) rewritten.push(c);
        if (rewritten.length > 0) {
          log.warn(
            { projection: name, active: version, collections: rewritten },
            'a previous projection version was written again after its drop: dropped at the next start',
          );
          return;
        }
        if (this.state.get(name) === doc) {
          doc.retired = [];
          await this.docs
            .collection<VersionDoc>(PROJECTION_VERSIONS)
            .updateOne({ _id: name, active: doc.active }, { $set: { retired: [] } });
        }
        log.info({ projection: name, active: version, collections }, 'previous projection version removed');
      })()
        .catch((err: unknown) =>
          log.warn(
            { projection: name, err: { message: (err as Error).message } },
            'could not drop the previous version: dropped at the next start',
          ),
        )
        .finally(done);
    }, grace);
    timer.unref();
    this.timers.add(timer);
    // stop() clears the timer: what it would have dropped stays recorded for the next start.
    this.cancels.set(timer, done);
  }

  /**
   * Adds a new version of a versioned projection to a running process and rebuilds it in the
   * background. Its event types must be among those the slot already receives (a version that
   * needs new event types is deployed by a restart). Resolves when it has taken over.
   */
  async deploy(p: Projection): Promise<void> {
    const slot = this.slots.get(p.name);
    if (!slot || !isVersioned(p)) throw new Error(`${p.name} is not a versioned projection of this process`);
    const missing = p.eventTypes.filter((t) => !slot.eventTypes.includes(t));
    if (missing.length)
      throw new Error(
        `version ${versionOf(p)} of ${p.name} needs a restart: new event types ${missing.join(', ')}`,
      );
    if (versionOf(p) <= slot.activeVersion)
      throw new Error(
        `${p.name} version ${versionOf(p)} is not above the active version ${slot.activeVersion}`,
      );
    const list = this.code.get(p.name) as Projection[];
    if (!list.some((q) => versionOf(q) === versionOf(p))) list.push(p);
    await this.startBuild(p.name, p).done;
  }

  /** Settles when the running build of `name` (if any) has taken over or failed. */
  async whenBuilt(name: string): Promise<void> {
    await this.builds.get(name)?.done;
  }

  private startBuild(name: string, p: Projection): Build {
    const existing = this.builds.get(name);
    if (existing && existing.version >= versionOf(p)) return existing;
    const version = versionOf(p);
    const log = this.options.logger;
    const progressEvery = this.options.progressEveryMs ?? 2000;
    const started = Date.now();
    let lastLog = { at: started, events: 0, position: 0n };
    let applied = 0;
    let head: bigint | null = null;
    const onProgress = (n: number, position: bigint) => {
      applied = n;
      const now = Date.now();
      if (now - lastLog.at < progressEvery) return;
      const seconds = (now - lastLog.at) / 1000;
      const rate = (n - lastLog.events) / seconds;
      const positionRate = Number(position - lastLog.position) / seconds;
      const left = head !== null && head > position ? Number(head - position) : 0;
      const progress: BuildProgress = {
        version,
        position: position.toString(),
        head: head?.toString() ?? null,
        events: n,
        events_per_s: Math.round(rate),
        eta_s: positionRate > 0 ? Math.round(left / positionRate) : null,
        started_at: new Date(started).toISOString(),
        updated_at: new Date(now).toISOString(),
      };
      lastLog = { at: now, events: n, position };
      log.info({ projection: name, ...progress }, 'projection rebuild progress');
      this.recordProgress(name, progress);
    };
    const runner = new ProjectionRunner(this.events, this.docs, [scoped(p)], {
      batchSize: this.options.batchSize ?? 250,
      onProgress,
      afterBatch: async () => {
        if (this.stopped) throw new BuildStopped();
        // Refresh the head for the ETA now and then (a cheap read).
        if (applied % 20_000 < (this.options.batchSize ?? 250)) head = await this.events.headPosition();
        await nextTurn();
      },
    });
    const build: Build = {
      name,
      version,
      runner,
      done: (async () => {
        head = await this.events.headPosition();
        log.info({ projection: name, version, head: head?.toString() ?? null }, 'projection rebuild started');
        this.recordProgress(name, {
          version,
          position: '0',
          head: head?.toString() ?? null,
          events: 0,
          events_per_s: 0,
          eta_s: null,
          started_at: new Date(started).toISOString(),
          updated_at: new Date(started).toISOString(),
        });
        await runner.start();
        for (;;) {
          await runner.catchUp();
          if (this.stopped) throw new BuildStopped();
          if (await this.caughtUp(name, runner)) break;
          await nextTurn();
        }
        await this.switchTo(name, p, runner, Date.now() - started, applied);
      })(),
    };
    build.done.catch((err: unknown) => {
      if (err instanceof BuildStopped) return;
      log.error(
        { projection: name, version, err: { message: (err as Error).message } },
        'projection rebuild failed',
      );
    });
    build.done
      .finally(() => {
        if (this.builds.get(name) === build) this.builds.delete(name);
      })
      .catch(() => undefined);
    this.builds.set(name, build);
    return build;
  }

  /** The new version has applied every event the active one has (in this process, and as stored). */
  private async caughtUp(name: string, build: ProjectionRunner): Promise<boolean> {
    const slot = this.slots.get(name) as ProjectionSlot;
    const built = build.position;
    if (built === null) return (await this.events.headPosition()) === null;
    const stored = await this.docs.getCheckpoint(name);
    const live =
      slot.lastApplied !== null && (stored === null || slot.lastApplied > stored) ? slot.lastApplied : stored;
    return live === null || built >= live;
  }

  /**
   * The switch. Synchronous up to the alias: no event can reach the slot between the check that the
   * new version is caught up and the slot applying it instead.
   */
  private async switchTo(
    name: string,
    p: Projection,
    build: ProjectionRunner,
    ms: number,
    events: number,
  ): Promise<void> {
    const slot = this.slots.get(name) as ProjectionSlot;
    // Re-check synchronously against what this process applied since the last await.
    if (slot.lastApplied !== null && build.position !== null && build.position < slot.lastApplied) {
      await build.catchUp();
      return this.switchTo(name, p, build, ms, events);
    }
    const previous = slot.active;
    const previousVersion = slot.activeVersion;
    const version = versionOf(p);
    slot.retiring = previous;
    slot.active = scoped(p);
    slot.activeVersion = version;
    const serving = new Set(Object.values(this.docFor(name, version, [p]).collections));
    const retired = [
      ...new Set([...(this.state.get(name)?.retired ?? []), ...(previous?.collections ?? [])]),
    ].filter((c) => !serving.has(c));
    const doc: VersionDoc = {
      ...this.docFor(name, version, [p]),
      switched_at: new Date().toISOString(),
      building: null,
      retired,
    };
    this.aliased.setAliases(doc.collections);
    this.state.set(name, doc);
    await this.docs
      .collection<VersionDoc>(PROJECTION_VERSIONS)
      .replaceOne({ _id: name }, doc, { upsert: true });
    this.writeStatusFile();
    this.options.logger.info(
      {
        projection: name,
        from: previousVersion,
        to: version,
        position: build.position?.toString() ?? null,
        events,
        seconds: Math.round(ms / 100) / 10,
      },
      'projection version switched',
    );
    // The old version is still applied during the grace period, then retired: this timer is made
    // first, with the same delay, so it fires first (Node runs equal timeouts in order) and no write
    // of the old version makes a dropped collection again.
    const grace = this.options.graceMs ?? (this.docs.kind === 'embedded' ? 5_000 : 10_000);
    const stopApplying = setTimeout(() => {
      this.timers.delete(stopApplying);
      if (slot.retiring === previous) slot.retiring = null;
    }, grace);
    stopApplying.unref();
    this.timers.add(stopApplying);
    if (retired.length > 0) this.retireLater(name, doc, retired, version);
  }

  private recordProgress(name: string, progress: BuildProgress): void {
    const doc = this.state.get(name);
    if (!doc) return;
    doc.building = progress;
    void this.docs
      .collection<VersionDoc>(PROJECTION_VERSIONS)
      .updateOne({ _id: name }, { $set: { building: progress } })
      .catch(() => undefined);
    this.writeStatusFile();
  }

  /** The version queries read of a versioned projection (null for a name not versioned here). */
  activeVersion(name: string): number | null {
    return this.state.get(name)?.active ?? null;
  }

  /** What `projections status` prints: every versioned projection of this process. */
  status(): ProjectionStatus[] {
    return [...this.code].map(([name, list]) => {
      const doc = this.state.get(name);
      return {
        name,
        active: doc?.active ?? Math.max(...list.map(versionOf)),
        versions: list.map(versionOf).sort((a, b) => a - b),
        collections: doc?.collections ?? {},
        switched_at: doc?.switched_at ?? null,
        building: doc?.building ?? null,
      };
    });
  }

  /** Embedded server: keep `file` up to date with status() for `projections status` run beside it. */
  reportTo(file: string): void {
    this.options.statusFile = file;
    this.writeStatusFile();
  }

  private writeStatusFile(stoppedAt?: string): void {
    const file = this.options.statusFile;
    if (!file) return;
    try {
      // Written beside it and renamed over it: the CLI reading it meanwhile (or after a kill, or a full
      // disk, mid-write) sees the whole previous report or the whole new one, never a cut one.
      const temporary = `${file}.tmp`;
      writeFileSync(
        temporary,
        `${JSON.stringify({ written_at: new Date().toISOString(), pid: process.pid, stopped_at: stoppedAt, projections: this.status() })}\n`,
      );
      renameSync(temporary, file);
    } catch {
      // Status for the CLI only: never let it fail the service.
    }
  }

  /**
   * Scaled out, processes that do not rebuild (API processes) follow switches made by the projector:
   * they re-read the versions every `everyMs` and point queries at the active collections.
   */
  followSwitches(everyMs = 1000): void {
    if (this.refreshTimer) return;
    const tick = async () => {
      const docs = await this.docs.collection<VersionDoc>(PROJECTION_VERSIONS).find({});
      for (const doc of docs) {
        if (!this.code.has(doc._id)) continue;
        this.state.set(doc._id, doc);
        this.aliased.setAliases(doc.collections);
      }
    };
    this.refreshTimer = setInterval(() => {
      tick().catch(() => undefined);
    }, everyMs);
    this.refreshTimer.unref();
  }

  /** Writes the versions document of every versioned projection again (after `read-models rebuild` dropped them). */
  async writeAll(): Promise<void> {
    for (const [name, doc] of this.state)
      await this.docs
        .collection<VersionDoc>(PROJECTION_VERSIONS)
        .replaceOne({ _id: name }, { ...doc, building: null }, { upsert: true });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const cancel of this.cancels.values()) cancel();
    this.cancels.clear();
    await Promise.all([...this.builds.values()].map((b) => b.done.catch(() => undefined)));
    // The CLI then says the report is the stopped server's last, not what runs now.
    this.writeStatusFile(new Date().toISOString());
  }
}

class BuildStopped extends Error {
  override name = 'BuildStopped';
}
