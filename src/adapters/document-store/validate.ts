// Checks shared by both DocumentStore adapters. The MongoDB server would accept more (positional
// updates, $expr, $where …); refusing the same things on both sides keeps projections portable:
// what passes against the embedded store passes against MongoDB.
import {
  type Doc,
  DocumentStoreError,
  type FindOptions,
  type IndexSpec,
  InvalidQueryError,
} from '../../ports/document-store';
import { isPlainObject } from './values';

export const FILTER_OPERATORS = [
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
  '$not',
  '$regex',
  '$options',
  '$elemMatch',
  '$size',
  '$all',
] as const;
export const LOGICAL_OPERATORS = ['$and', '$or', '$nor'] as const;
export const UPDATE_OPERATORS = [
  '$set',
  '$unset',
  '$inc',
  '$push',
  '$pull',
  '$setOnInsert',
  '$max',
  '$min',
] as const;
export type UpdateOperator = (typeof UPDATE_OPERATORS)[number];

const fieldOps = new Set<string>(FILTER_OPERATORS);
const logicalOps = new Set<string>(LOGICAL_OPERATORS);
const updateOps = new Set<string>(UPDATE_OPERATORS);
const pushModifiers = new Set(['$each', '$slice', '$position', '$sort']);

export const CHECKPOINTS_COLLECTION = '_checkpoints';

const invalid = (message: string) => new InvalidQueryError(message);

/** Splits a dotted path, refusing empty segments and `$` segments (positional updates). */
export function splitPath(path: string, where: string): string[] {
  if (path.length === 0) throw invalid(`${where}: empty field path`);
  if (path.indexOf('.') === -1) {
    if (path.charCodeAt(0) === 36 /* $ */) throw invalid(`${where}: unsupported field path ${path}`);
    return [path];
  }
  const segs = path.split('.');
  for (const s of segs) {
    if (s.length === 0 || s.charCodeAt(0) === 36) throw invalid(`${where}: unsupported field path ${path}`);
  }
  return segs;
}

/**
 * A path read by mingo (filters, sort, projection; index keys, which only filters use): mingo
 * refuses `__proto__` segments, so both adapters refuse them, rather than the embedded one failing
 * only on the documents its own matcher cannot decide. Updates take such paths: they write data.
 */
function splitQueryPath(path: string, where: string): string[] {
  const segs = splitPath(path, where);
  if (path.includes('__proto__') && segs.includes('__proto__')) {
    throw invalid(`${where}: the field path ${path} cannot be queried (it names __proto__)`);
  }
  return segs;
}

/** An object whose keys start with `$` is an operator expression, not a literal sub-document. */
function isOperatorObject(v: unknown): v is Record<string, unknown> {
  if (!isPlainObject(v)) return false;
  for (const k in v) if (k.charCodeAt(0) === 36) return true;
  return false;
}

export function validateFilter(filter: unknown, where = 'filter'): void {
  if (!isPlainObject(filter)) throw invalid(`${where} must be an object`);
  for (const key in filter) {
    const value = filter[key];
    if (key.charCodeAt(0) === 36) {
      if (!logicalOps.has(key)) throw invalid(`unknown top-level filter operator ${key}`);
      if (!Array.isArray(value) || value.length === 0) throw invalid(`${key} needs a non-empty array`);
      for (const clause of value) validateFilter(clause, key);
    } else {
      splitQueryPath(key, where);
      if (isOperatorObject(value)) validateOperators(key, value);
    }
  }
}

function validateOperators(path: string, expr: Record<string, unknown>): void {
  for (const op in expr) {
    const operand = expr[op];
    if (!fieldOps.has(op)) {
      throw invalid(
        op.charCodeAt(0) === 36
          ? `unknown filter operator ${op} on ${path}`
          : `${path}: an operator expression cannot also hold the field ${op}`,
      );
    }
    switch (op) {
      case '$in':
      case '$nin':
      case '$all':
        if (!Array.isArray(operand)) throw invalid(`${op} on ${path} needs an array`);
        for (const item of operand) {
          if (isOperatorObject(item)) throw invalid(`${op} on ${path} cannot hold operators`);
        }
        break;
      case '$regex':
        if (operand instanceof RegExp) break;
        if (typeof operand !== 'string') throw invalid(`$regex on ${path} needs a string or a RegExp`);
        // Checked here, not when first matched, so an empty collection refuses it as MongoDB does.
        try {
          new RegExp(operand);
        } catch {
          throw invalid(`$regex on ${path}: invalid pattern ${JSON.stringify(operand)}`);
        }
        break;
      case '$options':
        if (!('$regex' in expr)) throw invalid(`$options on ${path} needs $regex`);
        // Not x (extended): MongoDB's PCRE has it, JavaScript's RegExp (the embedded store's) has not,
        // so the embedded store failed such a filter only once a document reached its matcher.
        if (typeof operand !== 'string' || !/^[ims]*$/.test(operand)) {
          throw invalid(`$options on ${path} takes the flags i, m, s`);
        }
        break;
      case '$not':
        if (operand instanceof RegExp) break;
        if (!isOperatorObject(operand))
          throw invalid(`$not on ${path} needs an operator expression or a RegExp`);
        validateOperators(path, operand);
        break;
      case '$elemMatch':
        if (!isPlainObject(operand)) throw invalid(`$elemMatch on ${path} needs an object`);
        if (Object.keys(operand).some((k) => k.charCodeAt(0) === 36 && !logicalOps.has(k))) {
          validateOperators(path, operand);
        } else {
          validateFilter(operand, `$elemMatch on ${path}`);
        }
        break;
      case '$size':
        if (!Number.isInteger(operand) || (operand as number) < 0) {
          throw invalid(`$size on ${path} needs a non-negative integer`);
        }
        break;
      default:
        if (isOperatorObject(operand)) throw invalid(`${op} on ${path} cannot hold operators`);
    }
  }
}

export interface UpdateStep {
  op: UpdateOperator;
  path: string;
  segs: string[];
  value: unknown;
}

export interface ParsedUpdate {
  steps: UpdateStep[];
  /** The _id an upsert would insert, when the update names one ($setOnInsert or $set on `_id`). */
  idFromUpdate: string | undefined;
}

export function parseUpdate(update: unknown): ParsedUpdate {
  if (!isPlainObject(update)) throw invalid('update must be an object of update operators');
  const steps: UpdateStep[] = [];
  let idFromUpdate: string | undefined;
  let any = false;
  for (const op in update) {
    any = true;
    if (!updateOps.has(op)) {
      throw invalid(
        op.charCodeAt(0) === 36
          ? `unknown update operator ${op}`
          : `update must only hold update operators (found ${op}); use replaceOne to replace a document`,
      );
    }
    const fields = update[op];
    if (!isPlainObject(fields)) throw invalid(`${op} needs an object of field paths`);
    for (const path in fields) {
      const segs = splitPath(path, op);
      const value = fields[path];
      if (segs[0] === '_id') {
        if (segs.length > 1 || (op !== '$set' && op !== '$setOnInsert') || typeof value !== 'string') {
          throw invalid(`${op} cannot change _id`);
        }
        idFromUpdate ??= value;
      }
      validateOperand(op as UpdateOperator, path, value);
      steps.push({ op: op as UpdateOperator, path, segs, value });
    }
  }
  if (!any) throw invalid('update must hold at least one update operator');
  if (steps.length > 1) checkConflicts(steps);
  return { steps, idFromUpdate };
}

function validateOperand(op: UpdateOperator, path: string, value: unknown): void {
  switch (op) {
    case '$inc':
      if (typeof value !== 'number') throw invalid(`$inc on ${path} needs a number`);
      return;
    case '$push':
      if (isOperatorObject(value)) validatePushModifiers(path, value);
      return;
    case '$pull':
      if (isOperatorObject(value)) validateOperators(path, value);
      else if (isPlainObject(value)) validateFilter(value, `$pull on ${path}`);
      return;
  }
}

function validatePushModifiers(path: string, mods: Record<string, unknown>): void {
  for (const k in mods) if (!pushModifiers.has(k)) throw invalid(`unknown $push modifier ${k} on ${path}`);
  if (!Array.isArray(mods.$each)) throw invalid(`$push on ${path}: modifiers need $each with an array`);
  if ('$slice' in mods && !Number.isInteger(mods.$slice)) throw invalid(`$slice on ${path} needs an integer`);
  if ('$position' in mods && !Number.isInteger(mods.$position)) {
    throw invalid(`$position on ${path} needs an integer`);
  }
  if ('$sort' in mods) {
    const s = mods.$sort;
    const ok =
      s === 1 ||
      s === -1 ||
      (isPlainObject(s) &&
        Object.keys(s).length > 0 &&
        Object.entries(s).every(([k, d]) => (d === 1 || d === -1) && splitPath(k, '$sort')));
    if (!ok) throw invalid(`$sort on ${path} needs 1, -1 or {field: 1|-1}`);
  }
}

// Two operators on one path, or on a path and its parent, have no defined order: MongoDB refuses
// them (ConflictingUpdateOperators) and so do we.
function checkConflicts(steps: UpdateStep[]): void {
  for (let i = 0; i < steps.length; i++) {
    for (let k = i + 1; k < steps.length; k++) {
      const a = steps[i]!.path;
      const b = steps[k]!.path;
      if (a === b || isParentPath(a, b) || isParentPath(b, a))
        throw invalid(`update conflict between ${a} and ${b}`);
    }
  }
}

export function isParentPath(parent: string, path: string): boolean {
  return path.length > parent.length && path.charCodeAt(parent.length) === 46 && path.startsWith(parent);
}

export function validateFindOptions(options: FindOptions | undefined): void {
  if (options === undefined) return;
  const { sort, limit, skip, projection } = options;
  if (sort !== undefined) {
    if (!isPlainObject(sort)) throw invalid('sort must be an object');
    for (const k in sort) {
      splitQueryPath(k, 'sort');
      if (sort[k] !== 1 && sort[k] !== -1) throw invalid(`sort on ${k} must be 1 or -1`);
    }
  }
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
    throw invalid('limit must be a non-negative integer (0: no limit)');
  }
  if (skip !== undefined && (!Number.isInteger(skip) || skip < 0))
    throw invalid('skip must be a non-negative integer');
  if (projection !== undefined) {
    if (!isPlainObject(projection)) throw invalid('projection must be an object');
    const paths = new Set<string>();
    for (const k in projection) {
      splitQueryPath(k, 'projection');
      if (projection[k] !== 1 && (projection[k] as unknown) !== true) {
        throw invalid(`projection on ${k}: only inclusion (1) is supported`);
      }
      paths.add(k);
    }
    for (const p of paths) {
      for (let i = p.indexOf('.'); i !== -1; i = p.indexOf('.', i + 1)) {
        if (paths.has(p.slice(0, i)))
          throw invalid(`projection: path collision between ${p.slice(0, i)} and ${p}`);
      }
    }
  }
}

/** MongoDB's default index name: `a_1_b_-1`. */
export function indexName(spec: IndexSpec): string {
  return (
    spec.name ??
    Object.entries(spec.keys)
      .map(([k, d]) => `${k}_${d}`)
      .join('_')
  );
}

export function validateIndexSpec(spec: IndexSpec): void {
  if (!isPlainObject(spec) || !isPlainObject(spec.keys) || Object.keys(spec.keys).length === 0) {
    throw invalid('an index needs at least one key');
  }
  for (const k in spec.keys) {
    splitQueryPath(k, 'index');
    if (spec.keys[k] !== 1 && spec.keys[k] !== -1) throw invalid(`index key ${k} must be 1 or -1`);
  }
  if (spec.name !== undefined && (typeof spec.name !== 'string' || spec.name.length === 0)) {
    throw invalid('an index name must be a non-empty string');
  }
  if (spec.unique !== undefined && typeof spec.unique !== 'boolean')
    throw invalid('unique must be a boolean');
  const partial = spec.partial;
  if (partial !== undefined) {
    if (!isPlainObject(partial) || Object.keys(partial).length === 0)
      throw invalid('partial must be an object of field equalities');
    for (const [f, v] of Object.entries(partial)) {
      if (f.includes('.') || f.startsWith('$'))
        throw invalid(`partial field ${f} must be a top-level field name`);
      if (typeof v !== 'string' && typeof v !== 'boolean' && !(typeof v === 'number' && Number.isFinite(v)))
        throw invalid(`partial value of ${f} must be a string, a finite number or a boolean`);
    }
    if (spec.unique === true) throw invalid('a partial index cannot be unique here');
  }
  const prefix = spec.embeddedPrefix;
  if (prefix !== undefined) {
    const n = Object.keys(spec.keys).length;
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > n) {
      throw invalid(`embeddedPrefix must be an integer from 0 to the number of keys (${n})`);
    }
    if (spec.unique === true && prefix < n) {
      throw invalid('embeddedPrefix cannot drop fields of a unique index: its constraint is on every field');
    }
  }
}

export function validateCollectionName(name: string): void {
  if (
    typeof name !== 'string' ||
    name.length === 0 ||
    name.length > 200 ||
    name.includes('$') ||
    name.includes('\0') ||
    name.startsWith('system.') ||
    name === CHECKPOINTS_COLLECTION
  ) {
    throw new DocumentStoreError(`invalid collection name ${JSON.stringify(name)}`);
  }
}

/** A document to insert or a replacement: a string _id and no operator-like top-level fields. */
export function validateDocument(doc: unknown, what = 'document'): asserts doc is Doc {
  if (!isPlainObject(doc)) throw invalid(`${what} must be an object`);
  if (typeof doc._id !== 'string') throw invalid(`${what} needs a string _id`);
  for (const k in doc)
    if (k.charCodeAt(0) === 36) throw invalid(`${what} cannot hold the top-level field ${k}`);
}

export const MAX_POSITION = 10n ** 20n - 1n;

export function validatePosition(position: bigint): void {
  if (typeof position !== 'bigint' || position < 0n || position > MAX_POSITION) {
    throw new DocumentStoreError(`a checkpoint position must be a bigint in [0, 10^20): ${String(position)}`);
  }
}

/**
 * The _id an upsert takes from its filter: an equality on _id at the top level or inside $and.
 * Ids are strings in both adapters, so an equality on another type is refused.
 */
export function upsertIdFromFilter(filter: Record<string, unknown>): string | undefined {
  let id: unknown;
  const visit = (f: Record<string, unknown>) => {
    if ('_id' in f) {
      const v = f._id;
      if (isPlainObject(v)) {
        if ('$eq' in v) id ??= v.$eq;
      } else if (!(v instanceof RegExp)) id ??= v;
    }
    if (Array.isArray(f.$and)) for (const c of f.$and) if (isPlainObject(c)) visit(c);
  };
  visit(filter);
  if (id !== undefined && typeof id !== 'string') throw invalid('upsert: _id must be a string');
  return id as string | undefined;
}
