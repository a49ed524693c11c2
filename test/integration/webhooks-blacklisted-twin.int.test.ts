// A customer made by on_match create_new on the details of a blacklisted guest is created blacklisted
// in the same append as its creation (commands/customers/upsert.ts). Partners hear of it once, by its
// customer.created, and blacklisted: a body built at the creation event alone said `blacklisted: false`
// and a customer.updated followed, so an integration acting on the creation saw a bookable twin.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { blacklistCustomer } from '../../commands/customers/handler';
import { upsertCustomer } from '../../commands/customers/upsert';
import { operatorMeta } from '../../src/core/command-meta';
import { demoCustomer, startWebhooksWorld, until, type WebhooksWorld } from '../helpers/webhooks-world';

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
  // The guest's creation and blacklisting, then the twin's creation: wait for all of them, then a
  // moment more in case a fourth (the twin's blacklisting) follows.
  await w.rx.waitFor('/bt', 3);
  await until('the publisher idle', 30_000, async () => {
    await new Promise((r) => setTimeout(r, 500));
    return true;
  });
  const aboutTwin = w.rx
    .for('/bt')
    .map((r) => r.json as { type: string; data: { object: { id: string; blacklisted: boolean } } })
    .filter((b) => b.data.object.id === twin.customerId);
  assert.equal(
    aboutTwin.map((b) => [b.type, b.data.object.blacklisted]),
    [['customer.created', true]],
  );
});

t.run();
