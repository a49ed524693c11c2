// Customer routes (spec §4): the CRM records a partner keeps in step with the restaurant's. A write
// route runs one command, waits for the read model to include it, and answers what GET would.

import type { ProfileInput } from '../../../commands/customers/bounds';
import { withCustomerCursorKeys } from '../../../commands/customers/cursor-key';
import { type CustomerRestaurant, updateCustomer } from '../../../commands/customers/handler';
import { profileIssues } from '../../../commands/customers/prepare';
import { upsertCustomer } from '../../../commands/customers/upsert';
import { presentCustomer } from '../../../queries/customer-presenter';
import { readFeed } from '../../../queries/customer-sync';
import { getCustomer } from '../../../queries/customers';
import type { CommandMeta } from '../../core/command-meta';
import { validationError } from '../../core/errors';
import { type AnyRoute, type AuthContext, defineRoute, scopes } from '../route';
import { customerExamples, customerRequestExamples } from './customer-examples';
import {
  customerCreateBody,
  customerFeedQuery,
  customerFeedResponse,
  customerIdParams,
  customerPatchBody,
  customerResponse,
  customerWriteResponse,
} from './customer-schemas';

const meta = (auth: AuthContext, requestId: string): CommandMeta => ({
  actor: `credential:${auth.credential._id}`,
  request_id: requestId,
  restaurant_id: auth.restaurant._id,
});

const restaurantOf = (auth: AuthContext): CustomerRestaurant => ({
  _id: auth.restaurant._id,
  country_code: auth.restaurant.country_code,
  customer_matching: auth.restaurant.customer_matching,
});

/**
 * What the customers module refuses with 400 beyond the schema (a phone number no country reads), checked
 * with the body: before the path's customer is looked up (400 before 404, README's order).
 */
const refuseBadProfile = ({ body, auth }: { body: ProfileInput; auth: AuthContext }) => {
  const issues = profileIssues(body, auth.restaurant.country_code);
  if (issues.length) throw validationError(issues, 'The customer is invalid');
};

const READ = scopes('CUSTOMERS_READ');
const WRITE = scopes('CUSTOMERS_WRITE', 'CUSTOMERS_READ');
const TAG = 'Customers';

export const customerRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/customers',
    operationId: 'listCustomers',
    summary: 'Sync customers (ordered by updated_at, then id)',
    description: [
      'The incremental sync feed. First run: no updated_since; follow `pagination.next_cursor` (as `cursor`) until `has_more` is false, and keep the last `updated_at`. Next runs: pass it as `updated_since` (inclusive), a few minutes earlier, and deduplicate on `id`.',
      'A full pass sees every customer at least once even while customers change: a customer changed during the pass moves to the end of the order and is returned again. Within a restaurant no two changes share an `updated_at`.',
      'The cursor is opaque and signed; it carries the filters of the pass (repeat them or leave them out; other filters answer 400 `cursor_mismatch`: start the pass again). A cursor that was altered, forged, or given for another restaurant, or signed with a secrets key the service no longer has, answers 400 `invalid_cursor`: start the pass again too.',
      'Filters: `email` (case-insensitive; an internationalised domain in its Unicode or `xn--` spelling), `phone` (any spelling of the number), `external_id`, `tag`. Drafts from messaging channels, deleted and merged customers never appear.',
    ].join('\n\n'),
    tag: TAG,
    access: READ,
    query: customerFeedQuery,
    responses: {
      200: {
        description: 'A page of customers',
        schema: customerFeedResponse,
        example: customerExamples.page,
      },
    },
    handler: async ({ rt, auth, query }) => {
      const restaurant = restaurantOf(auth);
      const page = await withCustomerCursorKeys(rt, restaurant._id, (keys) =>
        readFeed(rt.docs, restaurant, { ...query, limit: query.limit ?? 50 }, keys),
      );
      return {
        body: {
          data: page.customers.map(presentCustomer),
          pagination: { next_cursor: page.next_cursor, has_more: page.has_more },
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/customers/{id}',
    operationId: 'getCustomer',
    summary: 'Read a customer',
    description:
      "404 when the customer is not the authenticated restaurant's, and for drafts from messaging channels.",
    tag: TAG,
    access: READ,
    params: customerIdParams,
    errors: [404],
    responses: {
      200: { description: 'The customer', schema: customerResponse, example: customerExamples.one },
    },
    handler: async ({ rt, auth, params }) => ({
      body: { data: presentCustomer(await getCustomer(rt.docs, auth.restaurant._id, params.id)) },
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/customers',
    operationId: 'createCustomer',
    summary: 'Create a customer, or find the one that matches',
    description: [
      'Matching, in this order: same `external_id`, then same phone number (national and international spellings match), then same email (case-insensitive). When several customers share the key, the oldest is the match. Blacklisted customers match like any other (`blacklisted: true`).',
      '`on_match`: `return_existing` (default) answers 200 with `result: "matched"` and writes nothing (external_id included); `update` writes the given fields onto the match (external_id included) and answers 200 with `result: "updated"`; `create_new` creates a new customer whatever matches (201, `result: "created"`), and when the match is blacklisted the new customer is created blacklisted (`blacklisted: true`), so that a twin of a blacklisted guest cannot book. No match: 201, `result: "created"`.',
      'Replaying a successful call finds the customer if it carries an external_id, phone or email. Matching is not a lock: two identical calls at the same moment can create two customers.',
      'Besides the fields of the spec, `lang` (default: the language of the country of the phone number when it is one of these, English for another country, else that of the country of the restaurant, else EN), `note` and `custom_fields` (checked against GET /customer-fields, 422 per faulty field) may be given.',
      'The body is checked before matching: one refused without a match (400, or 422 for a custom field) is refused with one too, whatever `on_match` says.',
    ].join('\n\n'),
    tag: TAG,
    access: WRITE,
    body: customerCreateBody,
    bodyExample: customerRequestExamples.create,
    bodyRequired: true,
    checkInput: refuseBadProfile,
    errors: [409, 422],
    responses: {
      200: {
        description: 'An existing customer matched (result matched or updated)',
        schema: customerWriteResponse,
        example: customerExamples.matched,
      },
      201: {
        description: 'A customer was created (result created)',
        schema: customerWriteResponse,
        example: customerExamples.created,
      },
    },
    handler: async ({ rt, auth, body, requestId }) => {
      const restaurant = restaurantOf(auth);
      const { on_match: onMatch = 'return_existing', ...fields } = body;
      const outcome = await upsertCustomer(rt, restaurant, fields, onMatch, meta(auth, requestId));
      if (outcome.result === 'matched')
        return { status: 200, body: { data: presentCustomer(outcome.doc), result: 'matched' } };
      await rt.settle(outcome.position);
      const doc = await getCustomer(rt.docs, restaurant._id, outcome.customerId);
      return {
        status: outcome.result === 'created' ? 201 : 200,
        body: { data: presentCustomer(doc), result: outcome.result },
      };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/customers/{id}',
    operationId: 'updateCustomer',
    summary: 'Update a customer',
    description:
      'Only the given fields change; null clears a field; `tags` replaces the list; `custom_fields` changes only the fields it names (null clears one). A custom field id the restaurant does not define, or a value that does not fit its type, answers 422 with one issue per faulty field; a value still held under a field the restaurant has since removed is cleared by null (and cannot be set). `updated_at` moves only when something changed.',
    tag: TAG,
    access: WRITE,
    params: customerIdParams,
    body: customerPatchBody,
    bodyExample: customerRequestExamples.update,
    bodyRequired: true,
    checkInput: refuseBadProfile,
    errors: [404, 409, 422],
    responses: {
      200: {
        description: 'The customer after the change',
        schema: customerResponse,
        example: customerExamples.one,
      },
    },
    handler: async ({ rt, auth, params, body, requestId }) => {
      const restaurant = restaurantOf(auth);
      const outcome = await updateCustomer(rt, restaurant, params.id, body, meta(auth, requestId));
      await rt.settle(outcome.position);
      return { body: { data: presentCustomer(await getCustomer(rt.docs, restaurant._id, params.id)) } };
    },
  }),
];
