// GET /reservations/{id}/history (issue 16): a reservation's events as its partner may see them.
import { HISTORY_ACTIONS, reservationHistory } from '../../../queries/reservation-history';
import { PARTNER_ACTORS } from '../../audit/actors';
import { defineRoute, scopes } from '../route';
import { ANY_JSON, described } from '../schema';
import { idParams } from './reservation-schemas';

const historySchema = described({
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'array',
      description: 'Every change of the reservation, oldest first',
      items: {
        type: 'object',
        required: ['revision', 'occurred_at', 'action', 'actor', 'request_id', 'changes'],
        properties: {
          revision: {
            type: 'integer',
            description:
              "0-based number of the change in this reservation's history (its order; it counts this reservation's changes only)",
          },
          occurred_at: { type: 'string', format: 'date-time' },
          action: { type: 'string', enum: [...HISTORY_ACTIONS] },
          actor: {
            type: 'object',
            required: ['type', 'label'],
            description:
              'Who made the change, relative to the caller: this integration, another integration (never which), restaurant staff, or automatic (the service itself)',
            properties: {
              type: { type: 'string', enum: [...PARTNER_ACTORS] },
              label: {
                type: 'string',
                enum: ['this integration', 'another integration', 'restaurant staff', 'automatic'],
              },
            },
          },
          request_id: {
            type: 'string',
            nullable: true,
            description:
              "The X-Request-Id of the request that made the change: only for this integration's own requests",
          },
          changes: {
            type: 'array',
            description:
              'The fields changed, named as the reservation names them, with the value before (`from`, absent when the event does not say, as on creation) and after (`to`). A status change to a canceled status or REJECTED lists the reason it sets as `cancellation_reason` (null when none was given); other status changes list no reason (they named an always-null `reason` before 2026-11-28). A recorded payment (PAYMENT_RECORDED: a deposit paid or voided, a party\'s deposit changed by a PATCH, a cancellation voiding what was still owed) lists `payments`, the whole list before and after, and `total_amount_paid` (it named the one row recorded `payment` before 2026-11-28). Customer contact fields only with RESERVATIONS_READ_SENSITIVE. A change that held personal data of a customer since erased (right to erasure) lists `{"field": "erased", "to": true}`: its personal values (allergies, custom_message, cancellation_reason, feedback\'s comment and answer) read null and metadata `{}`, on both sides of the change (a text it set still shows as changed, `from` and `to` erased). The customer the reservation shows merged into another or deleted (since 2026-11-28) is an UPDATED listing `customer_id`, from the customer it showed to the survivor or null, and `reason`: `CUSTOMER_MERGED` or `CUSTOMER_DELETED`. A change of customer leaves out the guest text the reservation took along unchanged; one made before 2026-11-28 also leaves out a text the same change set from nothing once its new customer is erased (both sides read null, as a text taken along does).',
            items: {
              type: 'object',
              required: ['field'],
              properties: { field: { type: 'string' }, from: ANY_JSON, to: ANY_JSON },
            },
          },
        },
      },
    },
  },
});

const example = {
  data: [
    {
      revision: 0,
      occurred_at: '2026-05-01T09:12:03.120Z',
      action: 'CREATED',
      actor: { type: 'THIS_INTEGRATION', label: 'this integration' },
      request_id: 'req_01hx3k2v9d',
      changes: [
        { field: 'status', to: 'CONFIRMED' },
        { field: 'start_at', to: '2026-05-02T20:00:00+02:00' },
        { field: 'party_size', to: 2 },
      ],
    },
    {
      revision: 1,
      occurred_at: '2026-05-01T15:40:51.004Z',
      action: 'UPDATED',
      actor: { type: 'RESTAURANT_STAFF', label: 'restaurant staff' },
      request_id: null,
      changes: [{ field: 'party_size', from: 2, to: 4 }],
    },
    {
      revision: 2,
      occurred_at: '2026-05-02T22:30:00.000Z',
      action: 'STATUS_CHANGED',
      actor: { type: 'AUTOMATIC', label: 'automatic' },
      request_id: null,
      changes: [{ field: 'status', from: 'CONFIRMED', to: 'DONE' }],
    },
  ],
};

export const reservationHistoryRoutes = [
  defineRoute({
    method: 'GET',
    path: '/reservations/{id}/history',
    operationId: 'getReservationHistory',
    summary: "A reservation's history",
    description:
      "Every change of the reservation in order: when, what changed (before and after), and who, told relative to the caller: `THIS_INTEGRATION` (this credential, or another token of the same OAuth application), `ANOTHER_INTEGRATION` (never which), `RESTAURANT_STAFF` (the restaurant, or the platform acting for it), `AUTOMATIC` (scheduled status changes and repairs). `request_id` is given for this integration's own requests only. Customer contact fields (email, phone numbers) appear only with RESERVATIONS_READ_SENSITIVE. A `customer_id` naming a customer hidden from partners (a messaging channel's draft) shows null, as the reservation shows `customer: null`. Entries are numbered by `revision`, counted within this reservation only (no position in the service's event log, whose gaps would tell other restaurants' activity).",
    tag: 'Reservations',
    access: scopes('RESERVATIONS_READ'),
    params: idParams,
    errors: [404],
    responses: { 200: { description: 'The history, oldest first', schema: historySchema, example } },
    handler: async ({ rt, auth, params }) => ({
      body: {
        data: await reservationHistory(rt.events, rt.docs, auth.restaurant._id, params.id, {
          credential: auth.credential,
          sensitive: auth.scopes.has('RESERVATIONS_READ_SENSITIVE'),
        }),
      },
    }),
  }),
];
