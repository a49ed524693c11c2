// Feeds projections from the log, at least once, each with its own checkpoint.
// Embedded: catchUp() runs inline after every write and before every read (read your writes, and
// writes by other processes on the same SQLite file). Scaled: the projector role runs follow(); API
// processes call waitFor(position) after a write.
import type { DocumentStore } from '../ports/document-store';
import type { EventStore, RecordedEvent } from '../ports/event-store';
import { capHeapGrowth, DEFAULT_HEAP_HEADROOM_BYTES } from './heap-growth';
import { internStrings } from './intern';
import type { Projection } from './projection';
import { WriteBackStore } from './write-back';

export interface RunnerOptions {
  batchSize?: number;
  onProgress?: (applied: number, position: bigint) => void;
  /**
   * Awaited after each batch of a catch-up is committed. A background rebuild passes a macrotask
   * yield here, so an embedded catch-up (all of whose awaits are microtasks) lets requests run.
   */
  afterBatch?: () => Promise<void>;
  /**
   * Apply each batch of a catch-up through a write-back cache (src/projection/write-back.ts) and
   * write the documents it touched once, at the batch's commit. Default: on for the embedded store
   * (in memory, rebuilt at start), off for a durable one (MongoDB), where the batch's writes would
   * not land atomically with its checkpoints.
   */
  writeBack?: boolean;
  /**
   * Time slicing: a catch-up that has held the event loop this long (ms) yields to the macrotask
   * queue (setImmediate) before its next event, so requests, timers and I/O run in between; its
   * outcome is the same. Through the write-back cache a slice's end also commits the batch so far
   * (a commit then holds the loop for one slice's writes, not a batch's). Default: 4 for the
   * embedded store (all of whose awaits are microtasks, so a large catch-up held the loop for tens
   * of ms), 0 (never) for a durable one, whose awaits are real I/O.
   */
  sliceMs?: number;
  /**
   * While a catch-up through the write-back cache runs past its first batch (a replay of a backlog:
   * an embedded start, a rebuild), the heap may grow by at most this percent per full collection
   * (src/projection/heap-growth.ts): a peak RSS near the read models' own size, for more
   * collection work on the other core. Default 35 (on the idle machine, 1,000,000 events: 20 cost
   * 40 % more wall time for 5 % less peak; docs/BENCHMARKS.md); 0 leaves V8's heuristic (growth up to 4×).
   */
  heapGrowthPercent?: number;
  /**
   * With heapGrowthPercent: the growth allowed after a full collection is also at most this many
   * bytes above what it left live (src/projection/heap-growth.ts). Default 64 MiB; 0: the percent alone.
   */
  heapHeadroomBytes?: number;
}

/** Where a projection of this runner last failed to apply an event (the projector reports it). */
export interface ApplyFailure {
  projection: string;
  event: RecordedEvent;
  error: unknown;
}

/**
 * The projector stopped following for good: a write MongoDB refuses whatever the retry (a document
 * too large, failing validation). Kept for /healthz and recorded for `projections status`.
 */
export type ProjectorHalt = {
  projection: string | null;
  event_type: string | null;
  event_id: string | null;
  position: string | null;
  error: string;
  at: string;
};

/** A catch-up cut short by stop(): the read models are behind the log (the events applied are committed). */
export class CatchUpStopped extends Error {
  override name = 'CatchUpStopped';
  constructor(readonly applied: number) {
    super(`catch-up stopped after ${applied} event(s): the read models are behind the log`);
  }
}

const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/** RunnerOptions.heapGrowthPercent's default. */
export const DEFAULT_HEAP_GROWTH_PERCENT = 35;

/** Embedded catch-ups yield after this many ms of work (RunnerOptions.sliceMs). */
export const CATCH_UP_SLICE_MS = 4;

export class ProjectionRunner {
  private checkpoints = new Map<string, bigint | null>();
  private readonly byType = new Map<string, Projection[]>();
  private chain: Promise<unknown> = Promise.resolve();
  /** A catch-up asked for and not started yet: later callers share it (it starts after them too). */
  private queued: Promise<number> | null = null;
  /** Callers of catchUpTo, each released by the first commit that covers its position. */
  private readonly reaching = new Set<{ target: bigint; release: () => void }>();
  private started = false;
  /** The projections' names, in order: the checkpoints read and written together. */
  private readonly names: readonly string[];
  private stopped = false;
  private changes = 0;
  private yields = 0;
  /** The projection applying the current event (null between events): names the one that failed. */
  private applying: Projection | null = null;
  private failed: ApplyFailure | null = null;
  /** Set by the projector (src/projection/follow.ts) when it stops on a permanent refusal. */
  halted: ProjectorHalt | null = null;

  constructor(
    private readonly events: EventStore,
    readonly docs: DocumentStore,
    readonly projections: readonly Projection[],
    private readonly options: RunnerOptions = {},
  ) {
    const names = new Set<string>();
    for (const p of projections) {
      if (names.has(p.name)) throw new Error(`two projections are named ${p.name}`);
      names.add(p.name);
      for (const t of p.eventTypes) {
        const list = this.byType.get(t) ?? [];
        list.push(p);
        this.byType.set(t, list);
      }
    }
    this.names = [...names];
  }

  /** Creates indexes and loads checkpoints (all of them in one read of the store). */
  async start(): Promise<void> {
    if (this.started) return;
    for (const p of this.projections) await p.setup?.(this.docs);
    const stored = await this.docs.getCheckpoints(this.names);
    for (const name of this.names) this.checkpoints.set(name, stored.get(name) ?? null);
    this.started = true;
  }

  /**
   * Bumped before and after every event a projection applies in this process: a value remembered from before a
   * read is unchanged only if no read model of this process changed since (caches of read models).
   */
  get changeCount(): number {
    return this.changes;
  }

  /** The last failure of a projection's apply (the projection, the event, the error), or null. */
  get lastFailure(): ApplyFailure | null {
    return this.failed;
  }

  /** Notes which projection failed on which event, then the caller rethrows the error unchanged. */
  private noteFailure(event: RecordedEvent | null, error: unknown): void {
    if (this.applying !== null && event !== null)
      this.failed = { projection: this.applying.name, event, error };
    this.applying = null;
  }

  /** How many times catch-ups yielded to the event loop mid-way (tests, diagnostics). */
  get slicesYielded(): number {
    return this.yields;
  }

  /** The lowest checkpoint: every projection has applied the log up to here. */
  get position(): bigint | null {
    let min: bigint | null | undefined;
    for (const p of this.projections) {
      const c = this.checkpoints.get(p.name) ?? null;
      if (min === undefined || c === null || (min !== null && c < min)) min = c;
      if (min === null) return null;
    }
    return min ?? null;
  }

  /**
   * Applies everything in the log after the checkpoints. Calls are serialised; a call made while
   * another call's catch-up waits for its turn shares that one (it starts after both calls), and its
   * `signal` is then not looked at. `signal` aborted, or stop(): the catch-up ends at its next event
   * with CatchUpStopped.
   */
  catchUp(signal?: AbortSignal): Promise<number> {
    if (this.queued !== null) return this.queued;
    const run = this.chain.then(() => {
      this.queued = null;
      return this.catchUpNow(signal);
    });
    this.queued = run;
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Read-your-writes: settles once every projection has applied the log up to `target` (a catch-up
   * started if needed), without waiting for the rest of a catch-up that goes on past it. A catch-up
   * reads the log to its end, and while a CSV import appends it keeps finding more: a request that
   * needed one event waited for the import's next slices too.
   */
  catchUpTo(target: bigint): Promise<void> {
    const at = this.position;
    if (at !== null && at >= target) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = { target, release: () => resolve() };
      this.reaching.add(waiter);
      // The catch-up's end settles it in any case: a target past the log's end, or an error.
      this.catchUp().then(
        () => {
          this.reaching.delete(waiter);
          resolve();
        },
        (err: unknown) => {
          this.reaching.delete(waiter);
          reject(err);
        },
      );
    });
  }

  private async catchUpNow(signal?: AbortSignal): Promise<number> {
    const heap: { release?: () => void } = {};
    try {
      return await this.replay(heap, signal);
    } finally {
      heap.release?.();
    }
  }

  private async replay(heap: { release?: () => void }, signal?: AbortSignal): Promise<number> {
    if (!this.started) await this.start();
    const from = this.position;
    // Above the highest checkpoint no projection can have seen the event: handlers are called
    // directly, without applyEvent's per-projection check (and its extra promise) on every event.
    let highest: bigint | null = null;
    for (const c of this.checkpoints.values())
      if (c !== null && (highest === null || c > highest)) highest = c;
    const batchSize = this.options.batchSize ?? 1000;
    const cache =
      (this.options.writeBack ?? this.docs.kind === 'embedded') ? new WriteBackStore(this.docs) : null;
    const docs = cache ?? this.docs;
    const sliceMs = this.options.sliceMs ?? (this.docs.kind === 'embedded' ? CATCH_UP_SLICE_MS : 0);
    let sliceStart = performance.now();
    let applied = 0;
    let batchLast: bigint | null = null;
    let inBatch = 0;
    let uncommitted = false;
    let current: RecordedEvent | null = null;
    let cut = false;
    try {
      for await (const event of this.events.readAll({ after: from, batchSize })) {
        // Stopped (a SIGTERM while an embedded start replays the log): the rest is left to the next
        // catch-up, from the checkpoints committed below, instead of holding the stop for the replay.
        if (this.stopped || signal?.aborted) {
          cut = true;
          break;
        }
        current = event;
        const handlers = this.byType.get(event.type);
        if (handlers !== undefined) {
          // Read models kept in this process share one copy of each repeated string (intern.ts).
          if (cache !== null) internStrings(event.data as Record<string, unknown>);
          this.changes++;
          if (highest !== null && event.position <= highest) await this.applyEvent(event, docs);
          else
            for (const p of handlers) {
              this.applying = p;
              await p.apply(event, docs);
            }
          this.applying = null;
          // Again once applied: a read taken mid-apply (an awaiting projection) must not stay valid.
          this.changes++;
        }
        applied++;
        batchLast = event.position;
        uncommitted = true;
        if (++inBatch >= batchSize) {
          // A backlog, not a read-your-writes catch-up: the heap's growth held down until the end.
          if (cache !== null && heap.release === undefined)
            heap.release = capHeapGrowth(
              this.options.heapGrowthPercent ?? DEFAULT_HEAP_GROWTH_PERCENT,
              this.options.heapHeadroomBytes ?? DEFAULT_HEAP_HEADROOM_BYTES,
            );
          await this.commit(batchLast, cache);
          uncommitted = false;
          this.options.onProgress?.(applied, batchLast);
          inBatch = 0;
          if (this.options.afterBatch) await this.options.afterBatch();
        }
        // A slice used up: let the event loop run. Through the cache the batch is committed first, so
        // that a commit holds the loop for what one slice applied, never for a whole batch's writes
        // (a CSV import's catch-up of ~1,000 customers held it ~40 ms in one flush); readers meanwhile
        // see the read models as of the last event applied. Without the cache each write is in already.
        if (sliceMs > 0 && performance.now() - sliceStart >= sliceMs) {
          // The batch goes on (its count, the heap's cap and afterBatch are a batch's, not a slice's).
          if (cache !== null && uncommitted && batchLast !== null) {
            await this.commit(batchLast, cache);
            uncommitted = false;
          }
          this.yields++;
          await nextMacrotask();
          sliceStart = performance.now();
        }
      }
    } catch (err) {
      this.noteFailure(current, err);
      throw err;
    }
    if (batchLast !== null && (uncommitted || !cut)) {
      await this.commit(batchLast, cache);
      this.options.onProgress?.(applied, batchLast);
    }
    if (cut) throw new CatchUpStopped(applied);
    return applied;
  }

  private async applyEvent(event: RecordedEvent, docs: DocumentStore = this.docs): Promise<void> {
    const handlers = this.byType.get(event.type);
    if (!handlers) return;
    for (const p of handlers) {
      const c = this.checkpoints.get(p.name) ?? null;
      if (c !== null && event.position <= c) continue;
      this.applying = p;
      await p.apply(event, docs);
    }
    this.applying = null;
  }

  /**
   * The batch's documents (when cached), then the checkpoints: never a checkpoint ahead of its writes.
   * Every projection behind `position` moves to it in one write of the store (setCheckpoints: one
   * round trip on MongoDB, not one per projection). Called only once every write of the events up to
   * `position` is acknowledged, so whichever part of a failed setCheckpoints lands is safe; after a
   * failure this process's checkpoints stay where they were (behind the store's at worst: a replay).
   */
  private async commit(position: bigint, cache: WriteBackStore | null = null): Promise<void> {
    if (cache !== null) {
      // The read models change here: readers' remembered change counts must not stay valid.
      this.changes++;
      await cache.flush();
      cache.clear();
      this.changes++;
    }
    const behind: [string, bigint][] = [];
    for (const name of this.names) {
      const c = this.checkpoints.get(name) ?? null;
      if (c === null || c < position) behind.push([name, position]);
    }
    if (behind.length > 0) {
      await this.docs.setCheckpoints(behind);
      for (const [name] of behind) this.checkpoints.set(name, position);
    }
    for (const waiter of this.reaching)
      if (waiter.target <= position) {
        this.reaching.delete(waiter);
        waiter.release();
      }
  }

  /**
   * Projector role: follow the log live until stop(). A failing projection stops the loop with the
   * error (after a bounded retry), so it is visible instead of silently skipping events.
   *
   * Checkpoints are committed by a loop beside the events', one commit in flight at a time: an event
   * applied with no commit in flight starts one at once (a lone event's checkpoint is written right
   * after its writes, as before), and the events applied while a commit is in flight (those the
   * subscription had buffered, or that came meanwhile) are covered together by the next commit, at
   * the last of them. So under load the projector pays one checkpoint round trip per commit's round
   * trip of events, not one per event. A commit only ever names an event whose writes are all
   * acknowledged (never a checkpoint ahead of its writes); the next event's writes may be in flight
   * meanwhile. A stop, an apply's failure or a commit's failure lets the commit in flight end (a stop
   * commits every event applied) before follow() returns or rejects; stop() waits for it too.
   */
  async follow(): Promise<void> {
    try {
      await this.catchUp();
    } catch (err) {
      // Stopped during the catch-up: nothing to follow.
      if (err instanceof CatchUpStopped) return;
      throw err;
    }
    const sub = this.events.subscribe({ after: this.position });
    this.stopFollowing = () => sub.close();
    // What stop() waits for: the live part (a stop during the catch-up does not wait for its end).
    const live = this.followLive(sub);
    this.following = live;
    return live;
  }

  private async followLive(sub: ReturnType<EventStore['subscribe']>): Promise<void> {
    // Stopped during the catch-up: nothing to wait for (the log may stay quiet).
    if (this.stopped) await sub.close();
    /** The last event applied and not yet handed to a commit, or null. */
    let toCommit: bigint | null = null;
    let committing: Promise<void> | null = null;
    let commitFailure: { error: unknown } | null = null;
    const commitLoop = async () => {
      try {
        while (toCommit !== null && commitFailure === null) {
          const position = toCommit;
          toCommit = null;
          await this.commit(position);
        }
      } catch (error) {
        commitFailure = { error };
        // Ends the iteration, which may be waiting for the next event for as long as the log is quiet.
        await sub.close().catch(() => undefined);
      } finally {
        committing = null;
      }
    };
    try {
      for await (const event of sub) {
        if (this.stopped || commitFailure !== null) break;
        this.changes++;
        try {
          await this.applyEvent(event);
        } catch (err) {
          this.noteFailure(event, err);
          throw err;
        }
        this.changes++;
        toCommit = event.position;
        committing ??= commitLoop();
      }
    } finally {
      while (committing !== null) await committing;
    }
    if (commitFailure !== null) throw (commitFailure as { error: unknown }).error;
  }

  private stopFollowing: (() => Promise<void>) | null = null;
  /** follow()'s run, if any: stop() waits for it, its last commit included (the store closes after). */
  private following: Promise<void> | null = null;

  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * A catch-up running stops at its next event (CatchUpStopped, what it applied committed), as does
   * any catch-up asked for after; resolves once it has.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.stopFollowing?.();
    // The commit in flight (and the one of the events applied meanwhile) ends before the caller closes
    // the store: follow()'s own failure, if any, is its caller's to report.
    await this.following?.catch(() => undefined);
    await this.chain.catch(() => undefined);
  }

  /**
   * Waits until every projection has passed `position` (read your writes, scaled out), reading the
   * checkpoints the projector stores (all of them in one read a poll). Resolves false after `timeoutMs`.
   */
  async waitFor(position: bigint, timeoutMs: number, pollMs = 10): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let behind = false;
      // Every checkpoint in one read of the store (one round trip a poll on MongoDB).
      const stored = await this.docs.getCheckpoints(this.names);
      for (const name of this.names) {
        const c = stored.get(name) ?? null;
        this.checkpoints.set(name, c);
        if (c === null || c < position) behind = true;
      }
      if (!behind) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}
