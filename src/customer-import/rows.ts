// One data row → the input POST /customers takes, and its faults. Pure. The rules are the customers
// module's own (bounds, phone numbers read with the restaurant's country, custom field types:
// commands/customers/prepare.ts and custom-fields.ts); this file only reads CSV text into values:
//
// - an empty cell is "not given": a new customer leaves the field unset, an update leaves it as it is
//   (an import never clears a field);
// - tags and MULTI_SELECT values are separated by "|" (`vip|regular`), each trimmed, empty ones dropped;
// - newsletter_consent and BOOLEAN fields take true/false, yes/no or 1/0 (any case);
// - NUMBER fields take a decimal number with a dot (`12.5`, `-3`);
// - lang is read in any case (`fr` is FR), and so are SELECT and MULTI_SELECT options (`Gold` is the
//   option gold, unless two options differ only in case);
// - email, phone_number, lang and the values of non-TEXT custom fields are trimmed; name, note,
//   external_id and TEXT values are kept as written.
import type { ProfileInput } from '../../commands/customers/bounds';
import { type CustomFieldDefinition, checkCustomFields } from '../../commands/customers/custom-fields';
import { profileIssues } from '../../commands/customers/prepare';
import type { Issue } from '../../src/core/errors';
import type { Column } from './columns';

export const LIST_SEPARATOR = '|';

export type RowInput = ProfileInput & { name: string };

export interface ReadRow {
  input: RowInput;
  /** Every fault of the row, one per field; paths as POST /customers reports them. */
  issues: Issue[];
}

const TRUE = new Set(['true', 'yes', '1']);
const FALSE = new Set(['false', 'no', '0']);
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function readBoolean(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (TRUE.has(t)) return true;
  if (FALSE.has(t)) return false;
  return undefined;
}

export const splitList = (text: string): string[] =>
  text
    .split(LIST_SEPARATOR)
    .map((t) => t.trim())
    .filter((t) => t !== '');

/**
 * A SELECT or MULTI_SELECT value as its option is spelled, when the cell names it in another case
 * ("Gold" for gold) and no other option has that spelling in any case; otherwise as written.
 */
function optionSpelling(def: CustomFieldDefinition, value: string): string {
  const options = def.options ?? [];
  if (options.includes(value)) return value;
  const same = options.filter((o) => o.toLowerCase() === value.toLowerCase());
  return same.length === 1 ? (same[0] as string) : value;
}

/**
 * A custom field's cell as the value the API would receive. Text that cannot be the field's type
 * is passed on as text, so the module's rule reports it with its own message.
 */
function customValue(def: CustomFieldDefinition, text: string): unknown {
  switch (def.type) {
    case 'TEXT':
      return text;
    case 'NUMBER': {
      const t = text.trim();
      return NUMBER.test(t) ? Number(t) : t;
    }
    case 'BOOLEAN':
      return readBoolean(text) ?? text.trim();
    case 'SELECT':
      return optionSpelling(def, text.trim());
    case 'MULTI_SELECT':
      return splitList(text).map((v) => optionSpelling(def, v));
    default:
      return text.trim();
  }
}

/** Reads the cells of one row (the columns come from mapHeader, without issues). */
export function readRow(cells: readonly string[], columns: readonly Column[]): ReadRow {
  const issues: Issue[] = [];
  const input: RowInput = { name: '' };
  const custom: Record<string, unknown> = {};
  if (cells.length !== columns.length)
    issues.push({
      path: 'row',
      code: 'column_count',
      message: `the row has ${cells.length} cell${cells.length === 1 ? '' : 's'}, the header ${columns.length}`,
    });
  columns.forEach((col, i) => {
    const text = cells[i] ?? '';
    if (text.trim() === '') return;
    if (col.kind === 'custom') {
      custom[col.definition.id] = customValue(col.definition, text);
      return;
    }
    switch (col.field) {
      case 'name':
        input.name = text;
        break;
      case 'email':
        input.email = text.trim();
        break;
      case 'phone_number':
        input.phone_number = text.trim();
        break;
      case 'lang':
        input.lang = text.trim().toUpperCase();
        break;
      case 'external_id':
        input.external_id = text;
        break;
      case 'tags':
        input.tags = splitList(text);
        break;
      case 'note':
        input.note = text;
        break;
      case 'newsletter_consent': {
        const consent = readBoolean(text);
        if (consent === undefined)
          issues.push({
            path: 'newsletter_consent',
            code: 'invalid_type',
            message: 'newsletter_consent takes true or false (also yes/no, 1/0)',
          });
        else input.newsletter_consent = consent;
        break;
      }
    }
  });
  if (Object.keys(custom).length) input.custom_fields = custom;
  return { input, issues };
}

/**
 * Every fault of a row, by the rules POST /customers applies (400 and 422 alike): the name is
 * required, then the module's bounds and phone rule, then the custom field values.
 */
export function validateRow(
  read: ReadRow,
  country: string | null,
  definitions: readonly CustomFieldDefinition[],
): Issue[] {
  const issues = [...read.issues];
  if (read.input.name === '') issues.push({ path: 'name', code: 'required', message: 'name is required' });
  const { name, ...rest } = read.input;
  issues.push(...profileIssues(name === '' ? rest : read.input, country));
  if (read.input.custom_fields)
    issues.push(...checkCustomFields(definitions, read.input.custom_fields).issues);
  return issues;
}
