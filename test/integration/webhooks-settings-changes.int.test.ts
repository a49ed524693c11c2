// What becomes of deliveries still being retried when their endpoint changes: an endpoint disabled,
// no longer subscribed to their event type, or deleted takes them no more. They are canceled at the
// change (the history says so at once, the sweeper asks for nothing), stay canceled if the endpoint
// takes that event again later, and a resend of one is refused, clearly, while the endpoint would not
// take it. A change made without the read models (a bootstrap file's) leaves them to the publisher,
// which cancels each at its next attempt by the same rule. The service clock is frozen: only the test
// moves retries.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { updateCustomer } from '../../commands/customers/handler';
import { resendDelivery, testWebhookEndpoint } from '../../commands/webhook-deliveries/handler';
import { deleteWebhookEndpoint, updateWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { refusedCli } from '../helpers/cli-in-process';
import {
  deliveries,
  demoCustomer,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
} from '../helpers/webhooks-world';

const SCOPES = ['CUSTOMERS_READ', 'RESERVATIONS_READ'];
const meta = operatorMeta('test');

type World = WebhooksWorld & { clock: FixedClock };
const t = suite<{ w: World }>('webhooks: an endpoint changed while deliveries wait for a retry');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-settings',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: { id: 'key_st', token: 'couvert_pk_settings_0000000000000000000001', scopes: SCOPES },
    endpoint: { id: 'we_st', path: '/st', secret: 'whsec_settings_test_secret_00001' },
  });
  // Every attempt fails: each delivery waits for its retry (5 s after its first attempt).
  ctx.w.rx.on('/st', { statuses: [503] });
});
t.after(async (ctx) => {
  await ctx.w?.close();
});

/** A customer.created whose first attempt failed: pending, its retry due in 5 s. */
async function waitingForRetry(w: World, name: string) {
  const id = await demoCustomer(w.rt, name);
  return until(`${name}: the first attempt recorded`, 120_000, async () => {
    const [d] = await deliveries(w.rt, { customer_id: id, status: 'pending', attempt_count: 1 });
    return d;
  });
}

const endpointDoc = async (w: World) =>
  (await w.rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .findOne({ _id: 'we_st' })) as WebhookEndpointDoc;

const cancelReason = async (w: World, deliveryId: string) => {
  const [last] = await w.rt.events.readStream(`webhook-delivery-${deliveryId}`, {
    direction: 'backwards',
    limit: 1,
  });
  return last?.type === 'WebhookDeliveryCanceled' ? (last.data as { reason: string }).reason : null;
};

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return `${err.status} ${err.message}`;
    throw err;
  }
  return 'accepted';
};

/** The refusal's details.reason, what a partner acts on. */
const refusedReason = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return (err.details as { reason?: unknown } | undefined)?.reason;
    throw err;
  }
  return 'accepted';
};

t(
  'enabled_events without its type: canceled at the change, and stays so when the type is back',
  async ({ w }) => {
    const d = await waitingForRetry(w, 'Narrowed');
    const sent = w.rx.for('/st').length;
    const out = await updateWebhookEndpoint(
      w.rt,
      'rest_demo',
      'we_st',
      { enabled_events: ['reservation.created'] },
      SCOPES,
      meta,
    );
    await w.rt.settle(out.position);
    const [after] = await deliveries(w.rt, { _id: d._id });
    assert.is(after?.status, 'canceled', 'the history says it at once');
    assert.is(await cancelReason(w, d._id), 'event_type_disabled');
    // Not subscribed: a resend is refused, saying why.
    assert.match(
      await refusal(resendDelivery(w.rt, after as NonNullable<typeof after>, await endpointDoc(w), meta)),
      /^409 The endpoint no longer receives customer\.created/,
    );
    const narrowed = await endpointDoc(w);
    const stale = after as NonNullable<typeof after>;
    assert.is(await refusedReason(resendDelivery(w.rt, stale, narrowed, meta)), 'event_type_disabled');
    // A legacy event type to an endpoint on v1: what a legacy delivery of a migrated endpoint meets.
    assert.is(
      await refusedReason(
        resendDelivery(w.rt, { ...stale, event_type: 'RESERVATION_UPDATED' }, narrowed, meta),
      ),
      'endpoint_migrated',
    );
    // Subscribed again: the delivery stays canceled (the sweeper asks for nothing), and may be resent.
    await w.rt.settle(
      (await updateWebhookEndpoint(w.rt, 'rest_demo', 'we_st', { enabled_events: ['*'] }, SCOPES, meta))
        .position,
    );
    w.clock.advance(3600);
    assert.is(await w.running?.publisher.sweep(), 0, 'nothing is asked for it');
    assert.is(w.rx.for('/st').length, sent);
    const again = await resendDelivery(w.rt, after as NonNullable<typeof after>, await endpointDoc(w), meta);
    await w.rt.settle(again.position);
    await w.rx.waitFor('/st', sent + 1);
    // Resent again from the history read before that resend: its stream moved on meanwhile.
    assert.is(
      await refusedReason(resendDelivery(w.rt, stale, await endpointDoc(w), meta)),
      'delivery_changed',
    );
  },
);

t('disabled: canceled at the change; a resend is refused until it is enabled', async ({ w }) => {
  const d = await waitingForRetry(w, 'Disabled');
  // Still waiting for its retry: already on its way.
  assert.is(await refusedReason(resendDelivery(w.rt, d, await endpointDoc(w), meta)), 'delivery_pending');
  await w.rt.settle(
    (await updateWebhookEndpoint(w.rt, 'rest_demo', 'we_st', { disabled: true }, SCOPES, meta)).position,
  );
  const [after] = await deliveries(w.rt, { _id: d._id });
  assert.is(after?.status, 'canceled');
  assert.is(await cancelReason(w, d._id), 'endpoint_disabled');
  assert.match(
    await refusal(resendDelivery(w.rt, after as NonNullable<typeof after>, await endpointDoc(w), meta)),
    /^409 The endpoint is disabled/,
  );
  // The operator's resend says the same, and appends nothing.
  const cli = await refusedCli(w.rt, 'webhooks resend', { delivery: d._id });
  assert.match(cli.message, /The endpoint is disabled/);
  await w.rt.settle(
    (await updateWebhookEndpoint(w.rt, 'rest_demo', 'we_st', { disabled: false }, SCOPES, meta)).position,
  );
  assert.is((await deliveries(w.rt, { _id: d._id }))[0]?.status, 'canceled', 'enabling resumes nothing');
});

t(
  'changed without the read models (a bootstrap file): the publisher cancels it at its retry',
  async ({ w }) => {
    const d = await waitingForRetry(w, 'Bootstrapped');
    const sent = w.rx.for('/st').length;
    // What the bootstrap file's section passes: the log, the clock, the secrets and the configuration.
    const deps = { events: w.rt.events, clock: w.rt.clock, secrets: w.rt.secrets, config: w.rt.config };
    await w.rt.settle(
      (
        await updateWebhookEndpoint(
          deps,
          'rest_demo',
          'we_st',
          { enabled_events: ['customer.updated'] },
          SCOPES,
          meta,
        )
      ).position,
    );
    assert.is((await deliveries(w.rt, { _id: d._id }))[0]?.status, 'pending');
    w.clock.advance(6);
    const done = await until('the retry settled', 120_000, async () => {
      const [doc] = await deliveries(w.rt, { _id: d._id });
      return doc?.status !== 'pending' ? doc : null;
    });
    assert.is(done.status, 'canceled');
    assert.is(await cancelReason(w, d._id), 'event_type_disabled');
    assert.is(w.rx.for('/st').length, sent, 'the retry was sent to an endpoint no longer subscribed');
    await w.rt.settle(
      (await updateWebhookEndpoint(w.rt, 'rest_demo', 'we_st', { enabled_events: ['*'] }, SCOPES, meta))
        .position,
    );
  },
);

t('a test for an endpoint whose credential is gone is refused, naming why', async ({ w }) => {
  const orphan = { ...(await endpointDoc(w)), credential_id: 'key_never_issued' };
  assert.is(await refusedReason(testWebhookEndpoint(w.rt, orphan, meta)), 'credential_revoked');
});

t('an endpoint subscribed to some types gets no delivery for the others', async ({ w }) => {
  await w.rt.settle(
    (
      await updateWebhookEndpoint(
        w.rt,
        'rest_demo',
        'we_st',
        { enabled_events: ['customer.updated'] },
        SCOPES,
        meta,
      )
    ).position,
  );
  try {
    // customer.created (not subscribed), then customer.updated (subscribed): the fan-out goes in log
    // order, so once the update's delivery exists the creation was passed over.
    const id = await demoCustomer(w.rt, 'Subscribed');
    await updateCustomer(
      w.rt,
      { _id: 'rest_demo', country_code: 'FR', customer_matching: false },
      id,
      { note: 'changed' },
      meta,
    );
    await until('the update fanned out', 120_000, async () => {
      const [d] = await deliveries(w.rt, { customer_id: id, event_type: 'customer.updated' });
      return d;
    });
    assert.equal(
      (await deliveries(w.rt, { customer_id: id })).map((d) => d.event_type),
      ['customer.updated'],
      'no delivery of customer.created',
    );
  } finally {
    // Every type again for the next tests, whatever happened here.
    await w.rt.settle(
      (await updateWebhookEndpoint(w.rt, 'rest_demo', 'we_st', { enabled_events: ['*'] }, SCOPES, meta))
        .position,
    );
  }
});

t('deleted: its pending deliveries are canceled with it', async ({ w }) => {
  const d = await waitingForRetry(w, 'Deleted');
  await w.rt.settle((await deleteWebhookEndpoint(w.rt, 'rest_demo', 'we_st', 'DELETED', meta)).position);
  assert.is((await deliveries(w.rt, { _id: d._id }))[0]?.status, 'canceled');
  assert.is(await cancelReason(w, d._id), 'endpoint_gone');
  assert.is((await deliveries(w.rt, { endpoint_id: 'we_st', status: 'pending' })).length, 0);
  const cli = await refusedCli(w.rt, 'webhooks resend', { delivery: d._id });
  assert.match(cli.message, /the endpoint of delivery whd_\w+ is deleted/);
});

t.run();
