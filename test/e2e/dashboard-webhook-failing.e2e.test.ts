// What an endpoint's page says of what it receives: a legacy endpoint's event choice does not filter
// its RESERVATION_UPDATED (it applies once migrated), and
// an endpoint whose deliveries fail for good (after every retry) is said on its dashboard page: retries
// end after about 4 hours and nothing disables the endpoint, so without it a manager learns of an
// endpoint that is down only by reading the history. Said while the latest finished delivery failed,
// with how many in a row and since when; gone once one succeeds. Over HTTP, as a browser without
// JavaScript.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { formFields, oauthBootstrapWith, pageText, signedInAt } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';
import { until } from '../helpers/webhooks-world';

const FRONT = 'couvert_pk_front_desk_failing_0123456789abcdefgh';

interface Ctx {
  svc: TestService;
  rx: Receiver;
}
const t = suite<Ctx>('dashboard: what an endpoint receives, and whether it fails', {} as Ctx);

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  const bootstrap = oauthBootstrapWith({
    api_keys: [
      {
        id: 'key_front',
        name: 'Front desk',
        token: FRONT,
        scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'RESERVATIONS_READ', 'WEBHOOKS_WRITE'],
      },
    ],
    webhook_endpoints: [
      {
        id: 'we_old',
        url: ctx.rx.url('/old'),
        api_version: 'legacy',
        secret: 'whsec_failing_legacy_secret_00001',
        api_key_id: 'key_front',
        enabled_events: ['customer.created'],
      },
    ],
  });
  ctx.svc = await startTestService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', TEST_CLOCK: 'true' },
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
});

const FAILING = /Deliveries are failing/;

const signedIn = (svc: TestService, path: string) => signedInAt(svc.url, path);

t(
  'a legacy endpoint: its page says it gets every reservation change, its choice once migrated',
  async ({ svc }) => {
    const page = '/dashboard/webhooks/we_old?restaurant=rest_demo';
    const text = pageText((await (await signedIn(svc, page)).get(page)).text);
    assert.match(
      text,
      /Events RESERVATION_UPDATED for every reservation change \(legacy format\)\. Once migrated to v1: customer\.created/,
    );
    assert.match(text, /whatever is chosen here\. The choice applies once it is migrated to v1\./);
  },
);

t('the page warns while the latest deliveries failed, and stops once one succeeds', async ({ svc, rx }) => {
  // 400 is final: each delivery fails at its first attempt (no retry to wait for).
  rx.on('/down', { statuses: [400] });
  const made = await svc.api('POST', '/webhook-endpoints', {
    token: FRONT,
    body: { url: rx.url('/down'), enabled_events: ['customer.created'] },
  });
  assert.is(made.status, 201, made.text);
  const id = made.body.data.id as string;
  const page = `/dashboard/webhooks/${id}?restaurant=rest_demo`;
  const b = await signedIn(svc, page);
  assert.not.match(pageText((await b.get(page)).text), FAILING, 'nothing delivered yet');

  const finished = (status: string, n: number) =>
    until(`${n} deliveries ${status}`, 120_000, async () => {
      await svc.rt.refresh();
      const docs = await svc.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .find({ endpoint_id: id, status });
      return docs.length >= n;
    });
  for (const name of ['Down One', 'Down Two']) {
    const res = await svc.api('POST', '/customers', { token: FRONT, body: { name } });
    assert.is(res.status, 201, res.text);
  }
  await finished('failed', 2);
  const warned = pageText((await b.get(page)).text);
  assert.match(warned, FAILING);
  assert.match(warned, /The last 2 deliveries \(since [^)]+\) failed after every retry/);
  assert.match(warned, /Nothing disables it on its own/);

  // Disabled by the manager: the warning no longer says nothing disables it, it says what to do.
  const toggle = async () => {
    const action = `/dashboard/webhooks/${id}/toggle`;
    const res = await b.post(action, formFields((await b.get(page)).text, action));
    assert.is(res.status, 303);
  };
  await toggle();
  const disabled = pageText((await b.get(page)).text);
  assert.match(disabled, FAILING);
  assert.not.match(disabled, /Nothing disables it on its own/);
  assert.match(
    disabled,
    /It is disabled now: nothing is sent to it\. Check it with Send a test ?, enable it once it answers/,
  );
  await toggle();
  assert.match(pageText((await b.get(page)).text), /Nothing disables it on its own/, 'enabled again');

  rx.on('/down', { statuses: [200] });
  assert.is((await svc.api('POST', '/customers', { token: FRONT, body: { name: 'Up' } })).status, 201);
  await finished('succeeded', 1);
  assert.not.match(pageText((await b.get(page)).text), FAILING, 'it answers again');
});

t.run();
