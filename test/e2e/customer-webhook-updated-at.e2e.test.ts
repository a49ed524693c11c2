// A customer event's payload describes the state that event made, updated_at included: the read model's
// updated_at is the stamp of the last customer event it applied, so a payload built once a later change
// is applied (a burst: the publisher follows the log behind the read models) must not take that later
// stamp, or two payloads of different states carry one updated_at and ordering by it breaks.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerStream } from '../../commands/customers/events';
import { publishedEvent } from '../../src/webhooks/payloads';
import { startCustomerService, TOKENS } from '../helpers/customer-service';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('customer webhook payloads: updated_at');

t.before(async (ctx) => {
  ctx.svc = await startCustomerService({});
});
t.after(async ({ svc }) => svc.close());

t(
  'a customer.updated built after a later change carries its own updated_at, not the later one',
  async ({ svc }) => {
    const created = await svc.api('POST', '/customers', {
      token: TOKENS.write,
      body: { name: 'Stamp Test' },
    });
    assert.is(created.status, 201, created.text);
    const id = created.body.data.id as string;
    const one = await svc.api('PATCH', `/customers/${id}`, { token: TOKENS.write, body: { note: 'one' } });
    const two = await svc.api('PATCH', `/customers/${id}`, { token: TOKENS.write, body: { note: 'two' } });
    assert.is(one.status, 200, one.text);
    assert.is(two.status, 200, two.text);
    const stampOne = one.body.data.updated_at as string;
    const stampTwo = two.body.data.updated_at as string;
    assert.ok(stampOne < stampTwo);

    const updates = (await svc.rt.events.readStream(customerStream(id))).filter(
      (e) => e.type === 'CustomerUpdated',
    );
    assert.is(updates.length, 2);
    // Both built now, the read model holding the second change: as a lagging publisher builds them.
    const bodies = [];
    for (const e of updates) {
      const published = await publishedEvent(svc.rt.events, svc.rt.docs, e);
      assert.ok(published);
      bodies.push(JSON.parse(published.body('v1')));
    }
    const [first, second] = bodies;
    assert.is(first.type, 'customer.updated');
    assert.is(first.data.object.note, 'one');
    assert.ok(
      first.data.object.updated_at <= stampOne,
      `the first change's payload says ${first.data.object.updated_at}, the second change's stamp is ${stampTwo}`,
    );
    assert.is(second.data.object.note, 'two');
    assert.is(
      second.data.object.updated_at,
      stampTwo,
      'the latest change carries the read model stamp exactly',
    );
  },
);

t.run();
