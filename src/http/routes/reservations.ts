// Reservation routes (spec §4): create, list, read, update, cancel. The rules live in
// commands/reservations; a route checks access, calls one command, waits for the read models to
// include the write, and answers what GET would.

import type { ProfileInput } from '../../../commands/customers/bounds';
import { inlineProfileIssues } from '../../../commands/customers/inline';
import {
  type CreateReservationRequest,
  createReservation,
} from '../../../commands/reservations/handler-create';
import { cancelReservation } from '../../../commands/reservations/handler-status';
import {
  type PatchReservationRequest,
  updateReservation,
} from '../../../commands/reservations/handler-update';
import { ARRIVAL_LEAD_MINUTES } from '../../../commands/reservations/status-timing';
import { getReservation, listReservations } from '../../../queries/reservations';
import type { CommandMeta } from '../../core/command-meta';
import { ApiError, validationError } from '../../core/errors';
import type { Scope } from '../../core/scopes';
import { scopeMessage } from '../auth';
import type { AuthContext } from '../route';
import { defineRoute, scopes } from '../route';
import { reservationExamples, reservationRequestExamples } from './reservation-examples';
import {
  cancelBody,
  createBody,
  idParams,
  listQuery,
  oneReservation,
  patchBody,
  reservationPage,
} from './reservation-schemas';

const present = (auth: AuthContext) => ({
  sensitive: auth.scopes.has('RESERVATIONS_READ_SENSITIVE'),
  currency: auth.restaurant.currency,
});

const meta = (auth: AuthContext, requestId: string): CommandMeta => ({
  actor: `credential:${auth.credential._id}`,
  request_id: requestId,
  restaurant_id: auth.restaurant._id,
});

const restaurantOf = (auth: AuthContext) => ({
  _id: auth.restaurant._id,
  timezone: auth.restaurant.timezone,
  currency: auth.restaurant.currency,
  country_code: auth.restaurant.country_code,
  customer_matching: auth.restaurant.customer_matching,
});

/** DESIGN.md §3: the privileged creation options and the scope each needs. */
const PRIVILEGED: readonly [keyof CreateReservationRequest, Scope][] = [
  ['bypass_availability', 'RESERVATIONS_FORCE_INSERT'],
  ['initial_status', 'RESERVATIONS_FORCE_INSERT'],
  ['bypass_payments', 'RESERVATIONS_FORCE_INSERT'],
  ['bypass_approval', 'RESERVATIONS_FORCE_CONFIRM'],
];

function assertPrivileges(auth: AuthContext, body: CreateReservationRequest): void {
  // A flag sent as false asks for nothing special.
  const used = PRIVILEGED.filter(([flag]) => body[flag] !== undefined && body[flag] !== false);
  const missing = [...new Set(used.filter(([, scope]) => !auth.scopes.has(scope)).map(([, s]) => s))];
  if (missing.length) {
    const options = used.map(([f]) => f);
    throw new ApiError(
      403,
      'INSUFFICIENT_SCOPE',
      scopeMessage(missing, `The option(s) ${options.join(', ')} need`),
      {
        // The route's own scope, then each option's: what this request needs, as every 403 says.
        required_scopes: [...new Set<Scope>(['RESERVATIONS_WRITE', ...used.map(([, s]) => s)])],
        missing_scopes: missing,
        options,
      },
    );
  }
}

/**
 * The body's rules that need the caller, run before the references (README's order: the scope's 403 and
 * the body's 400 come before an unknown id's 422 and the reservation's 404): the scopes of privileged
 * options (create only), and the customer details the customers module refuses with 400 (a phone number
 * no country reads), at `customer.<field>`.
 */
function checkReservationInput(privileged: boolean) {
  return ({ body, auth }: { body: { customer?: unknown }; auth: AuthContext }) => {
    if (privileged) assertPrivileges(auth, body as CreateReservationRequest);
    const customer = body.customer;
    if (customer && typeof customer === 'object' && !Object.hasOwn(customer, 'id')) {
      const issues = inlineProfileIssues(customer as ProfileInput, auth.restaurant.country_code, 'customer');
      if (issues.length) throw validationError(issues, 'The customer is invalid');
    }
  };
}

/** The ids a reservation body may carry: each must name something of the caller's restaurant (422). */
const BODY_REFERENCES = {
  shift_id: 'shift',
  room_id: 'room',
  table_ids: 'table',
  discount_id: 'discount',
  prescriber_id: 'prescriber',
  'customer.id': 'customer',
} as const;

const BLACKLIST_RULE =
  'A blacklisted customer is refused (422, `details.reason` CUSTOMER_BLACKLISTED, nothing created or changed): named by `customer.id`, or the customer inline details match (phone, then email), whatever `on_match` says: `create_new`, and a restaurant whose automatic matching is off, still look for the match and refuse it when it is blacklisted, rather than make a new customer of that guest.';

const ERROR_REASONS = [
  'An id in the body that names nothing of this restaurant answers 422 with `unknown_reference` issues on those fields and the matching reason below. On 422, `error.details.reason` says why: OUTSIDE_SHIFT, PARTY_SIZE_OUT_OF_RANGE, TOO_LATE, TOO_FAR, ROOM_SELECTION_REQUIRED, MAX_COVERS_REACHED, NO_TABLE, UNKNOWN_SHIFT, UNKNOWN_ROOM, UNKNOWN_TABLE, UNKNOWN_DISCOUNT, DISCOUNT_INACTIVE, DISCOUNT_NOT_STARTED, DISCOUNT_ENDED, DISCOUNT_WRONG_DAY, DISCOUNT_OUTSIDE_HOURS, UNKNOWN_PRESCRIBER, CUSTOMER_BLACKLISTED, CUSTOMER_NOT_FOUND, CUSTOMER_NAME_REQUIRED, RESERVATION_CANCELED, RESERVATION_FINISHED, RESERVATION_SEATED, APPROVAL_REQUIRED, DEPOSIT_REQUIRED, TOO_EARLY_TO_ARRIVE. A refused request creates and changes nothing (its external_id stays free).',
  'Room selection: on a shift that requires it, `room_id` is required (take it from the slot of GET /availability); without it the answer is 422 with reason ROOM_SELECTION_REQUIRED, as POST /availability/check reports it, also with bypass_availability. ',
  "Discounts: `discount_id` must name an active discount of the restaurant whose rules hold for the reservation's start_at (not for now): start_date ≤ start_at ≤ end_date (instants, inclusive; null: no limit), the restaurant's calendar day of start_at in days_of_week (ISO, 1 = Monday), and its local time (HH:MM, to the minute) from start_time to end_time inclusive. Otherwise 422 with reason DISCOUNT_INACTIVE, DISCOUNT_NOT_STARTED, DISCOUNT_ENDED, DISCOUNT_WRONG_DAY or DISCOUNT_OUTSIDE_HOURS (the first that applies, in that order) and `details` naming the discount, its rule values and the start as read (local_date, local_time, day_of_week). max_covers_per_day is not enforced.",
].join('\n\n');

export const reservationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/reservations',
    operationId: 'createReservation',
    summary: 'Create a reservation',
    description: [
      'The slot is rechecked on the write side; concurrent creates never overbook. 201 does not promise confirmation: inspect `status` and `payments`.',
      'A slot no longer bookable when the request arrives (another booking took the last table or covers since GET /availability offered it, or its minimum notice passed) is 422 with `details.reason` NO_TABLE, MAX_COVERS_REACHED or TOO_LATE, never 409: pick another slot. This follows the text of this operation in the spec (§4: "422 when the slot is no longer bookable") and departs from its §7 error table, which also lists "slot no longer available" under 409: one status for every answer that means "choose another slot", whatever made the slot go, and 409 kept for answers a partner handles otherwise. 409 is not about the slot: a duplicate `external_id`, a concurrent change that kept landing first (send it again), or a create that stalled so long that the table it held was given back (search by external_id, then send it again).',
      `Status on creation: \`initial_status\` when given (an arrived one, SHOWED_UP or a seated status, records the guests as there now: only from ${ARRIVAL_LEAD_MINUTES} minutes before \`start_at\`, else 422 TOO_EARLY_TO_ARRIVE); else PENDING when the shift requires approval (unless bypass_approval); else PENDING_PAYMENT when the shift asks a deposit of this party (a DEPOSIT payment row, status PENDING; recording the payment confirms); else CONFIRMED. A pending reservation approved with its deposit unpaid becomes CONFIRMED_PENDING_PAYMENT.`,
      '`external_id` is unique within the restaurant (409; the original response is not replayed). After a timeout, look for the reservation with GET /reservations?external_id= before creating it again. There is no idempotency key: an `Idempotency-Key` header is ignored, and the same body sent twice without `external_id` makes two reservations; `external_id` is what makes a retry safe.',
      BLACKLIST_RULE,
      ERROR_REASONS,
    ].join('\n\n'),
    tag: 'Reservations',
    access: scopes('RESERVATIONS_WRITE'),
    body: createBody,
    bodyExample: reservationRequestExamples.create,
    bodyRequired: true,
    references: { body: BODY_REFERENCES },
    checkInput: checkReservationInput(true),
    errors: [409, 422],
    responses: {
      201: {
        description: 'The reservation as created',
        schema: oneReservation,
        example: reservationExamples.created,
      },
    },
    handler: async ({ rt, auth, body, requestId }) => {
      const out = await createReservation(
        rt,
        restaurantOf(auth),
        body as CreateReservationRequest,
        meta(auth, requestId),
      );
      await rt.settle(out.position);
      return {
        status: 201,
        body: { data: await getReservation(rt.docs, auth.restaurant._id, out.reservationId, present(auth)) },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/reservations',
    operationId: 'listReservations',
    summary: 'List reservations',
    description:
      'Ordered by service day, then start_at, then id (a seating after midnight belongs to the service day before). Filters combine with AND; `status` takes one status or a comma-separated list. A customer_id this restaurant does not have answers 422 (`unknown_reference`), a start_at_to before start_at_from 400 (`invalid_range`). Customer contact fields need RESERVATIONS_READ_SENSITIVE.',
    tag: 'Reservations',
    access: scopes('RESERVATIONS_READ'),
    query: listQuery,
    windows: [['start_at_from', 'start_at_to']],
    references: { query: { customer_id: 'customer' } },
    errors: [422],
    responses: {
      200: { description: 'One page', schema: reservationPage, example: reservationExamples.page },
    },
    handler: async ({ rt, auth, query }) => {
      const { page, per_page, status, ...filters } = query;
      return {
        body: await listReservations(
          rt.docs,
          auth.restaurant,
          { ...filters, page: page ?? 1, per_page: per_page ?? 25, statuses: status?.split(',') },
          present(auth),
        ),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/reservations/{id}',
    operationId: 'getReservation',
    summary: 'Read a reservation',
    tag: 'Reservations',
    access: scopes('RESERVATIONS_READ'),
    params: idParams,
    errors: [404],
    responses: {
      200: { description: 'The reservation', schema: oneReservation, example: reservationExamples.one },
    },
    handler: async ({ rt, auth, params }) => ({
      body: { data: await getReservation(rt.docs, auth.restaurant._id, params.id, present(auth)) },
    }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/reservations/{id}',
    operationId: 'updateReservation',
    summary: 'Update a reservation',
    description: [
      "Omitted fields stay unchanged. `customer`: null disconnects; {id} connects an existing customer; fields without id update the linked customer (all its reservations show it); with no linked customer, a name finds or creates one (as inline details on creation) and connects it. A customer is written only once the reservation's other changes are recorded, so a refused request has written none; from then on the request is not refused (a cancel or POS lock landing meanwhile from another process came after it). A customer found or created is then connected with the allergies, custom_message and metadata the request sets: when other fields change too, that is a second `reservation.updated`. Details whose match (phone, then email) is a blacklisted customer refuse the request (422 CUSTOMER_BLACKLISTED, nothing changed), at a restaurant whose automatic matching is off too: no new customer is made of that guest.",
      "A change of start_at, party_size, shift_id, room_id or table_ids rechecks capacity; tables not named stay the same when they still fit. The minimum notice and booking window of the shift (TOO_LATE, TOO_FAR) apply only to a change of start_at or shift_id or a larger party_size: fewer guests, or another table or room, at the same start are accepted near or after the start too. A change that keeps start_at and shift_id is not refused because the grid of the shift no longer offers that start (its interval, hours or days changed since the booking). Only a reservation whose guests are still to come may change all of them; once the guests are there (SHOWED_UP, SEATED, PARTIALLY_SEATED, SEATED_FOR_DRINKS) its party_size, room and tables may change (checked, but not against the minimum notice: their start is past) but not its start_at or shift (422 RESERVATION_SEATED); a DONE or NO_SHOW reservation (422 RESERVATION_FINISHED) and a canceled or rejected one (422 RESERVATION_CANCELED) keep their seating, since it would take a table again. Other fields change in every status. The approval and deposit rules are applied on creation; a change of party_size or shift of guests still to come carries the pending deposit along (read status, payments and payment_summary in the answer): the DEPOSIT row the creation asked per cover, when it is the one pending, gets the new party as its quantity, at its own unit_price on the same shift or the new shift's amount per cover (a row staff recorded is a lump sum and stays as it is); when the new seating asks no deposit (party below the shift's minimum, a shift without deposit; on its current shift (a PATCH that does not change shift_id), a larger party is still asked the booking's deposit whatever the shift's rule is now, a smaller one is judged by the rule now) every pending DEPOSIT row becomes VOIDED, and a PENDING_PAYMENT or CONFIRMED_PENDING_PAYMENT reservation left with nothing pending becomes CONFIRMED. Paid, authorized and refunded rows and total_amount_paid never change through a PATCH. A PATCH never adds a deposit nor sets a pending status, so a change that newly brings one is refused unless the token holds the scope of the creation option that waives it: a reservation not PENDING moved onto a shift that requires approval (its current shift does not) needs RESERVATIONS_FORCE_CONFIRM (bypass_approval), else 422 APPROVAL_REQUIRED; a party grown or moved into the deposit of a shift that did not apply to it before, holding no DEPOSIT payment row other than VOIDED or FAILED ones, needs RESERVATIONS_FORCE_INSERT (bypass_payments), else 422 DEPOSIT_REQUIRED (create a new reservation, which carries the deposit, and cancel this one). With the scope the change goes through and keeps status and payments; guests already there (the seated statuses) may grow, their payments kept. The seating of a reservation created with bypass_availability is changed without the check only for a token holding RESERVATIONS_FORCE_INSERT; any other is checked like a booking (422 with the reason). A reservation whose room was chosen (its shift requires room selection) keeps it; moving onto a shift that requires room selection from one that does not needs a room_id (else 422 ROOM_SELECTION_REQUIRED). A discount newly set, or kept while start_at changes, is checked against the new start_at (send `discount_id: null` to drop it). 409 RESOURCE_CONFLICT with `details.locked_fields` when the point of sale locked a field this request changes (a value sent unchanged is no change). A lock on `customer` holds which customer is linked and the details of the linked customer edited through the reservation (`customer` fields without id), inline details that would connect one included.",
      ERROR_REASONS,
    ].join('\n\n'),
    tag: 'Reservations',
    access: scopes('RESERVATIONS_WRITE'),
    params: idParams,
    body: patchBody,
    references: { body: BODY_REFERENCES },
    checkInput: checkReservationInput(false),
    bodyExample: reservationRequestExamples.update,
    bodyRequired: true,
    errors: [404, 409, 422],
    responses: {
      200: {
        description: 'The reservation as updated',
        schema: oneReservation,
        example: reservationExamples.updated,
      },
    },
    handler: async ({ rt, auth, params, body, requestId }) => {
      const out = await updateReservation(
        rt,
        restaurantOf(auth),
        params.id,
        body as PatchReservationRequest,
        meta(auth, requestId),
        {
          mayForce: auth.scopes.has('RESERVATIONS_FORCE_INSERT'),
          exempt: {
            approval: auth.scopes.has('RESERVATIONS_FORCE_CONFIRM'),
            payments: auth.scopes.has('RESERVATIONS_FORCE_INSERT'),
          },
        },
      );
      await rt.settle(out.position);
      return { body: { data: await getReservation(rt.docs, auth.restaurant._id, params.id, present(auth)) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/reservations/{id}/cancel',
    operationId: 'cancelReservation',
    summary: 'Cancel a reservation (restaurant side)',
    description:
      "Any state but a canceled one becomes CANCELED_BY_RESTAURANT, with `reason` as cancellation_reason; the table is freed. While the guests are still to come (a pending or booked status), their DEPOSIT and PREPAYMENT rows still PENDING become VOIDED: nothing is owed for a canceled booking; paid, authorized and refunded rows, pending rows of other types and total_amount_paid are kept (refunds are the restaurant's), and so is every row of guests who came or did not (NO_SHOW, seated, DONE). Repeating returns the reservation unchanged, first reason kept. 409 with `details.locked_fields` when the point of sale locked the status. The body is required JSON; {} is enough.",
    tag: 'Reservations',
    access: scopes('RESERVATIONS_CANCEL'),
    params: idParams,
    body: cancelBody,
    bodyExample: reservationRequestExamples.cancel,
    bodyRequired: true,
    errors: [404, 409],
    responses: {
      200: {
        description: 'The canceled reservation',
        schema: oneReservation,
        example: reservationExamples.canceled,
      },
    },
    handler: async ({ rt, auth, params, body, requestId }) => {
      const out = await cancelReservation(
        rt,
        auth.restaurant._id,
        params.id,
        body.reason ?? null,
        meta(auth, requestId),
      );
      await rt.settle(out.position);
      return { body: { data: await getReservation(rt.docs, auth.restaurant._id, params.id, present(auth)) } };
    },
  }),
];
