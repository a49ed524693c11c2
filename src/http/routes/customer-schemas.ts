// Input schemas of the customer routes (spec §2.3, §4, §8), built from the bounds the write side
// checks too. POST /reservations takes `inlineContactFields` for its inline customer details.
import { BOUNDS, PHONE_DESCRIPTION } from '../../../commands/customers/bounds';
import { LANGS } from '../../../commands/customers/events';
import { customerDetailSchema } from '../../../queries/customer-presenter';
import { NOT_WHITE_SPACE_CLASS } from '../portable-pattern';
import {
  arr,
  bool,
  clearableText,
  dateTime,
  described,
  email,
  enums,
  intQuery,
  literal,
  nullable,
  num,
  obj,
  optional,
  record,
  refined,
  type Schema,
  str,
  union,
} from '../schema';

export const ON_MATCH = ['return_existing', 'update', 'create_new'] as const;

const customFieldValue = nullable(
  union([str(), num(), bool(), arr(str())], {
    description: 'string, number, boolean or array of strings, as the field type takes; null clears',
  }),
);

/**
 * Spec §2.1 names a customer's external_id an identifier matched first on creation, not a unique one
 * (a reservation's is): `create_new` always creates, so two customers may hold one. Said where a
 * partner reads it, with what each lookup then answers (docs/customers.md).
 */
const EXTERNAL_ID_DESCRIPTION =
  'Your identifier for this customer. Not unique among customers: POST with on_match create_new, or a PATCH, may give one another customer holds (no 409). POST /customers then matches the first created of them (always the same one); GET /customers?external_id= lists all of them';

const field = {
  name: str({ ...BOUNDS.name, notBlank: true, description: 'Customer name' }),
  email: nullable(email({ description: 'Matched case-insensitively' })),
  phone_number: nullable(
    str({
      ...BOUNDS.phone_number,
      description: PHONE_DESCRIPTION,
    }),
  ),
  lang: enums(LANGS),
  external_id: nullable(str({ ...BOUNDS.external_id, notBlank: true, description: EXTERNAL_ID_DESCRIPTION })),
  tags: arr(str({ ...BOUNDS.tag, notBlank: true }), {
    max: BOUNDS.tags.max,
    description: 'Replaces the whole list; one of each, in the order first given (a repeat is dropped)',
  }),
  note: clearableText({ max: BOUNDS.note.max, description: 'Internal staff note' }),
  custom_fields: record(customFieldValue, {
    description: 'Keyed by custom field id (GET /customer-fields); only the named fields change',
  }),
  newsletter_consent: bool({ description: 'false withdraws consent' }),
};

/** PATCH /customers/{id}: every field optional, unknown properties refused. */
export const customerPatchBody = obj({
  name: optional(field.name),
  email: optional(field.email),
  phone_number: optional(field.phone_number),
  lang: optional(field.lang),
  external_id: optional(field.external_id),
  tags: optional(field.tags),
  note: optional(field.note),
  custom_fields: optional(field.custom_fields),
  newsletter_consent: optional(field.newsletter_consent),
});

/** POST /customers: the patch fields with name required, plus on_match. */
export const customerCreateBody = obj({
  name: field.name,
  email: optional(field.email),
  phone_number: optional(field.phone_number),
  external_id: optional(field.external_id),
  lang: optional(field.lang),
  tags: optional(field.tags),
  note: optional(field.note),
  custom_fields: optional(field.custom_fields),
  newsletter_consent: optional(field.newsletter_consent),
  on_match: optional(
    enums(ON_MATCH, {
      description:
        'When a customer matches (same external_id, else phone, else email): return_existing (default) returns it unchanged, update writes the given fields onto it, create_new ignores it (unless it is blacklisted: 422 CUSTOMER_BLACKLISTED)',
    }),
  ),
});

const emptyOr = (s: Schema<string>) => optional(nullable(union([s, literal('')])));

/**
 * The contact fields of an inline reservation customer (spec §4 POST /reservations): an empty email
 * or phone is accepted and means "not given" (it never clears a matched customer's contact details).
 */
export const inlineContactFields = {
  email: emptyOr(email({ description: 'Matched case-insensitively; "" or null: not given' })),
  phone_number: emptyOr(
    str({ ...BOUNDS.phone_number, description: `${PHONE_DESCRIPTION}; "" or null: not given` }),
  ),
};

/** An inline reservation customer (spec §4 POST /reservations): name required, contacts as above. */
export const inlineCustomerSchema = obj({
  name: field.name,
  ...inlineContactFields,
  external_id: optional(field.external_id),
  lang: optional(field.lang),
  tags: optional(field.tags),
  note: optional(field.note),
  custom_fields: optional(field.custom_fields),
  newsletter_consent: optional(field.newsletter_consent),
  on_match: optional(
    enums(ON_MATCH, {
      description:
        "Omitted: follows the restaurant's setting (match unless automatic matching is off). A blacklisted match refuses the reservation whatever this says (create_new included)",
    }),
  ),
});

export const customerIdParams = obj({ id: str({ min: 1, max: 200 }) });

/**
 * GET /customers' `email` filter. No address holds white space (neither one written under the rule of
 * src/core/email.ts nor one stored before it), so a filter with any can match nothing, or, trimmed,
 * another address: it is nearly always a `+` sent unencoded (`jean+resto@…` arrives as `jean resto@…`,
 * `+x@…` as ` x@…`), refused in words rather than answered with an empty page or someone else.
 */
const emailFilter: Schema<string> = (() => {
  const checked = refined(
    str({
      min: 1,
      max: BOUNDS.email.max,
      description:
        'Case-insensitive; an internationalised domain matches in its Unicode or ASCII (xn--) spelling. No white space: a + in the address is sent as %2B',
    }),
    'email_filter',
    (v) => !/\s/.test(v),
    'holds white space, which no address does: a + in a query string must be URL-encoded as %2B (e.g. jean%2Bresto@example.com)',
  );
  return { ...checked, json: { ...checked.json, pattern: `^${NOT_WHITE_SPACE_CLASS}+$` } };
})();

/**
 * GET /customers' `phone` filter. A `+` sent unencoded arrives as a leading space: `+447700900123`
 * became ` 447700900123`, read as a national number of the restaurant's country, which matched
 * nobody (an empty page) while the same call with the restaurant's own country code happened to work.
 * Refused in words, as the date-times' offset is.
 */
const phoneFilter: Schema<string> = (() => {
  const checked = refined(
    str({
      ...BOUNDS.phone_number,
      description:
        'Any spelling; national numbers read with the restaurant country. An international number is sent with its + as %2B (a leading space is refused)',
    }),
    'phone_filter',
    (v) => !/^\s/.test(v),
    'starts with a space where its + should be: a + in a query string must be URL-encoded as %2B (e.g. %2B447700900123)',
  );
  return { ...checked, json: { ...checked.json, pattern: `^${NOT_WHITE_SPACE_CLASS}` } };
})();

export const customerFeedQuery = obj({
  limit: optional(intQuery({ min: 1, max: 100, default: 50, description: 'Page size, default 50' })),
  cursor: optional(str({ min: 1, max: 4096, description: 'pagination.next_cursor of the previous page' })),
  updated_since: optional(dateTime({ description: 'Inclusive', query: true })),
  email: optional(emailFilter),
  phone: optional(phoneFilter),
  external_id: optional(
    str({
      ...BOUNDS.external_id,
      description: 'Every customer holding it (external_id is not unique among customers), in the feed order',
    }),
  ),
  tag: optional(str(BOUNDS.tag)),
});

export const customerResponse = described({
  type: 'object',
  required: ['data'],
  properties: { data: customerDetailSchema },
});

export const customerWriteResponse = described({
  type: 'object',
  required: ['data', 'result'],
  properties: {
    data: customerDetailSchema,
    result: {
      type: 'string',
      enum: ['created', 'matched', 'updated'],
      description:
        'created (201), matched: returned as is (200), updated: the given fields were written (200)',
    },
  },
});

export const customerFeedResponse = described({
  type: 'object',
  required: ['data', 'pagination'],
  properties: {
    data: { type: 'array', items: customerDetailSchema },
    pagination: {
      type: 'object',
      required: ['next_cursor', 'has_more'],
      properties: {
        next_cursor: {
          type: 'string',
          nullable: true,
          description: 'Pass as `cursor`; null when has_more is false',
        },
        has_more: { type: 'boolean' },
      },
    },
  },
});
