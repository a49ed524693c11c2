// The 30-day delivery history and resends (docs/WEBHOOKS.md: every attempt of every series is shown for
// 30 days). A delivery resent near the end of its 30 days stays in the history while its resend is
// attempted and for 30 days after its last attempt: listed, read by id, kept by the hourly prune. It was
// keyed on the delivery's creation alone: an hour later the resend being retried answered 404, was not
// listed (not even with status=pending), and its attempts were pruned with it once it finished.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { resendDelivery } from '../../commands/webhook-deliveries/handler';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { failingStreak, getDelivery, listDeliveries } from '../../queries/webhooks';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { pruneDeliveries } from '../../src/webhooks-module';
import {
  deliveries,
  demoCustomer,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
} from '../helpers/webhooks-world';

type World = WebhooksWorld & { clock: FixedClock };
const t = suite<{ w: World }>('webhooks: a resent delivery in the 30-day history');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhook-history-resent',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: { id: 'key_hr', token: 'couvert_pk_history_resent_0000000000001', scopes: ['CUSTOMERS_READ'] },
    endpoint: { id: 'we_hr', path: '/hr', secret: 'whsec_history_resent_secret_0001' },
  });
});
t.after(async (ctx) => {
  await ctx.w?.close();
});

const DAY = 86_400;

t('resent on its 30th day, it is shown while attempted and 30 days after', async ({ w }) => {
  const customer = await demoCustomer(w.rt, 'Resent Late');
  const first = await until('the delivery succeeded', 120_000, async () => {
    const [d] = await deliveries(w.rt, { customer_id: customer, status: 'succeeded' });
    return d;
  });
  const endpoint = (await w.rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .findOne({ _id: 'we_hr' })) as WebhookEndpointDoc;
  const shown = async () => {
    const now = w.clock.now();
    const listed = (await listDeliveries(w.rt.docs, 'we_hr', { limit: 100 }, now)).items.some(
      (d) => d._id === first._id,
    );
    const read = await getDelivery(w.rt.docs, 'we_hr', first._id, now).then(
      () => true,
      () => false,
    );
    assert.is(listed, read, 'listed exactly when it can be read');
    return read;
  };

  // Its 30th day: the endpoint failed to process it after all; the partner resends it, and it fails.
  w.clock.advance(30 * DAY - 3600);
  assert.ok(await shown(), 'in the history on its 30th day');
  w.rx.on('/hr', { statuses: [503] });
  await w.rt.settle((await resendDelivery(w.rt, first, endpoint, operatorMeta('test'))).position);
  await until('the resend attempted', 120_000, async () => {
    const [d] = await deliveries(w.rt, { _id: first._id });
    return d && d.attempts.length === 2 && d;
  });
  // Past 30 days after its creation, its resend still being retried.
  w.clock.advance(2 * 3600);
  const [pending] = await deliveries(w.rt, { _id: first._id });
  assert.is(pending?.status, 'pending');
  assert.ok(await shown(), 'shown while its resend is attempted');
  const pendingOnes = await listDeliveries(
    w.rt.docs,
    'we_hr',
    { status: 'pending', limit: 100 },
    w.clock.now(),
  );
  assert.equal(
    pendingOnes.items.map((d) => d._id),
    [first._id],
  );

  // Its resend ends (the receiver answers 410: final); the prune keeps it, as it keeps its attempts.
  w.rx.on('/hr', { statuses: [410] });
  w.clock.advance(3600);
  await until('the resend finished', 120_000, async () => {
    await w.running?.publisher.sweep();
    const [d] = await deliveries(w.rt, { _id: first._id });
    return d?.status === 'failed' && d;
  });
  await pruneDeliveries(w.rt);
  assert.is((await deliveries(w.rt, { _id: first._id })).length, 1, 'not pruned');
  assert.ok(await shown(), 'shown after its resend ended');
  // The dashboard's failing warning counts it as the history lists it (the same rule).
  const streak = await failingStreak(w.rt.docs, 'we_hr', w.clock.now());
  assert.is(streak?.count, 1, 'the resend that failed again is counted in the failing warning');

  // 30 days after its last attempt, it leaves the history and the read model.
  w.clock.advance(30 * DAY + 3600);
  assert.not.ok(await shown(), 'past 30 days after its last attempt');
  assert.match(String(await pruneDeliveries(w.rt)), /^pruned \d+ webhook deliveries/);
  assert.is((await deliveries(w.rt, { _id: first._id })).length, 0, 'pruned then');
});

t.run();
