// Operator commands for webhooks: endpoints, delivery history, resend, the final legacy → v1 migration,
// and the sealing of custom header values saved in clear before 2026-11-28.

import { deliveryType, STORED_TEST_TYPE } from '../../commands/webhook-deliveries/events';
import { resendDelivery } from '../../commands/webhook-deliveries/handler';
import { migrateWebhookEndpoint, updateWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { headersSealed, maskedHeaders } from '../../commands/webhook-endpoints/header-secrets';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import {
  DELIVERY_EVENT_TYPES,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
} from '../../queries/webhooks';
import { operatorMeta } from '../core/command-meta';
import { CliUsageError, optionalFlag, registerCliCommand, rejectUnknownFlags, requireFlag } from './registry';
import { optionalRestaurantFlag } from './restaurant-flag';

const meta = operatorMeta('cli');
const ANY = { restaurantId: null, owner: null };

function limitFlag(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000)
    throw new CliUsageError('--limit takes 1 to 1000');
  return Number(raw);
}

export function registerWebhookCommands(): void {
  registerCliCommand({
    name: 'webhooks endpoints',
    summary: 'List webhook endpoints (never their secrets)',
    usage: '[--restaurant rest_x]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['restaurant']);
      await ctx.rt.refresh();
      const { items } = await listEndpoints(
        ctx.rt.docs,
        { restaurantId: (await optionalRestaurantFlag(ctx)) ?? null, owner: null },
        { page: 1, perPage: 10_000 },
      );
      for (const e of items)
        ctx.out(
          `${e._id}\t${e.restaurant_id}\t${e.api_version}\t${e.disabled ? 'disabled' : 'enabled'}\t${e.credential_id}\t${e.enabled_events.join(',')}\t${e.url}`,
        );
    },
  });
  registerCliCommand({
    name: 'webhooks deliveries',
    summary: 'Delivery history of an endpoint (last 30 days, newest first)',
    usage: '--endpoint we_x [--status pending|succeeded|failed|canceled] [--event-type T] [--limit 50]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['endpoint', 'status', 'event-type', 'limit']);
      await ctx.rt.refresh();
      const endpoint = await getEndpoint(ctx.rt.docs, ANY, requireFlag(ctx, 'endpoint'));
      const status = optionalFlag(ctx, 'status');
      if (status && !['pending', 'succeeded', 'failed', 'canceled'].includes(status))
        throw new CliUsageError('--status takes pending, succeeded, failed or canceled');
      // The types the API's filter takes (a test's is webhook_endpoint.test; `test`, the stored name, too).
      const eventType = optionalFlag(ctx, 'event-type');
      if (eventType && !DELIVERY_EVENT_TYPES.includes(eventType) && eventType !== STORED_TEST_TYPE)
        throw new CliUsageError(`--event-type takes one of ${DELIVERY_EVENT_TYPES.join(', ')}`);
      const { items } = await listDeliveries(
        ctx.rt.docs,
        endpoint._id,
        {
          status,
          event_type: eventType,
          limit: limitFlag(optionalFlag(ctx, 'limit'), 50),
        },
        ctx.rt.clock.now(),
      );
      for (const d of items) {
        const attempts = d.attempts.map((a) => `${a.attempt}:${a.status_code ?? a.error}`).join(' ');
        ctx.out(
          // The type its body carried, as the API and the dashboard name it (a test's: webhook_endpoint.test).
          `${d._id}\t${d.created_at}\t${deliveryType(d.event_type, 'shown')}\t${d.status}\t${d.next_attempt_at ?? '-'}\t${attempts}`,
        );
      }
    },
  });
  registerCliCommand({
    name: 'webhooks resend',
    summary: 'Send a finished delivery again (a new series of attempts)',
    usage: '--delivery whd_x',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['delivery']);
      await ctx.rt.refresh();
      const id = requireFlag(ctx, 'delivery');
      const found = await ctx.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).findOne({ _id: id });
      if (!found) throw new CliUsageError(`no delivery ${id} in the last 30 days`);
      const doc = await getDelivery(ctx.rt.docs, found.endpoint_id, id, ctx.rt.clock.now());
      const endpoint = await ctx.rt.docs
        .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
        .findOne({ _id: found.endpoint_id });
      if (!endpoint)
        throw new CliUsageError(`the endpoint of delivery ${id} is deleted: nothing is sent to it`);
      const out = await resendDelivery(ctx.rt, doc, endpoint, meta);
      await ctx.rt.settle(out.position);
      ctx.out(
        `delivery ${id}: resend scheduled (attempt ${doc.attempt_count + 1}); the webhooks role sends it`,
      );
    },
  });
  registerCliCommand({
    name: 'webhooks seal-headers',
    summary: 'Save again, sealed, the custom header values of endpoints saved in clear before 2026-11-28',
    usage: '',
    async run(ctx) {
      rejectUnknownFlags(ctx, []);
      await ctx.rt.refresh();
      const { items } = await listEndpoints(ctx.rt.docs, ANY, { page: 1, perPage: 10_000 });
      let sealed = 0;
      for (const e of items) {
        if (headersSealed(e.headers)) continue;
        // [redacted] keeps each value (header-secrets.ts); a save of headers held in clear seals them.
        const out = await updateWebhookEndpoint(
          ctx.rt,
          null,
          e._id,
          { headers: maskedHeaders(e.headers) },
          [],
          meta,
          {
            allowUnreadable: true,
          },
        );
        await ctx.rt.settle(out.position);
        if (out.appended.length) {
          sealed++;
          ctx.out(`endpoint ${e._id}: custom header values sealed`);
        }
      }
      ctx.out(
        `${sealed} endpoint(s) sealed; the events written before still hold the old values in clear (docs/WEBHOOKS.md)`,
      );
    },
  });
  registerCliCommand({
    name: 'webhooks migrate',
    summary: 'Move a legacy endpoint to the v1 event format (final: it cannot go back)',
    usage: '--endpoint we_x --yes',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['endpoint', 'yes']);
      const id = requireFlag(ctx, 'endpoint');
      if (ctx.flags.yes !== true)
        throw new CliUsageError(
          'migration to v1 is final: the endpoint will receive v1 events only, never RESERVATION_UPDATED again; add --yes',
        );
      const out = await migrateWebhookEndpoint(ctx.rt, null, id, meta);
      await ctx.rt.settle(out.position);
      ctx.out(
        out.appended.length
          ? `endpoint ${id} migrated to v1 (final)`
          : `endpoint ${id} already receives v1 events`,
      );
    },
  });
}
