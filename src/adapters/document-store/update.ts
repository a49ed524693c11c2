// Update operators for the embedded store, applied in place with an undo journal: replaying
// events mostly changes a field or two of an existing document, and rewriting it in place spares
// allocating (and promoting to the old generation) a new version per event. A step that fails
// (a $inc on a string, a path through a scalar) rolls back the steps before it, so a failed update
// changes nothing. mingo's own updater also mutates in place but has no rollback and silently
// skips some invalid operands, hence this module.
import { Query } from 'mingo';
import { InvalidQueryError } from '../../ports/document-store';
import type { ParsedUpdate, UpdateStep } from './validate';
import {
  cloneValue,
  compareValues,
  isPlainObject,
  ownField,
  SHARED_EMPTY_ARRAY,
  SHARED_EMPTY_OBJECT,
  sameValue,
  setField,
} from './values';

type Container = Record<string, unknown> | unknown[];

const MAX_ARRAY_PADDING = 1_000_000;
const ABSENT = Symbol('absent');

function isIndex(seg: string): boolean {
  if (seg.length === 0) return false;
  if (seg.charCodeAt(0) === 48) return seg.length === 1;
  for (let i = 0; i < seg.length; i++) {
    const d = seg.charCodeAt(i);
    if (d < 48 || d > 57) return false;
  }
  return true;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Date) return 'a date';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** What an update changed, to undo it when a later check (a unique index) refuses the write. */
export class Journal {
  // Flat [container, key, previous value or ABSENT, …]; arrays are saved whole before their first write.
  private readonly log: unknown[] = [];
  private savedArrays: Map<unknown[], unknown[]> | undefined;
  changed = false;

  write(container: Container, key: string, value: unknown): void {
    if (Array.isArray(container)) {
      this.savedArrays ??= new Map();
      if (!this.savedArrays.has(container)) this.savedArrays.set(container, container.slice());
    } else this.log.push(container, key, Object.hasOwn(container, key) ? container[key] : ABSENT);
    assignRaw(container, key, value);
  }

  remove(container: Record<string, unknown>, key: string): void {
    this.log.push(container, key, container[key]);
    delete container[key];
  }

  rollback(): void {
    for (const [array, saved] of this.savedArrays ?? []) {
      array.length = 0;
      for (const v of saved) array.push(v);
    }
    const log = this.log;
    for (let i = log.length - 3; i >= 0; i -= 3) {
      const c = log[i] as Record<string, unknown>;
      const k = log[i + 1] as string;
      if (log[i + 2] === ABSENT) delete c[k];
      else setField(c, k, log[i + 2]);
    }
  }
}

function assignRaw(container: Container, key: string, value: unknown): void {
  if (!Array.isArray(container)) {
    setField(container, key, value);
    return;
  }
  const i = Number(key);
  while (container.length < i) container.push(null);
  container[i] = value;
}

/**
 * The container of the path's last segment. With `create`, missing objects on the way are created
 * and a scalar on the way is an error; without, either yields undefined.
 */
function containerOf(doc: Record<string, unknown>, step: UpdateStep, create: boolean, j: Journal) {
  const segs = step.segs;
  let node: Container = doc;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    const inArray = Array.isArray(node);
    if (inArray && !isIndex(seg)) {
      if (create)
        throw new InvalidQueryError(`${step.op} ${step.path}: ${seg} is not an index into an array`);
      return undefined;
    }
    let child: unknown = inArray
      ? (node as unknown[])[Number(seg)]
      : ownField(node as Record<string, unknown>, seg);
    if (child === undefined) {
      if (!create) return undefined;
      child = {};
      assign(node, seg, child, step, j);
    } else if (child === SHARED_EMPTY_OBJECT || child === SHARED_EMPTY_ARRAY) {
      // Shared by many documents (values.ts): this one gets its own before anything is written
      // into it. Without `create` nothing is (an $unset or $pull of a missing path).
      if (!create) return undefined;
      child = Array.isArray(child) ? [] : {};
      assign(node, seg, child, step, j);
    } else if (!Array.isArray(child) && !isPlainObject(child)) {
      if (create) {
        throw new InvalidQueryError(
          `${step.op} ${step.path}: cannot create a field in ${segs.slice(0, i + 1).join('.')}, which holds ${describe(child)}`,
        );
      }
      return undefined;
    }
    node = child as Container;
  }
  return node;
}

function read(container: Container, seg: string): unknown {
  if (Array.isArray(container)) return isIndex(seg) ? container[Number(seg)] : undefined;
  return ownField(container, seg);
}

function assign(container: Container, seg: string, value: unknown, step: UpdateStep, j: Journal): void {
  if (Array.isArray(container)) {
    if (!isIndex(seg))
      throw new InvalidQueryError(`${step.op} ${step.path}: ${seg} is not an index into an array`);
    if (Number(seg) > container.length + MAX_ARRAY_PADDING) {
      throw new InvalidQueryError(`${step.op} ${step.path}: index too large`);
    }
  }
  j.write(container, seg, value);
}

/**
 * Applies the update to `doc` in place and returns its journal (`changed` tells a no-op). If a step
 * throws, the steps before it are rolled back first. `$setOnInsert` applies only when `inserting`
 * (an upsert creating the document).
 */
export function applyUpdate(doc: Record<string, unknown>, update: ParsedUpdate, inserting: boolean): Journal {
  const j = new Journal();
  try {
    for (const step of update.steps) applyStep(doc, step, inserting, j);
  } catch (err) {
    j.rollback();
    throw err;
  }
  return j;
}

function applyStep(doc: Record<string, unknown>, step: UpdateStep, inserting: boolean, j: Journal): void {
  const { op, segs, value } = step;
  const last = segs[segs.length - 1]!;
  switch (op) {
    case '$setOnInsert':
    case '$set': {
      if (op === '$setOnInsert' && !inserting) return;
      if (step.path === '_id') {
        if (value !== doc._id) throw new InvalidQueryError(`${op}: _id is immutable`);
        return;
      }
      const c = containerOf(doc, step, true, j)!;
      const current = read(c, last);
      if (current !== undefined && sameValue(current, value)) return;
      assign(c, last, cloneValue(value), step, j);
      j.changed = true;
      return;
    }
    case '$unset': {
      const c = containerOf(doc, step, false, j);
      if (c === undefined) return;
      if (Array.isArray(c)) {
        if (isIndex(last) && Number(last) < c.length && c[Number(last)] !== null) {
          j.write(c, last, null);
          j.changed = true;
        }
      } else if (Object.hasOwn(c, last)) {
        j.remove(c, last);
        j.changed = true;
      }
      return;
    }
    case '$inc': {
      const c = containerOf(doc, step, true, j)!;
      const current = read(c, last);
      if (current === undefined) {
        assign(c, last, value, step, j);
        j.changed = true;
      } else if (typeof current !== 'number') {
        throw new InvalidQueryError(`$inc ${step.path}: cannot increment ${describe(current)}`);
      } else if (value !== 0) {
        assign(c, last, current + (value as number), step, j);
        j.changed = true;
      }
      return;
    }
    case '$max':
    case '$min': {
      const c = containerOf(doc, step, true, j)!;
      const current = read(c, last);
      const cmp = current === undefined ? 0 : compareValues(value, current);
      if (current === undefined || (op === '$max' ? cmp > 0 : cmp < 0)) {
        assign(c, last, cloneValue(value), step, j);
        j.changed = true;
      }
      return;
    }
    case '$push': {
      const c = containerOf(doc, step, true, j)!;
      const current = read(c, last);
      if (current !== undefined && !Array.isArray(current)) {
        throw new InvalidQueryError(`$push ${step.path}: the field holds ${describe(current)}, not an array`);
      }
      const next = push(current ?? [], value);
      if (current === undefined || !sameValue(current, next)) {
        assign(c, last, next, step, j);
        j.changed = true;
      }
      return;
    }
    case '$pull': {
      const c = containerOf(doc, step, false, j);
      const current = c === undefined ? undefined : read(c, last);
      if (current === undefined) return;
      if (!Array.isArray(current)) {
        throw new InvalidQueryError(`$pull ${step.path}: the field holds ${describe(current)}, not an array`);
      }
      const matches = pullPredicate(value);
      const kept = current.filter((e) => !matches(e));
      if (kept.length !== current.length) {
        assign(c!, last, kept, step, j);
        j.changed = true;
      }
      return;
    }
  }
}

function push(current: unknown[], value: unknown): unknown[] {
  const mods = isPlainObject(value) && '$each' in value ? value : undefined;
  const items = mods ? (mods.$each as unknown[]).map(cloneValue) : [cloneValue(value)];
  let out = current.slice();
  let at = mods?.$position === undefined ? out.length : (mods.$position as number);
  if (at < 0) at = Math.max(0, out.length + at);
  out.splice(Math.min(at, out.length), 0, ...items);
  if (mods?.$sort !== undefined) out.sort(sorter(mods.$sort as 1 | -1 | Record<string, 1 | -1>));
  if (mods?.$slice !== undefined) {
    const n = mods.$slice as number;
    out = n >= 0 ? out.slice(0, n) : out.slice(n);
  }
  return out;
}

function sorter(spec: 1 | -1 | Record<string, 1 | -1>): (a: unknown, b: unknown) => number {
  if (spec === 1 || spec === -1) return (a, b) => spec * compareValues(a, b);
  const keys = Object.entries(spec).map(([path, dir]) => [path.split('.'), dir] as const);
  const at = (v: unknown, segs: readonly string[]) => {
    let node = v;
    for (const s of segs) node = isPlainObject(node) ? ownField(node, s) : undefined;
    return node ?? null;
  };
  return (a, b) => {
    for (const [segs, dir] of keys) {
      const c = compareValues(at(a, segs), at(b, segs));
      if (c !== 0) return dir * c;
    }
    return 0;
  };
}

// A document condition is a query on each element; an operator expression tests each element as
// a value; anything else is an equality (MongoDB's $pull rules).
function pullPredicate(cond: unknown): (e: unknown) => boolean {
  if (isPlainObject(cond)) {
    const operators = Object.keys(cond).some((k) => k.charCodeAt(0) === 36);
    if (operators) {
      const q = new Query({ v: cond }, {});
      return (e) => q.test({ v: e });
    }
    const q = new Query(cond, {});
    return (e) => isPlainObject(e) && q.test(e);
  }
  if (cond instanceof RegExp)
    return (e) => typeof e === 'string' && new RegExp(cond.source, cond.flags).test(e);
  return (e) => sameValue(e, cond);
}
