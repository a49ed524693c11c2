// From what a partner sends to what is stored: bounds checked (400), custom field values checked
// against their definitions (422), phone numbers normalised, tags deduplicated. Pure.
import { type Issue, unprocessable, validationError } from '../../src/core/errors';
import { blankAsNull, distinctInOrder } from '../../src/core/text';
import { checkBounds, type ProfileInput } from './bounds';
import { defaultLang, isPossiblePhone, normalizePhone, PHONE_REFUSED } from './contact';
import { type CheckedCustomFields, type CustomFieldDefinition, checkCustomFields } from './custom-fields';
import type { CustomerProfile, Lang } from './events';

export interface WriteContext {
  restaurantId: string;
  /** The restaurant's country: national phone spellings are read with it. */
  country: string | null;
  definitions: readonly CustomFieldDefinition[];
}

/** The bounds of §2.3, and a phone number that can be read with the restaurant's country. */
export function profileIssues(input: ProfileInput, country: string | null): Issue[] {
  const issues = checkBounds(input);
  const phone = input.phone_number;
  if (
    typeof phone === 'string' &&
    !issues.some((i) => i.path === 'phone_number') &&
    !isPossiblePhone(phone, country)
  )
    issues.push({ path: 'phone_number', code: 'invalid_format', message: `phone_number ${PHONE_REFUSED}` });
  return issues;
}

/** `held`: the custom field ids the customer written onto holds a value for (none for a new one). */
function checked(
  input: ProfileInput,
  ctx: WriteContext,
  held: ReadonlySet<string> = new Set(),
): CheckedCustomFields | null {
  const bounds = profileIssues(input, ctx.country);
  if (bounds.length) throw validationError(bounds, 'The customer is invalid');
  if (input.custom_fields === undefined) return null;
  const fields = checkCustomFields(ctx.definitions, input.custom_fields, 'custom_fields', held);
  if (fields.issues.length)
    throw unprocessable(fields.issues, 'A custom field is unknown or its value does not fit');
  return fields;
}

/** A new customer's profile. Unset fields are null or empty, never missing. */
export function prepareProfile(input: ProfileInput & { name: string }, ctx: WriteContext): CustomerProfile {
  const fields = checked(input, ctx);
  const phone = input.phone_number ? normalizePhone(input.phone_number, ctx.country) : null;
  return {
    name: input.name,
    email: input.email ?? null,
    phone_number: phone?.phone_number ?? null,
    country_code: phone?.country_code ?? null,
    lang: (input.lang as Lang | undefined) ?? defaultLang(phone?.country_code ?? null, ctx.country),
    tags: distinctInOrder(input.tags ?? []),
    note: blankAsNull(input.note ?? null),
    custom_fields: fields?.set ?? {},
    newsletter_consent: input.newsletter_consent ?? false,
    external_id: input.external_id ?? null,
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The fields `input` changes on `current`, and their previous values. A field given with the value it
 * already has is not a change; null clears; custom_fields touches only the ids it names. A value
 * whose definition the catalog no longer has can still be cleared (null), never set.
 */
export function prepareChanges(
  current: CustomerProfile,
  input: ProfileInput,
  ctx: WriteContext,
): { changes: Partial<CustomerProfile>; previous: Partial<CustomerProfile> } {
  const fields = checked(input, ctx, new Set(Object.keys(current.custom_fields)));
  const next: Partial<CustomerProfile> = {};
  if (input.name !== undefined) next.name = input.name;
  if (input.email !== undefined) next.email = input.email;
  if (input.phone_number !== undefined) {
    const phone = input.phone_number === null ? null : normalizePhone(input.phone_number, ctx.country);
    next.phone_number = phone?.phone_number ?? null;
    next.country_code = phone?.country_code ?? null;
  }
  if (input.lang !== undefined) next.lang = input.lang as Lang;
  if (input.external_id !== undefined) next.external_id = input.external_id;
  if (input.tags !== undefined) next.tags = distinctInOrder(input.tags);
  if (input.note !== undefined) next.note = blankAsNull(input.note);
  if (input.newsletter_consent !== undefined) next.newsletter_consent = input.newsletter_consent;
  if (fields) {
    const merged = { ...current.custom_fields, ...fields.set };
    for (const id of fields.cleared) delete merged[id];
    next.custom_fields = merged;
  }
  const changes: Record<string, unknown> = {};
  const previous: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(next)) {
    const before = (current as unknown as Record<string, unknown>)[k];
    // The tags the customer shows, not a repeat an older one still stores: resending them is no change.
    if (same(k === 'tags' && Array.isArray(before) ? distinctInOrder(before) : before, v)) continue;
    changes[k] = v;
    previous[k] = before;
  }
  return { changes: changes as Partial<CustomerProfile>, previous: previous as Partial<CustomerProfile> };
}
