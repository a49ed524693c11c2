// Value helpers for the embedded document store. Documents are JSON data (plus Dates), so a
// hand-written walk beats structuredClone by an order of magnitude on the replay hot path.
import { DocumentStoreError } from '../../ports/document-store';

export type Json = null | boolean | number | string | Date | Json[] | { [k: string]: Json };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && v !== Object.prototype;
}

// Field names are data: partner JSON reaches documents, and JSON.parse makes `__proto__` an own
// property, which MongoDB (the BSON serializer and deserializer) stores and returns as an ordinary
// field. So a document is read and written through own properties only: `o[k] = v` with k
// `__proto__` would replace the object's prototype, and `o[k]` would find Object.prototype's
// members (`constructor`, `toString`, `__proto__`) in a document that has no such field.

/**
 * One frozen empty array and one frozen empty object that stored documents share in place of their
 * own (a replay's read models hold hundreds of thousands of `tags: []`, `metadata: {}`: 32 and 56
 * bytes each). The embedded store's writeBack puts them at a document's top level (shareEmpties);
 * readers get copies (cloneValue makes fresh ones), and an in-place update that walks into one
 * gives the document a fresh one first (update.ts, containerOf); $push and $pull build new arrays.
 */
export const SHARED_EMPTY_ARRAY: readonly never[] = Object.freeze([]);
export const SHARED_EMPTY_OBJECT: Readonly<Record<string, never>> = Object.freeze({});

/**
 * Replaces, in place, the empty arrays and empty plain objects at `doc`'s top level by the shared
 * frozen ones (same JSON). For a document the store takes over (writeBack): nobody changes it in
 * place any more but the store's updates.
 */
export function shareEmpties(doc: Record<string, unknown>): void {
  for (const k in doc) {
    const v = doc[k];
    if (typeof v !== 'object' || v === null || v === SHARED_EMPTY_ARRAY || v === SHARED_EMPTY_OBJECT)
      continue;
    if (Array.isArray(v)) {
      if (v.length === 0 && k !== '__proto__') doc[k] = SHARED_EMPTY_ARRAY;
    } else if (isEmptyPlain(v) && k !== '__proto__') doc[k] = SHARED_EMPTY_OBJECT;
  }
}

function isEmptyPlain(v: object): boolean {
  for (const _ in v) return false;
  return Object.getPrototypeOf(v) === Object.prototype && Object.getOwnPropertyNames(v).length === 0;
}

/** The field `key` of a document object, or undefined when the object has no such own field. */
export function ownField(o: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

/** Sets the field `key` of a document object as an own data property, `__proto__` included. */
export function setField(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  } else o[key] = value;
}

/**
 * Deep copy of storable data. `undefined` becomes null (as the MongoDB driver stores it), so both
 * adapters hold the same document; values MongoDB would store differently are refused.
 */
export function cloneValue(v: unknown): Json {
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return v;
    case 'undefined':
      return null;
    case 'object': {
      if (v === null) return null;
      if (Array.isArray(v)) {
        const out: Json[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = cloneValue(v[i]);
        return out;
      }
      if (v instanceof Date) return new Date(v.getTime());
      if (!isPlainObject(v)) throw unsupported(v);
      const out: Record<string, Json> = {};
      for (const k in v) {
        if (k === '__proto__') setField(out, k, cloneValue(v[k]));
        else out[k] = cloneValue(v[k]);
      }
      return out;
    }
    default:
      throw unsupported(v);
  }
}

/**
 * True when `v` is what cloneValue would copy unchanged: strings, finite-or-not numbers, booleans,
 * null, dense arrays and plain objects of those (no undefined, no Date, no `__proto__` field). Such a
 * value can be stored as it is, without a copy; anything else goes through cloneValue.
 */
export function isStorable(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return true;
    case 'object': {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!isStorable(v[i])) return false;
        return true;
      }
      if (!isPlainObject(v)) return false;
      for (const k in v)
        if (k === '__proto__' || !isStorable((v as Record<string, unknown>)[k])) return false;
      return true;
    }
    default:
      return false;
  }
}

/**
 * isStorable(doc), knowing that `before` (a stored, hence storable, document) is what `doc` was
 * built from: a top-level field holding the very value `before` holds is storable already and not
 * walked again. A projection that spreads the stored document and changes a few fields has only
 * those walked (a reservation: 3 of 41 fields, its arrays and objects untouched).
 */
export function isStorableOver(doc: unknown, before: Record<string, unknown> | null): boolean {
  if (before === null) return isStorable(doc);
  if (!isPlainObject(doc)) return false;
  for (const k in doc) {
    if (k === '__proto__') return false;
    const v = doc[k];
    if (v === before[k] && Object.hasOwn(before, k)) continue;
    if (!isStorable(v)) return false;
  }
  return true;
}

function unsupported(v: unknown): DocumentStoreError {
  const kind = typeof v === 'object' ? (v?.constructor?.name ?? 'object') : typeof v;
  return new DocumentStoreError(`cannot store a value of type ${kind}: documents hold JSON data and Dates`);
}

/** Structural equality (field order ignored), used to tell a no-op update from a modification. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
  }
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let n = 0;
  for (const k in ra) {
    if (!Object.hasOwn(rb, k) || !sameValue(ra[k], rb[k])) return false;
    n++;
  }
  for (const _ in rb) n--;
  return n === 0;
}

/**
 * MongoDB's string order: its strings are UTF-8 and compare byte by byte (no collation), which is
 * code point order. JavaScript's `<` compares UTF-16 code units, where an astral character (emoji,
 * rare CJK: a surrogate pair, D800–DFFF) sorts below U+E000–U+FFFF (private use, CJK compatibility,
 * fullwidth forms, U+FFFD); MongoDB puts it above. Every other pair of strings orders the same.
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      // Surrogates move above U+E000–U+FFFF, which move down into their place: code point order.
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

// MongoDB's cross-type order (null < numbers < strings < objects < arrays < booleans < dates),
// needed by $max, $min and $push's $sort.
function typeRank(v: unknown): number {
  if (v === null || v === undefined) return 1;
  switch (typeof v) {
    case 'number':
      return 2;
    case 'string':
      return 3;
    case 'boolean':
      return 8;
  }
  if (Array.isArray(v)) return 5;
  if (v instanceof Date) return 9;
  return 4;
}

export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1:
      return 0;
    case 2:
    case 8:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 3:
      return compareStrings(a as string, b as string);
    case 9:
      return Math.sign((a as Date).getTime() - (b as Date).getTime());
    case 5: {
      const xa = a as unknown[];
      const xb = b as unknown[];
      for (let i = 0; i < Math.min(xa.length, xb.length); i++) {
        const c = compareValues(xa[i], xb[i]);
        if (c !== 0) return c;
      }
      return Math.sign(xa.length - xb.length);
    }
    default: {
      const ea = Object.entries(a as object);
      const eb = Object.entries(b as object);
      for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
        const [ka, va] = ea[i]!;
        const [kb, vb] = eb[i]!;
        const c = compareValues(va, vb) || compareStrings(ka, kb);
        if (c !== 0) return c;
      }
      return Math.sign(ea.length - eb.length);
    }
  }
}
