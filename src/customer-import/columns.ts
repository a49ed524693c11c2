// The header row of a customer file → what each column holds. Pure. Every problem is reported at
// once, before any row is read: an unknown, empty, duplicate or ambiguous column, or no `name` column.
//
// Columns: the customer fields of the API by name (case and surrounding spaces ignored): name, email,
// phone_number, lang, external_id, tags, note, newsletter_consent; and custom fields as `cf:<field id>`
// or by the field's name (case-insensitive). A field's name equal to a customer field's is reached
// only as cf:<id>; a name two fields share is ambiguous (use cf:<id>).
import type { CustomFieldDefinition } from '../../commands/customers/custom-fields';

export const CUSTOMER_COLUMNS = [
  'name',
  'email',
  'phone_number',
  'lang',
  'external_id',
  'tags',
  'note',
  'newsletter_consent',
] as const;
export type CustomerColumn = (typeof CUSTOMER_COLUMNS)[number];

export const CUSTOM_FIELD_PREFIX = 'cf:';

export type Column =
  | { kind: 'field'; field: CustomerColumn; header: string }
  | { kind: 'custom'; definition: CustomFieldDefinition; header: string };

export interface HeaderIssue {
  /** 1-based column number ('' for the file as a whole). */
  column: number | null;
  header: string;
  code: 'unknown_column' | 'duplicate_column' | 'empty_header' | 'ambiguous_column' | 'missing_column';
  message: string;
}

export interface HeaderMap {
  columns: Column[];
  issues: HeaderIssue[];
}

const fold = (s: string) => s.trim().toLowerCase();

/** A header as its issue quotes it: at most 60 characters (a header of 200 KB is not repeated whole). */
const QUOTED_MAX = 60;
const cut = (s: string) => (s.length > QUOTED_MAX ? `${s.slice(0, QUOTED_MAX - 1)}…` : s);
const quoted = (raw: string) => `"${cut(raw)}"`;

export function mapHeader(
  header: readonly string[],
  definitions: readonly CustomFieldDefinition[],
): HeaderMap {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const byName = new Map<string, CustomFieldDefinition[]>();
  for (const d of definitions) byName.set(fold(d.name), [...(byName.get(fold(d.name)) ?? []), d]);
  const columns: Column[] = [];
  const issues: HeaderIssue[] = [];
  const seen = new Map<string, number>();
  header.forEach((raw, i) => {
    const column = i + 1;
    const h = fold(raw);
    const issue = (code: HeaderIssue['code'], message: string) =>
      issues.push({ column, header: raw, code, message });
    let found: Column | null = null;
    if (h === '') issue('empty_header', `column ${column} has no header`);
    else if ((CUSTOMER_COLUMNS as readonly string[]).includes(h))
      found = { kind: 'field', field: h as CustomerColumn, header: raw };
    else if (h.startsWith(CUSTOM_FIELD_PREFIX)) {
      const id = raw.trim().slice(CUSTOM_FIELD_PREFIX.length).trim();
      const definition = byId.get(id);
      if (definition) found = { kind: 'custom', definition, header: raw };
      else issue('unknown_column', `${quoted(raw)}: the restaurant has no custom field ${cut(id)}`);
    } else {
      const named = byName.get(h) ?? [];
      if (named.length === 1)
        found = { kind: 'custom', definition: named[0] as CustomFieldDefinition, header: raw };
      else if (named.length > 1)
        issue(
          'ambiguous_column',
          `${quoted(raw)}: several custom fields have this name; name the column ${named.map((d) => `${CUSTOM_FIELD_PREFIX}${d.id}`).join(' or ')}`,
        );
      else
        issue(
          'unknown_column',
          `${quoted(raw)} is not a customer field (${CUSTOMER_COLUMNS.join(', ')}) nor a custom field (its name, or ${CUSTOM_FIELD_PREFIX}<field id>)`,
        );
    }
    if (!found) return;
    const key = found.kind === 'field' ? found.field : `${CUSTOM_FIELD_PREFIX}${found.definition.id}`;
    const first = seen.get(key);
    if (first !== undefined) {
      issue(
        'duplicate_column',
        `${quoted(raw)} is the same column as column ${first} (${quoted(header[first - 1] as string)})`,
      );
      return;
    }
    seen.set(key, column);
    columns.push(found);
  });
  if (!seen.has('name'))
    issues.push({
      column: null,
      header: 'name',
      code: 'missing_column',
      message: 'the file has no name column: every customer needs a name',
    });
  return { columns: issues.length ? [] : columns, issues };
}
