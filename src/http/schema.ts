// One declaration, two outputs: a superstruct Struct that validates input at run time, and the JSON
// Schema that documents it in OpenAPI. Routes never write either by hand.
import * as s from 'superstruct';
import { parseDate, parseDateTime } from '../core/datetime';
import { EMAIL, EMAIL_MAX, EMAIL_PATTERN, EMAIL_RULE } from '../core/email';
import { SERVICE_INSTANTS } from '../core/limits';
import { BLANK_MESSAGE, blankAsNull, charCount, lengthMessage, NOT_BLANK } from '../core/text';
import { NOT_BLANK_DOCUMENTED } from './portable-pattern';

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
const withNote = (description: string | undefined, note: string) =>
  description ? `${description}. ${note}` : note;

/**
 * A string. `min`/`max` count characters (code points), not UTF-16 units. `notBlank` refuses a
 * value with no visible character (NOT_BLANK); an accepted value is kept as sent (never trimmed).
 */
export function str(
  o: Doc & { min?: number; max?: number; pattern?: RegExp; format?: string; notBlank?: boolean } = {},
): Schema<string> {
  let st: s.Struct<string, unknown> = s.string() as s.Struct<string, unknown>;
  const { min, max } = o;
  const fits = (v: string) => {
    const n = charCount(v);
    return (min === undefined || n >= min) && (max === undefined || n <= max);
  };
  if (min !== undefined || max !== undefined) {
    const message = lengthMessage(min, max);
    st = s.refine(st, 'size', (v) => fits(v) || message);
  }
  // A value past its length is refused for its length only: one issue, as the write side gives.
  if (o.notBlank) st = s.refine(st, 'not_blank', (v) => !fits(v) || NOT_BLANK.test(v) || BLANK_MESSAGE);
  if (o.pattern) st = s.pattern(st, o.pattern);
  return make(st, {
    type: 'string',
    ...(min !== undefined ? { minLength: min } : {}),
    ...(max !== undefined ? { maxLength: max } : {}),
    ...(o.pattern ? { pattern: o.pattern.source } : o.notBlank ? { pattern: NOT_BLANK_DOCUMENTED } : {}),
    ...(o.format ? { format: o.format } : {}),
    ...doc(
      o.notBlank
        ? {
            ...o,
            description: withNote(
              o.description,
              'Holds a visible character (not only whitespace, control or invisible formatting characters: the pattern lists those up to U+FFFF, the server refuses the others too); kept as sent',
            ),
          }
        : o,
    ),
  });
}

/**
 * An email address by the API's one rule (src/core/email.ts), documented as `format: email` with that
 * rule's pattern: validators differ on `format: email`, the pattern says which addresses it means.
 */
export function email(o: Doc = {}): Schema<string> {
  const base = str({
    ...o,
    max: EMAIL_MAX,
    format: 'email',
    description: withNote(o.description, EMAIL_RULE),
  });
  // Past the length only the length is reported (out_of_range): one issue, not two.
  const checked = refined(
    base,
    'email',
    (v) => charCount(v) > EMAIL_MAX || EMAIL.test(v),
    'must be an email address',
  );
  return { ...checked, json: { ...checked.json, pattern: EMAIL_PATTERN } };
}

/**
 * Said of a malformed date-time in a query string only (validate.ts drops it elsewhere): an offset's `+`
 * sent unencoded arrives as a space there; in a JSON body it is no fix to name.
 */
export const QUERY_PLUS_NOTE = ' (a + in a query string must be encoded as %2B)';

/**
 * Said of every date-time query parameter (`query: true`): a partner building the URL by hand sends the
 * offset's `+` raw, and it arrives as a space.
 */
const QUERY_PARAM_NOTE = ". In a query string encode the offset's + as %2B (+02:00 is %2B02:00)";

/**
 * RFC 3339 date-time with an explicit offset, read by the one strict parser (src/core/datetime.ts):
 * a day, hour or offset that does not exist is refused, never rolled over.
 */
export function dateTime(o: Doc & { service?: boolean; query?: boolean } = {}): Schema<string> {
  const { service, query, ...doc } = o;
  const base = str({
    ...doc,
    format: 'date-time',
    description: withNote(
      doc.description,
      `RFC 3339 with seconds and an explicit offset (Z or ±HH:MM); a date or time that does not exist (31 November, 24:00, a leap second) is refused${service ? `; ${SERVICE_INSTANTS.description}` : ''}${query ? QUERY_PARAM_NOTE : ''}`,
    ),
  });
  const checked = s.refine(base.struct, 'date_time', (v) => {
    const parsed = parseDateTime(v);
    if (parsed.ok) return true;
    return parsed.reason.startsWith('must be') ? `${parsed.reason}${QUERY_PLUS_NOTE}` : parsed.reason;
  });
  if (!service) return { ...base, struct: checked };
  // Named `range`: validate.ts reports it as out_of_range.
  return {
    ...base,
    struct: s.refine(checked, 'range', (v) => {
      const parsed = parseDateTime(v);
      if (!parsed.ok) return true;
      const ms = parsed.value.epochMs;
      return (
        (ms >= SERVICE_INSTANTS.fromMs && ms < SERVICE_INSTANTS.toMs) ||
        `must fall within ${SERVICE_INSTANTS.description}`
      );
    }),
  };
}

/** A calendar date YYYY-MM-DD that exists (29 February only in leap years). */
export function date(o: Doc = {}): Schema<string> {
  const base = str({
    ...o,
    format: 'date',
    description: withNote(o.description, 'YYYY-MM-DD; a day that does not exist is refused'),
  });
  return {
    ...base,
    struct: s.refine(base.struct, 'date', (v) => {
      const parsed = parseDate(v);
      return parsed.ok || parsed.reason;
    }),
  };
}

/** Adds a named check whose failure message is ours. */
export function refined<T>(
  base: Schema<T>,
  name: string,
  check: (v: T) => boolean,
  message: string,
): Schema<T> {
  return { ...base, struct: s.refine(base.struct, name, (v) => check(v) || message) };
}

/** The refinement of `enumList`: validate.ts answers it `invalid_enum`, as an enum's own failure. */
export const ENUM_LIST = 'enum_list';

/**
 * One value or several, comma-separated, each among `values` (a query filter such as `status=A,B`).
 * Documented by its pattern and refused in words (a long alternation is no message), with the code
 * of every other value outside a list: `invalid_enum`.
 */
export function enumList(values: readonly string[], o: Doc & { what: string }): Schema<string> {
  const one = values.join('|');
  const pattern = new RegExp(`^(${one})(,(${one}))*$`);
  const base = str({
    ...o,
    description: o.description ?? `One or several, comma-separated: ${values.join(', ')}`,
  });
  const checked = refined(
    base,
    ENUM_LIST,
    (v) => pattern.test(v),
    `must be one ${o.what} or several, comma-separated, among ${values.join(', ')}`,
  );
  return { ...checked, json: { ...checked.json, pattern: pattern.source } };
}

const rangeMessage = (min: number | undefined, max: number) =>
  min !== undefined ? `must be an integer from ${min} to ${max}` : `must be an integer at most ${max}`;

/**
 * An integer. Past Number.MAX_SAFE_INTEGER a number has already lost its exact value, so it is
 * refused: without a declared max, the documented maximum is that limit.
 */
export function int(o: Doc & { min?: number; max?: number } = {}): Schema<number> {
  const max = Math.min(o.max ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const min = Math.max(o.min ?? Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER);
  const message = rangeMessage(o.min, max);
  const st = s.refine(s.integer(), 'size', (v) => (v >= min && v <= max) || message) as s.Struct<
    number,
    unknown
  >;
  return make(st, {
    type: 'integer',
    ...(o.min !== undefined ? { minimum: o.min } : {}),
    maximum: max,
    ...doc(o),
  });
}

const DIGITS = /^-?\d+$/;

/**
 * An integer read from a query string ("25"). Only plain decimal digits are read ("1e3", "2.0",
 * "+3" are refused as not integers), and every query integer declares its maximum: a value out of
 * range is refused, never rounded or clamped.
 */
export function intQuery(o: Doc & { min?: number; max: number; default?: number }): Schema<number> {
  const base = int(o);
  return {
    ...base,
    // Documented only (JSON Schema `default`): the handler applies it; test/e2e/demo-catalog.e2e.test.ts
    // holds every documented default to the server's answer without the parameter.
    ...(o.default !== undefined ? { json: { ...base.json, default: o.default } } : {}),
    // Many digits read as a number far past any declared max (never Infinity, which is no integer),
    // so that they are refused as out of range rather than as not an integer.
    struct: s.coerce(base.struct, s.string(), (v) =>
      DIGITS.test(v) ? Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, Number(v))) : v,
    ) as s.Struct<number, unknown>,
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
  if (o.min !== undefined || o.max !== undefined) {
    const min = o.min ?? 0;
    const max = o.max ?? Number.POSITIVE_INFINITY;
    // Said in words, as string lengths are (superstruct's own: "Expected a array with a length between…").
    const message =
      max === Number.POSITIVE_INFINITY
        ? `must hold at least ${min} ${min === 1 ? 'item' : 'items'}`
        : min === 0
          ? `must hold at most ${max} ${max === 1 ? 'item' : 'items'}`
          : min === max
            ? `must hold exactly ${min} ${min === 1 ? 'item' : 'items'}`
            : `must hold ${min} to ${max} items`;
    st = s.refine(st, 'size', (v) => (v.length >= min && v.length <= max) || message);
  }
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
    json: nullableJson(inner.json),
  };
}

/**
 * Free text that may be cleared (null clears it): a value with no visible character within `max` is
 * stored as null (`blankAsNull`), so the field reads null however it was emptied. A longer one is
 * refused by its length, as any.
 */
export function clearableText(o: Doc & { max: number }): Schema<string | null> {
  const inner = nullable(
    str({
      ...o,
      description: withNote(
        o.description,
        'null clears it; a value with no visible character ("", only whitespace, control or invisible formatting characters) is stored as null',
      ),
    }),
  );
  const struct = s.coerce(inner.struct, s.string(), (v) => (charCount(v) > o.max ? v : blankAsNull(v)));
  return { ...inner, struct };
}

/**
 * The OpenAPI 3.0.3 spelling of "or null": `nullable` counts only beside a `type`, and an `enum` must
 * list null itself. A union takes null through exactly one member, so `oneOf` still matches once.
 */
export function nullableJson(schema: JsonSchema): JsonSchema {
  const { nullable: _, ...json } = schema;
  if (typeof json.type === 'string') {
    const values = json.enum as unknown[] | undefined;
    return {
      ...json,
      nullable: true,
      ...(values && !values.includes(null) ? { enum: [...values, null] } : {}),
    };
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const members = json[key] as JsonSchema[] | undefined;
    if (!members) continue;
    if (members.some((m) => m.nullable === true)) return json;
    const i = members.findIndex((m) => typeof m.type === 'string');
    if (i < 0) break;
    return { ...json, [key]: members.map((m, j) => (j === i ? nullableJson(m) : m)) };
  }
  const values = json.enum as unknown[] | undefined;
  const kinds = new Set(values?.map((v) => typeof v));
  if (values && kinds.size === 1) {
    const [kind] = kinds;
    if (kind === 'string' || kind === 'number' || kind === 'boolean')
      return nullableJson({ ...json, type: kind });
  }
  throw new Error(`nullable: no OpenAPI 3.0.3 spelling for ${JSON.stringify(json)}`);
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

/**
 * Any JSON value, null included. OpenAPI 3.0.3 has no null type and ignores `nullable` without a
 * `type`, so the value is spelled out, one member per JSON type.
 */
export const ANY_JSON: JsonSchema = {
  anyOf: [
    { type: 'string', nullable: true },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'array', items: {} },
    { type: 'object', additionalProperties: true },
  ],
};
export const anyJson = (o: Doc = {}): Schema<unknown> =>
  make(s.unknown() as s.Struct<unknown, unknown>, { ...ANY_JSON, ...doc(o) });

/** Output-only: a documented shape that is never validated at run time (response schemas). */
export const described = <T = unknown>(json: JsonSchema): Schema<T> =>
  make(s.any() as s.Struct<T, unknown>, json);
