// A resend the publisher would cancel at its attempt because of the endpoint's credential (revoked:
// its endpoints' deletion follows the revocation, asynchronously; or a scope the body needs taken away
// since the fan-out: `credential_revoked`, `scope_removed` in src/webhooks/publisher.ts) is refused up
// front, as the other refusals are: 409 RESOURCE_CONFLICT with details.reason, appending nothing, and
// the dashboard offers no Resend for it. Before, it was accepted and then canceled.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryStream } from '../../commands/webhook-deliveries/events';
import { resendDelivery, resendRefusals } from '../../commands/webhook-deliveries/handler';
import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import type { WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import { ApiError } from '../../src/core/errors';

const test = suite('webhook resend: refused when the credential no longer sends it');

const endpoint = {
  disabled: false,
  api_version: 'v1' as const,
  enabled_events: ['*'],
  credential_id: 'key_1',
};

const delivery = (id: string, event_type: string, payload: string | null): WebhookDeliveryDoc => ({
  _id: id,
  restaurant_id: 'rest_1',
  endpoint_id: 'we_1',
  event_id: `evt_${id}`,
  event_type,
  source_event_id: 'src',
  fanout_stream: null,
  payload,
  event_created: '2026-06-02T10:00:00.000Z',
  created_at: '2026-06-02T10:00:00.000Z',
  test: false,
  status: 'failed',
  attempts: [],
  attempt_count: 9,
  last_status_code: 503,
  next_attempt: 10,
  next_attempt_at: null,
  series_start: 1,
  series_started_at: null,
  sweep_after: null,
  revision: -1,
});

async function world(key: Partial<ApiKeyDoc>) {
  const clock = new FixedClock('2026-06-02T12:00:00.000Z');
  const docs = new EmbeddedDocumentStore();
  await docs.collection<ApiKeyDoc>(API_KEYS).insertOne({
    _id: 'key_1',
    restaurant_id: 'rest_1',
    name: 'partner',
    token_hash: 'h',
    token_hint: 'x',
    scopes: ['RESERVATIONS_READ', 'CUSTOMERS_READ', 'RESERVATIONS_READ_SENSITIVE'],
    type: 'API_KEY',
    application: null,
    created_at: '2026-06-01T00:00:00.000Z',
    revoked_at: null,
    ...key,
  });
  const events = new MemoryEventStore({ clock });
  return { events, clock, docs, keys: { findMany: async () => new Map() } };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: unknown) =>
      err instanceof ApiError
        ? `${err.status} ${(err.details as { reason?: string } | undefined)?.reason}`
        : err,
  );

test('a revoked credential: 409 credential_revoked, nothing appended, no Resend on the page', async () => {
  const deps = await world({ revoked_at: '2026-06-02T11:00:00.000Z' });
  const d = delivery('whd_1', 'reservation.created', 'v1');
  assert.is(await refusal(resendDelivery(deps, d, endpoint, { actor: 'test' })), '409 credential_revoked');
  assert.equal(await deps.events.readStream(deliveryStream('whd_1')), []);
  assert.ok((await resendRefusals(deps, endpoint, [d])).get('whd_1')?.includes('revoked'));
});

test('a scope the body needs taken away: 409 scope_removed; a body it still reads is resent', async () => {
  const deps = await world({ scopes: ['RESERVATIONS_READ'] });
  const sensitive = delivery('whd_2', 'reservation.created', 'v1_sensitive');
  const customer = delivery('whd_3', 'customer.created', 'v1');
  const plain = delivery('whd_4', 'reservation.created', 'v1');
  for (const d of [sensitive, customer])
    assert.is(
      await refusal(resendDelivery(deps, d, endpoint, { actor: 'test' })),
      '409 scope_removed',
      d._id,
    );
  const page = await resendRefusals(deps, endpoint, [sensitive, customer, plain]);
  assert.equal([...page.keys()].sort(), ['whd_2', 'whd_3']);
  assert.is(await refusal(resendDelivery(deps, plain, endpoint, { actor: 'test' })), 'accepted');
});

test.run();
