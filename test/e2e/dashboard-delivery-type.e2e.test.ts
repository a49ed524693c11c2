// The endpoint page's delivery history names a test delivery's type as the API does
// (`webhook_endpoint.test`, the type its body carried), in its row and in the event-type filter, and the
// filter finds it; a link from before, with the read model's `test`, still filters and reads the same.
// Over HTTP, as a browser without JavaScript drives the page.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { type Browser, oauthBootstrapWith, signedInAt } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const KEY = 'couvert_pk_delivery_type_0123456789abcdefghijklm';
const PAGE = '/dashboard/webhooks/we_types?restaurant=rest_demo';

const t = suite<{ svc: TestService; rx: Receiver; b: Browser }>('dashboard: a test delivery’s type');

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  const bootstrap = oauthBootstrapWith({
    customer_matching: true,
    api_keys: [
      {
        id: 'key_types',
        name: 'Types',
        token: KEY,
        scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'],
      },
    ],
    webhook_endpoints: [
      {
        id: 'we_types',
        url: ctx.rx.url('/ok'),
        api_version: 'v1',
        secret: 'whsec_delivery_type_secret_0001',
        api_key_id: 'key_types',
      },
    ],
  });
  ctx.svc = await startTestService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  ctx.b = await signedInAt(ctx.svc.url, PAGE, 'manager@demo.test');
});
t.after(async ({ svc, rx }) => {
  await svc?.close();
  await rx?.close();
});

/** The headings of the page's delivery rows, tags kept. */
const rows = (html: string) =>
  [...html.matchAll(/<li>\s*<div class="item-head"><h3>(.*?)<\/h3>/g)].map((m) => m[1]);

t(
  'the row and the filter say webhook_endpoint.test, and the filter finds the test alone',
  async ({ svc, rx, b }) => {
    const created = await svc.api('POST', '/customers', { token: KEY, body: { name: 'Ada Lovelace' } });
    assert.is(created.status, 201, created.text);
    const tested = await svc.api('POST', '/webhook-endpoints/we_types/test', { token: KEY });
    assert.is(tested.status, 200, tested.text);
    // Both deliveries in the history (the customer's is made by the publisher).
    await rx.waitFor('/ok', 2);
    for (const until = Date.now() + 120_000; ; ) {
      const docs = await svc.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .find({ endpoint_id: 'we_types' });
      if (docs.length === 2 && docs.every((d) => d.status === 'succeeded')) break;
      if (Date.now() > until) throw new Error('the deliveries never reached the history');
      await new Promise((r) => setTimeout(r, 50));
    }

    const all = await b.get(PAGE);
    assert.is(all.status, 200);
    assert.equal(rows(all.text).sort(), [
      '<code>customer.created</code>',
      'Test delivery <code>webhook_endpoint.test</code>',
    ]);
    assert.match(all.text, /<option value="webhook_endpoint\.test">Test deliveries<\/option>/);
    assert.not.match(all.text, /value="test"/, 'the internal value is not what the page says');

    const filtered = await b.get(`${PAGE}&status=&event_type=webhook_endpoint.test`);
    assert.equal(rows(filtered.text), ['Test delivery <code>webhook_endpoint.test</code>']);
    assert.match(filtered.text, /<option value="webhook_endpoint\.test" selected>Test deliveries<\/option>/);

    // A link from before the change, with `test`: the same page.
    const old = await b.get(`${PAGE}&event_type=test`);
    assert.equal(rows(old.text), ['Test delivery <code>webhook_endpoint.test</code>']);
    assert.match(old.text, /<option value="webhook_endpoint\.test" selected>Test deliveries<\/option>/);

    const others = await b.get(`${PAGE}&event_type=customer.created`);
    assert.equal(rows(others.text), ['<code>customer.created</code>']);

    // A type the history cannot hold (a typo: the API answers 400 invalid_enum for it) is said on the
    // page, with the list the API takes, not an empty page that reads "no deliveries".
    const typo = await b.get(`${PAGE}&event_type=customer.craeted`);
    assert.is(typo.status, 400);
    assert.match(typo.text, 'No event type is called “customer.craeted”: choose one in the list.');
    assert.equal(rows(typo.text).length, 2, 'unfiltered, and said so');
    assert.match(typo.text, /<option value="" selected>|<option value="">Any event<\/option>/);
    const badStatus = await b.get(`${PAGE}&status=succeded`);
    assert.is(badStatus.status, 400);
    assert.match(badStatus.text, 'No delivery status is called “succeded”');
  },
);

t.run();
