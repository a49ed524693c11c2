// A customer stored before tags dropped repeats may still hold some (in its read model and its
// events). Partners see one rule whatever its age: GET, the sync feed, the PATCH's answer and webhooks
// show each tag once, and a PATCH resending the list as shown changes nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerStream } from '../../commands/customers/events';
import { ANY } from '../../src/ports/event-store';
import { publishedEvent } from '../../src/webhooks/payloads';
import { startCustomerService, streamLength, TOKENS } from '../helpers/customer-service';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('customers: tag repeats an older customer stored');

t.before(async (ctx) => {
  ctx.svc = await startCustomerService({});
});
t.after(async ({ svc }) => svc.close());

/** What a PATCH appended before the handlers dropped repeats. */
async function legacyPatch(svc: TestService, id: string): Promise<void> {
  const out = await svc.rt.events.append(
    customerStream(id),
    [
      {
        type: 'CustomerUpdated',
        data: {
          customer_id: id,
          restaurant_id: 'rest_fr',
          at: '2026-06-02T10:00:00.000Z',
          changes: { tags: ['vip', 'window', 'vip'] },
          previous: { tags: [] },
        },
        metadata: { restaurant_id: 'rest_fr' },
      },
    ],
    ANY,
  );
  await svc.rt.settle(out.position);
}

t('reads and webhooks show each tag once; resending them is no change', async ({ svc }) => {
  const created = await svc.api('POST', '/customers', {
    token: TOKENS.write,
    body: { name: 'Legacy Repeats', external_id: 'legacy-tag-repeats' },
  });
  assert.is(created.status, 201, created.text);
  const id = created.body.data.id as string;
  await legacyPatch(svc, id);

  const one = await svc.api('GET', `/customers/${id}`, { token: TOKENS.read });
  assert.equal(one.body.data.tags, ['vip', 'window']);
  const feed = await svc.api('GET', '/customers?external_id=legacy-tag-repeats', { token: TOKENS.read });
  assert.equal(feed.body.data[0].tags, ['vip', 'window']);

  const legacy = (await svc.rt.events.readStream(customerStream(id))).at(-1);
  assert.ok(legacy);
  const published = await publishedEvent(svc.rt.events, svc.rt.docs, legacy);
  assert.ok(published);
  const body = JSON.parse(published.body('v1'));
  assert.equal(body.data.object.tags, ['vip', 'window']);

  const before = await streamLength(svc, id);
  const same = await svc.api('PATCH', `/customers/${id}`, {
    token: TOKENS.write,
    body: { tags: ['vip', 'window'] },
  });
  assert.is(same.status, 200, same.text);
  assert.equal(same.body.data.tags, ['vip', 'window']);
  assert.is(same.body.data.updated_at, one.body.data.updated_at, 'updated_at did not move');
  assert.is(await streamLength(svc, id), before, 'nothing appended');
});

t.run();
