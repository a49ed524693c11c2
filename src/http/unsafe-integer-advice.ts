// What the 400 for an integer written past ±2^53-1 advises, from the route's documented body schema:
// "send it as a string" only where the field takes a string (an open value such as metadata keeps the
// digits that way); a field that takes numbers only (total_amount_paid) answers a string invalid_type,
// so its advice is its bound. Pure: the schema is the JSON Schema the route's body declares.
import type { JsonSchema } from './schema';

const MAX = Number.MAX_SAFE_INTEGER;

/** The alternatives a schema offers (oneOf/anyOf members, recursively), the schema itself otherwise. */
function alternatives(schema: JsonSchema): JsonSchema[] {
  const members = [schema.oneOf, schema.anyOf, schema.allOf].find(Array.isArray) as JsonSchema[] | undefined;
  return members ? members.flatMap(alternatives) : [schema];
}

/** The schemas a value at `keys` (names and array indexes) may be read by; [] where none is declared. */
export function schemasAt(schema: JsonSchema, keys: readonly string[]): JsonSchema[] {
  let here = alternatives(schema);
  for (const key of keys) {
    here = here.flatMap((s): JsonSchema[] => {
      if (s.type === 'array' || s.items !== undefined)
        return /^\d+$/.test(key) && typeof s.items === 'object' ? alternatives(s.items as JsonSchema) : [];
      const props = s.properties as Record<string, JsonSchema> | undefined;
      if (props && Object.hasOwn(props, key)) return alternatives(props[key] as JsonSchema);
      const extra = s.additionalProperties;
      if (extra === true || (s.type === undefined && extra === undefined)) return [{}];
      return typeof extra === 'object' && extra !== null ? alternatives(extra as JsonSchema) : [];
    });
  }
  return here;
}

/**
 * A string field with no list of values, or a schema with no type (it says nothing of the value's
 * kind): the number's digits may be sent as a string there.
 */
const takesString = (s: JsonSchema) =>
  s.enum === undefined && (s.type === 'string' || (s.type === undefined && s.properties === undefined));

function bound(s: JsonSchema): string {
  const min = typeof s.minimum === 'number' ? s.minimum : undefined;
  const max = typeof s.maximum === 'number' ? Math.min(s.maximum, MAX) : MAX;
  const kind = s.type === 'integer' ? 'an integer' : 'a number';
  return min !== undefined ? `it must be ${kind} from ${min} to ${max}` : `it must be ${kind} at most ${max}`;
}

/**
 * The advice ending the refusal of an integer past ±2^53-1 at `keys` of a body `schema` describes
 * (undefined: an operator's document, no schema).
 */
export function unsafeIntegerAdvice(schema: JsonSchema | undefined, keys: readonly string[]): string {
  if (schema === undefined) return `write it within ±${MAX}, or as a string where a string is taken`;
  const at = schemasAt(schema, keys);
  if (at.some(takesString)) return 'send it as a string';
  const numeric = at.find((s) => s.type === 'integer' || s.type === 'number');
  return numeric ? bound(numeric) : `write it within ±${MAX}`;
}
