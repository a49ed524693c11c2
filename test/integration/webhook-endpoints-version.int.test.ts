// webhook_endpoints on a store built before its documents kept `earlier_secrets` and `rotation_pos`
// (a MongoDB store keeps its read models across restarts): the service upgraded onto it rebuilds the
// read model beside the old one and switches to it, so the served read model equals a replay (what
// `audit verify` compares); without a new version every pre-existing endpoint was reported different.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allProjections } from '../../projections/index';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { NO_STREAM } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { builtBefore, comparedWithReplay, upgraded } from '../helpers/projection-upgrade';

const t = suite('webhook_endpoints: a store built before earlier_secrets and rotation_pos');
const NAME = 'webhook_endpoints';
const AT = '2026-06-02T10:00:00.000Z';

/** The projection as it was before documents kept the rotation fields: the same code, without them. */
function beforeRotationFields(): Projection {
  const p = allProjections().find((q) => q.name === NAME) as Projection;
  return {
    name: NAME,
    eventTypes: p.eventTypes,
    setup: p.setup,
    apply: async (event, docs) => {
      await p.apply(event, docs);
      await docs
        .collection(WEBHOOK_ENDPOINTS)
        .updateOne({ _id: 'we_1' }, { $unset: { earlier_secrets: '', rotation_pos: '' } });
    },
  };
}

async function history(events: MemoryEventStore): Promise<void> {
  const base = { endpoint_id: 'we_1', restaurant_id: 'rest_a', at: AT };
  await events.append(
    'webhook-endpoint-we_1',
    [
      {
        type: 'WebhookEndpointCreated',
        data: {
          ...base,
          credential_id: 'key_1',
          owner: 'key:key_1',
          api_version: 'v1',
          url: 'https://127.0.0.1/hook',
          description: null,
          enabled_events: ['*'],
          headers: {},
          disabled: false,
          secret: 'sealed-1',
        },
      },
    ],
    NO_STREAM,
  );
}

t('the old store is rebuilt as version 2 and switched to; it then equals a replay', async () => {
  const events = new MemoryEventStore();
  const docs = new EmbeddedDocumentStore();
  await history(events);

  // The store as the service left it before the upgrade.
  await builtBefore(events, docs, beforeRotationFields());
  const old = await docs.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS).findOne({ _id: 'we_1' });
  assert.ok(old, 'the old store holds the endpoint');
  assert.is(old?.earlier_secrets, undefined, 'the old document has no earlier secrets');

  // The upgraded service on that store: every version it lists.
  const { aliased, stop } = await upgraded(events, docs, NAME);
  assert.is(aliased.resolve(WEBHOOK_ENDPOINTS), `${WEBHOOK_ENDPOINTS}_v2`);
  const served = aliased.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS);
  assert.equal((await served.findOne({ _id: 'we_1' }))?.earlier_secrets, []);

  // What `audit verify` compares: the served read model equals a replay of the log.
  const compared = await comparedWithReplay(events, aliased, NAME, [WEBHOOK_ENDPOINTS]);
  assert.equal(compared.differences, []);
  assert.is(compared.documents, 1);
  await stop();
});

t.run();
