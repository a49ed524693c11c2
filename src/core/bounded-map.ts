// Bounding a Map used as a cache in insertion (or LRU: delete then set) order.
//
// `map.delete(map.keys().next().value)` on every insertion past the bound looks O(1) but is not in
// V8: a deleted entry stays in the Map's table as a hole until the table is rebuilt, and every new
// iterator starts at the table's front and steps over all the holes there. A cache of 50,000 entries
// evicting one entry per insertion spent ~20 µs an insertion doing so (an import of 100,000
// customers: seconds of the main thread, growing with the number of entries written), where a cache
// still filling up spent nothing. Evicting a batch at a time with one iterator pays the walk over the
// holes once a batch.

/** Evicts the oldest entries of `map` once it holds more than `max`: down to `max` less a 32nd. */
export function trimOldest<K, V>(map: Map<K, V> | Set<K>, max: number): void {
  if (map.size <= max) return;
  let n = map.size - max + Math.floor(max / 32);
  for (const k of map.keys()) {
    map.delete(k);
    if (--n <= 0) break;
  }
}

/**
 * A cache of at most `max` entries with no latency spike when it is full: two generations of at most
 * max / 2 entries each. New and refreshed entries go into the young one; when it is full it becomes the
 * old one and the old one is dropped whole, so nothing is deleted one entry at a time. A Map with
 * trimOldest (or delete-then-set as an LRU) leaves holes that V8 clears by rehashing the whole table
 * within one insertion: 7–14 ms at 50,000 entries on the development machine, 30–45 ms while an import
 * kept both cores busy (docs/BENCHMARKS.md). A hit in the old generation moves the entry to the young
 * one (least recently used entries go first, roughly: by generation).
 */
export class BoundedCache<K, V extends object | string | number | boolean | bigint | null> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly half: number;

  constructor(max: number) {
    this.half = Math.max(1, Math.floor(max / 2));
  }

  // Values are never undefined (the type says so), so a get answers a hit with one look-up.
  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const kept = this.old.get(key);
    if (kept === undefined) return undefined;
    this.old.delete(key);
    this.put(key, kept);
    return kept;
  }

  has(key: K): boolean {
    return this.young.has(key) || this.old.has(key);
  }

  set(key: K, value: V): this {
    if (this.old.size > 0) this.old.delete(key);
    this.put(key, value);
    return this;
  }

  delete(key: K): boolean {
    const a = this.young.delete(key);
    return this.old.delete(key) || a;
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
  }

  get size(): number {
    return this.young.size + this.old.size;
  }

  /** Every entry, the most recent generation first. */
  *entries(): IterableIterator<[K, V]> {
    yield* this.young;
    yield* this.old;
  }

  private put(key: K, value: V): void {
    if (this.young.size >= this.half && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }
}
