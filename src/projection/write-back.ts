// The write-back cache a catch-up applies a batch of events through (src/projection/runner.ts).
//
// Projections read and write documents by _id through it: those documents live here, as plain
// objects, for the batch; each document a batch touched is written to the store once, when the
// batch is committed (before its checkpoints). A day's figures or a restaurant's feed, changed by
// hundreds of events of a batch, is validated, indexed and stored once instead of hundreds of
// times, and nothing is copied on the way: a document read is the cached one (or, on the embedded
// store, the stored one), a document written is kept as given when it holds plain JSON.
//
// The rules that make sharing safe (docs/CONTRIBUTING.md, "Read side"):
// - A projection never changes a document it read, nor one after writing it: it builds a new
//   object (spread, copy) and writes that. With COUVERT_STRICT_PROJECTIONS=1 (the test runner sets
//   it) every document handed out or written is deep-frozen, so a change throws in the tests.
// - The cache changes a document in place only when it owns it (a copy it made); a document
//   anybody else may hold is copied first (copy on write).
// Operations it cannot answer from the batch (a filter not on _id, updateMany, find, count…)
// first write the collection's pending documents to the store, then run on the store: they see
// every earlier write of the batch, as they would without the cache.
//
// Only for stores that lose their read models with the process (the embedded store: rebuilt from
// the log at start). A durable store (MongoDB) would need the batch's writes to land atomically with
// its checkpoints: a crash between two of them could leave a document a projection uses as its
// "already applied" mark (analytics facts, customer rows) written and another one it gates not,
// which per-event writes in apply order never do. The runner does not use it there.

import { guardPosition } from '../adapters/document-store/embedded-collection';
import { compileMatcher, upsertSeedSteps } from '../adapters/document-store/filter';
import { applyUpdate } from '../adapters/document-store/update';
import {
  type ParsedUpdate,
  parseUpdate,
  type UpdateStep,
  upsertIdFromFilter,
  validateDocument,
  validateFilter,
} from '../adapters/document-store/validate';
import { cloneValue, isStorableOver, sameValue } from '../adapters/document-store/values';
import {
  type Collection,
  type Doc,
  type DocumentStore,
  DuplicateKeyError,
  type Filter,
  type FindOptions,
  type IndexSpec,
  InvalidQueryError,
  type Update,
  type UpdateResult,
} from '../ports/document-store';

/** A collection that can lend its stored documents and take documents over (the embedded one). */
interface TrustedCollection {
  peek(id: string): Doc | undefined;
  writeBack(changes: Iterable<readonly [string, Doc | null]>): void;
}

const isTrusted = (c: unknown): c is TrustedCollection =>
  typeof (c as TrustedCollection).peek === 'function' &&
  typeof (c as TrustedCollection).writeBack === 'function';

interface Entry {
  /** null: known absent (never stored, or deleted in this batch). */
  doc: Doc | null;
  /** The cache made this object, all of it, and nobody else holds it: it may be changed in place. */
  owned: boolean;
  /**
   * Otherwise, the objects of `doc` the cache copied (copyAlong) since it was last shared: those
   * may be changed in place; every other object of it is shared.
   */
  mine: Set<object> | null;
  /** A caller was given this document (findOne) or gave it (replaceOne) in this batch. */
  shared: boolean;
  dirty: boolean;
}

export interface WriteBackOptions {
  /** Deep-freeze every document handed out or written (tests): a projection changing one throws. */
  strict?: boolean;
}

/**
 * A collection of the write-back cache: besides the port, a document the caller may change in place
 * for the rest of the batch (see WriteBackCollection.ownOne).
 */
export interface OwningCollection<T extends Doc = Doc> extends Collection<T> {
  ownOne(id: string, copy?: (doc: T) => T): Promise<T | null>;
}

/** Whether `c` is a collection of the write-back cache (a catch-up on the embedded store). */
export const isOwning = <T extends Doc>(c: Collection<T>): c is OwningCollection<T> =>
  typeof (c as Partial<OwningCollection<T>>).ownOne === 'function';

export const strictProjections = () => process.env.COUVERT_STRICT_PROJECTIONS === '1';

export class WriteBackStore implements DocumentStore {
  private readonly collections = new Map<string, WriteBackCollection>();
  readonly strict: boolean;

  constructor(
    readonly inner: DocumentStore,
    options: WriteBackOptions = {},
  ) {
    this.strict = options.strict ?? strictProjections();
  }

  get kind() {
    return this.inner.kind;
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    let c = this.collections.get(name);
    if (c === undefined) {
      c = new WriteBackCollection(name, this.inner.collection(name), this.strict);
      this.collections.set(name, c);
    }
    return c as unknown as Collection<T>;
  }

  /** Writes every pending document to the store. */
  async flush(): Promise<void> {
    for (const c of this.collections.values()) await c.flush();
  }

  /** Forgets every cached document (call after flush: unflushed writes are lost). */
  clear(): void {
    for (const c of this.collections.values()) c.clear();
  }

  getCheckpoint(projection: string): Promise<bigint | null> {
    return this.inner.getCheckpoint(projection);
  }

  async setCheckpoint(projection: string, position: bigint): Promise<void> {
    await this.flush();
    await this.inner.setCheckpoint(projection, position);
  }

  getCheckpoints(projections: readonly string[]): Promise<Map<string, bigint | null>> {
    return this.inner.getCheckpoints(projections);
  }

  async setCheckpoints(entries: readonly (readonly [string, bigint])[]): Promise<void> {
    await this.flush();
    await this.inner.setCheckpoints(entries);
  }

  async dropAll(keep?: readonly string[]): Promise<void> {
    this.clear();
    await this.inner.dropAll(keep);
  }

  async dropCollections(names: readonly string[]): Promise<void> {
    // Only the dropped collections' pending writes go: the batch's others still land at the flush.
    for (const name of names) this.collections.get(name)?.clear();
    await this.inner.dropCollections(names);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** `{_id: "…"}` alone: the id; otherwise undefined. */
function idOnly(filter: Filter): string | undefined {
  let id: unknown;
  for (const k in filter) {
    if (k !== '_id' || id !== undefined) return undefined;
    id = filter[k];
  }
  return typeof id === 'string' ? id : undefined;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k in v) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

class WriteBackCollection<T extends Doc = Doc> implements Collection<T> {
  private readonly entries = new Map<string, Entry>();
  /** Ids whose entry is dirty, in the order they became so. */
  private pending: string[] = [];
  private readonly trusted: TrustedCollection | null;

  constructor(
    readonly name: string,
    private readonly inner: Collection<Doc>,
    private readonly strict: boolean,
  ) {
    this.trusted = isTrusted(inner) ? inner : null;
  }

  /**
   * The cached entry of `id` when it is known without waiting: cached, or lent by the embedded
   * store (peek is synchronous). Callers skip an await (a promise and a microtask) per operation.
   */
  private entryNow(id: string): Entry | undefined {
    const e = this.entries.get(id);
    if (e !== undefined || this.trusted === null) return e;
    return this.lent(id, this.trusted);
  }

  private lent(id: string, trusted: TrustedCollection): Entry {
    const stored = trusted.peek(id);
    // Strict: a copy, so that freezing it leaves the store's own document alone.
    let e: Entry;
    if (stored === undefined) e = { doc: null, owned: false, mine: null, shared: false, dirty: false };
    else if (this.strict)
      e = { doc: cloneValue(stored) as Doc, owned: true, mine: null, shared: false, dirty: false };
    else e = { doc: stored, owned: false, mine: null, shared: false, dirty: false };
    this.entries.set(id, e);
    return e;
  }

  /** The cached entry of `id`, read from the store on a miss. */
  private async entry(id: string): Promise<Entry> {
    const now = this.entryNow(id);
    if (now !== undefined) return now;
    const doc = await this.inner.findOne({ _id: id });
    const e: Entry = { doc, owned: doc !== null, mine: null, shared: false, dirty: false };
    this.entries.set(id, e);
    return e;
  }

  private set(id: string, e: Entry, doc: Doc | null, owned: boolean): void {
    if (!e.dirty) {
      e.dirty = true;
      this.pending.push(id);
    }
    e.doc = doc;
    e.owned = owned;
    e.mine = null;
  }

  /** The document as given to a caller: shared from now on. */
  private handOut(e: Entry): T | null {
    if (e.doc === null) return null;
    e.owned = false;
    e.mine = null;
    e.shared = true;
    return (this.strict ? deepFreeze(e.doc) : e.doc) as T;
  }

  /** Pending writes to the store; the entries stay, now the store's (never changed in place). */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const changes: [string, Doc | null][] = [];
    for (const id of this.pending) {
      const e = this.entries.get(id);
      if (e === undefined || !e.dirty) continue;
      // Strict: the frozen documents stay here; the store gets copies it may change in place.
      changes.push([id, this.strict && e.doc !== null ? (cloneValue(e.doc) as Doc) : e.doc]);
      e.dirty = false;
      // The store holds it now: the cache must not change it in place any more.
      e.owned = false;
      e.mine = null;
    }
    this.pending = [];
    if (this.trusted !== null) this.trusted.writeBack(changes);
    else
      for (const [id, doc] of changes) {
        if (doc === null) await this.inner.deleteOne({ _id: id });
        else await this.inner.replaceOne({ _id: id }, doc, { upsert: true });
      }
  }

  clear(): void {
    this.entries.clear();
    this.pending = [];
  }

  /** Before an operation the store answers: pending writes out; after a write there, forget the cache. */
  private async throughStore<R>(write: boolean, run: () => Promise<R>): Promise<R> {
    await this.flush();
    if (write) this.entries.clear();
    return run();
  }

  createIndex(spec: IndexSpec): Promise<void> {
    return this.throughStore(false, () => this.inner.createIndex(spec));
  }

  insertOne(doc: T): Promise<void> {
    return this.throughStore(true, () => this.inner.insertOne(doc));
  }

  insertMany(docs: T[]): Promise<void> {
    return this.throughStore(true, () => this.inner.insertMany(docs));
  }

  async replaceOne(filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<UpdateResult> {
    const id = idOnly(filter);
    if (id === undefined) return this.throughStore(true, () => this.inner.replaceOne(filter, doc, options));
    validateDocument(doc, 'replacement');
    const e = this.entryNow(id) ?? (await this.entry(id));
    if (e.doc === null && !options?.upsert) return { matched: 0, modified: 0, upsertedId: null };
    if (doc._id !== id)
      throw new InvalidQueryError(
        e.doc === null
          ? 'replaceOne upsert: the replacement _id differs from the filter'
          : 'replaceOne: _id is immutable',
      );
    const before = e.doc;
    // Kept as given when it is plain JSON (the caller no longer changes it); otherwise the copy the
    // store would make (undefined becomes null, Dates are copied).
    // Every cached document is storable (read from the store, checked here, or cloned by an update).
    const storable = isStorableOver(doc, before);
    const value = storable ? (doc as Doc) : (cloneValue(doc) as Doc);
    this.set(id, e, this.strict ? deepFreeze(value) : value, !storable && !this.strict);
    e.shared = true;
    if (before === null) return { matched: 0, modified: 0, upsertedId: id };
    return { matched: 1, modified: sameValue(before, value) ? 0 : 1, upsertedId: null };
  }

  /**
   * The document of `id` (null when absent), for the caller to change in place until the batch is
   * committed, instead of a copy and a replaceOne per event: the cache copies it once (`copy`, a
   * deep copy: cloneValue unless the caller knows a faster one) when anybody else may hold it (the
   * store's, or one handed out or given in this batch), keeps that copy, and writes it at the
   * commit (validated then by the store). Marked written even when the caller ends
   * up not changing it. The caller must not keep it past the event it applies, nor hand it on, and
   * asks again for each event (a commit between two events gives the store the document).
   */
  async ownOne(id: string, copy: (doc: T) => T = cloneValue as (doc: T) => T): Promise<T | null> {
    const e = this.entryNow(id) ?? (await this.entry(id));
    if (e.doc === null) return null;
    const doc = e.owned ? e.doc : (copy(e.doc as T) as Doc);
    this.set(id, e, doc, true);
    e.shared = false;
    return doc as T;
  }

  async updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult> {
    const id = typeof filter._id === 'string' ? filter._id : undefined;
    if (id === undefined) return this.throughStore(true, () => this.inner.updateOne(filter, update, options));
    // A document of the embedded store that no caller holds and the batch has not changed: the
    // store updates it in place (no copy; its own validation, guard and indexes), as without the
    // cache. What a single-event catch-up (read your writes) mostly does.
    if (this.trusted !== null) {
      const cached = this.entries.get(id);
      if (cached === undefined || (!cached.dirty && !cached.shared)) {
        this.entries.delete(id);
        return this.inner.updateOne(filter, update, options);
      }
    }
    const parsed = parseUpdate(update);
    const only = idOnly(filter) !== undefined;
    // applyOnce's guard (src/projection/idempotent.ts), decided by shape as the embedded store does.
    const before = only ? undefined : guardPosition(filter);
    if (!only && before === undefined) validateFilter(filter);
    const e = this.entryNow(id) ?? (await this.entry(id));
    let matched = false;
    if (e.doc !== null) {
      if (only) matched = true;
      else if (before !== undefined && (e.doc._pos === undefined || typeof e.doc._pos === 'string'))
        matched = e.doc._pos === undefined || (e.doc._pos as string) < before;
      else matched = compileMatcher(filter)(e.doc);
    }
    if (matched) {
      // Copy on write: a document somebody else may hold is never changed in place; only the
      // objects on the update's paths are copied (the rest stays shared, and is never changed).
      const doc = e.doc as Doc;
      let mine = e.mine;
      let target = doc;
      if (!e.owned) {
        mine ??= new Set();
        target = copyAlong(doc, parsed.steps, mine);
      }
      const journal = applyUpdate(target, parsed, false);
      if (!journal.changed) return { matched: 1, modified: 0, upsertedId: null };
      this.set(id, e, target, e.owned);
      e.mine = mine;
      return { matched: 1, modified: 1, upsertedId: null };
    }
    if (!options?.upsert) return { matched: 0, modified: 0, upsertedId: null };
    // The filter excluded the document that holds this _id: the store would try to insert a second.
    if (e.doc !== null) throw new DuplicateKeyError(this.name, '_id_');
    const created = seed(filter, parsed, id);
    this.set(id, e, created, true);
    return { matched: 0, modified: 0, upsertedId: id };
  }

  updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    return this.throughStore(true, () => this.inner.updateMany(filter, update));
  }

  async deleteOne(filter: Filter): Promise<number> {
    const id = idOnly(filter);
    if (id === undefined) return this.throughStore(true, () => this.inner.deleteOne(filter));
    const e = this.entryNow(id) ?? (await this.entry(id));
    if (e.doc === null) return 0;
    this.set(id, e, null, false);
    return 1;
  }

  deleteMany(filter: Filter): Promise<number> {
    return this.throughStore(true, () => this.inner.deleteMany(filter));
  }

  async findOne(filter: Filter, options?: Omit<FindOptions, 'limit'>): Promise<T | null> {
    const id = options === undefined ? idOnly(filter) : undefined;
    if (id === undefined)
      return this.throughStore(false, () => this.inner.findOne(filter, options)) as Promise<T | null>;
    return this.handOut(this.entryNow(id) ?? (await this.entry(id)));
  }

  find(filter: Filter, options?: FindOptions): Promise<T[]> {
    return this.throughStore(false, () => this.inner.find(filter, options)) as Promise<T[]>;
  }

  count(filter?: Filter): Promise<number> {
    return this.throughStore(false, () => this.inner.count(filter));
  }
}

/**
 * A copy of `doc` that applyUpdate may change along `steps`: the document and every object on a
 * step's path (short of its last segment) are copied one level deep, unless `copied` (the objects
 * already copied for this entry) holds them; everything else is shared.
 * applyUpdate replaces the value at a path's end (a new array for $push and $pull), never changes it.
 */
function copyAlong(doc: Doc, steps: readonly UpdateStep[], copied: Set<object>): Doc {
  let top = doc;
  if (!copied.has(doc)) {
    top = { ...doc };
    copied.add(top);
  }
  for (const step of steps) {
    const segs = step.segs;
    let parent: Record<string, unknown> | unknown[] = top;
    for (let i = 0; i < segs.length - 1; i++) {
      const seg = segs[i] as string;
      const child: unknown = Array.isArray(parent)
        ? parent[Number(seg)]
        : Object.hasOwn(parent, seg)
          ? parent[seg]
          : undefined;
      if (typeof child !== 'object' || child === null) break;
      let copy = child as Record<string, unknown> | unknown[];
      if (!copied.has(child)) {
        copy = Array.isArray(child) ? child.slice() : { ...(child as Record<string, unknown>) };
        copied.add(copy);
        if (Array.isArray(parent)) parent[Number(seg)] = copy;
        else if (seg === '__proto__')
          Object.defineProperty(parent, seg, {
            value: copy,
            writable: true,
            enumerable: true,
            configurable: true,
          });
        else parent[seg] = copy;
      }
      parent = copy;
    }
  }
  return top;
}

/** The document an upsert inserts, as the embedded store seeds it (filter equalities, then the update). */
function seed(filter: Filter, parsed: ParsedUpdate, id: string): Doc {
  if (parsed.idFromUpdate !== undefined && parsed.idFromUpdate !== id)
    throw new InvalidQueryError('upsert: the update sets an _id other than the filter');
  const base: Doc = { _id: id };
  if (idOnly(filter) === undefined) {
    upsertIdFromFilter(filter);
    const steps = upsertSeedSteps(filter).filter((s) => s.segs[0] !== '_id');
    applyUpdate(base, { steps, idFromUpdate: undefined }, true);
  }
  applyUpdate(base, parsed, true);
  return base;
}
