// Values built from a route's declared JSON Schemas (the same declarations the server validates with):
// a minimal valid value per oneOf branch, and every field path in it, so tests can break one field at
// a time and check that the issue names exactly that field. Used by the issue-path unit test and the
// fuzz suite.
import type { AnyRoute } from '../../src/http/route';
import type { AnySchema, JsonSchema } from '../../src/http/schema';

export type Where = 'body' | 'query' | 'path';

/** Sample strings for the formats and patterns our schemas declare. */
const FORMATS: Record<string, string> = {
  'date-time': '2026-06-03T19:00:00+02:00',
  date: '2026-06-03',
  email: 'guest@example.com',
};

function sampleString(json: JsonSchema): string {
  if (typeof json.example === 'string') return json.example;
  if (typeof json.format === 'string' && FORMATS[json.format]) return FORMATS[json.format] as string;
  if (typeof json.pattern === 'string') {
    // Our list patterns read ^(a|b|…)(,(a|b|…))*$: the first alternative fits.
    const first = /^\^\(([^|)]+)[|)]/.exec(json.pattern);
    if (first) return first[1] as string;
  }
  const min = typeof json.minLength === 'number' ? json.minLength : 1;
  return 'x'.repeat(Math.max(min, 1));
}

/**
 * Valid values of a schema, one per oneOf branch (so the fields of every branch get exercised):
 * required properties only, or with `full` every declared property. `where` is 'query' or 'path' for
 * string-typed inputs.
 */
export function validValues(json: JsonSchema, where: Where = 'body', full = false): unknown[] {
  const validValues_ = (j: JsonSchema, w: Where) => validValues(j, w, full);
  if (Array.isArray(json.oneOf)) return (json.oneOf as JsonSchema[]).flatMap((m) => validValues_(m, where));
  if (Array.isArray(json.enum)) return [json.enum[0]];
  const asText = where !== 'body';
  switch (json.type) {
    case 'string':
      return [sampleString(json)];
    case 'integer':
    case 'number': {
      const n =
        typeof json.example === 'number' ? json.example : typeof json.minimum === 'number' ? json.minimum : 1;
      return [asText ? String(n) : n];
    }
    case 'boolean':
      return [asText ? 'true' : true];
    case 'array': {
      const min = typeof json.minItems === 'number' ? json.minItems : 0;
      if (min === 0) return [[]];
      const item = validValues_(json.items as JsonSchema, where)[0];
      return [Array.from({ length: min }, (_, i) => (typeof item === 'string' ? `${item}${i}` : item))];
    }
    case 'object': {
      const props = (json.properties ?? {}) as Record<string, JsonSchema>;
      const required = (json.required ?? []) as string[];
      let variants: Record<string, unknown>[] = [{}];
      for (const key of full ? Object.keys(props) : required) {
        const options = validValues_(props[key] as JsonSchema, where);
        variants = variants.flatMap((v) => options.map((o) => ({ ...v, [key]: o })));
      }
      // Optional object-valued properties carry fields too (a reservation's customer): one variant each.
      for (const [key, prop] of Object.entries(props)) {
        if (full || required.includes(key) || !hasFields(prop)) continue;
        for (const o of validValues_(prop, where)) variants.push({ ...(variants[0] ?? {}), [key]: o });
      }
      return variants;
    }
    default:
      return [{}];
  }
}

const hasFields = (json: JsonSchema): boolean =>
  json.type === 'object'
    ? Object.keys((json.properties ?? {}) as object).length > 0
    : Array.isArray(json.oneOf) && (json.oneOf as JsonSchema[]).some(hasFields);

export interface Leaf {
  path: string[];
  /** The closed object (additionalProperties false) holding it, when there is one. */
  value: unknown;
}

/** Every value in a JSON value with its path, objects and arrays included (root excluded). */
export function leaves(value: unknown, prefix: string[] = []): Leaf[] {
  if (typeof value !== 'object' || value === null) return [];
  const out: Leaf[] = [];
  for (const [k, v] of Object.entries(value)) {
    out.push({ path: [...prefix, k], value: v });
    out.push(...leaves(v, [...prefix, k]));
  }
  return out;
}

/** Every object path in a value (root included), for adding an unknown property. */
export function objectPaths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null) return [];
  const out = Array.isArray(value) ? [] : [prefix];
  for (const [k, v] of Object.entries(value)) out.push(...objectPaths(v, [...prefix, k]));
  return out;
}

/** A deep copy with the value at `path` replaced (or deleted when `to` is DELETE). */
export const DELETE = Symbol('delete');
export function withValue(value: unknown, path: string[], to: unknown): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
  const last = path[path.length - 1] as string;
  if (to === DELETE) delete at[last];
  else at[last] = to;
  return copy;
}

/** A value of another JSON kind than `v`, as the input would carry it. */
export function wrongKind(v: unknown, where: Where): unknown {
  // A query string or path only carries strings (or repeated parameters: arrays of strings).
  if (where !== 'body') return ['x', 'y'];
  if (typeof v === 'string') return 12345;
  if (typeof v === 'number') return 'not a number';
  if (typeof v === 'boolean') return 'yes';
  if (Array.isArray(v)) return { not: 'an array' };
  return ['not', 'an', 'object'];
}

/** The input schemas a route declares, by where they are read. */
export function inputsOf(route: AnyRoute): [Where, AnySchema][] {
  const out: [Where, AnySchema][] = [];
  if (route.params) out.push(['path', route.params]);
  if (route.query) out.push(['query', route.query]);
  if (route.body) out.push(['body', route.body]);
  return out;
}

/** Whether a schema path is a closed object (unknown properties refused). */
export function isClosedAt(json: JsonSchema, value: unknown, path: string[]): boolean {
  let schemas: JsonSchema[] = [json];
  let at: unknown = value;
  for (const k of path) {
    at = (at as Record<string, unknown>)[k];
    schemas = schemas
      .flatMap((s) => branchesOf(s))
      .flatMap((s) => {
        const p = (s.properties as Record<string, JsonSchema> | undefined)?.[k];
        return p
          ? [p]
          : typeof s.additionalProperties === 'object'
            ? [s.additionalProperties as JsonSchema]
            : [];
      });
  }
  const fitting = schemas.flatMap(branchesOf).filter((s) => s.type === 'object');
  return fitting.length > 0 && fitting.every((s) => s.additionalProperties === false);
}

const branchesOf = (s: JsonSchema): JsonSchema[] =>
  Array.isArray(s.oneOf) ? (s.oneOf as JsonSchema[]).flatMap(branchesOf) : [s];
