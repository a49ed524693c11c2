// Custom field values checked against the restaurant's definitions (spec §2.4). Pure: the definitions
// are passed in. Every faulty field gives exactly one issue, so a partner fixes them all at once.
import { isDate } from '../../src/core/datetime';
import type { Issue } from '../../src/core/errors';
import { charCount } from '../../src/core/text';
import { BOUNDS } from './bounds';
import type { CustomFieldValue, StoredCustomField } from './events';

export const CUSTOM_FIELD_TYPES = ['TEXT', 'NUMBER', 'DATE', 'BOOLEAN', 'SELECT', 'MULTI_SELECT'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

/** One custom field of a restaurant, as the catalog defines it. */
export interface CustomFieldDefinition {
  id: string;
  name: string;
  type: CustomFieldType;
  /** Allowed values of SELECT and MULTI_SELECT. */
  options?: readonly string[] | null;
  /** Bounds of NUMBER (inclusive). */
  min?: number | null;
  max?: number | null;
  /** Most values a MULTI_SELECT holds. */
  max_items?: number | null;
}

export interface CheckedCustomFields {
  /** Field id → the value to store (with the definition's name). */
  set: Record<string, StoredCustomField>;
  /** Field ids given as null: cleared. */
  cleared: string[];
  issues: Issue[];
}

/** Why `value` does not fit `def`, or null when it does. */
function misfit(def: CustomFieldDefinition, value: unknown): { code: string; message: string } | null {
  const type = (code: string, expected: string) => ({ code, message: `${def.name} takes ${expected}` });
  switch (def.type) {
    case 'TEXT':
      if (typeof value !== 'string') return type('invalid_type', 'a string');
      if (charCount(value) > BOUNDS.text_field.max)
        return {
          code: 'out_of_range',
          message: `${def.name} holds at most ${BOUNDS.text_field.max} characters`,
        };
      return null;
    case 'NUMBER':
      if (typeof value !== 'number' || !Number.isFinite(value)) return type('invalid_type', 'a number');
      if ((def.min ?? null) !== null && value < (def.min as number))
        return { code: 'out_of_range', message: `${def.name} must be at least ${def.min}` };
      if ((def.max ?? null) !== null && value > (def.max as number))
        return { code: 'out_of_range', message: `${def.name} must be at most ${def.max}` };
      return null;
    case 'DATE':
      // The one strict reader of dates: 2027-02-30 is refused, never read as 2 March.
      return typeof value === 'string' && isDate(value)
        ? null
        : type('invalid_format', 'a date YYYY-MM-DD that exists');
    case 'BOOLEAN':
      return typeof value === 'boolean' ? null : type('invalid_type', 'true or false');
    case 'SELECT': {
      const options = def.options ?? [];
      if (typeof value !== 'string') return type('invalid_type', `one of ${options.join(', ')}`);
      return options.includes(value) ? null : type('invalid_option', `one of ${options.join(', ')}`);
    }
    case 'MULTI_SELECT': {
      const options = def.options ?? [];
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
        return type('invalid_type', `an array of values among ${options.join(', ')}`);
      // The message names the options, never the values given: an import keeps a refused row's
      // errors in its job's stream, which is never sealed nor erased (docs/customer-import.md).
      if (value.some((v) => !options.includes(v)))
        return type('invalid_option', `values among ${options.join(', ')}`);
      if (new Set(value).size !== value.length)
        return { code: 'duplicate_value', message: `${def.name} lists a value twice` };
      if ((def.max_items ?? null) !== null && value.length > (def.max_items as number))
        return { code: 'too_many_items', message: `${def.name} holds at most ${def.max_items} values` };
      return null;
    }
    default:
      return { code: 'invalid_type', message: `${def.name} has an unknown type` };
  }
}

/**
 * Checks the values a partner sends; `path` prefixes issue paths (custom_fields.<id>). `held` are the
 * ids the customer holds a value for: null clears one of them even when its definition was removed
 * from the catalog since (the value stays shown until cleared, so it must stay clearable).
 */
export function checkCustomFields(
  definitions: readonly CustomFieldDefinition[],
  values: Record<string, unknown>,
  path = 'custom_fields',
  held: ReadonlySet<string> = new Set(),
): CheckedCustomFields {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const out: CheckedCustomFields = { set: {}, cleared: [], issues: [] };
  for (const [id, value] of Object.entries(values)) {
    const at = `${path}.${id}`;
    const def = byId.get(id);
    if (!def && value === null && held.has(id)) {
      out.cleared.push(id);
      continue;
    }
    if (!def) {
      out.issues.push({
        path: at,
        code: 'unknown_field',
        // A value the customer still holds for a removed field can only be cleared: the message says how.
        message: held.has(id)
          ? `${id} was removed from the restaurant's custom fields: send null to clear this customer's value`
          : `the restaurant has no custom field ${id}`,
      });
      continue;
    }
    if (value === null) {
      out.cleared.push(id);
      continue;
    }
    const wrong = misfit(def, value);
    if (wrong) out.issues.push({ path: at, ...wrong });
    else out.set[id] = { name: def.name, value: value as CustomFieldValue };
  }
  return out;
}
