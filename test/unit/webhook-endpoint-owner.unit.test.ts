// Who sees a webhook endpoint: one rule (`visibleTo`, commands/webhook-endpoints/events.ts) that the
// commands (`liveEndpoint`) and the reads (`getEndpoint`) both apply, and one default owner for an
// endpoint whose credential names none (`defaultOwner`: the API key's).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type EndpointRecord,
  evolveEndpoint,
  initialEndpoint,
  liveEndpoint,
} from '../../commands/webhook-endpoints/decide';
import { defaultOwner, visibleTo } from '../../commands/webhook-endpoints/events';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { getEndpoint, ownerOf } from '../../queries/webhooks';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';

const t = suite('webhook endpoint owner');

const VIEWERS = [
  { restaurantId: null, owner: null },
  { restaurantId: 'rest_a', owner: null },
  { restaurantId: 'rest_b', owner: null },
  { restaurantId: 'rest_a', owner: 'key:k1' },
  { restaurantId: 'rest_a', owner: 'app:x' },
  { restaurantId: null, owner: 'key:k1' },
];

t(
  'an endpoint created before owners were recorded is its key’s, in the decision and the read model',
  async () => {
    assert.is(defaultOwner('k1'), 'key:k1');
    assert.is(ownerOf({ _id: 'k1', type: 'API_KEY' }), 'key:k1');
    assert.is(ownerOf({ _id: 'k1', type: 'OAUTH', application: { id: 'x' } }), 'app:x');
    const state = evolveEndpoint(initialEndpoint, {
      type: 'WebhookEndpointCreated',
      data: {
        endpoint_id: 'we_1',
        restaurant_id: 'rest_a',
        credential_id: 'k1',
        url: 'https://h/',
        enabled_events: ['*'],
        secret: 's',
        at: '2026-01-01T00:00:00Z',
      },
    } as never);
    assert.is((state.endpoint as EndpointRecord).owner, 'key:k1');
  },
);

t('liveEndpoint and getEndpoint answer the same for every viewer: visibleTo', async () => {
  const docs = new EmbeddedDocumentStore();
  const doc = { _id: 'we_1', restaurant_id: 'rest_a', owner: 'key:k1' } as WebhookEndpointDoc;
  await docs.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS).insertOne(doc);
  const state = {
    ...initialEndpoint,
    endpoint: { endpoint_id: 'we_1', restaurant_id: 'rest_a', owner: 'key:k1' } as EndpointRecord,
  };
  for (const viewer of VIEWERS) {
    const expected = visibleTo(doc, viewer);
    let decided = true;
    try {
      liveEndpoint(state, viewer.restaurantId, 'we_1', viewer.owner);
    } catch {
      decided = false;
    }
    const read = await getEndpoint(docs, viewer, 'we_1').then(
      () => true,
      () => false,
    );
    assert.equal([decided, read], [expected, expected], JSON.stringify(viewer));
  }
  assert.equal(
    VIEWERS.map((v) => visibleTo(doc, v)),
    [true, true, false, true, false, true],
  );
});

t.run();
