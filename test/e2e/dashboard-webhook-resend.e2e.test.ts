// Resends the service would refuse are refused up front and not offered: a delivery describing a
// customer since erased (its body is erased with them; the publisher used to accept the resend and
// cancel it at its attempt) answers 409 `customer_erased` at once, through the API, the dashboard and
// the CLI; and the endpoint page shows no Resend button for it, nor for a delivery resent the most
// times one may be (RESEND_LIMIT), but says why instead.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESEND_LIMIT } from '../../commands/webhook-deliveries/handler';
import { runCli } from '../helpers/cli-in-process';
import { formFields, oauthBootstrapWith, pageText, signedInAt } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { quietNow, type Receiver, startReceiver } from '../helpers/webhook-receiver';
import { until } from '../helpers/webhooks-world';

/** Bounds a wait for a hang only (CONTRIBUTING: tests wait, never time). */
const HANG_MS = 120_000;

const FRONT = 'couvert_pk_front_desk_resend_0123456789abcdefghij';

interface Ctx {
  svc: TestService;
  rx: Receiver;
  endpoint: string;
}
const t = suite<Ctx>('dashboard and API: resends that would be refused', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrapWith({
    api_keys: [
      {
        id: 'key_front',
        name: 'Front desk',
        token: FRONT,
        scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'],
      },
    ],
  });
  ctx.rx = await startReceiver();
  ctx.svc = await startTestService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  const made = await ctx.svc.api('POST', '/webhook-endpoints', {
    token: FRONT,
    body: { url: ctx.rx.url('/hook'), enabled_events: ['customer.created'] },
  });
  assert.is(made.status, 201, made.text);
  ctx.endpoint = made.body.data.id as string;
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
});

interface Delivery {
  event_id: string;
  id: string;
  status: string;
  attempts: unknown[];
}

/** A customer, and its customer.created delivery once delivered (or once it has `attempts` attempts). */
async function customerDelivered(
  ctx: Ctx,
  name: string,
): Promise<{ customer: string; delivery: string; event: string }> {
  const made = await ctx.svc.api('POST', '/customers', {
    token: FRONT,
    body: { name, on_match: 'create_new' },
  });
  assert.is(made.status, 201, made.text);
  const customer = made.body.data.id as string;
  const delivery = await until('the delivery', HANG_MS, async () => {
    const list = await ctx.svc.api('GET', `/webhook-endpoints/${ctx.endpoint}/deliveries`, { token: FRONT });
    const rows = list.body.data as (Delivery & { event_id: string })[];
    const mine = ctx.rx
      .for('/hook')
      .map((r) => JSON.parse(r.body) as { id: string; data: { object: { id: string } } })
      .find((b) => b.data.object.id === customer);
    const row = mine && rows.find((d) => d.event_id === mine.id);
    return row && row.status === 'succeeded' ? row : null;
  });
  return { customer, delivery: delivery.id, event: delivery.event_id };
}

async function deliveryStatus(ctx: Ctx, id: string): Promise<Delivery> {
  const list = await ctx.svc.api('GET', `/webhook-endpoints/${ctx.endpoint}/deliveries`, { token: FRONT });
  return (list.body.data as Delivery[]).find((d) => d.id === id) as Delivery;
}

const signedIn = (svc: TestService, path: string) => signedInAt(svc.url, path);

/** The page's item of one delivery (its <li>, found by its event id), and whether it holds a Resend form. */
function item(pageHtml: string, d: { delivery: string; event: string }): { text: string; resend: boolean } {
  const row = pageHtml.split('<div class="item-head">').find((li) => li.includes(d.event));
  assert.ok(row, 'the delivery is listed');
  return { text: pageText(row), resend: row.includes(`/deliveries/${d.delivery}/resend`) };
}

t('a delivery of an erased customer: no Resend offered, and a resend is refused at once', async (ctx) => {
  const made = await customerDelivered(ctx, 'Erin Erased');
  const { customer, delivery } = made;
  const page = `/dashboard/webhooks/${ctx.endpoint}?restaurant=rest_demo`;
  const b = await signedIn(ctx.svc, page);
  assert.ok(item((await b.get(page)).text, made).resend, 'offered while the customer exists');
  const csrf = formFields(
    (await b.get(page)).text,
    `/dashboard/webhooks/${ctx.endpoint}/deliveries/${delivery}/resend`,
  );

  await runCli(ctx.svc, 'customers delete', { id: customer });
  const sent = ctx.rx.for('/hook').length;

  const view = await b.get(page);
  const row = item(view.text, made);
  assert.not.ok(row.resend, 'no Resend button for it');
  assert.match(row.text, /customer who has since been erased/, 'the page says why');

  // The API: 409 in the envelope, with the reason; nothing appended, nothing sent.
  const api = await ctx.svc.api('POST', `/webhook-endpoints/${ctx.endpoint}/deliveries/${delivery}/resend`, {
    token: FRONT,
  });
  assert.is(api.status, 409, api.text);
  assert.is(api.body.error.code, 'RESOURCE_CONFLICT');
  assert.is(api.body.error.details.reason, 'customer_erased');
  assert.match(api.body.error.message, /erased/);
  // The page's form (a tab left open): the page again, with the reason.
  const posted = await b.post(`/dashboard/webhooks/${ctx.endpoint}/deliveries/${delivery}/resend`, csrf);
  assert.is(posted.status, 409);
  assert.match(pageText(posted.text), /customer who has since been erased/);
  // The CLI.
  let cliError = '';
  try {
    await runCli(ctx.svc, 'webhooks resend', { delivery });
  } catch (err) {
    cliError = String(err);
  }
  assert.match(cliError, /erased/, 'the CLI refuses it too');
  const after = await deliveryStatus(ctx, delivery);
  assert.is(after.status, 'succeeded', 'still the delivery it was: no resend was accepted');
  assert.ok(await quietNow(ctx.svc.rt, ctx.svc.webhooks, ctx.rx, '/hook', sent), 'nothing sent');
});

t(`a delivery resent ${RESEND_LIMIT} times: no Resend offered, the page says why`, async (ctx) => {
  const made = await customerDelivered(ctx, 'Rex Resent');
  const { delivery } = made;
  for (let i = 1; i <= RESEND_LIMIT; i++) {
    const res = await ctx.svc.api(
      'POST',
      `/webhook-endpoints/${ctx.endpoint}/deliveries/${delivery}/resend`,
      {
        token: FRONT,
      },
    );
    assert.is(res.status, 202, res.text);
    await until(`resend ${i}`, HANG_MS, async () => {
      const d = await deliveryStatus(ctx, delivery);
      return d.status === 'succeeded' && d.attempts.length === i + 1;
    });
  }
  const page = `/dashboard/webhooks/${ctx.endpoint}?restaurant=rest_demo`;
  const b = await signedIn(ctx.svc, page);
  const row = item((await b.get(page)).text, made);
  assert.not.ok(row.resend, 'no Resend button past the limit');
  assert.match(row.text, new RegExp(`resent ${RESEND_LIMIT} times`), 'the page says why');
});

t('a delivery of a type the endpoint no longer takes: the page says why in its own words', async (ctx) => {
  // An endpoint of its own, taking customer.created and then only customer.updated.
  const made = await ctx.svc.api('POST', '/webhook-endpoints', {
    token: FRONT,
    body: { url: ctx.rx.url('/narrowed'), enabled_events: ['customer.created', 'customer.updated'] },
  });
  assert.is(made.status, 201, made.text);
  const endpoint = made.body.data.id as string;
  const customer = await ctx.svc.api('POST', '/customers', {
    token: FRONT,
    body: { name: 'Nora Narrowed', on_match: 'create_new' },
  });
  assert.is(customer.status, 201, customer.text);
  const delivered = await until('the delivery', HANG_MS, async () => {
    const list = await ctx.svc.api('GET', `/webhook-endpoints/${endpoint}/deliveries`, { token: FRONT });
    return (list.body.data as Delivery[]).find((d) => d.status === 'succeeded');
  });
  const patched = await ctx.svc.api('PATCH', `/webhook-endpoints/${endpoint}`, {
    token: FRONT,
    body: { enabled_events: ['customer.updated'] },
  });
  assert.is(patched.status, 200, patched.text);
  const d = { delivery: delivered.id, event: delivered.event_id };
  const page = `/dashboard/webhooks/${endpoint}?restaurant=rest_demo`;
  const b = await signedIn(ctx.svc, page);
  const view = await b.get(page);
  const row = item(view.text, d);
  assert.not.ok(row.resend, 'no Resend button for it');
  // The page's form calls enabled_events "Events": the field's API name means nothing to a manager.
  assert.match(row.text, /no longer receives customer\.created: tick it under Events/);
  assert.not.match(row.text, /enabled_events/);
  // The page's form (a tab left open): refused, saying the same.
  const csrf = formFields(view.text, `/dashboard/webhooks/${endpoint}/test`);
  const posted = await b.post(`/dashboard/webhooks/${endpoint}/deliveries/${d.delivery}/resend`, csrf);
  assert.is(posted.status, 409);
  // Said in the delivery's item, where its Resend was (focused: autofocus), not atop the page.
  assert.is((posted.text.match(/role="alert"/g) ?? []).length, 1, 'said once');
  const said = item(posted.text, d).text;
  const alert = pageText(
    /<div class="alert" role="alert" id="resend-error" tabindex="-1" autofocus>([\s\S]*?)<\/div>/.exec(
      posted.text.split('<div class="item-head">').find((li) => li.includes(d.event)) ?? '',
    )?.[1] ?? '',
  );
  assert.match(said, /no longer receives customer\.created/);
  assert.match(alert, /no longer receives customer\.created: tick it under Events/);
  assert.not.match(alert, /enabled_events/);
});

t.run();
