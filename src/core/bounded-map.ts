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
