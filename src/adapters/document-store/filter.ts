// Filter evaluation for the embedded store. mingo is the reference for MongoDB semantics, but
// compiling a mingo Query costs ~25 µs (measured on applyOnce's guard filter). The filters
// projections run per event (equality, ranges, $in, $exists, $or) are decided here directly when
// the document holds scalars on the filtered paths, and handed to mingo otherwise (arrays,
// sub-documents, Dates, other operators), so both routes give mingo's answer.
import { Query } from 'mingo';
import { type Doc, type Filter, InvalidQueryError } from '../../ports/document-store';
import { isKey, type Key } from './key-index';
import { splitPath, type UpdateStep } from './validate';
import { compareStrings, isPlainObject, ownField } from './values';

const MISSING = Symbol('missing');
const UNDECIDED = Symbol('undecided');
type Resolved = Key | typeof MISSING | typeof UNDECIDED;
type Verdict = boolean | typeof UNDECIDED;

// Walks a dotted path without splitting it: this runs once per filter field per document.
function resolve(doc: Doc, path: string): Resolved {
  let node: unknown = doc;
  let start = 0;
  for (;;) {
    if (node === null || typeof node !== 'object') return MISSING;
    if (Array.isArray(node) || node instanceof Date) return UNDECIDED;
    const dot = path.indexOf('.', start);
    const seg = dot === -1 ? (start === 0 ? path : path.slice(start)) : path.slice(start, dot);
    node = ownField(node as Record<string, unknown>, seg);
    if (node === undefined) return MISSING;
    if (dot === -1) break;
    start = dot + 1;
  }
  return node !== null && typeof node === 'object' ? UNDECIDED : (node as Key);
}

const eq = (k: Key, v: Key | typeof MISSING) => (k === null ? v === null || v === MISSING : v === k);

function inList(list: unknown, v: Key | typeof MISSING): Verdict {
  if (!Array.isArray(list)) return UNDECIDED;
  for (const item of list) {
    // The MongoDB driver sends an undefined array element as null: $in [undefined] is $in [null].
    const k = item === undefined ? null : item;
    if (!isKey(k)) return UNDECIDED;
    if (eq(k, v)) return true;
  }
  return false;
}

/**
 * The filter as the MongoDB driver sends it: an undefined element of an array ($in, $nin, $all) is
 * null there. mingo, given undefined, matches no document where MongoDB matches null and missing.
 * A copy when it changes anything; the filter itself otherwise.
 */
function asSent(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const sent = v === undefined ? null : asSent(v);
      if (sent !== v) {
        out ??= value.slice();
        out[i] = sent;
      }
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | null = null;
  for (const k in value) {
    const v = value[k];
    const sent = asSent(v);
    if (sent !== v) {
      out ??= { ...value };
      out[k] = sent;
    }
  }
  return out ?? value;
}

function range(op: string, o: unknown, v: Key | typeof MISSING): Verdict {
  const type = typeof o;
  if ((type !== 'number' || Number.isNaN(o)) && type !== 'string') return UNDECIDED;
  if (typeof v !== type) return false;
  if (type === 'string') {
    // MongoDB's string order (code points), not JavaScript's (UTF-16 code units).
    const c = compareStrings(v as string, o as string);
    return op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0;
  }
  const a = v as number;
  const b = o as number;
  return op === '$gt' ? a > b : op === '$gte' ? a >= b : op === '$lt' ? a < b : a <= b;
}

function evalField(doc: Doc, path: string, cond: unknown): Verdict {
  if (isKey(cond)) {
    const v = resolve(doc, path);
    return v === UNDECIDED ? UNDECIDED : eq(cond, v);
  }
  if (!isPlainObject(cond)) return UNDECIDED;
  const v = resolve(doc, path);
  if (v === UNDECIDED) return UNDECIDED;
  let any = false;
  for (const op in cond) {
    any = true;
    const o = cond[op];
    let r: Verdict;
    switch (op) {
      case '$eq':
        r = isKey(o) ? eq(o, v) : UNDECIDED;
        break;
      case '$ne':
        r = isKey(o) ? !eq(o, v) : UNDECIDED;
        break;
      case '$in':
        r = inList(o, v);
        break;
      case '$nin': {
        const i = inList(o, v);
        r = i === UNDECIDED ? i : !i;
        break;
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        r = range(op, o, v);
        break;
      case '$exists':
        r = (v !== MISSING) === Boolean(o);
        break;
      default:
        return UNDECIDED;
    }
    if (r !== true) return r;
  }
  return any ? true : UNDECIDED;
}

/** The filter's verdict on `doc`, or UNDECIDED where only mingo knows (operators, arrays, sub-documents). */
function evalFilter(filter: Filter, doc: Doc): Verdict {
  let undecided = false;
  for (const key in filter) {
    const cond = filter[key];
    let r: Verdict;
    if (key.charCodeAt(0) !== 36) r = evalField(doc, key, cond);
    else if (key === '$and' || key === '$or' || key === '$nor') {
      const all = key === '$and';
      let sub: Verdict = all;
      for (const clause of cond as Filter[]) {
        const c = evalFilter(clause, doc);
        if (c === UNDECIDED) sub = UNDECIDED;
        else if (c !== all) {
          sub = c;
          break;
        }
      }
      r = key === '$nor' && sub !== UNDECIDED ? !sub : sub;
    } else return UNDECIDED;
    if (r === false) return false;
    if (r === UNDECIDED) undecided = true;
  }
  return undecided ? UNDECIDED : true;
}

export type Matcher = (doc: Doc) => boolean;

export function compileMatcher(filter: Filter): Matcher {
  let query: Query | undefined;
  return (doc) => {
    const verdict = evalFilter(filter, doc);
    if (verdict !== UNDECIDED) return verdict;
    try {
      query ??= new Query(asSent(filter) as Filter, {});
      return query.test(doc);
    } catch (err) {
      throw new InvalidQueryError(`filter cannot run: ${(err as Error).message}`);
    }
  };
}

/** Equality constraints (value or $eq on a scalar, $in of scalars) on top-level paths and inside $and. */
export function equalityConstraints(filter: Filter, out = new Map<string, Key[]>()): Map<string, Key[]> {
  for (const key in filter) {
    const value = filter[key];
    if (key === '$and') {
      for (const c of value as Filter[]) equalityConstraints(c, out);
      continue;
    }
    if (key.charCodeAt(0) === 36) continue;
    let keys: Key[] | undefined;
    if (isKey(value)) keys = [value];
    else if (isPlainObject(value)) {
      if ('$eq' in value && isKey(value.$eq)) keys = [value.$eq];
      else if (Array.isArray(value.$in) && value.$in.every(isKey)) keys = value.$in;
    }
    if (keys === undefined) continue;
    const known = out.get(key);
    if (known === undefined || keys.length < known.length) out.set(key, keys);
  }
  return out;
}

/** A range on strings ($gt, $gte, $lt, $lte with string bounds): what an index level can narrow by. */
export interface StringRange {
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
}

const RANGE_OPS: Record<string, keyof StringRange> = { $gt: 'gt', $gte: 'gte', $lt: 'lt', $lte: 'lte' };

/**
 * Ranges with string bounds on top-level paths and inside $and: only a condition of range operators
 * alone, each bound a string (it matches strings only, as MongoDB's type bracketing, `range` above).
 */
export function stringRanges(filter: Filter, out = new Map<string, StringRange>()): Map<string, StringRange> {
  for (const key in filter) {
    const value = filter[key];
    if (key === '$and') {
      for (const c of value as Filter[]) stringRanges(c, out);
      continue;
    }
    if (key.charCodeAt(0) === 36 || !isPlainObject(value)) continue;
    const ops = Object.keys(value);
    if (ops.length === 0 || !ops.every((op) => RANGE_OPS[op] !== undefined && typeof value[op] === 'string'))
      continue;
    if (out.has(key)) continue;
    const r: StringRange = {};
    for (const op of ops) r[RANGE_OPS[op] as keyof StringRange] = value[op] as string;
    // Bounds on one side only: on an array field (indexed under each element) each bound of
    // `{$gt: a, $lt: b}` may be met by a different element, so no key need be within both; a key within
    // the lower bounds always exists for a match (the element meeting the stricter one).
    if (r.gt !== undefined || r.gte !== undefined) {
      delete r.lt;
      delete r.lte;
    }
    out.set(key, r);
  }
  return out;
}

/** Whether a key is within a string range (MongoDB's string order). */
export function inStringRange(key: unknown, r: StringRange): boolean {
  if (typeof key !== 'string') return false;
  if (r.gt !== undefined && compareStrings(key, r.gt) <= 0) return false;
  if (r.gte !== undefined && compareStrings(key, r.gte) < 0) return false;
  if (r.lt !== undefined && compareStrings(key, r.lt) >= 0) return false;
  if (r.lte !== undefined && compareStrings(key, r.lte) > 0) return false;
  return true;
}

/** The fields an upsert copies from its filter: equalities on top-level paths and inside $and. */
export function upsertSeedSteps(filter: Filter, out: UpdateStep[] = []): UpdateStep[] {
  for (const key in filter) {
    const value = filter[key];
    if (key === '$and') {
      for (const c of value as Filter[]) upsertSeedSteps(c, out);
      continue;
    }
    if (key.charCodeAt(0) === 36 || value instanceof RegExp) continue;
    const operators = isPlainObject(value) && Object.keys(value).some((k) => k.charCodeAt(0) === 36);
    if (operators && !('$eq' in (value as Record<string, unknown>))) continue;
    const seeded = operators ? (value as Record<string, unknown>).$eq : value;
    if (out.some((s) => s.path === key)) continue;
    out.push({ op: '$set', path: key, segs: splitPath(key, 'filter'), value: seeded });
  }
  return out;
}
