// One copy of each repeated string in the embedded store's documents. Every event of a replay is
// parsed anew, so each stored document held its own copy of the restaurant's id, the shift and room
// ids, the day's instants, statuses and sources (V8 shares only the shortest strings JSON.parse
// makes): about half of the read models' string bytes were duplicates. Documents are stored with
// the strings replaced by the first equal one seen (same value: reads are unchanged), so the copies
// die young instead of being kept for the process's life.
//
// The table is bounded: two generations of GENERATION strings; a string seen in the older one moves
// to the younger, the older is dropped when the younger fills. Strings that keep coming back (ids of
// restaurants, shifts and rooms, a day's instants) stay; unique ones (a reservation's own id) fall
// out after two generations and cost nothing after.
import { isPlainObject } from './values';

const MAX_LENGTH = 64;
const GENERATION = 1 << 15;

let young = new Map<string, string>();
let old = new Map<string, string>();

/** The table's copy of `s` (the first equal string seen lately), or `s` itself. */
export function intern(s: string): string {
  if (s.length > MAX_LENGTH) return s;
  const hit = young.get(s);
  if (hit !== undefined) return hit;
  const kept = old.get(s) ?? s;
  if (young.size >= GENERATION) {
    old = young;
    young = new Map();
  }
  young.set(kept, kept);
  return kept;
}

/**
 * Replaces, in place, the strings of `doc` (a plain object or array of JSON data) by their table
 * copies. `before` is the version of the same document already stored: a field holding the very
 * value it held there (shared by copy on write) was interned then and is skipped, sub-documents
 * included. Frozen objects (the tests freeze documents a projection shares) are left as they are.
 */
export function internDocument(doc: Record<string, unknown> | unknown[], before?: unknown): void {
  if (Object.isFrozen(doc)) return;
  if (Array.isArray(doc)) {
    const prev = Array.isArray(before) ? before : undefined;
    for (let i = 0; i < doc.length; i++) {
      const v = doc[i];
      if (prev !== undefined && prev[i] === v) continue;
      if (typeof v === 'string') doc[i] = intern(v);
      else if (typeof v === 'object' && v !== null && (Array.isArray(v) || isPlainObject(v)))
        internDocument(v as Record<string, unknown>, prev?.[i]);
    }
    return;
  }
  const prev = isPlainObject(before) ? before : undefined;
  for (const k in doc) {
    if (k === '__proto__') continue;
    const v = doc[k];
    // (an inherited member of prev, e.g. `constructor`, equals no JSON value)
    if (prev !== undefined && prev[k] === v) continue;
    if (typeof v === 'string') doc[k] = intern(v);
    else if (typeof v === 'object' && v !== null && (Array.isArray(v) || isPlainObject(v)))
      internDocument(v as Record<string, unknown>, prev?.[k]);
  }
}

/** How many strings each generation holds (tests). */
export function internTableSizes(): { young: number; old: number } {
  return { young: young.size, old: old.size };
}

export const INTERN_GENERATION = GENERATION;
export const INTERN_MAX_LENGTH = MAX_LENGTH;

/** Empties the table (tests). */
export function resetInternTable(): void {
  young = new Map();
  old = new Map();
}

/** `v` with its strings interned: a string's table copy, or a fresh container interned in place. */
export function internValue<T>(v: T): T {
  if (typeof v === 'string') return intern(v) as T;
  if (typeof v === 'object' && v !== null && (Array.isArray(v) || isPlainObject(v)))
    internDocument(v as Record<string, unknown>);
  return v;
}
