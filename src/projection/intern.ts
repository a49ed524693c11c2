// One copy of each repeated string in the read models. Every event of a replay is parsed anew, so
// each stored document kept its own copies of the restaurant's id, the shift and room ids, the
// day's instants, statuses and sources (V8 shares only the shortest strings JSON.parse makes): about
// half of the read models' string bytes were duplicates. The runner replaces, in each event's data
// before the projections see it, every string by the first equal one seen lately (the same value:
// nothing a projection or a reader sees changes), so the copies die young instead of being kept
// for the process's life.
//
// The table is bounded: two generations of GENERATION strings; a string found in the older one
// moves to the younger, the older is dropped when the younger fills. Strings that keep coming back
// (ids of restaurants, shifts and rooms, a day's instants) stay; unique ones (a reservation's own
// id) fall out after two generations.
import { isPlainObject } from '../adapters/document-store/values';

// Longer strings (texts, sort keys) are seldom repeated.
const MAX_LENGTH = 40;
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
 * Replaces, in place, the strings of `data` (plain objects and arrays of JSON data, as an event's
 * data is) by their table copies. Frozen objects are left as they are; field names are V8's own.
 */
export function internStrings(data: Record<string, unknown> | unknown[]): void {
  if (Object.isFrozen(data)) return;
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length; i++) {
      const v = data[i];
      if (typeof v === 'string') data[i] = intern(v);
      else if (typeof v === 'object' && v !== null && (Array.isArray(v) || isPlainObject(v)))
        internStrings(v as Record<string, unknown>);
    }
    return;
  }
  for (const k in data) {
    if (k === '__proto__') continue;
    const v = data[k];
    if (typeof v === 'string') data[k] = intern(v);
    else if (typeof v === 'object' && v !== null && (Array.isArray(v) || isPlainObject(v)))
      internStrings(v as Record<string, unknown>);
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
