// One collection of the embedded document store. Stored documents are private: copied on the way
// in and on the way out, so callers can neither corrupt the store nor see a half-applied write.
// Updates change them in place under a journal that a refused write (a unique index) rolls back.
import { randomBytes } from 'node:crypto';
import { Query } from 'mingo';
import {
  type Collection,
  type Doc,
  DocumentStoreError,
  DuplicateKeyError,
  type Filter,
  type FindOptions,
  type IndexSpec,
  InvalidQueryError,
  type Update,
  type UpdateResult,
} from '../../ports/document-store';
import { compileMatcher, equalityConstraints, type Matcher, stringRanges, upsertSeedSteps } from './filter';
import { type IndexEntries, isKey, type Key, KeyIndex, sameEntries } from './key-index';
import { applyUpdate, type Journal } from './update';
import {
  type ParsedUpdate,
  parseUpdate,
  upsertIdFromFilter,
  validateDocument,
  validateFilter,
  validateFindOptions,
  validateIndexSpec,
} from './validate';
import { cloneValue, compareStrings, isPlainObject, sameValue, shareEmpties } from './values';

type Undo = { insert: Doc } | { doc: Doc; journal: Journal; reindexed: Reindex | undefined };
type Reindex = [KeyIndex, IndexEntries, IndexEntries][];

/** How a filter was answered; for tests and benchmarks that check no lookup scans the collection. */
export interface QueryPlan {
  index: string | null;
  candidates: number;
}

const copy = <T>(doc: Doc): T => cloneValue(doc) as T;
const ALWAYS: Matcher = () => true;

// The filter every event of a replay sends: {_id: "…"}. Recognised without validation or planning.
function idOnly(filter: Filter): string | undefined {
  let id: unknown;
  for (const k in filter) {
    if (k !== '_id' || id !== undefined) return undefined;
    id = filter[k];
  }
  return typeof id === 'string' ? id : undefined;
}

/** The value of `o`'s only key when `o` is a plain object holding exactly `key`; otherwise undefined. */
function soleValue(o: unknown, key: string): unknown {
  if (!isPlainObject(o)) return undefined;
  let value: unknown;
  for (const k in o) {
    if (k !== key || value !== undefined) return undefined;
    value = o[k];
  }
  return value;
}

/**
 * The guard applyOnce sends with every event of a replay (src/projection/idempotent.ts):
 * {_id: "…", $or: [{_pos: {$lt: "…"}}, {_pos: {$exists: false}}]}. Recognised by shape (a valid
 * filter by construction) so updateOne decides it without validation, planning or a matcher;
 * answers the $lt operand, or undefined for any other filter.
 */
export function guardPosition(filter: Filter): string | undefined {
  let n = 0;
  for (const k in filter) {
    if (k !== '_id' && k !== '$or') return undefined;
    n++;
  }
  const or = filter.$or;
  if (n !== 2 || typeof filter._id !== 'string' || !Array.isArray(or) || or.length !== 2) return undefined;
  const before = soleValue(soleValue(or[0], '_pos'), '$lt');
  if (typeof before !== 'string' || soleValue(soleValue(or[1], '_pos'), '$exists') !== false)
    return undefined;
  return before;
}

export class EmbeddedCollection<T extends Doc = Doc> implements Collection<T> {
  private readonly docs = new Map<string, Doc>();
  /** Every index created (names and specs). */
  private indexes: KeyIndex[] = [];
  /**
   * The indexes kept up to date and planned with, in creation order: all but those the planner
   * could never pick (createIndex, `dormant`).
   */
  private active: KeyIndex[] = [];
  /**
   * The compound indexes among the others: they keep nothing, but a write with arrays in two of
   * their fields is refused as MongoDB's index refuses it (CannotIndexParallelArrays).
   */
  private guards: KeyIndex[] = [];

  /**
   * Documents handed to a filter since the collection was made (MongoDB's docsExamined, summed):
   * for tests and benchmarks that check a query's cost follows its page, not the collection.
   */
  examined = 0;
  /**
   * Index levels a sorted find merged (KeyIndex.mergedIds: a reader and a heap entry each, whether
   * any of their documents is read or not); for the same tests.
   */
  opened = 0;

  constructor(
    readonly name: string,
    private readonly assertOpen: () => void,
  ) {}

  async createIndex(spec: IndexSpec): Promise<void> {
    this.assertOpen();
    validateIndexSpec(spec);
    const index = new KeyIndex(spec);
    const sameName = this.indexes.find((i) => i.name === index.name);
    if (sameName) {
      if (sameName.sameSpec(spec)) return;
      throw new DocumentStoreError(
        `index ${index.name} already exists on ${this.name} with other keys or options`,
      );
    }
    const sameKeys = this.indexes.find((i) => i.sameSpec(spec));
    if (sameKeys)
      throw new DocumentStoreError(`index ${index.name} already exists on ${this.name} as ${sameKeys.name}`);
    const dormant = this.dormant(index);
    if (!dormant) {
      for (const doc of this.docs.values()) {
        const entries = index.entries(doc);
        if (index.unique && index.conflict(entries, doc._id) !== undefined) {
          throw new DuplicateKeyError(this.name, index.name);
        }
        index.add(doc._id, entries);
      }
      this.active = [...this.active, index];
    } else if (index.compound) {
      for (const doc of this.docs.values()) index.guard(doc);
      this.guards = [...this.guards, index];
    }
    this.indexes = [...this.indexes, index];
  }

  /**
   * True for an index the planner could never pick, which then keeps no entries: one keyed on no
   * field (IndexSpec.embeddedPrefix 0), or a non-unique one whose keyed fields begin the keyed
   * fields of an index created before it. That one pins at least as many leading fields of any
   * filter, scores at least as high, and comes first, and plan() only takes a strictly higher score
   * (reservations' restaurant_sort_key keyed on restaurant_id alone, behind restaurant_external_id).
   */
  private dormant(index: KeyIndex): boolean {
    if (index.keyed.length === 0) return true;
    if (index.unique || index.partial) return false;
    // An earlier partial index serves only the filters that pin its partial fields.
    return this.active.some(
      (earlier) =>
        earlier.partial === undefined &&
        earlier.keyed.length >= index.keyed.length &&
        index.keyed.every((f, i) => earlier.keyed[i] === f),
    );
  }

  /** The names of the indexes kept up to date (the others keep nothing); for tests. */
  activeIndexes(): string[] {
    return this.active.map((i) => i.name);
  }

  async insertOne(doc: T): Promise<void> {
    this.assertOpen();
    validateDocument(doc);
    this.insert(cloneValue(doc) as Doc);
  }

  async insertMany(docs: T[]): Promise<void> {
    this.assertOpen();
    for (const doc of docs) validateDocument(doc);
    const copies = docs.map((d) => cloneValue(d) as Doc);
    this.batch((undo) => {
      for (const doc of copies) {
        this.insert(doc);
        undo.push({ insert: doc });
      }
    });
  }

  async replaceOne(filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<UpdateResult> {
    this.assertOpen();
    validateFilter(filter);
    validateDocument(doc, 'replacement');
    const next = cloneValue(doc) as Doc;
    const target = this.first(filter);
    if (target !== undefined) {
      if (next._id !== target._id) throw new InvalidQueryError('replaceOne: _id is immutable');
      if (sameValue(target, next)) return { matched: 1, modified: 0, upsertedId: null };
      this.swap(target, next);
      return { matched: 1, modified: 1, upsertedId: null };
    }
    if (!options?.upsert) return { matched: 0, modified: 0, upsertedId: null };
    const seededId = upsertIdFromFilter(filter);
    if (seededId !== undefined && seededId !== next._id) {
      throw new InvalidQueryError('replaceOne upsert: the replacement _id differs from the filter');
    }
    this.insert(next);
    return { matched: 0, modified: 0, upsertedId: next._id };
  }

  async updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult> {
    this.assertOpen();
    const parsed = parseUpdate(update);
    let id = idOnly(filter);
    let target: Doc | undefined;
    if (id !== undefined) target = this.docs.get(id);
    else {
      const before = guardPosition(filter);
      const stored = before === undefined ? undefined : this.docs.get(filter._id as string);
      const pos = stored?._pos;
      if (before !== undefined && (pos === undefined || typeof pos === 'string')) {
        // The guard decided here, as filter.ts's direct path would: no _pos, or an earlier one.
        id = filter._id as string;
        if (pos === undefined || pos < before) target = stored;
      } else {
        validateFilter(filter);
        target = this.matching(filter, 1)[0];
      }
    }
    if (target !== undefined) {
      const modified = this.update(target, parsed) !== undefined;
      return { matched: 1, modified: modified ? 1 : 0, upsertedId: null };
    }
    if (!options?.upsert) return { matched: 0, modified: 0, upsertedId: null };
    const created = this.seed(filter, parsed, id);
    this.insert(created);
    return { matched: 0, modified: 0, upsertedId: created._id };
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    this.assertOpen();
    const parsed = parseUpdate(update);
    validateFilter(filter);
    const targets = this.matching(filter, Number.POSITIVE_INFINITY);
    let modified = 0;
    this.batch((undo) => {
      for (const target of targets) {
        const done = this.update(target, parsed);
        if (done === undefined) continue;
        undo.push(done);
        modified++;
      }
    });
    return { matched: targets.length, modified, upsertedId: null };
  }

  async deleteOne(filter: Filter): Promise<number> {
    this.assertOpen();
    validateFilter(filter);
    const target = this.first(filter);
    if (target === undefined) return 0;
    this.remove(target);
    return 1;
  }

  async deleteMany(filter: Filter): Promise<number> {
    this.assertOpen();
    validateFilter(filter);
    if (isEmpty(filter)) {
      const n = this.docs.size;
      this.docs.clear();
      for (const index of this.active) index.clear();
      return n;
    }
    const targets = this.matching(filter, Number.POSITIVE_INFINITY);
    for (const target of targets) this.remove(target);
    return targets.length;
  }

  async findOne(filter: Filter, options?: Omit<FindOptions, 'limit'>): Promise<T | null> {
    this.assertOpen();
    const id = options === undefined ? idOnly(filter) : undefined;
    if (id !== undefined) {
      const doc = this.docs.get(id);
      return doc === undefined ? null : copy<T>(doc);
    }
    const [doc] = await this.find(filter, { ...options, limit: 1 });
    return doc ?? null;
  }

  async find(filter: Filter, options?: FindOptions): Promise<T[]> {
    this.assertOpen();
    validateFilter(filter);
    validateFindOptions(options);
    const skip = options?.skip ?? 0;
    const limit = options?.limit || Number.POSITIVE_INFINITY;
    const sort = options?.sort && !isEmpty(options.sort) ? options.sort : undefined;
    let page: Doc[];
    const ordered =
      sort === undefined || limit === Number.POSITIVE_INFINITY
        ? undefined
        : this.sortedPage(filter, sort, skip + limit);
    if (sort === undefined) page = this.matching(filter, skip + limit).slice(skip);
    else if (ordered !== undefined) page = ordered.slice(skip);
    else {
      const matched = this.matching(filter, Number.POSITIVE_INFINITY);
      const sorted = plainSort(matched, sort);
      if (sorted) {
        page = sorted.slice(skip, skip + limit);
        return (options?.projection ? project(page, options.projection) : page).map(copy<T>);
      }
      // mingo sorts with MongoDB's cross-type order, which plain comparisons do not follow.
      let cursor = new Query({}, {}).find<Doc>(matched).sort(sort);
      if (skip > 0) cursor = cursor.skip(skip);
      if (limit !== Number.POSITIVE_INFINITY) cursor = cursor.limit(limit);
      page = cursor.all();
    }
    return (options?.projection ? project(page, options.projection) : page).map(copy<T>);
  }

  async count(filter?: Filter): Promise<number> {
    this.assertOpen();
    if (filter === undefined || isEmpty(filter)) return this.docs.size;
    validateFilter(filter);
    return this.matching(filter, Number.POSITIVE_INFINITY).length;
  }

  /**
   * The stored document itself (not a copy), for the projection runner's write-back cache
   * (src/projection/write-back.ts), which never changes it in place and never hands it to code
   * that could. Everything else reads copies.
   */
  peek(id: string): T | undefined {
    this.assertOpen();
    return this.docs.get(id) as T | undefined;
  }

  /**
   * The write-back cache's flush: each document is stored as given (the store takes it over: no
   * copy; its top-level empty arrays and objects become the shared frozen ones, values.ts
   * shareEmpties), `null` removes. Documents are validated and indexed as by replaceOne; the caller has
   * made them storable (cloneValue or isStorable in values.ts). Not atomic: a unique-index
   * conflict throws with the earlier documents written, which a catch-up (whose checkpoint then
   * stays behind) redoes.
   */
  writeBack(changes: Iterable<readonly [string, Doc | null]>): void {
    this.assertOpen();
    for (const [id, doc] of changes) {
      const stored = this.docs.get(id);
      if (doc === null) {
        if (stored !== undefined) this.remove(stored);
        continue;
      }
      validateDocument(doc, 'replacement');
      if (doc._id !== id) throw new InvalidQueryError('replaceOne: _id is immutable');
      if (stored === doc) continue;
      if (!Object.isFrozen(doc)) shareEmpties(doc);
      if (stored !== undefined) this.swap(stored, doc);
      else this.insert(doc);
    }
  }

  /** Which index answers `filter` and how many documents it hands to the matcher. */
  explain(filter: Filter): QueryPlan {
    validateFilter(filter);
    const { index, candidates } = this.plan(filter);
    if (candidates === undefined) return { index, candidates: this.docs.size };
    let n = 0;
    for (const _ of candidates) n++;
    return { index, candidates: n };
  }

  /** Forgets every document and index (DocumentStore.dropAll); the handle stays usable. */
  reset(): void {
    this.docs.clear();
    this.indexes = [];
    this.active = [];
    this.guards = [];
  }

  private first(filter: Filter): Doc | undefined {
    return this.matching(filter, 1)[0];
  }

  /** Matching stored documents (not copies), in insertion order when the whole collection is read. */
  private matching(filter: Filter, max: number): Doc[] {
    const out: Doc[] = [];
    if (max <= 0) return out;
    const { candidates, exact } = this.plan(filter);
    const matches = exact ? ALWAYS : compileMatcher(filter);
    for (const doc of candidates ?? this.docs.values()) {
      this.examined++;
      if (matches(doc)) {
        out.push(doc);
        if (out.length >= max) break;
      }
    }
    return out;
  }

  /**
   * The first `max` matches of a find sorted on one field, read in the order of the index that
   * answers the filter when that field is the index's last keyed one and the filter pins the others
   * to one key each: a page costs about the documents before its end, not every one under the pinned
   * keys. Ties come in the order of the keys' _ids, as the stable sort of the index's own listing
   * gives them. Undefined when the index cannot give the order (the caller sorts every match).
   */
  private sortedPage(filter: Filter, sort: Record<string, 1 | -1>, max: number): Doc[] | undefined {
    let field: string | undefined;
    for (const k in sort) {
      if (field !== undefined) return undefined;
      field = k;
    }
    if (field === '_id') return this.idSortedPage(filter, sort[field] as 1 | -1, max);
    if (field === undefined || field.includes('.') || filter._id !== undefined) return undefined;
    const constraints = equalityConstraints(filter);
    // A pinned sort field narrows to its few keys already (plan() reads just those); walking the
    // level in order would read every document under the other pinned keys.
    if (constraints.has('_id') || constraints.has(field)) return undefined;
    const dir = sort[field] as 1 | -1;
    const ids =
      this.excludingOrder(filter, constraints, field, dir) ??
      this.pinnedOrder(filter, constraints, field, dir);
    if (ids === undefined) return undefined;
    const matches = compileMatcher(filter);
    const out: Doc[] = [];
    if (max <= 0) return out;
    for (const id of ids) {
      const doc = this.docs.get(id) as Doc;
      // An array there is listed under each of its strings: only a sort of every match orders it.
      if (typeof doc[field] !== 'string') return undefined;
      this.examined++;
      if (!matches(doc)) continue;
      out.push(doc);
      if (out.length >= max) break;
    }
    return out;
  }

  /**
   * sortedPage sorted on _id when the filter pins every keyed field of the index plan() picks to one
   * key each (and _id at most to a range): that key's _ids in order (KeyIndex.idsInOrder), so paging a
   * group of equal keys by `_id: {$gt: last}` reads each page, not the group before it.
   */
  private idSortedPage(filter: Filter, dir: 1 | -1, max: number): Doc[] | undefined {
    const constraints = equalityConstraints(filter);
    if (constraints.has('_id')) return undefined;
    const index = this.pick(constraints);
    if (index === undefined) return undefined;
    const pinned: Key[] = [];
    for (const f of index.keyed) {
      const keys = constraints.get(f);
      if (keys?.length !== 1) return undefined;
      pinned.push(keys[0]!);
    }
    const ids = index.idsInOrder(pinned, stringRanges(filter).get('_id'), dir);
    if (ids === undefined) return undefined;
    const matches = compileMatcher(filter);
    const out: Doc[] = [];
    if (max <= 0) return out;
    for (const id of ids) {
      const doc = this.docs.get(id) as Doc;
      this.examined++;
      if (!matches(doc)) continue;
      out.push(doc);
      if (out.length >= max) break;
    }
    return out;
  }

  /** sortedPage's order from the index plan() picks, its fields before `field` pinned to one key each. */
  private pinnedOrder(
    filter: Filter,
    constraints: Map<string, Key[]>,
    field: string,
    dir: 1 | -1,
  ): Iterable<string> | undefined {
    const index = this.pick(constraints);
    if (index === undefined || index.keyed[index.keyed.length - 1] !== field) return undefined;
    const pinned: Key[] = [];
    for (const f of index.keyed.slice(0, -1)) {
      const keys = constraints.get(f);
      if (keys?.length !== 1) return undefined;
      pinned.push(keys[0]!);
    }
    return index.orderedIds(pinned, stringRanges(filter).get(field), dir);
  }

  /**
   * sortedPage's order when the filter leaves keys out with `$nin` on the field just before `field` in
   * an index (the fields before that pinned to one key each): the index's levels under the other keys,
   * merged (KeyIndex.mergedIds), so the documents left out are never read. Walking an index that
   * pins fewer fields read each of them to refuse it: the webhook sweeper walked the whole due backlog
   * of every endpoint whose queue is full, each second. Undefined when no index serves it, or when
   * the documents left out are fewer than the other keys (mergedIds declines): pinnedOrder then reads
   * past them, which costs less than opening every other key's level.
   */
  private excludingOrder(
    filter: Filter,
    constraints: Map<string, Key[]>,
    field: string,
    dir: 1 | -1,
  ): Iterable<string> | undefined {
    for (const index of this.active) {
      const n = index.keyed.length;
      if (n < 2 || index.keyed[n - 1] !== field || !index.covers(constraints)) continue;
      const free = index.keyed[n - 2]!;
      if (constraints.has(free)) continue;
      const excluded = soleValue(filter[free], '$nin');
      if (!Array.isArray(excluded) || excluded.length === 0 || !excluded.every(isKey)) continue;
      const pinned: Key[] = [];
      for (const f of index.keyed.slice(0, -2)) {
        const keys = constraints.get(f);
        if (keys?.length !== 1) break;
        pinned.push(keys[0]!);
      }
      if (pinned.length !== n - 2) continue;
      const order = index.mergedIds(pinned, new Set(excluded), stringRanges(filter).get(field), dir);
      if (order === undefined) continue;
      this.opened += order.levels;
      return order.ids;
    }
    return undefined;
  }

  /** The index plan() narrows with for these equality constraints (none pins _id). */
  private pick(constraints: Map<string, Key[]>): KeyIndex | undefined {
    let best: KeyIndex | undefined;
    let bestScore = 0;
    for (const index of this.active) {
      const n = index.prefixLength(constraints);
      if (n === 0) continue;
      // A unique index pinned on every field returns at most one document: nothing beats it.
      const score = n * 2 + (index.unique && n === index.fields.length ? 1000 : 0);
      if (score > bestScore) {
        best = index;
        bestScore = score;
      }
    }
    return best;
  }

  private plan(filter: Filter): {
    index: string | null;
    candidates: Iterable<Doc> | undefined;
    exact?: boolean;
  } {
    const id = filter._id;
    if (typeof id === 'string') {
      const doc = this.docs.get(id);
      return {
        index: '_id_',
        candidates: doc === undefined ? [] : [doc],
        exact: idOnly(filter) !== undefined,
      };
    }
    const constraints = equalityConstraints(filter);
    const ids = constraints.get('_id');
    if (ids !== undefined) {
      const candidates: Doc[] = [];
      for (const id of new Set(ids)) {
        const doc = typeof id === 'string' ? this.docs.get(id) : undefined;
        if (doc !== undefined) candidates.push(doc);
      }
      return { index: '_id_', candidates, exact: idOnly(filter) !== undefined };
    }
    const best = this.pick(constraints);
    if (best === undefined) return { index: null, candidates: undefined };
    const lists: Key[][] = [];
    for (const field of best.keyed) {
      const keys = constraints.get(field);
      if (keys === undefined) break;
      lists.push(keys);
    }
    // A string range on the field after the pinned ones narrows too (a document keyed there with
    // anything else, a non-string included, cannot match it).
    const next = best.keyed[lists.length];
    const range = next === undefined ? undefined : stringRanges(filter).get(next);
    return { index: best.name, candidates: documents(best.ids(lists, range), this.docs) };
  }

  private seed(filter: Filter, parsed: ParsedUpdate, id: string | undefined): Doc {
    if (id !== undefined && (parsed.idFromUpdate === undefined || parsed.idFromUpdate === id)) {
      const doc: Doc = { _id: id };
      applyUpdate(doc, parsed, true);
      return doc;
    }
    const seededId = id ?? upsertIdFromFilter(filter);
    if (seededId !== undefined && parsed.idFromUpdate !== undefined && seededId !== parsed.idFromUpdate) {
      throw new InvalidQueryError('upsert: the update sets an _id other than the filter');
    }
    const _id = seededId ?? parsed.idFromUpdate ?? randomBytes(12).toString('hex');
    const steps = upsertSeedSteps(filter).filter((s) => s.segs[0] !== '_id');
    const base: Doc = { _id };
    applyUpdate(base, { steps, idFromUpdate: undefined }, true);
    applyUpdate(base, parsed, true);
    return base;
  }

  private insert(doc: Doc): void {
    if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, '_id_');
    for (const guard of this.guards) guard.guard(doc);
    const indexes = this.active;
    if (indexes.length === 0) {
      this.docs.set(doc._id, doc);
      return;
    }
    const entries = indexes.map((index) => index.entries(doc));
    for (let i = 0; i < indexes.length; i++) {
      const index = indexes[i]!;
      if (index.unique && index.conflict(entries[i]!, doc._id) !== undefined) {
        throw new DuplicateKeyError(this.name, index.name);
      }
    }
    this.docs.set(doc._id, doc);
    for (let i = 0; i < indexes.length; i++) indexes[i]!.add(doc._id, entries[i]!);
  }

  /** Replaces a stored document by another version of it (replaceOne). */
  private swap(old: Doc, next: Doc): void {
    for (const guard of this.guards) if (!guard.sameScalarKeys(old, next)) guard.guard(next);
    const changes: Reindex = [];
    for (const index of this.active) {
      if (index.sameScalarKeys(old, next)) continue;
      const before = index.entries(old);
      const after = index.entries(next);
      if (sameEntries(before, after)) continue;
      if (index.unique && index.conflict(after, old._id) !== undefined) {
        throw new DuplicateKeyError(this.name, index.name);
      }
      changes.push([index, before, after]);
    }
    this.docs.set(old._id, next);
    for (const [index, before, after] of changes) reindex(index, old._id, before, after);
  }

  /**
   * Updates a stored document in place; undefined when nothing changed. Only the indexes the update's
   * paths touch are looked at, so an update of unindexed fields costs no index work.
   */
  private update(doc: Doc, parsed: ParsedUpdate): Extract<Undo, { journal: Journal }> | undefined {
    const touched: [KeyIndex, IndexEntries][] = [];
    for (const index of this.active) {
      if (parsed.steps.some((s) => index.touchedBy(s.path))) touched.push([index, index.entries(doc)]);
    }
    const journal = applyUpdate(doc, parsed, false);
    if (!journal.changed) return undefined;
    try {
      for (const guard of this.guards)
        if (parsed.steps.some((s) => guard.touchedBy(s.path))) guard.guard(doc);
    } catch (err) {
      journal.rollback();
      throw err;
    }
    if (touched.length === 0) return { doc, journal, reindexed: undefined };
    const changes: Reindex = [];
    try {
      for (const [index, before] of touched) {
        const after = index.entries(doc);
        if (sameEntries(before, after)) continue;
        if (index.unique && index.conflict(after, doc._id) !== undefined) {
          throw new DuplicateKeyError(this.name, index.name);
        }
        changes.push([index, before, after]);
      }
    } catch (err) {
      journal.rollback();
      throw err;
    }
    for (const [index, before, after] of changes) reindex(index, doc._id, before, after);
    return { doc, journal, reindexed: changes };
  }

  private remove(doc: Doc): void {
    this.docs.delete(doc._id);
    for (const index of this.active) index.remove(doc._id, index.entries(doc));
  }

  /** Runs several writes as one: if any throws, the ones before it are undone. */
  private batch(run: (undo: Undo[]) => void): void {
    const undo: Undo[] = [];
    try {
      run(undo);
    } catch (err) {
      for (const step of undo.reverse()) {
        if ('insert' in step) this.remove(step.insert);
        else {
          for (const [index, before, after] of step.reindexed ?? [])
            reindex(index, step.doc._id, after, before);
          step.journal.rollback();
        }
      }
      throw err;
    }
  }
}

function* documents(ids: Iterable<string>, docs: Map<string, Doc>): Generator<Doc> {
  for (const id of ids) yield docs.get(id)!;
}

// mingo puts _id last; MongoDB returns it first.
/**
 * Sorts with plain comparisons when every sort key is a top-level field holding strings only or
 * finite numbers only across `docs` (then MongoDB's order is the plain one: numbers by value,
 * strings by code point, as MongoDB compares UTF-8 bytes); null otherwise, for mingo's cross-type
 * order. Stable, like mingo's: ties keep the matching order.
 */
export function plainSort(docs: Doc[], sort: Record<string, 1 | -1>): Doc[] | null {
  const keys = Object.entries(sort);
  const strings: boolean[] = [];
  for (const [key] of keys) {
    if (key.includes('.')) return null;
    let kind: 'string' | 'number' | undefined;
    for (const doc of docs) {
      const v = doc[key];
      const k =
        typeof v === 'string' ? 'string' : typeof v === 'number' && Number.isFinite(v) ? 'number' : null;
      if (k === null || (kind !== undefined && k !== kind)) return null;
      kind = k;
    }
    strings.push(kind === 'string');
  }
  return [...docs].sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const [key, dir] = keys[i]!;
      const x = a[key] as string | number;
      const y = b[key] as string | number;
      // Strings in MongoDB's order (code points: compareStrings), not UTF-16's.
      const c = strings[i] ? compareStrings(x as string, y as string) : x < y ? -1 : x > y ? 1 : 0;
      if (c !== 0) return c * dir;
    }
    return 0;
  });
}

function project(docs: Doc[], projection: Record<string, 1>): Doc[] {
  return new Query({}, {})
    .find<Doc>(docs, projection)
    .all()
    .map(({ _id, ...rest }) => ({ _id, ...rest }) as Doc);
}

function reindex(index: KeyIndex, id: string, before: IndexEntries, after: IndexEntries): void {
  index.remove(id, before);
  index.add(id, after);
}

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}
