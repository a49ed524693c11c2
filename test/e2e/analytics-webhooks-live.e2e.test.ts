// Webhook analytics fed by the real publisher: a reservation fans out to an endpoint that answers 200
// and one that answers 500 (to be retried); `analytics export --dataset webhooks` then shows one
// delivery each on the restaurant's local day: delivered at the first attempt, and pending after a
// failed attempt. A delivery refused for good and resent is pending until the resend is answered.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/cli-in-process';
import {
  create,
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const t = suite<{ svc: ReservationService; rx: Receiver }>('webhook analytics, live', {} as never);
t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  const bootstrap = reservationBootstrap();
  for (const r of bootstrap.restaurants)
    for (const k of r.api_keys as { scopes: string[] }[]) k.scopes = [...k.scopes, 'WEBHOOKS_WRITE'];
  ctx.svc = await startReservationService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
});
t.after(async ({ svc, rx }) => {
  await svc?.close();
  await rx?.close();
});

async function exportWebhooks(svc: ReservationService): Promise<Record<string, number | string>[]> {
  const flags = { restaurant: 'rest_demo', dataset: 'webhooks', format: 'ndjson' };
  return (await runCli(svc, 'analytics export', flags)).map((l) => JSON.parse(l));
}

t('one endpoint delivered at once, one failing and pending a retry', async ({ svc, rx }) => {
  rx.on('/bad', { statuses: [500] });
  const ids: Record<string, string> = {};
  for (const path of ['/ok', '/bad']) {
    const res = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url(path) },
    });
    assert.is(res.status, 201, res.text);
    ids[path] = res.body.data.id;
  }
  assert.is((await create(svc)).status, 201);
  await rx.waitFor('/ok', 1);
  await rx.waitFor('/bad', 1);
  const end = Date.now() + 10_000;
  let rows = await exportWebhooks(svc);
  while (rows.reduce((s, r) => s + Number(r.attempts), 0) < 2 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    rows = await exportWebhooks(svc);
  }
  const ok = rows.find((r) => r.endpoint_id === ids['/ok']);
  const bad = rows.find((r) => r.endpoint_id === ids['/bad']);
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris' }).format(svc.clock.now());
  assert.ok(ok && bad, JSON.stringify(rows));
  assert.is(ok.date, today);
  assert.equal(
    [ok.deliveries, ok.delivered, ok.pending, ok.attempts, ok.first_attempt_delivered, ok.success_rate],
    [1, 1, 0, 1, 1, 1],
  );
  assert.ok(typeof ok.median_ms === 'number' && ok.median_ms > 0);
  assert.equal(
    [bad.deliveries, bad.delivered, bad.pending, bad.attempts, bad.failed_attempts, bad.success_rate],
    [1, 0, 1, 1, 1, null],
  );
});

t(
  'a delivery refused for good, then resent: pending until the resend is answered, then delivered',
  async ({ svc, rx }) => {
    // The receiver holds each answer a while (well within the attempt's 12 s timeout), so the figures
    // read right after the resend is accepted see it not answered yet.
    rx.on('/refuse', { statuses: [400, 200], delayMs: 4_000 });
    const res = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url('/refuse') },
    });
    assert.is(res.status, 201, res.text);
    const endpoint = res.body.data.id as string;
    assert.is((await create(svc, { start_at: '2026-06-03T20:00:00+02:00' })).status, 201);
    const row = async () => (await exportWebhooks(svc)).find((r) => r.endpoint_id === endpoint);
    const until = async (ok: (r: Record<string, number | string> | undefined) => boolean) => {
      const end = Date.now() + 20_000;
      let r = await row();
      while (!ok(r) && Date.now() < end) {
        await new Promise((f) => setTimeout(f, 100));
        r = await row();
      }
      return r;
    };
    const failed = await until((r) => Number(r?.failed) === 1);
    assert.equal([failed?.deliveries, failed?.failed, failed?.pending, failed?.success_rate], [1, 1, 0, 0]);
    const list = await svc.api('GET', `/webhook-endpoints/${endpoint}/deliveries`, { token: TOKENS.full });
    const delivery = list.body.data[0].id as string;
    const resend = await svc.api('POST', `/webhook-endpoints/${endpoint}/deliveries/${delivery}/resend`, {
      token: TOKENS.full,
    });
    assert.is(resend.status, 202, resend.text);
    const shown = await svc.api('GET', `/webhook-endpoints/${endpoint}/deliveries/${delivery}`, {
      token: TOKENS.full,
    });
    const waiting = await row();
    assert.equal(
      [shown.body.data.status, waiting?.pending, waiting?.failed, waiting?.success_rate],
      ['pending', 1, 0, null],
      'resent, not answered yet: pending, as the API shows it',
    );
    const done = await until((r) => Number(r?.delivered) === 1);
    assert.equal(
      [
        done?.deliveries,
        done?.delivered,
        done?.failed,
        done?.pending,
        done?.attempts,
        done?.first_attempt_delivered,
      ],
      [1, 1, 0, 0, 2, 0],
    );
  },
);

t.run();
