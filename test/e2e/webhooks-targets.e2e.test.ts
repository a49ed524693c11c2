// Webhook targets on a service that keeps the default rule (https, public addresses only), and
// customer events on the real clock, verified by Stripe's library with its default tolerance.
import Stripe from 'stripe';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer } from '../../commands/customers/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { NO_WEBHOOK } from '../../src/core/no-webhook';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';
import { quietNow, type Receiver, startReceiver } from '../helpers/webhook-receiver';

const TOKEN = 'couvert_pk_targets_000000000000000000000001';
const SCOPES = ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'RESERVATIONS_READ', 'WEBHOOKS_WRITE'];

const t = suite<{ strict: TestService; open: TestService; rx: Receiver }>('webhooks: targets');
t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  const bootstrap = demoBootstrap({}, [{ id: 'key_t', token: TOKEN, scopes: SCOPES }]);
  ctx.strict = await startTestService({ bootstrap });
  ctx.open = await startTestService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
});
t.after(async ({ strict, open, rx }) => {
  await Promise.all([strict.close(), open.close()]);
  await rx.close();
});

t('by default only https URLs naming public hosts are accepted', async ({ strict }) => {
  for (const url of [
    'http://hooks.partner.example/x',
    'https://127.0.0.1/x',
    'https://127.0.0.1:8443/x',
    'https://10.0.0.7/x',
    'https://192.168.0.10/x',
    'https://169.254.169.254/latest',
    'https://[::1]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://[::ffff:a00:1]/x',
    'https://[fe80::1]/x',
    'https://0177.0.0.1/x',
    'https://localhost/x',
    'https://metadata/x',
    'https://user:secret@hooks.partner.example/x',
  ]) {
    const res = await strict.api('POST', '/webhook-endpoints', { token: TOKEN, body: { url } });
    assert.is(res.status, 400, url);
    assert.is(res.body.error.details.issues[0].path, 'url', url);
    assert.not.ok(JSON.stringify(res.body).includes('secret@'), 'the answer never echoes credentials');
  }
  const ok = await strict.api('POST', '/webhook-endpoints', {
    token: TOKEN,
    body: { url: 'https://hooks.partner.example/x' },
  });
  assert.is(ok.status, 201);
  const moved = await strict.api('PATCH', `/webhook-endpoints/${ok.body.data.id}`, {
    token: TOKEN,
    body: { url: 'https://[::1]/x' },
  });
  assert.is(moved.status, 400, 'an update is held to the same rule');
});

t(
  'customer events on the real clock verify with Stripe’s default tolerance; an import publishes nothing',
  async ({ open, rx }) => {
    const ep = await open.api('POST', '/webhook-endpoints', {
      token: TOKEN,
      body: { url: rx.url('/customers'), enabled_events: ['customer.created', 'customer.updated'] },
    });
    assert.is(ep.status, 201);
    const created = await open.api('POST', '/customers', {
      token: TOKEN,
      body: { name: 'Chloé Martin', email: 'chloe@example.com' },
    });
    assert.is(created.status, 201);
    const [got] = await rx.waitFor('/customers', 1);
    const event = new Stripe('sk_test_unused').webhooks.constructEvent(
      got?.body as string,
      got?.headers['service-signature'] as string,
      ep.body.data.secret,
    );
    assert.is(event.type, 'customer.created');
    assert.equal(got?.json.data.object, created.body.data, 'the customer as GET /customers/{id} answers it');
    // A customer import (its events marked metadata.import) publishes nothing.
    await createCustomer(
      open.rt,
      { _id: 'rest_demo', country_code: 'FR', customer_matching: true },
      { name: 'Imported Guest' },
      { ...operatorMeta('import'), ...NO_WEBHOOK },
      { origin: 'IMPORT' },
    );
    assert.ok(await quietNow(open.rt, open.webhooks, rx, '/customers', 1));
  },
);

t.run();
