// A customer merged into another, or deleted, changes the customer its reservations show. Before,
// nothing recorded it: updated_at stayed, the history and the sync feed (updated_since) said nothing,
// and no reservation.updated was sent, so a partner mirroring reservations kept a customer id that
// now answers 404. Each reservation now records the change (ReservationCustomerRelinked).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli as cli } from '../helpers/cli-in-process';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const t = suite<{ svc: ReservationService; rx: Receiver }>('reservations: a customer merged or deleted');

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
});
t.after(async ({ svc, rx }) => {
  await svc.close();
  await rx.close();
});

const get = (svc: ReservationService, path: string) => svc.api('GET', path, { token: TOKENS.full });

// biome-ignore lint/suspicious/noExplicitAny: the answers' JSON
type Json = any;

const book = async (svc: ReservationService, start: string, customer: Record<string, unknown>) => {
  const res = await create(svc, { start_at: start, customer });
  assert.is(res.status, 201, res.text);
  return res.body.data as Json;
};

/** The sync feed after `since`: the ids it lists. */
const changedSince = async (svc: ReservationService, since: string) => {
  const res = await get(svc, `/reservations?updated_since=${encodeURIComponent(since)}&per_page=100`);
  assert.is(res.status, 200, res.text);
  return res.body.data.map((r: { id: string }) => r.id) as string[];
};

const hookFor = async (rx: Receiver, reservationId: string) => {
  for (let n = 1; ; n++) {
    const hooks = await rx.waitFor('/hook', n);
    const found = hooks.find((h) => h.json?.data?.object?.id === reservationId);
    if (found) return found;
  }
};

t('a merge: the reservation records that it shows the survivor, once', async ({ svc, rx }) => {
  const dup = await book(svc, '2026-06-22T19:00:00+02:00', { name: 'Ann Dup', email: 'ann1@example.com' });
  const kept = await book(svc, '2026-06-22T20:00:00+02:00', { name: 'Ann Kept', email: 'ann2@example.com' });
  svc.clock.advance(60);
  const since = svc.clock.now().toISOString();
  const printed = await cli(svc, 'customers merge', { from: dup.customer.id, into: kept.customer.id });

  const now = (await get(svc, `/reservations/${dup.id}`)).body.data;
  assert.is(now.customer.id, kept.customer.id);
  assert.ok(now.updated_at >= since, `updated_at ${now.updated_at} moved past ${since}`);
  assert.equal(await changedSince(svc, since), [dup.id]);

  const history = (await get(svc, `/reservations/${dup.id}/history`)).body.data as Json[];
  const last = history.at(-1);
  assert.is(last.action, 'UPDATED');
  assert.is(last.actor.type, 'RESTAURANT_STAFF');
  assert.equal(last.changes, [
    { field: 'customer_id', from: dup.customer.id, to: kept.customer.id },
    { field: 'reason', to: 'CUSTOMER_MERGED' },
  ]);

  const hook = (await hookFor(rx, dup.id)).json;
  assert.is(hook.type, 'reservation.updated');
  assert.is(hook.data.object.customer.id, kept.customer.id);
  assert.is(hook.data.object.updated_at, now.updated_at);
  assert.equal(Object.keys(hook.data.previous_attributes).sort(), ['customer', 'updated_at']);
  assert.is(hook.data.previous_attributes.customer.id, dup.customer.id);
  assert.is(hook.data.previous_attributes.customer.name, 'Ann Dup');

  // The auditor's history of the reservation names the change, its reason and the operator.
  const audit = (await cli(svc, 'audit history', { json: true }, [dup.id])).map((l) => JSON.parse(l));
  const relinked = audit.at(-1);
  assert.is(relinked.type, 'ReservationCustomerRelinked');
  assert.equal(relinked.actor, { kind: 'operator', id: 'cli', raw: 'operator:cli' });
  assert.equal(relinked.changes, [
    { field: 'customer_id', from: dup.customer.id, to: kept.customer.id },
    { field: 'reason', to: 'CUSTOMER_MERGED' },
  ]);

  assert.equal(printed, [
    `merged ${dup.customer.id} into ${kept.customer.id}`,
    `1 reservation(s) of ${dup.customer.id} now show ${kept.customer.id}`,
  ]);
  // Run again (as after a crash): nothing more is recorded.
  assert.equal(await cli(svc, 'customers merge', { from: dup.customer.id, into: kept.customer.id }), [
    `customer ${dup.customer.id} was already merged into ${kept.customer.id}`,
  ]);
  assert.is((await get(svc, `/reservations/${dup.id}/history`)).body.data.length, history.length);
});

t(
  'a deletion: the reservation records that it shows no customer, nothing of theirs copied',
  async ({ svc, rx }) => {
    const r = await book(svc, '2026-06-23T19:00:00+02:00', { name: 'Gone Guest', email: 'gone@example.com' });
    svc.clock.advance(60);
    const since = svc.clock.now().toISOString();
    await cli(svc, 'customers delete', { id: r.customer.id });

    const now = (await get(svc, `/reservations/${r.id}`)).body.data;
    assert.is(now.customer, null);
    assert.ok(now.updated_at >= since, `updated_at ${now.updated_at} moved past ${since}`);
    assert.equal(await changedSince(svc, since), [r.id]);

    const history = (await get(svc, `/reservations/${r.id}/history`)).body.data as Json[];
    assert.equal(history.at(-1).changes, [
      { field: 'customer_id', from: r.customer.id, to: null },
      { field: 'reason', to: 'CUSTOMER_DELETED' },
    ]);

    const hook = await hookFor(rx, r.id);
    assert.is(hook.json.type, 'reservation.updated');
    assert.is(hook.json.data.object.customer, null);
    assert.equal(hook.json.data.previous_attributes.customer, {
      id: r.customer.id,
      name: '[erased]',
      lang: r.customer.lang,
      email: null,
      phone_number: null,
    });
    assert.not.match(hook.body, 'Gone Guest');
    assert.not.match(hook.body, 'gone@example.com');
  },
);

t(
  'a draft merged away was shown as no customer: previous_attributes.customer says null, never its id',
  async ({ svc, rx }) => {
    const draft = await book(svc, '2026-06-24T19:00:00+02:00', {
      name: 'Draft Guest',
      email: 'draft@example.com',
    });
    const kept = await book(svc, '2026-06-24T20:00:00+02:00', {
      name: 'Kept Guest',
      email: 'kept@example.com',
    });
    await cli(svc, 'customers draft', { id: draft.customer.id });
    assert.is((await get(svc, `/reservations/${draft.id}`)).body.data.customer, null);
    svc.clock.advance(60);
    await cli(svc, 'customers merge', { from: draft.customer.id, into: kept.customer.id });
    const hook = await hookFor(rx, draft.id);
    assert.is(hook.json.data.object.customer.id, kept.customer.id);
    assert.is(hook.json.data.previous_attributes.customer, null);
    assert.not.match(hook.body, draft.customer.id);
    assert.not.match(hook.body, 'Draft Guest');
    const history = (await get(svc, `/reservations/${draft.id}/history`)).body.data as Json[];
    assert.equal(history.at(-1).changes, [
      { field: 'customer_id', from: null, to: kept.customer.id },
      { field: 'reason', to: 'CUSTOMER_MERGED' },
    ]);
  },
);

t.run();
