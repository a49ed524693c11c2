// A retry or a resend sends a body built when the event was fanned out. If the endpoint's credential
// has lost the scope that reads it since (a manager took RESERVATIONS_READ_SENSITIVE, CUSTOMERS_READ…
// away), it is not sent: spec §5, an endpoint receives only what its key can read. The delivery is
// canceled at that attempt instead. The service clock is frozen: only the test moves it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { updateApiKey } from '../../commands/credentials/handler';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import {
  deliveries,
  demoCustomer,
  startWebhooksWorld,
  until,
  type WebhooksWorld,
} from '../helpers/webhooks-world';

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>(
  'webhooks: a retry is not sent once the credential cannot read it',
);

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-scopes',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: {
      id: 'key_sc',
      token: 'couvert_pk_scopes_000000000000000000000001',
      scopes: ['CUSTOMERS_READ', 'RESERVATIONS_READ'],
    },
    endpoint: { id: 'we_sc', path: '/sc', secret: 'whsec_scopes_test_secret_0000001' },
  });
  // The first attempt fails: a retry is due 5 s later.
  ctx.w.rx.on('/sc', { statuses: [503, 200] });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('CUSTOMERS_READ taken away before a customer.created retry: canceled, not sent', async ({ w }) => {
  await demoCustomer(w.rt, 'Scoped Out', 'scoped.out@example.com');
  await w.rx.waitFor('/sc', 1);
  const first = await until('attempt 1 recorded', 120_000, async () =>
    (await deliveries(w.rt)).find((d) => d.attempt_count === 1),
  );
  const updated = await updateApiKey(w.rt, 'key_sc', { scopes: ['RESERVATIONS_READ'] }, operatorMeta('test'));
  await w.rt.settle(updated.position);
  w.clock.advance(6);
  const doc = await until('the retry settled', 120_000, async () =>
    (await deliveries(w.rt, { _id: first._id })).find((d) => d.status !== 'pending'),
  );
  assert.is(doc.status, 'canceled');
  assert.is(w.rx.for('/sc').length, 1, 'the retry was sent to a credential that cannot read customers');
});

t.run();
