// A customer flagged as a messaging channel's draft is hidden from partners (docs/customers.md: drafts
// never appear and answer 404; webhooks announce the flagging as customer.deleted). A reservation
// linked to one shows no customer: not in GET, not in the list, not in its webhooks.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { flagCustomerDraft } from '../../commands/customers/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const t = suite<{ svc: ReservationService; rx: Receiver; id: string; draftId: string }>(
  'reservations: a draft customer stays hidden',
);

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  ctx.svc = await startReservationService({
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  const endpoint = await ctx.svc.api('POST', '/webhook-endpoints', {
    token: TOKENS.full,
    body: { url: ctx.rx.url('/hook'), enabled_events: ['reservation.updated'] },
  });
  assert.is(endpoint.status, 201, endpoint.text);
  const res = await create(ctx.svc, {
    external_id: 'draft-guest',
    customer: { name: 'Dora Draft', email: 'dora@example.com', phone_number: '+33655443322' },
  });
  assert.is(res.status, 201, res.text);
  ctx.id = res.body.data.id;
  ctx.draftId = res.body.data.customer.id;
  const flagged = await flagCustomerDraft(ctx.svc.rt, ctx.draftId, 'WHATSAPP', operatorMeta('test'));
  await ctx.svc.rt.settle(flagged.position);
});
t.after(async ({ svc, rx }) => {
  await svc.close();
  await rx.close();
});

t('the customer itself answers 404', async ({ svc, draftId }) => {
  assert.is((await svc.api('GET', `/customers/${draftId}`, { token: TOKENS.full })).status, 404);
});

t('GET and the list show no customer', async ({ svc, id }) => {
  const one = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
  assert.is(one.status, 200, one.text);
  assert.is(one.body.data.customer, null);
  assert.not.match(one.text, 'Dora');
  const list = await svc.api('GET', '/reservations?external_id=draft-guest', { token: TOKENS.full });
  assert.is(list.body.data[0].customer, null);
});

t("a change's webhook shows no customer either", async ({ svc, rx, id }) => {
  const res = await svc.api('PATCH', `/reservations/${id}`, {
    token: TOKENS.full,
    body: { custom_message: 'window seat' },
  });
  assert.is(res.status, 200, res.text);
  const [hook] = await rx.waitFor('/hook', 1);
  assert.is(hook?.json.data.object.customer, null);
  assert.not.match(hook?.body ?? '', 'dora@example.com');
  // Only what the change changed: the customer was hidden before it too.
  assert.equal(hook?.json.data.previous_attributes, { custom_message: null });
});

t('customer details in a PATCH are told as for a reservation with no customer', async ({ svc, id }) => {
  // Not a 404 naming the hidden customer, and the draft is not changed.
  const noName = await svc.api('PATCH', `/reservations/${id}`, {
    token: TOKENS.full,
    body: { customer: { email: 'someone@example.com' } },
  });
  assert.is(noName.status, 422, noName.text);
  assert.is(noName.body.error.details.reason, 'CUSTOMER_NAME_REQUIRED');
  const named = await svc.api('PATCH', `/reservations/${id}`, {
    token: TOKENS.full,
    body: { customer: { name: 'Nora Named', email: 'nora@example.com' } },
  });
  assert.is(named.status, 200, named.text);
  assert.is(named.body.data.customer.name, 'Nora Named');
});

t('its history names no draft either; the customer connected since shows', async ({ svc, id, draftId }) => {
  const res = await svc.api('GET', `/reservations/${id}/history`, { token: TOKENS.full });
  assert.is(res.status, 200, res.text);
  assert.not.match(res.text, draftId);
  const changes = (res.body.data as { changes: { field: string; from?: unknown; to?: unknown }[] }[]).map(
    (item) => item.changes.find((c) => c.field === 'customer_id'),
  );
  // Created with the (now draft) customer: shown as none, as GET shows it.
  assert.equal(changes[0], { field: 'customer_id', to: null });
  // The PATCH above connected Nora in its place: from none to her.
  const nora = (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data.customer.id;
  const connected = changes.find((c) => c !== undefined && c.to === nora);
  assert.equal(connected, { field: 'customer_id', from: null, to: nora });
});

t.run();
