// One answer per kind of mistake, whatever the route: the table partners read in the OpenAPI document's
// description and the README. The server applies each rule through the route declarations
// (src/http/server.ts `handle`, src/http/validate.ts, src/http/query-rules.ts, src/http/references.ts),
// and test/e2e/input-rules.e2e.test.ts sends each kind of mistake to every route that can make it.

export const INPUT_RULES: readonly { mistake: string; answer: string }[] = [
  {
    mistake: 'A query parameter the operation does not declare (a typo, an extra filter)',
    answer: '400 VALIDATION_ERROR, issue `unknown_parameter` on it; never silently ignored',
  },
  {
    mistake: 'A body property the schema does not declare',
    answer: '400 VALIDATION_ERROR, issue `unknown_property` on its dotted path',
  },
  {
    mistake: 'A property given twice in one JSON object (at any depth), or a query parameter given twice',
    answer:
      '400 VALIDATION_ERROR, issue `duplicate_property` on the property’s dotted path or the parameter’s name; never read as its last value',
  },
  {
    mistake: 'An Authorization header given twice (the same value or two)',
    answer:
      '401 INVALID_AUTHENTICATION with `WWW-Authenticate: Bearer …, error="invalid_request"`, as a header that is not `Bearer <token>`; never read as either value (the OAuth token and revoke endpoints: 400 `invalid_request`)',
  },
  {
    mistake:
      'A query parameter whose %-escapes are malformed (`%zz`, a lone `%`) or spell bytes that are not UTF-8 (`%E9`)',
    answer:
      '400 VALIDATION_ERROR, issue `invalid_encoding` on it; never read as U+FFFD or as its escaped text (a `%` itself is `%25`)',
  },
  { mistake: 'A required field missing', answer: '400 VALIDATION_ERROR, issue `required`' },
  {
    mistake: 'A value of the wrong type (a string for an integer, an object for a string…)',
    answer: '400 VALIDATION_ERROR, issue `invalid_type`',
  },
  {
    mistake:
      'A value in the wrong format (a date-time without offset, an impossible calendar date, an email)',
    answer: '400 VALIDATION_ERROR, issue `invalid_format`',
  },
  {
    mistake:
      'A value outside the ones a field or query parameter lists (an enum; an item of a comma-separated filter such as `status=CONFIRMED,SEATED`)',
    answer: '400 VALIDATION_ERROR, issue `invalid_enum`, in the body and the query string alike',
  },
  {
    mistake:
      'A value outside the bounds this document declares (lengths in characters, minimum, maximum, page sizes)',
    answer: '400 VALIDATION_ERROR, issue `out_of_range`; the value is never clamped or altered',
  },
  {
    mistake: 'A window whose upper bound is before its lower bound (start_at_to before start_at_from)',
    answer:
      '400 VALIDATION_ERROR, issue `invalid_range` on the upper bound; both bounds are inclusive, so equal bounds are a one-instant window, not an error',
  },
  {
    mistake:
      'A pagination cursor (`cursor`, `starting_after`) that is not a `next_cursor` this API gave for this restaurant, or that names a delivery no longer in the 30-day history',
    answer:
      '400 VALIDATION_ERROR, issue `invalid_cursor` on it (never a 404); a `next_cursor` of GET /customers or GET /missed-calls sent with other filters than its own pass: issue `cursor_mismatch`',
  },
  {
    mistake:
      'A body that is not JSON, or JSON that is not an object, or text that is not Unicode (bytes that are not UTF-8, a \\uD800-\\uDFFF escape without its other half)',
    answer:
      '400 VALIDATION_ERROR (issue `invalid_encoding` for bytes that are not UTF-8: never stored with U+FFFD in their place; and on the string or property name holding half of a surrogate pair; `invalid_content_encoding` for a body not compressed as its Content-Encoding says; 415 for another content type, a charset other than UTF-8 or a Content-Encoding other than gzip, deflate or br; 413 past the size limit, counted once decompressed)',
  },
  {
    mistake: 'The id in the path names nothing this credential can see (unknown, or another restaurant’s)',
    answer: '404 RESOURCE_NOT_FOUND',
  },
  {
    mistake:
      'An id in the query or body (shift_id, room_id, table_ids, discount_id, prescriber_id, customer.id, customer_id) names nothing of this restaurant',
    answer:
      '422 VALIDATION_ERROR, issue `unknown_reference` on each such field, and `details.reason` (UNKNOWN_SHIFT, UNKNOWN_ROOM, UNKNOWN_TABLE, UNKNOWN_DISCOUNT, UNKNOWN_PRESCRIBER, CUSTOMER_NOT_FOUND)',
  },
  {
    mistake:
      "A request that is well formed but breaks a rule of the restaurant's own data (party size beyond the shift's, a discount not valid then, a blacklisted customer, a slot no longer bookable)",
    answer:
      '422 VALIDATION_ERROR with `details.reason`; custom-field values that do not fit their field: 422 with one issue per field',
  },
  {
    mistake: 'A duplicate external_id, or a change a point-of-sale lock forbids',
    answer: '409 RESOURCE_CONFLICT (`details.locked_fields` for locks)',
  },
];

/** The table as Markdown, for the OpenAPI description and the README. */
export function inputRulesMarkdown(): string {
  return [
    '| mistake | answer |',
    '|---|---|',
    ...INPUT_RULES.map((r) => `| ${r.mistake} | ${r.answer} |`),
    '',
    'Checks run in this order, and the first that fails answers: authentication (401), scope (403), the path, the query string, the body (400), ids the input refers to (422), then the operation itself (404, 409, 422).',
  ].join('\n');
}
