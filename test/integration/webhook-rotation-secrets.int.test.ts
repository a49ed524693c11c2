// The endpoint read model the publisher and test deliveries sign from keeps every old secret still in
// its grace (commands/webhook-endpoints/decide.ts afterRotation): two rotations within the grace (two
// calls at once, or a retry whose first answer was lost) dropped the secret receivers held at once.
// Applying a rotation twice changes nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { oldSecretsSigning } from '../../commands/webhook-endpoints/decide';
import {
  WEBHOOK_ENDPOINTS,
  type WebhookEndpointDoc,
  webhookEndpointsProjection,
} from '../../projections/webhook-endpoints';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { RecordedEvent } from '../../src/ports/event-store';
import { signatureHeader, signPayload } from '../../src/webhooks/signature';

const t = suite('webhook endpoints read model: old secrets');

let position = 0n;
const event = (type: string, data: Record<string, unknown>): RecordedEvent => {
  position += 1n;
  return {
    id: `e${position}`,
    type,
    data,
    metadata: {},
    created: '',
    stream: 'webhook-endpoint-we_1',
    revision: Number(position) - 1,
    position,
  };
};
const rotated = (secret: string, previous: string, at: string) =>
  event('WebhookEndpointSecretRotated', {
    endpoint_id: 'we_1',
    restaurant_id: 'r',
    secret,
    previous_secret: previous,
    previous_expires_at: new Date(Date.parse(at) + 86_400_000).toISOString(),
    at,
  });

t(
  'two rotations within the grace: the read model keeps both old secrets signing (oldSecretsSigning, what the publisher and test deliveries sign with), each until its expiry',
  async () => {
    const docs = new EmbeddedDocumentStore();
    await webhookEndpointsProjection.setup?.(docs);
    const events = [
      event('WebhookEndpointCreated', {
        endpoint_id: 'we_1',
        restaurant_id: 'r',
        credential_id: 'k',
        api_version: 'v1',
        url: 'https://h.example/',
        enabled_events: ['*'],
        headers: {},
        disabled: false,
        secret: 's0',
        at: '2026-06-01T00:00:00.000Z',
      }),
      rotated('s1', 's0', '2026-06-01T10:00:00.000Z'),
      rotated('s2', 's1', '2026-06-01T10:00:01.000Z'),
    ];
    for (const e of events) await webhookEndpointsProjection.apply(e, docs);
    // Redelivered: applied once.
    for (const e of events.slice(1)) await webhookEndpointsProjection.apply(e, docs);
    const doc = (await docs
      .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
      .findOne({ _id: 'we_1' })) as WebhookEndpointDoc;
    assert.is(doc.secret, 's2');
    assert.equal(oldSecretsSigning(doc, new Date('2026-06-01T10:00:02.000Z')), ['s1', 's0']);
    assert.equal(oldSecretsSigning(doc, new Date('2026-06-02T10:00:00.500Z')), ['s1']);
    // The header built from them, as the publisher builds it (src/webhooks/publisher.ts): new secret first.
    const header = signatureHeader(
      [doc.secret, ...oldSecretsSigning(doc, new Date('2026-06-01T10:00:02.000Z'))],
      1,
      '{}',
    );
    assert.equal(
      header.split(',').slice(1),
      ['s2', 's1', 's0'].map((s) => `v1=${signPayload(s, 1, '{}')}`),
    );
  },
);

t.run();
