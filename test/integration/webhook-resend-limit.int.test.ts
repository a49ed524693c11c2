// A delivery's resends are bounded (docs/WEBHOOKS.md, "Answers, retries, history"): each starts a new
// series of attempts kept in the delivery's one history document, so endless resends (a script through
// the partner API, the dashboard, the CLI) would grow it past MongoDB's 16 MB, whose refused write
// stops the scaled-out projector. The count comes from the delivery's own stream, not the read model.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESEND_LIMIT, resendDelivery } from '../../commands/webhook-deliveries/handler';
import type { WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';

const t = suite('webhooks: resends of one delivery are bounded');
const AT = '2026-06-02T10:00:00.000Z';
const endpoint = {
  disabled: false,
  api_version: 'v1' as const,
  enabled_events: ['customer.created'],
  credential_id: 'key_limit',
};

/** A finished delivery as the read model shows it (only what resend reads). */
const finished = (revision: number, attempts: number): WebhookDeliveryDoc =>
  ({
    _id: 'whd_limit',
    restaurant_id: 'r1',
    endpoint_id: 'we_limit',
    event_id: 'evt_1',
    event_type: 'customer.created',
    test: false,
    status: 'failed',
    attempts: [],
    attempt_count: attempts,
    revision,
  }) as unknown as WebhookDeliveryDoc;

t('the resend past the limit is refused with its reason, appending nothing; the stream counts', async () => {
  const events = new MemoryEventStore();
  // No credential in the read models: nothing pauses the endpoint (the API option is not in play here).
  const deps = { events, docs: new EmbeddedDocumentStore(), clock: new FixedClock(AT) };
  const meta = operatorMeta('test');
  let revision = -1;
  for (let i = 0; i < RESEND_LIMIT; i++) {
    await resendDelivery(deps, finished(revision, i), endpoint, meta);
    revision++;
  }
  const before = (await events.readStream('webhook-delivery-whd_limit')).length;
  assert.is(before, RESEND_LIMIT);
  let refused: unknown = null;
  try {
    await resendDelivery(deps, finished(revision, RESEND_LIMIT), endpoint, meta);
  } catch (err) {
    refused = err;
  }
  assert.ok(refused instanceof ApiError, 'the resend past the limit is refused');
  const e = refused as ApiError;
  assert.is(e.status, 409);
  assert.is(e.code, 'RESOURCE_CONFLICT');
  assert.equal(e.details, { reason: 'resend_limit_reached', limit: RESEND_LIMIT, resends: RESEND_LIMIT });
  assert.match(e.message, /resent 20 times/);
  assert.is((await events.readStream('webhook-delivery-whd_limit')).length, before, 'nothing appended');
});

t.run();
