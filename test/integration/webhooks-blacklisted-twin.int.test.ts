// A customer made by on_match create_new on the details of a blacklisted guest is created blacklisted
// in the same append as its creation (commands/customers/upsert.ts). Partners hear of it once, by its
// customer.created, and blacklisted: a body built at the creation event alone said `blacklisted: false`
// and a customer.updated followed, so an integration acting on the creation saw a bookable twin.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { blacklistCustomer } from '../../commands/customers/handler';
import { upsertCustomer } from '../../commands/customers/upsert';
import { operatorMeta } from '../../src/core/command-meta';
import {
  deliveries,
  demoCustomer,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
} from '../helpers/webhooks-world';

const t = suite<{ w: WebhooksWorld }>('webhooks: a twin created blacklisted');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-blacklisted-twin',
    key: {
      id: 'key_bt',
      token: 'couvert_pk_blacktwin_00000000000000000001',
      scopes: ['CUSTOMERS_READ'],
    },
    endpoint: { id: 'we_bt', path: '/bt', secret: 'whsec_blacktwin_test_secret_0001' },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('one customer.created, blacklisted; no customer.updated for the blacklisting', async ({ w }) => {
  const guest = await demoCustomer(w.rt, 'Black Guest', 'black.guest@example.com');
  const listed = await blacklistCustomer(w.rt, guest, 'no-shows', operatorMeta('test'));
  await w.rt.settle(listed.position);
  const twin = await upsertCustomer(
    w.rt,
    { _id: 'rest_demo', country_code: 'FR', customer_matching: true },
    { name: 'Black Twin', email: 'BLACK.GUEST@example.com' },
    'create_new',
    operatorMeta('test'),
  );
  assert.is(twin.result, 'created');
  assert.is.not(twin.customerId, guest);
  // A customer created after the twin: the publisher fans the log out in order, so once this one's
  // delivery is recorded every event of the twin's append has been fanned out (or left out).
  const marker = await demoCustomer(w.rt, 'After Twin', 'after.twin@example.com');
  await until('the marker fanned out', 60_000, async () =>
    (await deliveries(w.rt, { customer_id: marker })).length > 0 ? true : undefined,
  );
  const aboutTwin = await deliveries(w.rt, { customer_id: twin.customerId });
  assert.equal(
    aboutTwin.map((d) => d.event_type),
    ['customer.created'],
    'one delivery for the twin: its creation, no customer.updated for the blacklisting',
  );
  const [received] = (await w.rx.waitFor('/bt', 4)).filter(
    (r) => (r.json as { data: { object: { id: string } } }).data.object.id === twin.customerId,
  );
  assert.ok(received, "the twin's creation was received");
  assert.is((received.json as { data: { object: { blacklisted: boolean } } }).data.object.blacklisted, true);
});

t.run();
