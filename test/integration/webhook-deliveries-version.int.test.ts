// webhook_deliveries on a store built before its documents kept `customer_id` and `last_attempt_at` (a
// MongoDB store keeps its read models across restarts): the service upgraded onto it rebuilds the read
// model beside the old one and switches to it, so an erasure finds and blanks what the endpoint
// answered to a delivery describing that customer, the failing warning reads deliveries by their last
// attempt, and the served read model equals a replay (what `audit verify` compares).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allProjections } from '../../projections/index';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { NO_STREAM, type RecordedEvent } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { builtBefore, comparedWithReplay, upgraded } from '../helpers/projection-upgrade';

const t = suite('webhook_deliveries: a store built before customer_id and last_attempt_at');
const NAME = 'webhook_deliveries';
const AT = '2026-06-02T10:00:00.000Z';
const ECHO = 'Hello Jane Doe, +33612345678';

/** The projection as it was before documents kept customer_id and last_attempt_at: the same code. */
function beforeFields(): Projection {
  const p = allProjections().find((q) => q.name === NAME) as Projection;
  return {
    name: NAME,
    eventTypes: p.eventTypes.filter((x) => x !== 'CustomerDeleted'),
    setup: p.setup,
    apply: async (event: RecordedEvent, docs) => {
      const { customer_id: _, ...data } = event.data;
      await p.apply({ ...event, data }, docs);
      await docs.collection(WEBHOOK_DELIVERIES).updateMany({}, { $unset: { last_attempt_at: '' } });
    },
  };
}

/** Version 2 as it was served before version 3: documents with customer_id, without last_attempt_at. */
function version2BeforeLastAttempt(): Projection {
  const p = allProjections().find((q) => q.name === NAME) as Projection;
  return {
    ...p,
    version: 2,
    apply: async (event: RecordedEvent, docs) => {
      await p.apply(event, docs);
      await docs.collection(WEBHOOK_DELIVERIES).updateMany({}, { $unset: { last_attempt_at: '' } });
    },
  };
}

async function history(events: MemoryEventStore): Promise<void> {
  await events.append(
    'webhook-fanout-ev1',
    [
      {
        type: 'WebhookDeliveriesScheduled',
        data: {
          restaurant_id: 'rest_a',
          customer_id: 'cus_1',
          source_event_id: '0b5c1c7e-0000-4000-8000-000000000001',
          source_position: '1',
          event_types: { v1: 'customer.created' },
          event_created: AT,
          payloads: { v1: '{}' },
          deliveries: [{ delivery_id: 'whd_1', endpoint_id: 'we_1', payload: 'v1' }],
          at: AT,
        },
      },
    ],
    NO_STREAM,
  );
  await events.append(
    'webhook-delivery-whd_1',
    [
      {
        type: 'WebhookAttemptRecorded',
        data: {
          delivery_id: 'whd_1',
          endpoint_id: 'we_1',
          restaurant_id: 'rest_a',
          customer_id: 'cus_1',
          attempt: 1,
          log_id: 'whl_1',
          at: AT,
          duration_ms: 12,
          status_code: 200,
          error: null,
          outcome: 'succeeded',
          next_attempt_at: null,
          response_excerpt: ECHO,
          response_truncated: false,
        },
      },
    ],
    NO_STREAM,
  );
}

t('the old store is rebuilt as version 3 and switched to; the erasure then blanks the answer', async () => {
  const events = new MemoryEventStore();
  const docs = new EmbeddedDocumentStore();
  await history(events);

  // The store as the service left it before the upgrade.
  await builtBefore(events, docs, beforeFields());
  const old = await docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).findOne({ _id: 'whd_1' });
  assert.is(old?.customer_id, undefined, 'the old document has no customer');
  assert.is(old?.last_attempt_at, undefined, 'nor its last attempt');

  // The upgraded service on that store: every version it lists.
  const { aliased, runner, stop } = await upgraded(events, docs, NAME);
  const served = aliased.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
  assert.is(aliased.resolve(WEBHOOK_DELIVERIES), `${WEBHOOK_DELIVERIES}_v3`);
  const rebuilt = await served.findOne({ _id: 'whd_1' });
  assert.is(rebuilt?.customer_id, 'cus_1');
  assert.is(rebuilt?.last_attempt_at, AT);

  await events.append(
    'customer-cus_1',
    [{ type: 'CustomerDeleted', data: { customer_id: 'cus_1', restaurant_id: 'rest_a', at: AT } }],
    NO_STREAM,
  );
  await runner.catchUp();
  const erased = await served.findOne({ _id: 'whd_1' });
  assert.is(erased?.attempts[0]?.response_excerpt, null, 'what the endpoint answered is blanked');
  assert.not.match(JSON.stringify(await served.find({})), /Jane/);

  // What `audit verify` compares: the served read model equals a replay of the log.
  const compared = await comparedWithReplay(events, aliased, NAME, [WEBHOOK_DELIVERIES]);
  assert.equal(compared.differences, []);
  assert.is(compared.documents, 1);
  await stop();
});

t('a store served by version 2 is rebuilt as version 3 and switched to', async () => {
  const events = new MemoryEventStore();
  const docs = new EmbeddedDocumentStore();
  await history(events);
  await builtBefore(events, docs, beforeFields());

  // The service of version 2 on that store: version 2 rebuilt beside version 1 and switched to.
  const before = await upgraded(events, docs, NAME, [
    { ...version2BeforeLastAttempt(), ...beforeFields(), version: 1 },
    version2BeforeLastAttempt(),
  ]);
  assert.is(before.aliased.resolve(WEBHOOK_DELIVERIES), `${WEBHOOK_DELIVERIES}_v2`);
  const v2 = await before.aliased
    .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
    .findOne({ _id: 'whd_1' });
  assert.is(v2?.customer_id, 'cus_1');
  assert.is(v2?.last_attempt_at, undefined, 'version 2 kept no last attempt on it');
  // While version 2 is served, `audit verify` (a replay by the newest code) finds the document different.
  const meanwhile = await comparedWithReplay(events, before.aliased, NAME, [WEBHOOK_DELIVERIES]);
  assert.is(meanwhile.differences.length, 1);
  await before.stop();

  // The service of version 3 on the same store.
  const { aliased, stop } = await upgraded(events, docs, NAME);
  assert.is(aliased.resolve(WEBHOOK_DELIVERIES), `${WEBHOOK_DELIVERIES}_v3`);
  const rebuilt = await aliased.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).findOne({ _id: 'whd_1' });
  assert.is(rebuilt?.customer_id, 'cus_1');
  assert.is(rebuilt?.last_attempt_at, AT);
  const compared = await comparedWithReplay(events, aliased, NAME, [WEBHOOK_DELIVERIES]);
  assert.equal(compared.differences, []);
  assert.is(compared.documents, 1);
  await stop();
});

t('a fresh store serves version 3 at once', async () => {
  const events = new MemoryEventStore();
  const docs = new EmbeddedDocumentStore();
  await history(events);
  const { aliased, stop } = await upgraded(events, docs, NAME);
  assert.is(aliased.resolve(WEBHOOK_DELIVERIES), `${WEBHOOK_DELIVERIES}_v3`);
  assert.is(
    (await aliased.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).findOne({}))?.customer_id,
    'cus_1',
  );
  assert.is(await docs.collection(WEBHOOK_DELIVERIES).count(), 0, 'version 1 never built');
  await stop();
});

t.run();
