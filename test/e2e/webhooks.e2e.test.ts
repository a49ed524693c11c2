// Webhooks end to end: a real server with the webhooks role, a real receiver on loopback. Signatures
// are checked by hand and by Stripe's library; retries move with the service clock.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Stripe from 'stripe';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { revokeApiKey } from '../../commands/credentials/handler';
import { RESEND_LIMIT, testWebhookEndpoint } from '../../commands/webhook-deliveries/handler';
import { migrateWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { operatorMeta } from '../../src/core/command-meta';
import { markNoShows } from '../../src/jobs/reservation-jobs';
import type { RecordedEvent } from '../../src/ports/event-store';
import { pruneDeliveries } from '../../src/webhooks-module';
import {
  create,
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';
import { quietNow, type Received, type Receiver, startReceiver } from '../helpers/webhook-receiver';

const stripe = new Stripe('sk_test_unused');
const LEGACY_SECRET = 'whsec_legacy_demo_secret_000001';

interface Ctx {
  svc: ReservationService;
  rx: Receiver;
}
const t = suite<Ctx>('webhooks');

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  const bootstrap = reservationBootstrap();
  // Every key of the fixture may manage webhooks; what each can read still differs.
  for (const r of bootstrap.restaurants)
    for (const k of r.api_keys as { scopes: string[] }[]) k.scopes = [...k.scopes, 'WEBHOOKS_WRITE'];
  (bootstrap.restaurants[0] as Record<string, unknown>).webhook_endpoints = [
    {
      id: 'we_legacy',
      url: ctx.rx.url('/legacy'),
      api_version: 'legacy',
      secret: LEGACY_SECRET,
      api_key_id: 'key_read',
    },
  ];
  ctx.svc = await startReservationService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', TEST_CLOCK: 'true' },
  });
});
t.after(async ({ svc, rx }) => {
  await svc.close();
  await rx.close();
});

async function endpoint(
  svc: ReservationService,
  path: string,
  rx: Receiver,
  body: Record<string, unknown> = {},
  token = TOKENS.full,
) {
  const res = await svc.api('POST', '/webhook-endpoints', { token, body: { url: rx.url(path), ...body } });
  assert.is(res.status, 201, res.text);
  // The answer carries the signing secret: no cache on the way may keep it.
  assert.is(res.headers.get('cache-control'), 'no-store');
  return res.body.data as { id: string; secret: string };
}

/**
 * An endpoint taking reservation.created, a reservation created and its delivery recorded succeeded:
 * the reservation's ReservationCreated (to handle again), the first request received, and the history.
 */
async function deliveredOnce(svc: ReservationService, rx: Receiver, path: string, startAt: string) {
  const ep = await endpoint(svc, path, rx, { enabled_events: ['reservation.created'] });
  const r = (await create(svc, { start_at: startAt })).body.data;
  const [first] = await rx.waitFor(path, 1);
  const hist = async () =>
    (await svc.api('GET', `/webhook-endpoints/${ep.id}/deliveries`, { token: TOKENS.full })).body.data;
  // Until a hang bound (100 looks 20 ms apart were a deadline a loaded machine could miss).
  for (const end = Date.now() + 120_000; (await hist())[0]?.status !== 'succeeded'; ) {
    assert.ok(Date.now() < end, 'the first delivery is recorded');
    await new Promise((res) => setTimeout(res, 20));
  }
  const [source] = await svc.rt.events.readStream(`reservation-${r.id}`, { limit: 1 });
  assert.is(source?.type, 'ReservationCreated');
  return { ep, source: source as RecordedEvent, first: first as Received, hist };
}

/** Every v1= value of the header that verifies with `secret`, by hand. */
function verifiesByHand(r: Received, secret: string): boolean {
  const header = r.headers['service-signature'] as string;
  const parts = header.split(',');
  const t0 = (parts[0] as string).slice(2);
  const expected = createHmac('sha256', secret).update(`${t0}.${r.body}`).digest('hex');
  return parts.slice(1).some((p) => p === `v1=${expected}`);
}

t('a reservation reaches a v1 endpoint signed, with every header, as GET answers it', async ({ svc, rx }) => {
  const ep = await endpoint(svc, '/v1', rx, { headers: { 'X-Partner-Account': 'acct_42' } });
  assert.match(ep.secret, /^whsec_/);
  const listed = await svc.api('GET', '/webhook-endpoints', { token: TOKENS.full });
  assert.not.ok(JSON.stringify(listed.body).includes(ep.secret), 'the secret is never shown again');
  assert.not.ok(
    readFileSync(join(svc.dataDir, 'events.sqlite')).includes(Buffer.from(ep.secret)),
    'the log holds the secret sealed, never in clear',
  );
  const r = (await create(svc)).body.data;
  const [got] = await rx.waitFor('/v1', 1);
  const d = got as Received;
  assert.is(d.json.type, 'reservation.created');
  assert.is(d.json.api_version, 'v1');
  assert.is(d.json.restaurant_id, 'rest_demo');
  assert.match(d.json.id, /^evt_/);
  const read = await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full });
  assert.equal(d.json.data.object, read.body.data, 'data.object is what GET answers to this credential');
  assert.is(d.headers['x-service-attempt'], '1');
  assert.match(d.headers['x-service-delivery'] as string, /^whd_/);
  assert.match(d.headers['x-service-delivery-log-id'] as string, /^whl_/);
  assert.is(d.headers['x-service-timestamp'], d.json.created);
  assert.is(d.headers['x-partner-account'], 'acct_42');
  assert.is(d.headers['x-service-test'], undefined);
  assert.ok(verifiesByHand(d, ep.secret));
  // Stripe's own verifier (its 300 s tolerance is real time; this service runs on a fixed clock: 0 turns the age check off).
  const event = stripe.webhooks.constructEvent(
    d.body,
    d.headers['service-signature'] as string,
    ep.secret,
    0,
  );
  assert.is(event.id, d.json.id);
  assert.throws(() =>
    stripe.webhooks.constructEvent(d.body, d.headers['service-signature'] as string, 'whsec_wrong', 0),
  );
  // History shows the attempt.
  const hist = await svc.api('GET', `/webhook-endpoints/${ep.id}/deliveries`, { token: TOKENS.full });
  assert.is(hist.status, 200);
  assert.is(hist.body.data[0].status, 'succeeded');
  assert.is(hist.body.data[0].attempts[0].status_code, 200);
  // The legacy endpoint (RESERVATIONS_READ only) got RESERVATION_UPDATED, without contact details.
  const [legacy] = await rx.waitFor('/legacy', 1);
  assert.is((legacy as Received).json.type, 'RESERVATION_UPDATED');
  assert.is((legacy as Received).json.api_version, undefined);
  assert.is((legacy as Received).json.data.change, 'created');
  assert.is((legacy as Received).json.data.reservation.id, r.id);
  assert.ok(verifiesByHand(legacy as Received, LEGACY_SECRET));
  await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
});

t(
  'an event handled again (a restart replays it from a checkpoint behind it) is never sent again',
  async ({ svc, rx }) => {
    const { ep, source, first, hist } = await deliveredOnce(
      svc,
      rx,
      '/replayed',
      '2026-06-04T20:30:00+02:00',
    );
    // A kill during a burst leaves the publisher's checkpoint behind the last events handled (saved at
    // most every 100 ms under load): a restart replays them. The event's fan-out is in the log
    // already, with the deliveries made the first time.
    await svc.webhooks?.publisher.handle(source);
    // Nothing handed out to send (attempt()'s own guard would drop it later: not what is tested here).
    assert.is(svc.webhooks?.publisher.pending, 0, 'nothing handed out by the replay');
    // The same with a store that cannot say whether it wrote an append itself (EventStoreDB): the
    // publisher reads the fan-out back.
    const events = svc.rt.events as { wroteAnew?: unknown };
    events.wroteAnew = undefined;
    try {
      await svc.webhooks?.publisher.handle(source);
      assert.is(svc.webhooks?.publisher.pending, 0, 'nothing handed out by the replay, read back');
    } finally {
      delete events.wroteAnew;
    }
    assert.is(typeof svc.rt.events.wroteAnew, 'function');
    assert.ok(
      await quietNow(svc.rt, svc.webhooks, rx, '/replayed', 1),
      `sent again: ${JSON.stringify(rx.for('/replayed').map((x) => [x.headers['x-service-delivery'], x.headers['x-service-attempt']]))} (first ${first.headers['x-service-delivery']})`,
    );
    assert.is((await hist()).length, 1, 'no delivery the log does not hold');
    await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
  },
);

t(
  'embedded, a delivery the log does not hold is never sent, even when the fan-out takes a replay for its own append',
  async ({ svc, rx }) => {
    const { ep, source, hist } = await deliveredOnce(svc, rx, '/unheld', '2026-06-04T21:00:00+02:00');
    // fanOut's own guard fooled (a store claiming every append as written anew): handling the event
    // again hands out the deliveries it just made, whose ids the log never held. attempt() finds no
    // document for them after refresh(): embedded, that means the log does not hold them.
    const events = svc.rt.events as { wroteAnew?: unknown };
    events.wroteAnew = () => true;
    try {
      await svc.webhooks?.publisher.handle(source);
    } finally {
      delete events.wroteAnew;
    }
    assert.ok(
      await quietNow(svc.rt, svc.webhooks, rx, '/unheld', 1),
      `sent: ${JSON.stringify(rx.for('/unheld').map((x) => [x.headers['x-service-delivery'], x.headers['x-service-attempt']]))}`,
    );
    assert.is(svc.webhooks?.publisher.pending, 0);
    const after = await hist();
    assert.is(after.length, 1, 'nothing recorded for a delivery the log does not hold');
    assert.is(after[0].attempts.length, 1);
    await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
  },
);

t(
  'scopes: types the key cannot read are refused and never sent; contact details need SENSITIVE',
  async ({ svc, rx }) => {
    const refused = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.readOnly,
      body: { url: rx.url('/nope'), enabled_events: ['customer.created'] },
    });
    assert.is(refused.status, 422);
    assert.is(refused.body.error.details.issues[0].path, 'enabled_events.0');
    const plain = await endpoint(svc, '/plain', rx, {}, TOKENS.noSensitive);
    const full = await endpoint(svc, '/full', rx);
    const read = await endpoint(svc, '/read', rx, {}, TOKENS.readOnly);
    const guest = { name: 'Ada Guest', email: 'ada@example.com', phone_number: '+33612345670' };
    await create(svc, { customer: guest, start_at: '2026-06-04T19:00:00+02:00' });
    const fullGot = await rx.waitFor('/full', 2);
    const plainGot = await rx.waitFor('/plain', 2);
    const fullRes = fullGot.find((x) => x.json.type === 'reservation.created') as Received;
    const plainRes = plainGot.find((x) => x.json.type === 'reservation.created') as Received;
    assert.is(fullRes.json.data.object.customer.email, 'ada@example.com');
    assert.is(fullRes.json.data.object.sensitive_data_included, true);
    assert.is(plainRes.json.data.object.customer.email, undefined);
    assert.is(plainRes.json.data.object.sensitive_data_included, false);
    assert.ok(
      fullGot.some((x) => x.json.type === 'customer.created'),
      'the inline customer is published',
    );
    // The read-only key gets the reservation but never the customer.
    await rx.waitFor('/read', 1);
    assert.ok(await quietNow(svc.rt, svc.webhooks, rx, '/read', 1));
    assert.equal(
      rx.for('/read').map((x) => x.json.type),
      ['reservation.created'],
    );
    for (const e of [plain, full, read])
      await svc.api('DELETE', `/webhook-endpoints/${e.id}`, { token: TOKENS.full });
  },
);

t('retries follow the service clock by status class; 400 and 3xx are final', async ({ svc, rx }) => {
  rx.on('/flaky', { statuses: [503, 429, 500, 200] });
  rx.on('/bad', { statuses: [400] });
  rx.on('/moved', { statuses: [302], headers: { location: 'http://127.0.0.1:1/elsewhere' } });
  const flaky = await endpoint(svc, '/flaky', rx, { enabled_events: ['reservation.created'] });
  const bad = await endpoint(svc, '/bad', rx, { enabled_events: ['reservation.created'] });
  const moved = await endpoint(svc, '/moved', rx, { enabled_events: ['reservation.created'] });
  assert.is((await create(svc, { start_at: '2026-06-05T19:00:00+02:00' })).status, 201);
  await rx.waitFor('/flaky', 1);
  await rx.waitFor('/bad', 1);
  await rx.waitFor('/moved', 1);
  assert.ok(await quietNow(svc.rt, svc.webhooks, rx, '/flaky', 1), 'no retry before its time');
  for (const [seconds, count] of [
    [5, 2],
    [30, 3],
    [300, 4],
  ] as const) {
    svc.clock.advance(seconds);
    await rx.waitFor('/flaky', count);
  }
  const got = rx.for('/flaky');
  assert.equal(
    got.map((x) => x.headers['x-service-attempt']),
    ['1', '2', '3', '4'],
  );
  assert.is(
    new Set(got.map((x) => x.headers['x-service-delivery'])).size,
    1,
    'one X-Service-Delivery across retries',
  );
  assert.is(
    new Set(got.map((x) => x.headers['x-service-delivery-log-id'])).size,
    4,
    'one log id per attempt',
  );
  svc.clock.advance(6 * 3600);
  assert.ok(await quietNow(svc.rt, svc.webhooks, rx, '/bad', 1), '400 is final');
  assert.is(rx.for('/moved').length, 1, 'a redirect is not followed, nor retried');
  const hist = async (id: string) =>
    (await svc.api('GET', `/webhook-endpoints/${id}/deliveries`, { token: TOKENS.full })).body.data[0];
  // The fourth answer is recorded after the receiver got it: wait for the record (a loaded machine
  // may take more than a moment), then read the history.
  for (const deadline = Date.now() + 120_000; (await hist(flaky.id)).status !== 'succeeded'; ) {
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.is((await hist(flaky.id)).status, 'succeeded');
  assert.equal(
    (await hist(flaky.id)).attempts.map((a: { status_code: number }) => a.status_code),
    [503, 429, 500, 200],
  );
  assert.is((await hist(bad.id)).status, 'failed');
  assert.is((await hist(moved.id)).status, 'failed');
  const failed = await svc.api('GET', `/webhook-endpoints/${bad.id}/deliveries?status=succeeded`, {
    token: TOKENS.full,
  });
  assert.is(failed.body.data.length, 0, 'filtered by status');
  // Resend a failed delivery: a new series, numbered after the last attempt.
  rx.on('/bad', { statuses: [200] });
  const first = await hist(bad.id);
  const resend = await svc.api('POST', `/webhook-endpoints/${bad.id}/deliveries/${first.id}/resend`, {
    token: TOKENS.full,
  });
  assert.is(resend.status, 202, resend.text);
  const again = await rx.waitFor('/bad', 2);
  assert.is(again[1]?.headers['x-service-attempt'], '2');
  assert.is(again[1]?.headers['x-service-delivery'], first.id);
  for (const e of [flaky, bad, moved])
    await svc.api('DELETE', `/webhook-endpoints/${e.id}`, { token: TOKENS.full });
});

t('rotation: both secrets sign during the grace period, then only the new one', async ({ svc, rx }) => {
  const ep = await endpoint(svc, '/rotate', rx, { enabled_events: ['reservation.created'] });
  const rotated = await svc.api('POST', `/webhook-endpoints/${ep.id}/rotate-secret`, {
    token: TOKENS.full,
    body: { grace_period_seconds: 3600 },
  });
  assert.is(rotated.status, 200);
  assert.is(rotated.headers.get('cache-control'), 'no-store');
  const fresh = rotated.body.data.secret as string;
  assert.ok(fresh !== ep.secret && fresh.startsWith('whsec_'));
  assert.ok(rotated.body.data.secret_rotation.previous_secret_expires_at);
  assert.is((await create(svc, { start_at: '2026-06-06T19:00:00+02:00' })).status, 201);
  const [during] = await rx.waitFor('/rotate', 1);
  const header = (during as Received).headers['service-signature'] as string;
  assert.is(header.split(',').filter((p) => p.startsWith('v1=')).length, 2);
  assert.ok(verifiesByHand(during as Received, fresh));
  assert.ok(verifiesByHand(during as Received, ep.secret));
  stripe.webhooks.constructEvent((during as Received).body, header, ep.secret, 0);
  stripe.webhooks.constructEvent((during as Received).body, header, fresh, 0);
  svc.clock.advance(3601);
  assert.is((await create(svc, { start_at: '2026-06-06T19:00:00+02:00' })).status, 201);
  const [, after] = await rx.waitFor('/rotate', 2);
  assert.ok(verifiesByHand(after as Received, fresh));
  assert.not.ok(
    verifiesByHand(after as Received, ep.secret),
    'the old secret stopped after its grace period',
  );
  // The endpoint no longer says a rotation is under way, listed or read.
  const read = await svc.api('GET', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
  assert.is(read.body.data.secret_rotation, null, read.text);
  const listed = await svc.api('GET', '/webhook-endpoints', { token: TOKENS.full });
  assert.is(listed.body.data.find((e: { id: string }) => e.id === ep.id)?.secret_rotation, null);
  // A grace period of 0: the previous secret never signs, and no rotation is shown.
  const now = await svc.api('POST', `/webhook-endpoints/${ep.id}/rotate-secret`, {
    token: TOKENS.full,
    body: { grace_period_seconds: 0 },
  });
  assert.is(now.status, 200, now.text);
  assert.is(now.body.data.secret_rotation, null);
  await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
});

t('staff cancellations, no-shows and customer changes are published', async ({ svc, rx }) => {
  const ep = await endpoint(svc, '/all', rx);
  const r = (await create(svc, { start_at: '2026-06-03T19:30:00+02:00', customer: { name: 'Bo Guest' } }))
    .body.data;
  await rx.waitFor('/all', 2);
  await svc.api('POST', `/reservations/${r.id}/cancel`, { token: TOKENS.full, body: { reason: 'flood' } });
  const canceled = (await rx.waitFor('/all', 3))[2] as Received;
  assert.is(canceled.json.type, 'reservation.canceled');
  assert.is(canceled.json.data.previous_attributes.status, 'CONFIRMED');
  assert.is(canceled.json.data.object.cancellation_reason, 'flood');
  const noShow = (await create(svc, { start_at: '2026-06-03T22:00:00+02:00' })).body.data;
  await rx.waitFor('/all', 4);
  svc.clock.set('2026-06-03T21:00:00Z');
  await markNoShows(svc.rt, 30);
  let marked: Received | undefined;
  for (let n = 5; !marked; n++)
    marked = (await rx.waitFor('/all', n)).find(
      (x) => x.json.data.object.id === noShow.id && x.json.type === 'reservation.updated',
    );
  assert.is(marked.json.data.object.status, 'NO_SHOW');
  assert.is(marked.json.data.previous_attributes.status, 'CONFIRMED');
  const customerId = canceled.json.data.object.customer.id as string;
  const patched = await svc.api('PATCH', `/customers/${customerId}`, {
    token: TOKENS.full,
    body: { tags: ['vip'] },
  });
  assert.is(patched.status, 200);
  const count = rx.for('/all').length;
  const updated = (await rx.waitFor('/all', count + 1)).at(-1) as Received;
  assert.is(updated.json.type, 'customer.updated');
  assert.equal(updated.json.data.previous_attributes, { tags: [] });
  assert.equal(updated.json.data.object, patched.body.data);
  await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
});

t('test deliveries say what the target answered', async ({ svc, rx }) => {
  rx.on('/probe', { statuses: [418] });
  const ep = await endpoint(svc, '/probe', rx);
  const res = await svc.api('POST', `/webhook-endpoints/${ep.id}/test`, { token: TOKENS.full });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.data.succeeded, false);
  assert.is(res.body.data.status_code, 418);
  assert.is(res.body.data.response_body, 'status 418');
  assert.is(res.body.data.response_truncated, false, 'the whole answer');
  const [got] = rx.for('/probe');
  assert.is(got?.headers['x-service-test'], 'true');
  assert.ok(verifiesByHand(got as Received, ep.secret));
  const hist = await svc.api('GET', `/webhook-endpoints/${ep.id}/deliveries`, { token: TOKENS.full });
  assert.is(hist.body.data[0].test, true);
  // The history names it by the type its body carried, and the documented filter finds it.
  assert.is((got as Received).json.type, 'webhook_endpoint.test');
  assert.is(hist.body.data[0].event_type, 'webhook_endpoint.test');
  const filtered = await svc.api(
    'GET',
    `/webhook-endpoints/${ep.id}/deliveries?event_type=webhook_endpoint.test`,
    { token: TOKENS.full },
  );
  assert.equal(
    filtered.body.data.map((d: { id: string }) => d.id),
    [res.body.data.delivery_id],
  );
  const one = await svc.api('GET', `/webhook-endpoints/${ep.id}/deliveries/${res.body.data.delivery_id}`, {
    token: TOKENS.full,
  });
  assert.is(one.body.data.event_type, 'webhook_endpoint.test');
  // `test`, what the history showed before, still finds it; a type that does not exist is named.
  const old = await svc.api('GET', `/webhook-endpoints/${ep.id}/deliveries?event_type=test`, {
    token: TOKENS.full,
  });
  assert.equal(
    old.body.data.map((d: { id: string }) => d.id),
    [res.body.data.delivery_id],
  );
  const typo = await svc.api('GET', `/webhook-endpoints/${ep.id}/deliveries?event_type=reservation.create`, {
    token: TOKENS.full,
  });
  assert.is(typo.status, 400, typo.text);
  assert.equal(typo.body.error.details.issues, [
    {
      path: 'event_type',
      code: 'invalid_enum',
      message:
        'event_type must be one of "reservation.created","reservation.updated","reservation.canceled","customer.created","customer.updated","customer.deleted","customer.merged","RESERVATION_UPDATED","webhook_endpoint.test","test"',
    },
  ]);
  await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
});

t('a test answer longer than its excerpt says it was cut', async ({ svc, rx }) => {
  rx.on('/long', { body: () => `${'é'.repeat(600)}` });
  const ep = await endpoint(svc, '/long', rx);
  const res = await svc.api('POST', `/webhook-endpoints/${ep.id}/test`, { token: TOKENS.full });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.data.status_code, 200);
  assert.is(res.body.data.response_body, 'é'.repeat(512), 'the first 512 characters');
  assert.is(res.body.data.response_truncated, true, 'longer answers are marked as cut');
  await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
});

t('headers: the reserved prefix, hop-by-hop and credential headers are refused', async ({ svc, rx }) => {
  for (const name of [
    'X-Service-Thing',
    'x-service-attempt',
    'Connection',
    'Authorization',
    'Cookie',
    'Host',
    'Transfer-Encoding',
  ]) {
    const res = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url('/h'), headers: { [name]: 'x' } },
    });
    assert.is(res.status, 400, name);
    assert.is(res.body.error.details.issues[0].path, `headers.${name}`);
  }
  const injected = await svc.api('POST', '/webhook-endpoints', {
    token: TOKENS.full,
    body: { url: rx.url('/h'), headers: { 'X-Ok': 'a\r\nX-Evil: 1' } },
    invalid: true,
  });
  assert.is(injected.status, 400);
});

t('tenancy: another restaurant or another key of this one gets 404 on every route', async ({ svc, rx }) => {
  const ep = await endpoint(svc, '/mine', rx);
  for (const token of [TOKENS.other, TOKENS.noSensitive]) {
    const id = ep.id;
    const calls: [string, string, unknown?][] = [
      ['GET', `/webhook-endpoints/${id}`],
      ['PATCH', `/webhook-endpoints/${id}`, { description: 'x' }],
      ['DELETE', `/webhook-endpoints/${id}`],
      ['POST', `/webhook-endpoints/${id}/rotate-secret`, {}],
      ['POST', `/webhook-endpoints/${id}/test`],
      ['GET', `/webhook-endpoints/${id}/deliveries`],
      ['GET', `/webhook-endpoints/${id}/deliveries/whd_x`],
      ['POST', `/webhook-endpoints/${id}/deliveries/whd_x/resend`],
    ];
    for (const [method, path, body] of calls) {
      const res = await svc.api(method, path, { token, ...(body === undefined ? {} : { body }) });
      assert.is(res.status, 404, `${method} ${path}`);
    }
    const list = await svc.api('GET', '/webhook-endpoints', { token });
    assert.not.ok(list.body.data.some((e: { id: string }) => e.id === id));
  }
  await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
});

t('legacy endpoints migrate to v1, finally', async ({ svc, rx }) => {
  // A test delivery comes in the endpoint's format: a legacy payload has no api_version.
  const legacy = await svc.rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .findOne({ _id: 'we_legacy' });
  await testWebhookEndpoint(svc.rt, legacy as WebhookEndpointDoc, operatorMeta('test'));
  const tested = (rx.for('/legacy').at(-1) as Received).json;
  assert.is(tested.type, 'webhook_endpoint.test');
  assert.ok(!('api_version' in tested), JSON.stringify(tested));
  // A legacy delivery still waiting for its retry when the endpoint migrates is canceled: from then on
  // the endpoint receives the v1 format only, a retry or a resend included.
  rx.on('/legacy', { statuses: [503] });
  const failing = rx.for('/legacy').length;
  assert.is((await create(svc, { start_at: '2026-06-08T20:00:00+02:00' })).status, 201);
  await rx.waitFor('/legacy', failing + 1);
  const pendingLegacy = async () =>
    (
      await svc.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .find({ endpoint_id: 'we_legacy', status: 'pending', attempt_count: 1 })
    )[0];
  for (let i = 0; !(await pendingLegacy()); i++) {
    assert.ok(i < 6_000, 'the legacy attempt is recorded, its retry due');
    await new Promise((r) => setTimeout(r, 20));
  }
  const waiting = (await pendingLegacy()) as WebhookDeliveryDoc;
  assert.is(waiting.event_type, 'RESERVATION_UPDATED');
  rx.on('/legacy', { statuses: [200] });
  const before = rx.for('/legacy').length;
  await svc.rt.settle(
    (await migrateWebhookEndpoint(svc.rt, null, 'we_legacy', operatorMeta('test'))).position,
  );
  const canceled = await svc.api('GET', `/webhook-endpoints/we_legacy/deliveries/${waiting._id}`, {
    token: TOKENS.readOnly,
  });
  assert.is(canceled.body.data.status, 'canceled', canceled.text);
  const resend = await svc.api('POST', `/webhook-endpoints/we_legacy/deliveries/${waiting._id}/resend`, {
    token: TOKENS.readOnly,
  });
  assert.is(resend.status, 409, resend.text);
  assert.match(resend.body.error.message, /legacy format/);
  assert.is((await create(svc, { start_at: '2026-06-08T19:00:00+02:00' })).status, 201);
  const got = await rx.waitFor('/legacy', before + 1);
  assert.is((got.at(-1) as Received).json.type, 'reservation.created');
  assert.is((got.at(-1) as Received).json.api_version, 'v1');
  const again = await migrateWebhookEndpoint(svc.rt, null, 'we_legacy', operatorMeta('test'));
  assert.is(again.appended.length, 0);
});

t('a revoked credential: nothing more is sent, and its endpoints are deleted', async ({ svc, rx }) => {
  const ep = await endpoint(
    svc,
    '/revoked',
    rx,
    { enabled_events: ['reservation.created'] },
    TOKENS.noSensitive,
  );
  await revokeApiKey(svc.rt, 'key_plain', 'test', operatorMeta('test'));
  assert.is((await create(svc, { start_at: '2026-06-09T19:00:00+02:00' })).status, 201);
  assert.ok(await quietNow(svc.rt, svc.webhooks, rx, '/revoked', 0), 'nothing sent after the revocation');
  const deadline = Date.now() + 120_000;
  let events: string[] = [];
  while (Date.now() < deadline) {
    events = (await svc.rt.events.readStream(`webhook-endpoint-${ep.id}`)).map((e) => e.type);
    if (events.includes('WebhookEndpointDeleted')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(events, ['WebhookEndpointCreated', 'WebhookEndpointDeleted']);
  const deleted = (await svc.rt.events.readStream(`webhook-endpoint-${ep.id}`))[1];
  assert.is(deleted?.data.reason, 'CREDENTIAL_REVOKED');
  assert.is((await svc.api('GET', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full })).status, 404);
});

t(
  'a delivery may be resent RESEND_LIMIT times: the next resend is refused in the envelope, with its reason',
  async ({ svc, rx }) => {
    const { ep, hist } = await deliveredOnce(svc, rx, '/resent', '2026-06-10T19:00:00+02:00');
    const id = (await hist())[0].id as string;
    const resend = () =>
      svc.api('POST', `/webhook-endpoints/${ep.id}/deliveries/${id}/resend`, { token: TOKENS.full });
    for (let i = 1; i <= RESEND_LIMIT; i++) {
      const res = await resend();
      assert.is(res.status, 202, res.text);
      // Each series succeeds at its first attempt: wait for its record before the next resend.
      for (
        let n = 0;
        !((await hist())[0].status === 'succeeded' && (await hist())[0].attempts.length === i + 1);
        n++
      ) {
        assert.ok(n < 6_000, `resend ${i} is recorded`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    const stream = `webhook-delivery-${id}`;
    const appended = (await svc.rt.events.readStream(stream)).length;
    const refused = await resend();
    assert.is(refused.status, 409, refused.text);
    assert.is(refused.body.error.code, 'RESOURCE_CONFLICT');
    assert.equal(refused.body.error.details, {
      reason: 'resend_limit_reached',
      limit: RESEND_LIMIT,
      resends: RESEND_LIMIT,
    });
    assert.ok(refused.body.error.request_id);
    const after = (await hist())[0];
    assert.is(after.status, 'succeeded', 'the refused resend changed nothing');
    assert.is(after.attempts.length, RESEND_LIMIT + 1, 'every attempt stays in the history');
    assert.is((await svc.rt.events.readStream(stream)).length, appended, 'the refusal appended nothing');
    await svc.api('DELETE', `/webhook-endpoints/${ep.id}`, { token: TOKENS.full });
  },
);

t(
  'history is kept 30 days: older deliveries leave the history, and the hourly job prunes them',
  async ({ svc }) => {
    const deliveries = svc.rt.docs.collection(WEBHOOK_DELIVERIES);
    const before = await deliveries.count({});
    assert.ok(before > 0);
    svc.clock.advance(31 * 86_400);
    assert.match((await pruneDeliveries(svc.rt)) ?? '', /pruned \d+ webhook deliveries/);
    assert.is(await deliveries.count({ status: { $ne: 'pending' } }), 0);
    const list = await svc.api('GET', '/webhook-endpoints', { token: TOKENS.readOnly });
    assert.is(list.status, 200);
  },
);

t.run();
