// audit history / as-of of a webhook endpoint, an OAuth application and a manager: history lists
// every event naming the id (deliveries, connections, codes), as-of folds only the entity's own
// stream with the write side's evolve. Before, these ids were only found by searching the log and
// as-of merged every event found into one object: a delivery's status code, outcome and customer
// read as the endpoint's, a token's key and scopes as the application's.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { foldSubject, loadSubject, type SubjectEvents } from '../../src/audit/history';
import { auditSubjects } from '../../src/audit/subjects';
import { ANY, type RecordedEvent } from '../../src/ports/event-store';
import { ev } from '../contracts/event-store.helpers';

const test = suite('audit: subjects of every kind');

const meta = { actor: 'credential:key_1', restaurant_id: 'rest_1' };

async function world() {
  const events = new MemoryEventStore();
  await events.append(
    'webhook-endpoint-we_1',
    [
      ev(
        'WebhookEndpointCreated',
        {
          endpoint_id: 'we_1',
          restaurant_id: 'rest_1',
          credential_id: 'key_1',
          api_version: 'v1',
          url: 'https://hooks.example/a',
          description: null,
          enabled_events: ['*'],
          headers: {},
          disabled: false,
          secret: 'v1.sealed',
          at: '2026-11-27T10:00:00.000Z',
        },
        meta,
      ),
    ],
    ANY,
  );
  // The fan-out that scheduled the delivery names it (and its endpoint) only inside `deliveries`.
  await events.append(
    'webhook-fanout-f_1',
    [
      ev(
        'WebhookDeliveriesScheduled',
        {
          restaurant_id: 'rest_1',
          customer_id: 'cus_1',
          source_event_id: 'e_1',
          event_types: { v1: 'customer.created' },
          deliveries: [{ delivery_id: 'whd_1', endpoint_id: 'we_1', payload: 'v1' }],
          payloads: {},
          at: '2026-11-27T10:00:30.000Z',
        },
        { actor: 'system:webhooks', restaurant_id: 'rest_1' },
      ),
    ],
    ANY,
  );
  const delivery = await events.append(
    'webhook-delivery-whd_1',
    [
      ev(
        'WebhookAttemptRecorded',
        {
          delivery_id: 'whd_1',
          restaurant_id: 'rest_1',
          endpoint_id: 'we_1',
          customer_id: 'cus_1',
          attempt: 1,
          status_code: 500,
          outcome: 'failed',
          at: '2026-11-27T10:01:00.000Z',
        },
        { actor: 'system:webhooks', restaurant_id: 'rest_1' },
      ),
    ],
    ANY,
  );
  await events.append(
    'webhook-endpoint-we_1',
    [
      ev(
        'WebhookEndpointUpdated',
        {
          endpoint_id: 'we_1',
          restaurant_id: 'rest_1',
          changes: { url: 'https://hooks.example/b' },
          previous: { url: 'https://hooks.example/a' },
          at: '2026-11-27T10:02:00.000Z',
        },
        meta,
      ),
    ],
    ANY,
  );
  await events.append(
    'oauthapp-app_1',
    [
      ev(
        'OAuthApplicationRegistered',
        {
          client_id: 'app_1',
          secret_hash: 'h',
          name: 'POS',
          logo_url: null,
          redirect_uris: ['https://pos.example/cb'],
          allowed_scopes: ['CATALOG_READ', 'RESERVATIONS_READ'],
          published_by_operator: false,
          at: '2026-11-27T10:03:00.000Z',
        },
        { actor: 'operator:cli' },
      ),
    ],
    ANY,
  );
  await events.append(
    'oauthconn-rest_1-app_1',
    [
      ev(
        'OAuthTokenAdded',
        {
          restaurant_id: 'rest_1',
          client_id: 'app_1',
          key_id: 'key_oauth',
          scopes: ['CATALOG_READ'],
          at: '2026-11-27T10:04:00.000Z',
        },
        { actor: 'client:app_1', restaurant_id: 'rest_1' },
      ),
    ],
    ANY,
  );
  return { events, deliveryPosition: delivery.position };
}

test('a webhook endpoint: history lists its deliveries, as-of is the endpoint alone', async () => {
  const { events, deliveryPosition } = await world();
  const loaded = await loadSubject(events, 'we_1');
  assert.is(loaded.kind, 'webhook-endpoint');
  assert.equal(
    loaded.events.map((e) => e.type),
    [
      'WebhookEndpointCreated',
      'WebhookDeliveriesScheduled',
      'WebhookAttemptRecorded',
      'WebhookEndpointUpdated',
    ],
    'what was scheduled to it too (the fan-out names the endpoint inside its deliveries)',
  );
  const delivery = await loadSubject(events, 'whd_1');
  assert.equal(
    delivery.events.map((e) => e.type),
    ['WebhookDeliveriesScheduled', 'WebhookAttemptRecorded'],
    "a delivery's history starts with its scheduling",
  );
  const now = foldSubject(loaded, { position: 1000n });
  assert.is(now.events, 2, 'folded from the endpoint stream only');
  const state = now.state as { endpoint: Record<string, unknown>; deleted: boolean };
  assert.is(state.endpoint.url, 'https://hooks.example/b');
  assert.is(state.deleted, false);
  const text = JSON.stringify(now.state);
  for (const leak of ['status_code', 'cus_1', 'whd_1', 'outcome'])
    assert.not.ok(text.includes(leak), `a delivery's ${leak} is not the endpoint's`);
  const then = foldSubject(loaded, { position: deliveryPosition });
  assert.is((then.state as { endpoint: { url: string } }).endpoint.url, 'https://hooks.example/a');
  const own = await loadSubject(events, 'we_1', { scan: false });
  assert.is(own.events.length, 2, '--no-scan lists the stream only');
  await events.close();
});

test('an OAuth application: history lists its connections, as-of is the application alone', async () => {
  const { events } = await world();
  const loaded = await loadSubject(events, 'app_1');
  assert.is(loaded.kind, 'oauth-application');
  assert.equal(
    loaded.events.map((e) => e.type),
    ['OAuthApplicationRegistered', 'OAuthTokenAdded'],
  );
  const now = foldSubject(loaded, { position: 1000n });
  const state = now.state as { client_id: string; profile: { allowed_scopes: string[] } };
  assert.is(state.client_id, 'app_1');
  assert.equal(state.profile.allowed_scopes, ['CATALOG_READ', 'RESERVATIONS_READ']);
  assert.not.ok(JSON.stringify(now.state).includes('key_oauth'));
  await events.close();
});

test('--kind names the new kinds', () => {
  const kinds = auditSubjects().map((s) => s.kind);
  for (const k of ['webhook-endpoint', 'oauth-application', 'user']) assert.ok(kinds.includes(k), k);
});

test('as-of a time folds the log up to its first event recorded past it: never revision N+1 without N', () => {
  // Recorded times that go back (two API processes whose clocks differ): revision 1 at 10:05, 2 at 10:02.
  const at = (revision: number, created: string, step: string): RecordedEvent => ({
    id: `e${revision}`,
    type: 'Stepped',
    data: { id: 'x_1', step },
    metadata: {},
    created,
    stream: 'thing-x_1',
    revision,
    position: BigInt(10 + revision),
  });
  const own = [
    at(0, '2026-06-02T10:00:00.000Z', 'a'),
    at(1, '2026-06-02T10:05:00.000Z', 'b'),
    at(2, '2026-06-02T10:02:00.000Z', 'c'),
  ];
  const loaded: SubjectEvents = { kind: 'log', subject: null, events: own, own };
  const then = foldSubject(loaded, { time: '2026-06-02T10:03:00.000Z' });
  assert.is(then.events, 1, 'revision 2 is after revision 1, which is past the time');
  assert.is(foldSubject(loaded, { time: '2026-06-02T10:05:00.000Z' }).events, 3);
  assert.is(foldSubject(loaded, { time: '2026-06-02T09:00:00.000Z' }).state, null);
});

test.run();
