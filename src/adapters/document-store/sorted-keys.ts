// The string keys of one index level in MongoDB's string order, kept as they come and go, so a find
// sorted on that field with a limit reads its page in order instead of sorting every document under
// the level (the webhook sweeper's `{status: 'pending', sweep_after: {$lte: now}}` sorted by
// sweep_after, each second, over a pending set that grows with failing endpoints). Chunks of at most
// CHUNK keys: an insert or delete moves at most a chunk's keys, not the level's (one array of
// 100,000 keys moved ~400 KB for each key a replay changed).
import type { StringRange } from './filter';
import { compareStrings } from './values';

const CHUNK = 512;

// A UTF-16 unit at or above U+D800: where comparing units (`<`, the built-in sort) stops giving
// code point order (compareStrings). Below it, both orders agree, and a JS comparator cost ~3x the
// built-in sort of the first read of a level (731 ms against 203 ms at 500,000 keys).
const WIDE = /[\uD800-\uFFFF]/;

export class SortedKeys {
  private chunks: string[][];
  /**
   * No key held so far has a unit at or above U+D800: `<` orders them (and any key against them)
   * as compareStrings does. Cleared for good by the first such key added.
   */
  private narrow: boolean;

  constructor(keys: string[]) {
    this.narrow = !keys.some((k) => WIDE.test(k));
    const sorted = this.narrow ? [...keys].sort() : [...keys].sort(compareStrings);
    this.chunks = [];
    for (let i = 0; i < sorted.length; i += CHUNK) this.chunks.push(sorted.slice(i, i + CHUNK));
  }

  get size(): number {
    let n = 0;
    for (const c of this.chunks) n += c.length;
    return n;
  }

  /** Adds a key not held yet. */
  add(key: string): void {
    if (this.narrow && WIDE.test(key)) this.narrow = false;
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      return;
    }
    const ci = this.chunkFor(key);
    const chunk = this.chunks[ci]!;
    chunk.splice(lowerBound(chunk, key, this.narrow), 0, key);
    if (chunk.length > 2 * CHUNK) this.chunks.splice(ci, 1, chunk.slice(0, CHUNK), chunk.slice(CHUNK));
  }

  delete(key: string): void {
    if (this.chunks.length === 0) return;
    const ci = this.chunkFor(key);
    const chunk = this.chunks[ci]!;
    const at = lowerBound(chunk, key, this.narrow);
    if (chunk[at] !== key) return;
    chunk.splice(at, 1);
    if (chunk.length === 0) this.chunks.splice(ci, 1);
  }

  /** The keys within `range`, ascending (dir 1) or descending (-1), lazily. */
  *within(range: StringRange | undefined, dir: 1 | -1): Generator<string> {
    // No chunk to start from (a level's last key deleted; the index prunes such a level, but a range
    // read of this one alone must not throw).
    if (this.chunks.length === 0) return;
    const lo = range?.gt ?? range?.gte;
    const hi = range?.lt ?? range?.lte;
    const above = (k: string): boolean =>
      (range?.lt !== undefined && compareStrings(k, range.lt) >= 0) ||
      (range?.lte !== undefined && compareStrings(k, range.lte) > 0);
    const below = (k: string): boolean =>
      (range?.gt !== undefined && compareStrings(k, range.gt) <= 0) ||
      (range?.gte !== undefined && compareStrings(k, range.gte) < 0);
    if (dir === 1) {
      let ci = lo === undefined ? 0 : this.chunkFor(lo);
      let at = lo === undefined ? 0 : lowerBound(this.chunks[ci] ?? [], lo, this.narrow);
      for (; ci < this.chunks.length; ci++, at = 0) {
        const chunk = this.chunks[ci]!;
        // Copied: the caller's reads may not change the level, but a generator outlives a turn.
        for (const k of chunk.slice(at)) {
          if (below(k)) continue;
          if (above(k)) return;
          yield k;
        }
      }
      return;
    }
    let ci = hi === undefined ? this.chunks.length - 1 : this.chunkFor(hi);
    let end =
      hi === undefined ? Number.POSITIVE_INFINITY : upperBound(this.chunks[ci] ?? [], hi, this.narrow);
    for (; ci >= 0; ci--, end = Number.POSITIVE_INFINITY) {
      const chunk = this.chunks[ci]!;
      const part = chunk.slice(0, Math.min(end, chunk.length));
      for (let i = part.length - 1; i >= 0; i--) {
        const k = part[i]!;
        if (above(k)) continue;
        if (below(k)) return;
        yield k;
      }
    }
  }

  /** The chunk whose range holds `key` (the last chunk whose first key is ≤ key, else the first). */
  private chunkFor(key: string): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      const first = this.chunks[mid]![0]!;
      if (this.narrow ? first <= key : compareStrings(first, key) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** The first index whose key is ≥ `key`. */
function lowerBound(keys: string[], key: string, narrow: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const k = keys[mid]!;
    if (narrow ? k < key : compareStrings(k, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose key is > `key`. */
function upperBound(keys: string[], key: string, narrow: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const k = keys[mid]!;
    if (narrow ? k <= key : compareStrings(k, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
