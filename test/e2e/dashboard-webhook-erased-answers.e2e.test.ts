// The endpoint page's delivery history and answers erased with a customer (docs/WEBHOOKS.md, Answers):
// an answer to a delivery describing a customer is sealed with their key and erased with them, and
// the read model then keeps it as null, as it keeps an answer without a body. The page says which it
// was: "erased with the customer" for the answers to their deliveries (the customer.created answered
// before the erasure, the customer.deleted answered after it), "no body" for an answer that had none.
// Over HTTP, as a browser without JavaScript drives the page.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryStream } from '../../commands/webhook-deliveries/events';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { runCli } from '../helpers/cli-in-process';
import { countingReads } from '../helpers/hooked-events';
import { type Browser, oauthBootstrapWith, signedInAt } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const KEY = 'couvert_pk_erased_answers_0123456789abcdefghijk';
const PAGE = '/dashboard/webhooks/we_erased?restaurant=rest_demo';

const t = suite<{ svc: TestService; rx: Receiver; b: Browser }>('dashboard: answers erased with a customer');

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  // The endpoint echoes the name the body holds (its own record of the guest), and nothing to a test.
  ctx.rx.on('/echo', {
    body: (r) => (typeof r.json?.data?.object?.name === 'string' ? `noted: ${r.json.data.object.name}` : ''),
  });
  const bootstrap = oauthBootstrapWith({
    api_keys: [
      {
        id: 'key_erased',
        name: 'Erased',
        token: KEY,
        scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'],
      },
    ],
    webhook_endpoints: [
      {
        id: 'we_erased',
        url: ctx.rx.url('/echo'),
        api_version: 'v1',
        secret: 'whsec_erased_answers_secret_0001',
        api_key_id: 'key_erased',
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

/** Each delivery row of the page: its heading and the rest of its item. */
const rows = (html: string) =>
  html
    .split('<li>\n  <div class="item-head"><h3>')
    .slice(1)
    .map((r) => ({ head: r.slice(0, r.indexOf('</h3>')), item: r }));

const ERASED = 'The answer was erased with the customer this delivery described.';
const NO_BODY = 'The answer had no body.';

t('an answer erased with the customer is said so, not "no body"', async ({ svc, rx, b }) => {
  const created = await svc.api('POST', '/customers', { token: KEY, body: { name: 'Ada Lovelace' } });
  assert.is(created.status, 201, created.text);
  await rx.waitFor('/echo', 1);
  const tested = await svc.api('POST', '/webhook-endpoints/we_erased/test', { token: KEY });
  assert.is(tested.status, 200, tested.text);
  assert.is(tested.body.data.response_body, null, 'the test was answered without a body');
  await runCli(svc, 'customers delete', { id: created.body.data.id });
  await rx.waitFor('/echo', 3);
  for (const until = Date.now() + 120_000; ; ) {
    await svc.rt.refresh();
    const docs = await svc.rt.docs
      .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
      .find({ endpoint_id: 'we_erased' });
    if (docs.length === 3 && docs.every((d) => d.status === 'succeeded')) break;
    if (Date.now() > until) throw new Error('the deliveries never reached the history');
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(
    rx.for('/echo').some((r) => r.json?.type === 'customer.deleted'),
    'the deletion was delivered (and answered) after the erasure',
  );

  const page = await b.get(PAGE);
  assert.is(page.status, 200);
  assert.not.match(page.text, /Lovelace/, 'nothing of the customer is shown');
  const byHead = new Map(rows(page.text).map((r) => [r.head, r.item]));
  for (const type of ['customer.created', 'customer.deleted']) {
    const item = byHead.get(`<code>${type}</code>`);
    assert.ok(item, `the ${type} delivery is listed: ${[...byHead.keys()]}`);
    assert.ok(item.includes(ERASED), `${type}: the answer reads erased with the customer`);
    assert.not.ok(item.includes(NO_BODY), `${type}: never "no body"`);
  }
  const test = byHead.get('Test delivery <code>webhook_endpoint.test</code>');
  assert.ok(test, 'the test delivery is listed');
  assert.ok(test.includes(NO_BODY), 'an answer without a body still says so');
  assert.not.ok(test.includes(ERASED));
});

t(
  'deliveries of live customers answered without a body cost no read of their stream',
  async ({ svc, rx, b }) => {
    // The endpoint now answers every delivery with an empty body (as a 204 would): kept as null.
    rx.on('/echo', { body: () => '' });
    const before = rx.for('/echo').length;
    const all = async () =>
      svc.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).find({ endpoint_id: 'we_erased' });
    const earlier = new Set((await all()).map((d) => d._id));
    const names = ['Grace Hopper', 'Alan Turing', 'Edsger Dijkstra'];
    for (const name of names) {
      const created = await svc.api('POST', '/customers', { token: KEY, body: { name } });
      assert.is(created.status, 201, created.text);
    }
    await rx.waitFor('/echo', before + names.length);
    for (const until = Date.now() + 120_000; ; ) {
      await svc.rt.refresh();
      const docs = await all();
      if (docs.length === 3 + names.length && docs.every((d) => d.status === 'succeeded')) break;
      if (Date.now() > until) throw new Error('the deliveries never reached the history');
      await new Promise((r) => setTimeout(r, 50));
    }
    const docs = await all();
    const live = docs.filter((d) => !earlier.has(d._id));
    assert.is(live.length, names.length);
    for (const d of live) {
      assert.is(d.attempts[0]?.status_code, 200);
      assert.is(d.attempts[0]?.response_excerpt, null, 'answered without a body');
    }
    // Count the reads of delivery streams the page makes (a counting store in place of the service's).
    const original = svc.rt.events;
    const counted = countingReads(original);
    const read = counted.read;
    svc.rt.events = counted.events;
    let page: Awaited<ReturnType<Browser['get']>>;
    try {
      page = await b.get(PAGE);
    } finally {
      svc.rt.events = original;
    }
    assert.is(page.status, 200);
    const erasedOnes = docs.filter((d) => !d.test && earlier.has(d._id)).map((d) => deliveryStream(d._id));
    const liveStreams = new Set(live.map((d) => deliveryStream(d._id)));
    assert.equal(
      read.filter((s) => liveStreams.has(s)),
      [],
      'no delivery of a live customer is read',
    );
    for (const s of erasedOnes)
      assert.ok(read.includes(s), `the erased customer's delivery ${s} is still read`);
    const byHead = rows(page.text);
    assert.is(byHead.filter((r) => r.item.includes(ERASED)).length, 2, 'the erased answers still say so');
    assert.is(
      byHead.filter((r) => r.head === '<code>customer.created</code>' && r.item.includes(NO_BODY)).length,
      names.length,
      "the live customers' answers had no body",
    );
  },
);

t.run();
