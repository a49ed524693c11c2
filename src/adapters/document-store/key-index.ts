// A secondary index of the embedded document store: nested Maps, one level per indexed field,
// keyed by the field's value (Map's SameValueZero keeps 1, '1', true and null apart, as MongoDB
// does). Leaves hold an _id (unique, or a key only one document holds), an array of a few _ids or
// a Set of more (MAX_ARRAY_IDS), in insertion order either way. Lookups are only ever used to narrow the
// candidates the filter then runs on, so the one rule is: a document a filter matches must be
// among the candidates. Documents whose value at an indexed path cannot be keyed exactly (an
// array of documents, a path through an array, a sub-document, a Date) go to `overflow`, which
// every lookup includes.
import { type Doc, DocumentStoreError, type IndexSpec } from '../../ports/document-store';
import { inStringRange, type StringRange } from './filter';
import { SortedKeys } from './sorted-keys';
import { indexName, isParentPath, splitPath } from './validate';
import { compareStrings, ownField } from './values';

export type Key = string | number | boolean | null;

export interface IndexEntries {
  tuples: Key[][];
  overflow: boolean;
  /**
   * An index keyed on fewer fields than it has (IndexSpec.embeddedPrefix, live): the tuples of
   * every field, which tell when the document moves (see KeyIndex.entries).
   */
  full?: Key[][];
  /**
   * The document holds an array at the last keyed field: it sits under each element, while a sort on
   * that field orders it by its smallest (or largest) one, which the keys' order cannot give.
   */
  multikey?: boolean;
}

/** The _ids under one key: one as itself, a few as an array (replaced, never changed), more as a Set. */
type Ids = string | readonly string[] | Set<string>;
type Level = Map<Key, Level | Ids>;

// Up to this many _ids under one key are kept in an array: 8 bytes an id, where a Set's hash table
// takes ~20 to 50 (reservations' restaurant_service_date: ~110 a key, 2.6-6 KB a Set). An array
// is copied on each change (O(n), n ≤ 256); past it, a Set. Iteration order is a Set's either way:
// insertion order, a removed id re-added goes last.
const MAX_ARRAY_IDS = 256;

// Prefix of keys that stand for a whole non-scalar value in a unique index; no sane string key
// starts with NUL.
const ENCODED = '\u0000';

export function isKey(v: unknown): v is Key {
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && !Number.isNaN(v))
  );
}

/** The keys a document is found under at one path, or undefined when it must overflow. */
function keysAt(doc: Doc, segs: string[]): Key[] | undefined {
  let node: unknown = doc;
  for (const seg of segs) {
    if (node === null || typeof node !== 'object') return [null];
    if (Array.isArray(node) || node instanceof Date) return undefined;
    node = ownField(node as Record<string, unknown>, seg);
    if (node === undefined) return [null];
  }
  if (isKey(node)) return [node];
  if (!Array.isArray(node) || node.length === 0) return undefined;
  for (const e of node) if (!isKey(e)) return undefined;
  return node as Key[];
}

// A unique index needs exactly one key per field even where lookups cannot use it: the whole value.
function uniqueKeyAt(doc: Doc, segs: string[]): { key: Key; exact: boolean } {
  let node: unknown = doc;
  for (let i = 0; i < segs.length; i++) {
    if (node === null || typeof node !== 'object') return { key: null, exact: true };
    if (Array.isArray(node) || node instanceof Date) {
      return { key: `${ENCODED}${i}:${JSON.stringify(node)}`, exact: false };
    }
    node = ownField(node as Record<string, unknown>, segs[i]!);
    if (node === undefined) return { key: null, exact: true };
  }
  if (isKey(node)) return { key: node, exact: true };
  return { key: `${ENCODED}${segs.length}:${JSON.stringify(node)}`, exact: false };
}

function holdsArray(doc: Doc, segs: string[]): boolean {
  let node: unknown = doc;
  for (const seg of segs) {
    if (Array.isArray(node)) return true;
    if (node === null || typeof node !== 'object' || node instanceof Date) return false;
    node = ownField(node as Record<string, unknown>, seg);
  }
  return Array.isArray(node);
}

function valueAt(doc: Doc, segs: string[]): unknown {
  let node: unknown = doc;
  for (const seg of segs) {
    if (!isPlainDocNode(node)) return undefined;
    node = ownField(node as Record<string, unknown>, seg);
  }
  return node;
}

const isPlainDocNode = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

export class KeyIndex {
  readonly name: string;
  readonly fields: string[];
  readonly unique: boolean;
  /**
   * The fields lookups key on: `fields`, or all but a trailing _id, cut to IndexSpec.embeddedPrefix
   * (constructor).
   */
  readonly keyed: string[];
  private readonly segs: string[][];
  /**
   * Set when embeddedPrefix cut fields off: the paths of every field the index would key without
   * it. Entries are still computed on them (overflow, parallel arrays and moves as before; below).
   */
  private readonly fullSegs: string[][] | undefined;
  /** IndexSpec.partial: the documents it holds (each field equal to its value), or undefined for all. */
  readonly partial: [string, Key][] | undefined;
  private readonly root: Level = new Map();
  private readonly overflow = new Set<string>();
  /**
   * The last keyed level's string keys in order and how many of its keys are no string (no sorted
   * read while any), per level a sorted find has read, kept up to date from then on (a count, so a
   * write never makes the next read look at the whole level again); a level pruned or cleared takes
   * its own along.
   */
  private readonly sorted = new WeakMap<Level, { keys: SortedKeys; others: number }>();
  /**
   * A key's _ids in _id order, per Set of them an _id-sorted find has read (idsInOrder), kept up to
   * date from then on. An array of a few is replaced on each change, so it is sorted when read.
   */
  private readonly sortedIds = new WeakMap<Set<string>, SortedKeys>();
  /** Documents held with an array at the last keyed field (IndexEntries.multikey): no sorted reads while any. */
  private multikeyDocs = 0;

  constructor(readonly spec: IndexSpec) {
    this.name = indexName(spec);
    this.fields = Object.keys(spec.keys);
    this.unique = spec.unique === true;
    // A trailing _id of a non-unique index is not keyed: a filter pinning _id is answered by the
    // collection's own map before any index (embedded-collection.ts, plan), so that level was never
    // walked, and it cost a Map per key of the field before it (customers' restaurant_updated:
    // one per customer, ~190 bytes). The index still sorts MongoDB's way there; here it only narrows.
    const all =
      !this.unique && this.fields.length > 1 && this.fields[this.fields.length - 1] === '_id'
        ? this.fields.slice(0, -1)
        : this.fields;
    const prefix = spec.embeddedPrefix ?? all.length;
    this.keyed = prefix < all.length ? all.slice(0, prefix) : all;
    this.segs = this.keyed.map((f) => splitPath(f, 'index'));
    this.fullSegs = this.keyed === all ? undefined : all.map((f) => splitPath(f, 'index'));
    this.partial = spec.partial ? Object.entries(spec.partial) : undefined;
  }

  /**
   * Whether a filter with these equality constraints finds only documents this index holds: every
   * field of a partial index pinned to its one value (true for any other index).
   */
  covers(constraints: Map<string, Key[]>): boolean {
    if (this.partial === undefined) return true;
    return this.partial.every(([f, v]) => {
      const keys = constraints.get(f);
      return keys?.length === 1 && Object.is(keys[0], v);
    });
  }

  private holds(doc: Doc): boolean {
    if (this.partial === undefined) return true;
    // As MongoDB's equality: an array holding the value is held too (a filter pinning it matches it).
    return this.partial.every(([f, v]) => {
      const x = ownField(doc as Record<string, unknown>, f);
      return Object.is(x, v) || (Array.isArray(x) && x.some((e) => Object.is(e, v)));
    });
  }

  sameSpec(spec: IndexSpec): boolean {
    const keys = Object.entries(spec.keys);
    const mine = Object.entries(this.spec.keys);
    return (
      (spec.unique === true) === this.unique &&
      keys.length === mine.length &&
      keys.every(([k, d], i) => mine[i]![0] === k && mine[i]![1] === d) &&
      samePartial(spec.partial, this.spec.partial)
    );
  }

  /** Whether an update of `path` can change this index's keys. */
  touchedBy(path: string): boolean {
    for (const f of this.partial === undefined
      ? this.fields
      : [...this.fields, ...Object.keys(this.spec.partial!)]) {
      if (f === path || isParentPath(path, f) || isParentPath(f, path)) return true;
    }
    return false;
  }

  entries(doc: Doc): IndexEntries {
    if (!this.holds(doc)) return { tuples: [], overflow: false };
    if (this.fullSegs !== undefined) return this.cutEntries(doc, this.fullSegs);
    if (this.segs.length > 1) this.refuseParallelArrays(doc, this.segs);
    if (this.unique) {
      const tuple: Key[] = [];
      let exact = true;
      for (const segs of this.segs) {
        const k = uniqueKeyAt(doc, segs);
        tuple.push(k.key);
        exact &&= k.exact;
      }
      return { tuples: [tuple], overflow: !exact };
    }
    let tuples: Key[][] = [[]];
    for (const segs of this.segs) {
      const keys = keysAt(doc, segs);
      if (keys === undefined) return { tuples: [], overflow: true };
      if (keys.length === 1) for (const t of tuples) t.push(keys[0]!);
      else tuples = tuples.flatMap((t) => keys.map((k) => [...t, k]));
    }
    return this.lastHoldsArray(doc)
      ? { tuples, overflow: false, multikey: true }
      : { tuples, overflow: false };
  }

  /**
   * The entries of an index cut to its first `keyed.length` fields (never unique): computed on every
   * field, so a document overflows, and a write with parallel arrays is refused, exactly as with
   * the whole index; then each tuple cut to the keyed fields (once each). `full` keeps the whole
   * tuples: a document whose whole tuple changes is removed and added again (sameEntries compares
   * `full`), which puts it last among the ids of its key, as the whole index's leaf Set would. So
   * documents with the same whole tuple keep their relative order, and the ids under a key are
   * those the whole index holds under it, in the order of its walk up to documents whose later
   * (cut) fields differ.
   */
  private cutEntries(doc: Doc, fullSegs: string[][]): IndexEntries {
    if (fullSegs.length > 1) this.refuseParallelArrays(doc, fullSegs);
    let full: Key[][] = [[]];
    for (const segs of fullSegs) {
      const keys = keysAt(doc, segs);
      if (keys === undefined) return { tuples: [], overflow: true, full: [] };
      if (keys.length === 1) for (const t of full) t.push(keys[0]!);
      else full = full.flatMap((t) => keys.map((k) => [...t, k]));
    }
    const n = this.keyed.length;
    let tuples: Key[][];
    if (full.length === 1) tuples = [full[0]!.slice(0, n)];
    else {
      tuples = [];
      for (const t of full) {
        const cut = t.slice(0, n);
        if (!tuples.some((u) => u.every((k, i) => Object.is(k, cut[i]) || k === cut[i]))) tuples.push(cut);
      }
    }
    return this.lastHoldsArray(doc)
      ? { tuples, overflow: false, full, multikey: true }
      : { tuples, overflow: false, full };
  }

  /**
   * True when `a` and `b` hold the same scalar key at every indexed path (so their entries are the
   * same): a replace that leaves the indexed fields alone (most writes of a replay) costs no entries,
   * no allocation. False when unsure (a path through an array or a sub-document, a Date, a
   * difference): the caller then compares entries.
   */
  sameScalarKeys(a: Doc, b: Doc): boolean {
    if (this.holds(a) !== this.holds(b)) return false;
    for (const segs of this.fullSegs ?? this.segs) {
      let x: unknown = a;
      let y: unknown = b;
      for (const seg of segs) {
        if (!isPlainDocNode(x) || !isPlainDocNode(y)) return false;
        x = ownField(x as Record<string, unknown>, seg);
        y = ownField(y as Record<string, unknown>, seg);
      }
      if (x !== y || !isKey(x)) return false;
    }
    return true;
  }

  // Not overflowing, a document holds no array before the last keyed field's value.
  private lastHoldsArray(doc: Doc): boolean {
    return Array.isArray(valueAt(doc, this.segs[this.segs.length - 1]!));
  }

  /** Whether a document can hold arrays in two of this index's fields (it has two or more). */
  get compound(): boolean {
    return (this.fullSegs ?? this.segs).length > 1;
  }

  /**
   * Refuses `doc` when it holds arrays in two of the index's fields, as entries() would: for an index
   * that keeps no entries (dormant, embedded-collection.ts), whose MongoDB counterpart refuses it.
   */
  guard(doc: Doc): void {
    const paths = this.fullSegs ?? this.segs;
    if (paths.length > 1) this.refuseParallelArrays(doc, paths);
  }

  // MongoDB refuses to index a document holding arrays in two fields of one compound index
  // (CannotIndexParallelArrays); refusing here too keeps such a write from working only embedded.
  private refuseParallelArrays(doc: Doc, paths: string[][]): void {
    let arrays = 0;
    for (const segs of paths) {
      if (holdsArray(doc, segs) && ++arrays > 1) {
        throw new DocumentStoreError(
          `cannot index parallel arrays: ${this.fields.join(', ')} (index ${this.name})`,
        );
      }
    }
  }

  /** The _id already holding one of these unique keys, other than `self`. */
  conflict(entries: IndexEntries, self: string): string | undefined {
    for (const tuple of entries.tuples) {
      let node: Level | Ids | undefined = this.root;
      for (let i = 0; i < tuple.length && node instanceof Map; i++) node = node.get(tuple[i]!);
      if (typeof node === 'string' && node !== self) return node;
    }
    return undefined;
  }

  add(id: string, entries: IndexEntries): void {
    if (entries.overflow) this.overflow.add(id);
    if (entries.multikey) this.multikeyDocs++;
    for (const tuple of entries.tuples) {
      let level = this.root;
      for (let i = 0; i < tuple.length - 1; i++) {
        let next = level.get(tuple[i]!) as Level | undefined;
        if (next === undefined) {
          next = new Map();
          level.set(tuple[i]!, next);
        }
        level = next;
      }
      const last = tuple[tuple.length - 1]!;
      if (!level.has(last)) this.keyAdded(level, last);
      if (this.unique) level.set(last, id);
      else {
        // A key held by one document keeps its _id as a string (most keys of a near-unique index:
        // a Set per key cost ~100 bytes and an allocation per document); a second one makes an
        // array, in insertion order as before, and past MAX_ARRAY_IDS a Set.
        const ids = level.get(last) as Ids | undefined;
        if (ids === undefined) level.set(last, id);
        else if (typeof ids === 'string') {
          if (ids !== id) level.set(last, [ids, id]);
        } else if (ids instanceof Set) {
          if (!ids.has(id)) {
            ids.add(id);
            this.sortedIds.get(ids)?.add(id);
          }
        } else if (!ids.includes(id)) {
          level.set(last, ids.length < MAX_ARRAY_IDS ? [...ids, id] : new Set([...ids, id]));
        }
      }
    }
  }

  remove(id: string, entries: IndexEntries): void {
    if (entries.overflow) this.overflow.delete(id);
    if (entries.multikey) this.multikeyDocs--;
    for (const tuple of entries.tuples) this.removeTuple(this.root, tuple, 0, id);
  }

  // Prunes emptied levels so a long replay that moves documents between keys does not leak Maps.
  private removeTuple(level: Level, tuple: Key[], depth: number, id: string): void {
    const key = tuple[depth]!;
    const child = level.get(key);
    if (child === undefined) return;
    if (depth === tuple.length - 1) {
      if (typeof child === 'string') {
        if (child === id) this.deleteKey(level, key);
      } else if (child instanceof Set) {
        if (child.delete(id)) this.sortedIds.get(child)?.delete(id);
        if (child.size === 0) this.deleteKey(level, key);
      } else if (Array.isArray(child)) {
        const at = child.indexOf(id);
        if (at === -1) return;
        if (child.length === 2) level.set(key, child[1 - at]!);
        else
          level.set(
            key,
            child.filter((x) => x !== id),
          );
      }
      return;
    }
    const next = child as Level;
    this.removeTuple(next, tuple, depth + 1, id);
    if (next.size === 0) level.delete(key);
  }

  private keyAdded(level: Level, key: Key): void {
    const sorted = this.sorted.get(level);
    if (sorted === undefined) return;
    if (typeof key === 'string') sorted.keys.add(key);
    else sorted.others++;
  }

  private deleteKey(level: Level, key: Key): void {
    level.delete(key);
    const sorted = this.sorted.get(level);
    if (sorted === undefined) return;
    if (typeof key === 'string') sorted.keys.delete(key);
    else sorted.others--;
  }

  /**
   * The _ids under the given single keys of every keyed field but the last, in the order of the last
   * field's keys within `range` (MongoDB's string order, `dir`), each key's in insertion order; lazily,
   * so a sorted find with a limit reads only its page. Undefined when that order cannot be given: a
   * key there that is no string, documents in overflow (they sit under no key) or an array at the
   * last field (sorted by one element, listed under each).
   */
  orderedIds(pinned: Key[], range: StringRange | undefined, dir: 1 | -1): Iterable<string> | undefined {
    if (pinned.length !== this.keyed.length - 1 || this.overflow.size > 0 || this.multikeyDocs > 0)
      return undefined;
    let level: Level = this.root;
    for (const key of pinned) {
      const next = level.get(key);
      if (next === undefined) return [];
      if (!(next instanceof Map)) return undefined;
      level = next;
    }
    const sorted = this.sortedLevel(level);
    if (sorted.others > 0) return undefined;
    return idsUnder(level, sorted.keys.within(range, dir));
  }

  /**
   * orderedIds for an index whose next-to-last keyed field is left free: the _ids under the given
   * single keys of the fields before it, then under every key of that field but `excluded`, merged in
   * the order of the last field's keys within `range` (ties: by the free field's key, then insertion
   * order); lazily. The documents under an excluded key are never read: a filter's `$nin` there (the
   * webhook sweeper leaving out the endpoints whose queue is full) costs nothing, however many they
   * are. But each other key's level is opened (a reader and a heap entry), due or not: with many
   * other keys and few documents left out, reading past those few costs less (the sweeper beside
   * 10,000 endpoints holding one later retry each opened 10,000 levels a sweep). So undefined too
   * when the keys left out hold no more _ids than there are other keys, and the caller reads
   * another way (counting stops there: never more than the other keys). `levels`: how many it opens.
   */
  mergedIds(
    pinned: Key[],
    excluded: ReadonlySet<Key>,
    range: StringRange | undefined,
    dir: 1 | -1,
  ): { ids: Iterable<string>; levels: number } | undefined {
    if (pinned.length !== this.keyed.length - 2 || this.overflow.size > 0 || this.multikeyDocs > 0)
      return undefined;
    let level: Level = this.root;
    for (const key of pinned) {
      const next = level.get(key);
      if (next === undefined) return { ids: [], levels: 0 };
      if (!(next instanceof Map)) return undefined;
      level = next;
    }
    let others = level.size;
    let left = 0;
    for (const key of excluded) {
      const child = level.get(key);
      if (child === undefined) continue;
      others--;
      left += child instanceof Map ? countIds(child, others + 1 - left) : idCount(child);
      if (left > others) break;
    }
    if (left <= others) return undefined;
    const streams: Stream[] = [];
    for (const [key, child] of level) {
      if (excluded.has(key)) continue;
      if (!(child instanceof Map)) return undefined;
      const sorted = this.sortedLevel(child);
      if (sorted.others > 0) return undefined;
      streams.push({ level: child, keys: sorted.keys.within(range, dir), key: '', tie: key });
    }
    return { ids: merged(streams, dir), levels: streams.length };
  }

  /**
   * The _ids under the given single keys of every keyed field, in _id order within `range` (`dir`),
   * lazily: a find pinning them all and sorted on _id reads its page, not every document under the
   * key (a group of equal keys paged by _id: askForUnfinished among the deliveries one start asked
   * for, which share one sweep_after). Undefined with documents in overflow (they sit under no key).
   */
  idsInOrder(pinned: Key[], range: StringRange | undefined, dir: 1 | -1): Iterable<string> | undefined {
    if (pinned.length !== this.keyed.length || this.overflow.size > 0) return undefined;
    let node: Level | Ids | undefined = this.root;
    for (const key of pinned) {
      if (!(node instanceof Map)) return undefined;
      node = node.get(key);
      if (node === undefined) return [];
    }
    if (node instanceof Map) return undefined;
    if (typeof node === 'string') return range === undefined || inStringRange(node, range) ? [node] : [];
    if (Array.isArray(node)) return new SortedKeys(node as string[]).within(range, dir);
    const set = node as Set<string>;
    let sorted = this.sortedIds.get(set);
    if (sorted === undefined) {
      sorted = new SortedKeys([...set]);
      this.sortedIds.set(set, sorted);
    }
    return sorted.within(range, dir);
  }

  /** A level's string keys in order, built on its first sorted read and kept up to date from then on. */
  private sortedLevel(level: Level): { keys: SortedKeys; others: number } {
    let sorted = this.sorted.get(level);
    if (sorted === undefined) {
      const all: string[] = [];
      for (const k of level.keys()) if (typeof k === 'string') all.push(k);
      sorted = { keys: new SortedKeys(all), others: level.size - all.length };
      this.sorted.set(level, sorted);
    }
    return sorted;
  }

  /** How many leading fields `constraints` pins with equality (0: this index cannot help). */
  prefixLength(constraints: Map<string, Key[]>): number {
    if (!this.covers(constraints)) return 0;
    let n = 0;
    while (n < this.keyed.length && constraints.has(this.keyed[n]!)) n++;
    return n;
  }

  /**
   * _ids under every combination of the given keys for the first `lists.length` fields (and, given
   * `range`, only under the keys of the next field within it), plus overflow; lazily, so a query with
   * a limit stops reading the index once it has enough.
   */
  *ids(lists: Key[][], range?: StringRange): Generator<string> {
    // A multikey document sits under several keys, and $in lists several keys: report each once.
    const seen = new Set<string>();
    for (const id of this.overflow) {
      seen.add(id);
      yield id;
    }
    for (const id of walk(this.root, lists, 0, range)) {
      if (seen.has(id)) continue;
      seen.add(id);
      yield id;
    }
  }

  clear(): void {
    this.root.clear();
    this.overflow.clear();
    this.multikeyDocs = 0;
    this.sorted.delete(this.root);
  }
}

function* walk(level: Level, lists: Key[][], depth: number, range?: StringRange): Generator<string> {
  if (depth === lists.length) {
    if (range === undefined) {
      yield* everything(level);
      return;
    }
    // The next field's keys within the range (a document keyed elsewhere cannot match it).
    for (const [key, child] of level) {
      if (!inStringRange(key, range)) continue;
      if (typeof child === 'string') yield child;
      else if (child instanceof Map) yield* everything(child);
      else yield* child;
    }
    return;
  }
  for (const key of lists[depth]!) {
    const child = level.get(key);
    if (child === undefined) continue;
    if (typeof child === 'string') yield child;
    else if (child instanceof Map) yield* walk(child, lists, depth + 1, range);
    else yield* child;
  }
}

/** One level of a merge (mergedIds): its keys in order, the one at hand, and the key it sits under. */
interface Stream {
  level: Level;
  keys: Iterator<string>;
  key: string;
  tie: Key;
}

/** Whether stream `a` comes before `b` (dir 1: ascending keys); ties by the key they sit under. */
function before(a: Stream, b: Stream, dir: 1 | -1): boolean {
  const c = compareStrings(a.key, b.key) * dir;
  if (c !== 0) return c < 0;
  return compareKeys(a.tie, b.tie) < 0;
}

function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The ids of several levels in the order of their keys: a binary heap of the levels, by key at hand. */
function* merged(streams: Stream[], dir: 1 | -1): Generator<string> {
  const heap: Stream[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!, dir)) return;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let first = i;
      if (l < heap.length && before(heap[l]!, heap[first]!, dir)) first = l;
      if (r < heap.length && before(heap[r]!, heap[first]!, dir)) first = r;
      if (first === i) return;
      [heap[i], heap[first]] = [heap[first]!, heap[i]!];
      i = first;
    }
  };
  for (const s of streams) {
    const next = s.keys.next();
    if (next.done) continue;
    s.key = next.value;
    heap.push(s);
    up(heap.length - 1);
  }
  // A document with an array in the merged field sits under several of its levels: listed once.
  const listed = new Set<string>();
  while (heap.length > 0) {
    const s = heap[0]!;
    for (const id of idsUnder(s.level, [s.key])) {
      if (listed.has(id)) continue;
      listed.add(id);
      yield id;
    }
    const next = s.keys.next();
    if (next.done) {
      const last = heap.pop()!;
      if (heap.length === 0) return;
      heap[0] = last;
    } else s.key = next.value;
    down(0);
  }
}

function samePartial(a: IndexSpec['partial'], b: IndexSpec['partial']): boolean {
  const x = Object.entries(a ?? {});
  const y = b ?? {};
  return x.length === Object.keys(y).length && x.every(([f, v]) => Object.hasOwn(y, f) && Object.is(y[f], v));
}

const idCount = (ids: Ids): number =>
  typeof ids === 'string' ? 1 : ids instanceof Set ? ids.size : ids.length;

/** The _ids under `level`, counted until they reach `enough` (each key holds one at least). */
function countIds(level: Level, enough: number): number {
  let n = 0;
  for (const child of level.values()) {
    n += child instanceof Map ? countIds(child, enough - n) : idCount(child);
    if (n >= enough) return n;
  }
  return n;
}

function* idsUnder(level: Level, keys: Iterable<string>): Generator<string> {
  for (const key of keys) {
    const ids = level.get(key);
    if (ids === undefined || ids instanceof Map) continue;
    if (typeof ids === 'string') yield ids;
    else yield* ids;
  }
}

function* everything(level: Level): Generator<string> {
  for (const child of level.values()) {
    if (typeof child === 'string') yield child;
    else if (child instanceof Map) yield* everything(child);
    else yield* child;
  }
}

export function sameEntries(a: IndexEntries, b: IndexEntries): boolean {
  const xs = a.full ?? a.tuples;
  const ys = b.full ?? b.tuples;
  if (a.overflow !== b.overflow || a.multikey !== b.multikey || xs.length !== ys.length) return false;
  for (let i = 0; i < xs.length; i++) {
    const ta = xs[i]!;
    const tb = ys[i]!;
    for (let j = 0; j < ta.length; j++) if (!Object.is(ta[j], tb[j]) && ta[j] !== tb[j]) return false;
  }
  return true;
}
