// Missed calls (spec §1 "Missed Calls", DESIGN.md §3): a telephony partner reports a call nobody
// answered; Couvert follows up on WhatsApp with the restaurant's approved template. The rules live in
// commands/missed-calls/; this file reads the request and shapes the answer.

import { withCustomerCursorKeys } from '../../../commands/customers/cursor-key';
import { OUTCOMES, RECORD_OUTCOMES } from '../../../commands/missed-calls/events';
import { type CallRestaurant, reportMissedCall } from '../../../commands/missed-calls/handler';
import { getMissedCall, listMissedCalls, presentCall } from '../../../queries/missed-calls';
import type { CommandMeta } from '../../core/command-meta';
import { ApiError } from '../../core/errors';
import { messageSenderFor } from '../../missed-calls-sender';
import { callerIdsFrom } from '../../privacy/caller-ids';
import { type AnyRoute, type AuthContext, defineRoute, scopes } from '../route';
import { dateTime, described, enums, intQuery, obj, optional, str } from '../schema';

const ACCESS = scopes('MISSED_CALLS_WRITE');
const TAG = 'Missed Calls';
/** A call reported as happening later than this past the service clock is refused. */

export const missedCallBody = obj({
  caller_phone_number: str({
    min: 3,
    max: 40,
    description:
      "The caller's number: international (+33 6 12 34 56 78) or national for the restaurant's country",
  }),
  external_call_id: optional(
    str({
      min: 1,
      max: 128,
      notBlank: true,
      description:
        "The telephony partner's id of the call: a replay (the same number in any spelling and, when given, the same occurred_at instant) answers the first call's record (SKIPPED_DUPLICATE) and never sends twice; after a 502 it tries again. The same id with another number or occurred_at is another call under a reused id: 409",
    }),
  ),
  occurred_at: optional(
    dateTime({
      service: true,
      description:
        "When the phone rang (default: now); at most 5 minutes ahead. A call older than the restaurant's follow_up_max_age_hours (24 by default) is recorded as SKIPPED_TOO_OLD, with no message",
    }),
  ),
});

const params = obj({ id: str({ min: 1, max: 64 }) });

const listQuery = obj({
  occurred_at_from: optional(dateTime({ description: 'Inclusive lower bound on occurred_at', query: true })),
  occurred_at_to: optional(dateTime({ description: 'Inclusive upper bound on occurred_at', query: true })),
  outcome: optional(enums(RECORD_OUTCOMES, { description: 'Only calls with this outcome' })),
  limit: optional(intQuery({ min: 1, max: 100, default: 50, description: 'Page size, default 50' })),
  cursor: optional(
    str({ min: 1, max: 1024, description: 'pagination.next_cursor of the previous page (opaque, signed)' }),
  ),
});

const nullableString = { type: 'string', nullable: true };

const callSchema = (outcomes: readonly string[]) => ({
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'outcome',
    'caller_phone_number',
    'customer_id',
    'reservation_id',
    'template_type',
    'external_call_id',
    'occurred_at',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string' },
    outcome: { type: 'string', enum: [...outcomes] },
    caller_phone_number: {
      ...nullableString,
      description:
        "E.164; null once the caller's customer was erased (right to erasure: the number is unreadable everywhere, docs/AUDIT.md)",
    },
    customer_id: {
      ...nullableString,
      description: 'The matched or created customer (null when the feature is off)',
    },
    reservation_id: { ...nullableString, description: "The customer's next upcoming reservation, if any" },
    template_type: {
      type: 'string',
      nullable: true,
      enum: ['MISSED_CALL', 'MISSED_CALL_WITH_RESERVATION', null],
      description: 'The template asked of the provider (null when nothing was asked)',
    },
    external_call_id: nullableString,
    occurred_at: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
});

const one = (outcomes: readonly string[]) =>
  described({
    type: 'object',
    required: ['data'],
    additionalProperties: false,
    properties: { data: callSchema(outcomes) },
  });

const page = described({
  type: 'object',
  required: ['data', 'pagination'],
  additionalProperties: false,
  properties: {
    data: { type: 'array', items: callSchema(RECORD_OUTCOMES) },
    pagination: {
      type: 'object',
      required: ['next_cursor', 'has_more'],
      additionalProperties: false,
      properties: { next_cursor: nullableString, has_more: { type: 'boolean' } },
    },
  },
});

const example = {
  id: 'mc_q2v8k4m1z7x3c9b5n6a0',
  outcome: 'SENT',
  caller_phone_number: '+33612345678',
  customer_id: 'cus_3kd9w2m5x8q1z4v7b0n6',
  reservation_id: 'res_8k2m4q6s9u1w3y5a7c0e',
  template_type: 'MISSED_CALL_WITH_RESERVATION',
  external_call_id: 'call-2026-06-02-0042',
  occurred_at: '2026-06-02T19:42:10.000Z',
  created_at: '2026-06-02T19:42:11.204Z',
  updated_at: '2026-06-02T19:42:11.391Z',
};

const OUTCOME_TEXT = [
  '`outcome`: `SENT` (the provider accepted the message; with no provider configured the outbox recorded it and nothing left the machine);',
  "`SKIPPED_DUPLICATE` (this call was reported before under this external_call_id, with the same number and, when given, the same occurred_at: the data is the first call's record, nothing is sent again);",
  '`SKIPPED_COOLDOWN` (this caller got a message less than 6 hours ago);',
  '`SKIPPED_FEATURE_DISABLED` (the restaurant does not have the MISSED_CALLS feature: nothing else happens, no customer is created);',
  '`SKIPPED_OPTED_OUT` (the customer opted out of WhatsApp marketing); `SKIPPED_BLACKLISTED` (the customer is blacklisted: they could not book anyway);',
  '`SKIPPED_NO_TEMPLATE` (no approved WhatsApp template for the case, or one that needs a booking link the restaurant has not set);',
  '`SKIPPED_INVALID_RECIPIENT` (WhatsApp cannot deliver to this number); `SKIPPED_TEMPLATE_UNAVAILABLE` (WhatsApp refused the template: paused, disabled, missing or not matching its parameters);',
  '`SKIPPED_CUSTOMER_DELETED` (a retry of a call whose customer was deleted since: nothing is sent to them);',
  "`SKIPPED_TOO_OLD` (the call occurred more than the restaurant's `follow_up_max_age_hours`, 24 by default, before it was reported or retried: it is recorded, nobody is matched or created, nothing is sent);",
  '`SEND_UNCONFIRMED` (the provider was asked and its answer never came: the message may have left; it is never sent again). A SKIPPED outcome is not an error.',
].join(' ');

const meta = (auth: AuthContext, requestId: string): CommandMeta => ({
  actor: `credential:${auth.credential._id}`,
  request_id: requestId,
  restaurant_id: auth.restaurant._id,
});

export const missedCallRoutes: AnyRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/missed-calls',
    operationId: 'reportMissedCall',
    summary: 'Report a missed call (and follow up on WhatsApp)',
    description: [
      "Does the whole follow-up: reads the number with the restaurant's country, finds the customer by phone (national and international spellings match) or creates one (named after the number), looks up their next upcoming reservation (not canceled, rejected or past), and sends the restaurant's approved WhatsApp template `MISSED_CALL_WITH_RESERVATION` (falling back to `MISSED_CALL` when it has none) or `MISSED_CALL`, with the guest's name, the restaurant's name, the reservation's date and time in the restaurant's zone and the template's language, and the booking link.",
      OUTCOME_TEXT,
      "502 (code INTERNAL_ERROR, the closest of the error codes; `details.reason` PROVIDER_RATE_LIMITED, PROVIDER_AUTH_FAILED, PROVIDER_NOT_CONFIGURED or PROVIDER_UNAVAILABLE, `details.missed_call_id`, `details.retryable`) when the provider refused the message or could not be reached: nothing was sent, and a retry with the same `external_call_id` tries again (never sending twice). A report without `external_call_id` cannot be retried (nothing names it): reporting it again records another call, the failed one staying `FAILED`, and the 502's message says so. 409 while another request is processing the same `external_call_id`. 409 RESOURCE_CONFLICT when the `external_call_id` is held by another call: a different `caller_phone_number` (compared after reading both to E.164) or a different `occurred_at` instant (compared only when given); `details.fields` names them, `details.external_call_id` and `details.missed_call_id` the id and the call holding it; nothing is recorded or sent for the request, and neither number is told back.",
    ].join('\n\n'),
    tag: TAG,
    access: ACCESS,
    body: missedCallBody,
    bodyExample: {
      caller_phone_number: '06 12 34 56 78',
      external_call_id: 'call-2026-06-02-0042',
      occurred_at: '2026-06-02T21:42:10+02:00',
    },
    bodyRequired: true,
    errors: [409, 422, 502],
    responses: {
      201: {
        description: 'The call was recorded; `outcome` says what was sent',
        schema: one(OUTCOMES),
        example: { data: example },
      },
    },
    handler: async ({ rt, auth, body: input, requestId }) => {
      const country = auth.restaurant.country_code;
      const restaurant: CallRestaurant = {
        _id: auth.restaurant._id,
        name: auth.restaurant.name,
        country_code: country,
        timezone: auth.restaurant.timezone,
        features: auth.restaurant.features ?? [],
      };
      const result = await reportMissedCall(
        {
          events: rt.events,
          clock: rt.clock,
          docs: rt.docs,
          sender: messageSenderFor(rt),
          logger: rt.logger,
          config: rt.config,
          settle: async (p) => {
            await rt.settle(p);
          },
          callers: callerIdsFrom(rt.keys),
        },
        restaurant,
        input,
        meta(auth, requestId),
      );
      await rt.settle(result.position);
      if (result.failure)
        throw new ApiError(
          502,
          'INTERNAL_ERROR',
          input.external_call_id !== undefined
            ? 'WhatsApp refused the message or could not be reached; nothing was sent. Retry with the same external_call_id.'
            : // Nothing names this call: a retry cannot resume it, and is recorded as another call.
              'WhatsApp refused the message or could not be reached; nothing was sent. This report had no external_call_id, so reporting it again records another call (give each call an external_call_id: a retry with it resumes the call and never sends twice).',
          {
            reason: result.failure.reason,
            missed_call_id: result.call.id,
            provider_code: result.failure.code,
            retryable: true,
          },
        );
      const doc = await getMissedCall(rt.docs, restaurant._id, result.call.id as string);
      return { status: 201, body: { data: { ...presentCall(doc), outcome: result.outcome } } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/missed-calls/{id}',
    operationId: 'getMissedCall',
    summary: 'Read a missed call',
    description: `Its record as it stands: an outcome above, or \`PENDING\` (being processed) or \`FAILED\` (the last send failed with a 502; a retry with the same external_call_id tries again). 404 for a call of another restaurant. ${OUTCOME_TEXT}`,
    tag: TAG,
    access: ACCESS,
    params,
    responses: {
      200: { description: 'The missed call', schema: one(RECORD_OUTCOMES), example: { data: example } },
    },
    handler: async ({ rt, auth, params: p }) => ({
      body: { data: presentCall(await getMissedCall(rt.docs, auth.restaurant._id, p.id)) },
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/missed-calls',
    operationId: 'listMissedCalls',
    summary: 'List missed calls (newest first)',
    description:
      'Ordered by occurred_at, newest first, then id. Filters: `occurred_at_from` and `occurred_at_to` (inclusive; an upper bound before the lower answers 400 `invalid_range`), `outcome`. Follow `pagination.next_cursor` (as `cursor`) until `has_more` is false. The cursor is opaque and signed; it carries the filters of the pass (repeat them or leave them out; other filters answer 400 `cursor_mismatch`). A cursor that was altered, forged, or given for another restaurant answers 400 `invalid_cursor`.',
    tag: TAG,
    access: ACCESS,
    query: listQuery,
    windows: [['occurred_at_from', 'occurred_at_to']],
    responses: {
      200: {
        description: 'A page of missed calls',
        schema: page,
        example: { data: [example], pagination: { next_cursor: null, has_more: false } },
      },
    },
    handler: async ({ rt, auth, query }) => ({
      body: await withCustomerCursorKeys(rt, auth.restaurant._id, (keys) =>
        listMissedCalls(rt.docs, auth.restaurant._id, { ...query, limit: query.limit ?? 50 }, keys),
      ),
    }),
  }),
];
