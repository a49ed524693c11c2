// Webhook endpoint routes (DESIGN.md §3, docs/WEBHOOKS.md): thin over the commands in
// commands/webhook-endpoints and commands/webhook-deliveries, which the dashboard and the CLI call
// with their own actor. A partner sees only its own credential's endpoints (an OAuth token: its
// application's) in its restaurant; any other id answers 404.
import {
  RESEND_LIMIT,
  resendDelivery,
  testWebhookEndpoint,
} from '../../../commands/webhook-deliveries/handler';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../../../commands/webhook-endpoints/handler';
import {
  type EndpointScope,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  ownerOf,
  presentDelivery,
  presentEndpoint,
} from '../../../queries/webhooks';
import type { CommandMeta } from '../../core/command-meta';
import { ApiError, validationError } from '../../core/errors';
import { RETRY_OFFSETS_SECONDS } from '../../webhooks/schedule';
import { type AnyRoute, type AuthContext, defineRoute, scopes } from '../route';
import {
  createEndpointBody,
  deletedResponse,
  deliveryPage,
  deliveryParams,
  deliveryResponse,
  endpointIdParams,
  endpointPage,
  endpointResponse,
  endpointSecretResponse,
  listDeliveriesQuery,
  listEndpointsQuery,
  noSettings,
  rotateBody,
  testResponse,
  updateEndpointBody,
  webhookExamples,
} from './webhook-schemas';

const TAG = 'Webhook endpoints';
const ACCESS = scopes('WEBHOOKS_WRITE');

const meta = (auth: AuthContext, requestId: string): CommandMeta => ({
  actor: `credential:${auth.credential._id}`,
  request_id: requestId,
  restaurant_id: auth.restaurant._id,
});
const scopeOf = (auth: AuthContext): EndpointScope => ({
  restaurantId: auth.restaurant._id,
  owner: ownerOf(auth.credential),
});

const schedule = RETRY_OFFSETS_SECONDS.slice(1)
  .map((s) => (s < 60 ? `${s} s` : s < 3600 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`))
  .join(', ');

const DELIVERY_RULES = [
  "Each delivery is a POST of the event as JSON, signed: `Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" keyed with the whole whsec_ secret>` (Stripe's libraries verify it); `t` is when this attempt was signed, so a retry hours later carries a fresh one (check it against your clock, 5 minutes of tolerance), while `X-Service-Timestamp` and the body's `created` stay the event's time. Headers: `X-Service-Attempt` (1, 2, …), `X-Service-Delivery` (the same on every attempt), `X-Service-Delivery-Log-Id` (one per attempt), `X-Service-Timestamp` (the event's time, ISO 8601), your custom headers.",
  `Answer 2xx within 12 s. 5xx, 408, 429, network errors and timeouts are retried at ${schedule} after the first attempt (about 4 h; each retry up to a fifth of the wait before it earlier, by an amount derived from the delivery id, so a burst's retries are spread); any other answer, 3xx included (redirects are not followed), is final. Deduplicate on X-Service-Delivery: a crash between a send and its record can repeat an attempt. Deliveries may arrive out of order (a retried one after later events): order by data.object.updated_at.`,
  'An endpoint belongs to the credential that created it: it receives only the event types that credential can read (reservation.* with RESERVATIONS_READ, customer.* with CUSTOMERS_READ), reservation contact details only with RESERVATIONS_READ_SENSITIVE, and it is deleted when that credential is revoked.',
].join('\n\n');

/**
 * An answer carrying a signing secret is never stored by a cache on the way (RFC 9111 no-store), as the
 * OAuth token endpoint's answer is not (RFC 6749 §5.1): the secret is shown once, to the caller only.
 */
const SECRET_NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
// cache-control (no-store) is documented on every answer (openapi-responses.ts, CacheControl).
const secretNoStoreHeaders = {
  pragma: { description: 'no-cache (for HTTP/1.0 caches)', schema: { type: 'string' } },
} as const;

/**
 * The deliveries' cursor, by the name the other feeds take it (`cursor`) or its former one
 * (`starting_after`): both at once is one value given twice (400 `duplicate_property`), never one of
 * them read and the other dropped.
 */
function deliveryCursor(query: { cursor?: string; starting_after?: string }): {
  cursor: 'cursor' | 'starting_after';
  value: string | undefined;
} {
  if (query.cursor !== undefined && query.starting_after !== undefined)
    throw validationError(
      [
        {
          path: 'starting_after',
          code: 'duplicate_property',
          message: 'starting_after is the former name of cursor: give pagination.next_cursor once, as cursor',
        },
      ],
      'The query string is invalid',
    );
  return query.starting_after !== undefined
    ? { cursor: 'starting_after', value: query.starting_after }
    : { cursor: 'cursor', value: query.cursor };
}

export const webhookRoutes: AnyRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    summary: 'Subscribe a URL to events',
    description: `Answers the endpoint and its \`whsec_\` signing secret: the only time the secret is shown.\n\n${DELIVERY_RULES}`,
    tag: TAG,
    access: ACCESS,
    body: createEndpointBody,
    bodyExample: webhookExamples.createBody,
    bodyRequired: true,
    errors: [409, 422],
    responses: {
      201: {
        description: 'The endpoint, with its signing secret',
        headers: secretNoStoreHeaders,
        schema: endpointSecretResponse,
        example: webhookExamples.endpointWithSecret,
      },
    },
    handler: async ({ rt, auth, body, requestId }) => {
      // At most MAX_ENDPOINTS_PER_RESTAURANT: decided by the command (422 ENDPOINT_LIMIT_REACHED).
      const out = await createWebhookEndpoint(
        rt,
        {
          ...body,
          restaurantId: auth.restaurant._id,
          credential: { id: auth.credential._id, scopes: auth.scopes, owner: ownerOf(auth.credential) },
        },
        meta(auth, requestId),
      );
      await rt.settle(out.position);
      const doc = await getEndpoint(rt.docs, scopeOf(auth), out.endpointId);
      return {
        status: 201,
        headers: SECRET_NO_STORE,
        body: { data: { ...presentEndpoint(doc, rt.clock.now()), secret: out.secret } },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    summary: "List this credential's webhook endpoints",
    description: 'Oldest first. Secrets are never shown again.',
    tag: TAG,
    access: ACCESS,
    query: listEndpointsQuery,
    responses: {
      200: { description: 'A page of endpoints', schema: endpointPage, example: webhookExamples.page },
    },
    handler: async ({ rt, auth, query }) => {
      const page = query.page ?? 1;
      const perPage = query.per_page ?? 25;
      const { items, total } = await listEndpoints(rt.docs, scopeOf(auth), { page, perPage });
      const totalPages = Math.ceil(total / perPage);
      return {
        body: {
          data: items.map((e) => presentEndpoint(e, rt.clock.now())),
          pagination: {
            page,
            per_page: perPage,
            total,
            total_pages: totalPages,
            has_more: page < totalPages,
          },
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/webhook-endpoints/{id}',
    operationId: 'getWebhookEndpoint',
    summary: 'Read a webhook endpoint',
    tag: TAG,
    access: ACCESS,
    params: endpointIdParams,
    errors: [404],
    responses: {
      200: { description: 'The endpoint', schema: endpointResponse, example: webhookExamples.endpoint },
    },
    handler: async ({ rt, auth, params }) => ({
      body: { data: presentEndpoint(await getEndpoint(rt.docs, scopeOf(auth), params.id), rt.clock.now()) },
    }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/webhook-endpoints/{id}',
    operationId: 'updateWebhookEndpoint',
    summary: 'Change a webhook endpoint',
    description: 'Only the given fields change; `headers` and `enabled_events` replace the whole value.',
    tag: TAG,
    access: ACCESS,
    params: endpointIdParams,
    body: updateEndpointBody,
    bodyExample: webhookExamples.updateBody,
    bodyRequired: true,
    errors: [404, 409, 422],
    responses: {
      200: {
        description: 'The endpoint after the change',
        schema: endpointResponse,
        example: webhookExamples.endpoint,
      },
    },
    handler: async ({ rt, auth, params, body, requestId }) => {
      // The settings' rules and the endpoint's lookup are the command's (400, then 404, then 422).
      const out = await updateWebhookEndpoint(
        rt,
        auth.restaurant._id,
        params.id,
        body,
        auth.scopes,
        meta(auth, requestId),
        { owner: ownerOf(auth.credential) },
      );
      await rt.settle(out.position);
      return {
        body: { data: presentEndpoint(await getEndpoint(rt.docs, scopeOf(auth), params.id), rt.clock.now()) },
      };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/webhook-endpoints/{id}',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    description: 'Nothing more is sent to it, retries included.',
    tag: TAG,
    access: ACCESS,
    params: endpointIdParams,
    errors: [404, 409],
    responses: { 200: { description: 'Deleted', schema: deletedResponse, example: webhookExamples.deleted } },
    handler: async ({ rt, auth, params, requestId }) => {
      await getEndpoint(rt.docs, scopeOf(auth), params.id);
      const out = await deleteWebhookEndpoint(
        rt,
        auth.restaurant._id,
        params.id,
        'DELETED',
        meta(auth, requestId),
      );
      await rt.settle(out.position);
      return { body: { data: { id: params.id, deleted: true } } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/webhook-endpoints/{id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Replace the signing secret',
    description:
      "Answers the new secret (shown once). The old secret keeps signing beside it — two `v1=` values in Service-Signature, the new one first — for `grace_period_seconds` (default 24 h; 0 ends it at once). Rotating again while an earlier grace still runs keeps that earlier old secret signing too, until its own expiry (or the new grace's end, if sooner; 0 stops every old secret): up to 4 earlier secrets beside the one just replaced, so at most 6 `v1=` values. Accept a delivery when any `v1=` value matches one of your secrets.",
    tag: TAG,
    access: ACCESS,
    params: endpointIdParams,
    body: rotateBody,
    bodyExample: webhookExamples.rotateBody,
    errors: [404, 409],
    responses: {
      200: {
        description: 'The endpoint with its new secret',
        headers: secretNoStoreHeaders,
        schema: endpointSecretResponse,
        example: webhookExamples.endpointWithSecret,
      },
    },
    handler: async ({ rt, auth, params, body, requestId }) => {
      await getEndpoint(rt.docs, scopeOf(auth), params.id);
      const out = await rotateWebhookSecret(
        rt,
        auth.restaurant._id,
        params.id,
        body?.grace_period_seconds,
        meta(auth, requestId),
      );
      await rt.settle(out.position);
      const doc = await getEndpoint(rt.docs, scopeOf(auth), params.id);
      return {
        headers: SECRET_NO_STORE,
        body: { data: { ...presentEndpoint(doc, rt.clock.now()), secret: out.secret } },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/webhook-endpoints/{id}/test',
    operationId: 'testWebhookEndpoint',
    summary: 'Send a signed test delivery now',
    description:
      'One attempt, never retried, with `X-Service-Test: true` and an event of type `webhook_endpoint.test`; the answer says what the target replied. It appears in the delivery history. It is sent to a disabled endpoint too (check its URL answers before enabling it again), never to one whose credential is revoked (409, details.reason credential_revoked).',
    tag: TAG,
    access: ACCESS,
    params: endpointIdParams,
    body: noSettings,
    bodyExample: {},
    errors: [404, 409],
    responses: {
      200: { description: 'What the target answered', schema: testResponse, example: webhookExamples.test },
    },
    handler: async ({ rt, auth, params, requestId }) => {
      const endpoint = await getEndpoint(rt.docs, scopeOf(auth), params.id);
      const out = await testWebhookEndpoint(rt, endpoint, meta(auth, requestId));
      await rt.settle(out.position);
      return {
        body: {
          data: {
            delivery_id: out.deliveryId,
            event_id: out.eventId,
            succeeded: out.succeeded,
            status_code: out.response.status,
            error: out.response.error,
            duration_ms: out.response.durationMs,
            response_body: out.response.bodyExcerpt,
            // Said, as the dashboard says it: a 512-character body and a longer one cut there read alike.
            response_truncated: out.response.excerptTruncated,
          },
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/webhook-endpoints/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'Delivery history of the last 30 days',
    description:
      'Newest first, with every attempt (status code, error, duration). Filters: `status`, `event_type`, `event_id`. Follow `pagination.next_cursor` as `cursor`, as on GET /customers and GET /missed-calls (`starting_after`, its former name, is still taken; both at once answer 400 `duplicate_property`); one that names no delivery of this endpoint in the last 30 days answers 400 `invalid_cursor`.',
    tag: TAG,
    access: ACCESS,
    params: endpointIdParams,
    query: listDeliveriesQuery,
    errors: [404],
    responses: {
      200: { description: 'A page of deliveries', schema: deliveryPage, example: webhookExamples.deliveries },
    },
    handler: async ({ rt, auth, params, query }) => {
      await getEndpoint(rt.docs, scopeOf(auth), params.id);
      const now = rt.clock.now();
      // A cursor that names no delivery of the last 30 days is the query's mistake (400 invalid_cursor,
      // as the other feeds' cursors), not a 404 that would read as the endpoint being gone.
      const { cursor: name, value: cursor } = deliveryCursor(query);
      const after = cursor
        ? await getDelivery(rt.docs, params.id, cursor, now).catch((err: unknown) => {
            if (!(err instanceof ApiError && err.status === 404)) throw err;
            throw validationError(
              [
                {
                  path: name,
                  code: 'invalid_cursor',
                  message: `${name} names no delivery of this endpoint in the last 30 days: pass pagination.next_cursor of the previous page`,
                },
              ],
              'The query string is invalid',
            );
          })
        : null;
      const limit = query.limit ?? 25;
      const { status, event_type, event_id } = query;
      const { items, hasMore } = await listDeliveries(
        rt.docs,
        params.id,
        {
          status,
          event_type,
          event_id,
          limit,
          after: after ? { created_at: after.created_at, id: after._id } : undefined,
        },
        now,
      );
      return {
        body: {
          data: items.map(presentDelivery),
          pagination: { next_cursor: hasMore ? (items.at(-1)?._id ?? null) : null, has_more: hasMore },
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/webhook-endpoints/{id}/deliveries/{delivery_id}',
    operationId: 'getWebhookDelivery',
    summary: 'Read one delivery and its attempts',
    tag: TAG,
    access: ACCESS,
    params: deliveryParams,
    errors: [404],
    responses: {
      200: { description: 'The delivery', schema: deliveryResponse, example: webhookExamples.delivery },
    },
    handler: async ({ rt, auth, params }) => {
      await getEndpoint(rt.docs, scopeOf(auth), params.id);
      return {
        body: {
          data: presentDelivery(await getDelivery(rt.docs, params.id, params.delivery_id, rt.clock.now())),
        },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/webhook-endpoints/{id}/deliveries/{delivery_id}/resend',
    operationId: 'resendWebhookDelivery',
    summary: 'Send a delivery again',
    description: `For a delivery that succeeded, failed or was canceled: a new series of attempts (numbered after the last one, same X-Service-Delivery, retried on the same schedule) starts within a second. Each refusal below names its reason in details.reason. 409 for a test delivery (details.reason test_delivery: send a new test), while the delivery is still being attempted (delivery_pending), and while the endpoint would not receive it now (disabled: endpoint_disabled; its type not in enabled_events: event_type_disabled; a legacy delivery of an endpoint migrated to v1: endpoint_migrated), and once the delivery has been resent ${RESEND_LIMIT} times (details.reason resend_limit_reached; send a test delivery instead). 409 too for a delivery describing a customer since erased (details.reason customer_erased): its body is erased with them; and for one of a third-party application's endpoint while the restaurant's API option is off (details.reason api_option_off): nothing is sent to it until the option is on again. 409 too when the endpoint's credential no longer sends it: revoked (details.reason credential_revoked), or without a scope its body needs (details.reason scope_removed). 409 too when the delivery changed between its reading and the resend, another resend first (details.reason delivery_changed): read it again.`,
    tag: TAG,
    access: ACCESS,
    params: deliveryParams,
    body: noSettings,
    bodyExample: {},
    errors: [404, 409],
    responses: {
      202: {
        description: 'The resend is scheduled',
        schema: deliveryResponse,
        example: webhookExamples.delivery,
      },
    },
    handler: async ({ rt, auth, params, requestId }) => {
      const endpoint = await getEndpoint(rt.docs, scopeOf(auth), params.id);
      const doc = await getDelivery(rt.docs, params.id, params.delivery_id, rt.clock.now());
      const out = await resendDelivery(rt, doc, endpoint, meta(auth, requestId));
      await rt.settle(out.position);
      return {
        status: 202,
        body: { data: presentDelivery(await getDelivery(rt.docs, params.id, doc._id, rt.clock.now())) },
      };
    },
  }),
];
