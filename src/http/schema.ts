// One declaration, two outputs: a superstruct Struct that validates input at run time, and the JSON
// Schema that documents it in OpenAPI. Routes never write either by hand.
import * as s from 'superstruct';

export type JsonSchema = Record<string, unknown>;
type Failure = ReturnType<s.StructError['failures']>[number];

export interface Schema<T> {
  readonly struct: s.Struct<T, unknown>;
  readonly json: JsonSchema;
  readonly optional?: boolean;
}
export type Infer<S> = S extends Schema<infer T> ? T : never;

interface Doc {
  description?: string;
  example?: unknown;
}
const doc = (o: Doc | undefined): JsonSchema => ({
  ...(o?.description ? { description: o.description } : {}),
  ...(o?.example !== undefined ? { example: o.example } : {}),
});

const make = <T>(struct: s.Struct<T, unknown>, json: JsonSchema): Schema<T> => ({ struct, json });

export function str(
  o: Doc & { min?: number; max?: number; pattern?: RegExp; format?: string } = {},
): Schema<string> {
  let st: s.Struct<string, unknown> = s.string() as s.Struct<string, unknown>;
  if (o.min !== undefined || o.max !== undefined)
    st = s.size(st, o.min ?? 0, o.max ?? Number.POSITIVE_INFINITY);
  if (o.pattern) st = s.pattern(st, o.pattern);
  return make(st, {
    type: 'string',
    ...(o.min !== undefined ? { minLength: o.min } : {}),
    ...(o.max !== undefined ? { maxLength: o.max } : {}),
    ...(o.pattern ? { pattern: o.pattern.source } : {}),
    ...(o.format ? { format: o.format } : {}),
    ...doc(o),
  });
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const email = (o: Doc = {}) =>
  refined(
    str({ ...o, max: 254, format: 'email' }),
    'email',
    (v) => EMAIL.test(v),
    'must be an email address',
  );

/** RFC 3339 date-time with an explicit offset (Z or ±HH:MM). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
export const dateTime = (o: Doc = {}) =>
  refined(
    str({ ...o, format: 'date-time' }),
    'date_time',
    (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)),
    'must be a date-time with an explicit offset, e.g. 2026-05-01T19:00:00+02:00 (a + in a query string must be encoded as %2B)',
  );

const DATE = /^\d{4}-\d{2}-\d{2}$/;
export const date = (o: Doc = {}) =>
  refined(
    str({ ...o, format: 'date' }),
    'date',
    (v) =>
      DATE.test(v) &&
      !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) &&
      new Date(`${v}T00:00:00Z`).toISOString().startsWith(v),
    'must be a calendar date YYYY-MM-DD',
  );

/** Adds a named check whose failure message is ours. */
export function refined<T>(
  base: Schema<T>,
  name: string,
  check: (v: T) => boolean,
  message: string,
): Schema<T> {
  return { ...base, struct: s.refine(base.struct, name, (v) => check(v) || message) };
}

export function int(o: Doc & { min?: number; max?: number } = {}): Schema<number> {
  let st: s.Struct<number, unknown> = s.integer() as s.Struct<number, unknown>;
  if (o.min !== undefined) st = s.min(st, o.min);
  if (o.max !== undefined) st = s.max(st, o.max);
  return make(st, {
    type: 'integer',
    ...(o.min !== undefined ? { minimum: o.min } : {}),
    ...(o.max !== undefined ? { maximum: o.max } : {}),
    ...doc(o),
  });
}

/** An integer read from a query string ("25"). */
export function intQuery(o: Doc & { min?: number; max?: number } = {}): Schema<number> {
  const base = int(o);
  return {
    ...base,
    struct: s.coerce(base.struct, s.string(), (v) => (/^-?\d+$/.test(v) ? Number(v) : v)) as s.Struct<
      number,
      unknown
    >,
  };
}

export function num(o: Doc & { min?: number; max?: number } = {}): Schema<number> {
  let st = s.refine(s.number(), 'finite', (v) => Number.isFinite(v) || 'must be a finite number') as s.Struct<
    number,
    unknown
  >;
  if (o.min !== undefined) st = s.min(st, o.min);
  if (o.max !== undefined) st = s.max(st, o.max);
  return make(st, {
    type: 'number',
    ...(o.min !== undefined ? { minimum: o.min } : {}),
    ...(o.max !== undefined ? { maximum: o.max } : {}),
    ...doc(o),
  });
}

export const bool = (o: Doc = {}): Schema<boolean> =>
  make(s.boolean() as s.Struct<boolean, unknown>, { type: 'boolean', ...doc(o) });

/** A boolean read from a query string ("true"/"false"). */
export function boolQuery(o: Doc = {}): Schema<boolean> {
  return {
    ...bool(o),
    struct: s.coerce(s.boolean(), s.string(), (v) =>
      v === 'true' ? true : v === 'false' ? false : v,
    ) as s.Struct<boolean, unknown>,
  };
}

export function enums<const T extends string>(values: readonly T[], o: Doc = {}): Schema<T> {
  return make(s.enums(values as T[]) as unknown as s.Struct<T, unknown>, {
    type: 'string',
    enum: [...values],
    ...doc(o),
  });
}

export function literal<const T extends string | number | boolean>(value: T, o: Doc = {}): Schema<T> {
  return make(s.literal(value) as unknown as s.Struct<T, unknown>, { enum: [value], ...doc(o) });
}

export function arr<T>(
  item: Schema<T>,
  o: Doc & { min?: number; max?: number; unique?: boolean } = {},
): Schema<T[]> {
  let st = s.array(item.struct) as unknown as s.Struct<T[], unknown>;
  if (o.min !== undefined || o.max !== undefined)
    st = s.size(st, o.min ?? 0, o.max ?? Number.POSITIVE_INFINITY);
  if (o.unique)
    st = s.refine(
      st,
      'unique',
      (v) => new Set(v.map((x) => JSON.stringify(x))).size === v.length || 'items must be distinct',
    );
  return make(st, {
    type: 'array',
    items: item.json,
    ...(o.min !== undefined ? { minItems: o.min } : {}),
    ...(o.max !== undefined ? { maxItems: o.max } : {}),
    ...(o.unique ? { uniqueItems: true } : {}),
    ...doc(o),
  });
}

export function optional<T>(inner: Schema<T>): Schema<T | undefined> {
  return {
    struct: s.optional(inner.struct) as s.Struct<T | undefined, unknown>,
    json: inner.json,
    optional: true,
  };
}

export function nullable<T>(inner: Schema<T>): Schema<T | null> {
  return {
    struct: s.nullable(inner.struct) as s.Struct<T | null, unknown>,
    json: { ...inner.json, nullable: true },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: struct refiners are contravariant in T; any is the honest top here
export type AnySchema = Schema<any>;
type Shape = Record<string, AnySchema>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: undefined extends Infer<S[K]> ? K : never }[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
export type ObjectOf<S extends Shape> = { [K in RequiredKeys<S>]: Infer<S[K]> } & {
  [K in OptionalKeys<S>]?: Infer<S[K]>;
};

/**
 * An object. Unknown properties are refused (strict) unless `open` is set: the spec refuses them on
 * write bodies, and a typo should never be silently ignored.
 */
export function obj<S extends Shape>(shape: S, o: Doc & { open?: boolean } = {}): Schema<ObjectOf<S>> {
  const structs: Record<string, s.Struct<unknown, unknown>> = {};
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [k, v] of Object.entries(shape)) {
    structs[k] = v.struct;
    properties[k] = v.json;
    if (!v.optional) required.push(k);
  }
  const struct = (o.open ? s.type(structs) : s.object(structs)) as unknown as s.Struct<ObjectOf<S>, unknown>;
  return make(struct, {
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: Boolean(o.open),
    ...doc(o),
  });
}

/** An object keyed by arbitrary strings (custom fields, metadata). */
export function record<T>(value: Schema<T>, o: Doc = {}): Schema<Record<string, T>> {
  return make(s.record(s.string(), value.struct) as unknown as s.Struct<Record<string, T>, unknown>, {
    type: 'object',
    additionalProperties: value.json,
    ...doc(o),
  });
}

/**
 * One of several schemas (JSON Schema `oneOf`: keep members disjoint). superstruct's own union reports
 * a single failure at the union's path; this one reports the failures of the member the value meant,
 * with their full paths (`customer.name`, not `customer`): the member `pick` names, else the member
 * whose kind (object, array, string…) fits and which fails least. A value no member's kind fits gets
 * one issue at the union's path saying what is accepted.
 */
export function union<T extends AnySchema[]>(
  members: T,
  o: Doc & { pick?: (value: unknown) => number | undefined } = {},
): Schema<Infer<T[number]>> {
  const structs = members.map((m) => m.struct);
  const accepts = listed([...new Set(members.map((m) => expectedOf(m.json)))]);
  const base = s.union(structs as [s.Struct<unknown, unknown>]);
  // Coercion validates the member it coerces with; what it returned valid, the validator that runs
  // next on that very object need not validate again (a reservation body pays once for its customer).
  const known = new WeakSet<object>();
  const struct = new s.Struct<unknown, null>({
    type: 'union',
    schema: null,
    coercer(value, ctx) {
      // optional() and nullable() reuse this coercer for their absent values: nothing to coerce.
      if (value === undefined || value === null) return value;
      const chosen = o.pick?.(value);
      if (chosen === undefined) return base.coercer(value, ctx);
      const [error, coerced] = (structs[chosen] as s.Struct<unknown, unknown>).validate(value, {
        coerce: true,
        mask: ctx.mask,
      });
      if (error) return value;
      if (typeof coerced === 'object' && coerced !== null) known.add(coerced);
      return coerced;
    },
    validator(value, ctx) {
      if (typeof value === 'object' && value !== null && known.has(value)) return true;
      const chosen = o.pick?.(value);
      const candidates = chosen === undefined ? structs.map((_, i) => i) : [chosen];
      let best: Failure[] | null = null;
      let bestAt = 0;
      for (const i of candidates) {
        const [error] = s.validate(value, structs[i] as s.Struct<unknown, unknown>);
        if (!error) return true;
        const failures = error.failures();
        const wrongKind = failures.some((f) => f.path.length === 0 && !f.refinement);
        if (chosen === undefined && wrongKind) continue;
        if (!best || failures.length < best.length) {
          best = failures;
          bestAt = i;
        }
      }
      // `explained` is read by validate.ts; a message is given so superstruct never prints the value.
      if (!best) return { message: `Expected ${accepts}`, explained: accepts } as Partial<Failure>;
      // A property the member does not have may belong to another member ({id, name}): say what the
      // member that was meant takes.
      const meant = members[bestAt]?.json.description;
      return best.map((f): Partial<Failure> => {
        const path = [...ctx.path, ...f.path];
        const hint = f.type === 'never' && f.path.length === 1 && meant ? { explained: meant } : {};
        return {
          ...f,
          ...hint,
          path,
          key: path[path.length - 1],
          branch: [...ctx.branch, ...f.branch.slice(1)],
        };
      });
    },
  });
  return make(struct as s.Struct<Infer<T[number]>, unknown>, {
    oneOf: members.map((m) => m.json),
    ...doc(o),
  });
}

/** What a member schema accepts, in words, from its JSON Schema (ours, so printing is safe). */
function expectedOf(json: JsonSchema): string {
  if (Array.isArray(json.enum)) return listed(json.enum.map((v) => JSON.stringify(v)));
  switch (json.type) {
    case 'integer':
      return 'an integer';
    case 'array':
      return json.items ? `an array of ${plural(expectedOf(json.items as JsonSchema))}` : 'an array';
    case 'object':
      return 'an object';
    case 'boolean':
      return 'true or false';
    case 'string':
    case 'number':
      return `a ${json.format ? `${json.format} ` : ''}${json.type}`;
    default:
      return 'a value of another type';
  }
}
const plural = (what: string) => (/^an? /.test(what) ? `${what.replace(/^an? /, '')}s` : what);
const listed = (items: string[]) =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;

/** Any JSON value (documented as free-form). */
export const anyJson = (o: Doc = {}): Schema<unknown> =>
  make(s.unknown() as s.Struct<unknown, unknown>, { ...doc(o) });

/** Output-only: a documented shape that is never validated at run time (response schemas). */
export const described = <T = unknown>(json: JsonSchema): Schema<T> =>
  make(s.any() as s.Struct<T, unknown>, json);
