// Webhook analytics fed by the real publisher: a reservation fans out to an endpoint that answers 200
// and one that answers 500 (to be retried); `analytics export --dataset webhooks` then shows one
// delivery each on the restaurant's local day: delivered at the first attempt, and pending after a
// failed attempt. A delivery refused for good and resent is pending until the resend is answered.
// Nothing here is timed: the suite waits for the figures it means, and holds the resend's answer at the
// receiver until it has looked (the attempt timeout is far beyond any wait, so a held attempt never
// times out on a slow machine; the clock is frozen, so nothing is retried on its own).
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
import { hold, type Receiver, startReceiver } from '../helpers/webhook-receiver';
import { until } from '../helpers/webhooks-world';

/** Bounds a hang only (under the runner's 300 s per file), never a speed: waits are for conditions. */
const WAIT_MS = 120_000;

const t = suite<{ svc: ReservationService; rx: Receiver }>('webhook analytics, live', {} as never);
t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  const bootstrap = reservationBootstrap();
  for (const r of bootstrap.restaurants)
    for (const k of r.api_keys as { scopes: string[] }[]) k.scopes = [...k.scopes, 'WEBHOOKS_WRITE'];
  ctx.svc = await startReservationService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    // An answer the test holds is never cut short by the attempt timeout (12 s), however slow the machine.
    webhooks: { timeoutMs: WAIT_MS },
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
  // Both attempts recorded (the figures follow the attempts' records, appended after the answers).
  const rows = await until('both attempts in the figures', WAIT_MS, async () => {
    const got = await exportWebhooks(svc);
    return got.reduce((s, r) => s + Number(r.attempts), 0) >= 2 && got;
  });
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
    // The first attempt is refused at once; the resend's answer is held at the receiver until the test
    // has read the figures, so they are read while it is in flight, not answered yet.
    rx.on('/refuse', { statuses: [400] });
    const res = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url('/refuse') },
    });
    assert.is(res.status, 201, res.text);
    const endpoint = res.body.data.id as string;
    assert.is((await create(svc, { start_at: '2026-06-03T20:00:00+02:00' })).status, 201);
    const row = async () => (await exportWebhooks(svc)).find((r) => r.endpoint_id === endpoint);
    const rowWhen = (what: string, ok: (r: Record<string, number | string>) => boolean) =>
      until(what, WAIT_MS, async () => {
        const r = await row();
        return r !== undefined && ok(r) && r;
      });
    const failed = await rowWhen('the refused delivery in the figures', (r) => Number(r.failed) === 1);
    assert.equal([failed.deliveries, failed.failed, failed.pending, failed.success_rate], [1, 1, 0, 0]);
    const list = await svc.api('GET', `/webhook-endpoints/${endpoint}/deliveries`, { token: TOKENS.full });
    const delivery = list.body.data[0].id as string;
    const answer = hold();
    rx.on('/refuse', { statuses: [200], until: answer.held });
    try {
      const resend = await svc.api('POST', `/webhook-endpoints/${endpoint}/deliveries/${delivery}/resend`, {
        token: TOKENS.full,
      });
      assert.is(resend.status, 202, resend.text);
      // The resend is in flight (the receiver has it, its answer held): not answered yet.
      await rx.waitFor('/refuse', 2, WAIT_MS);
      const shown = await svc.api('GET', `/webhook-endpoints/${endpoint}/deliveries/${delivery}`, {
        token: TOKENS.full,
      });
      const waiting = await row();
      assert.equal(
        [shown.body.data.status, waiting?.pending, waiting?.failed, waiting?.success_rate],
        ['pending', 1, 0, null],
        'resent, not answered yet: pending, as the API shows it',
      );
    } finally {
      answer.release();
    }
    const done = await rowWhen('the resend delivered in the figures', (r) => Number(r.delivered) === 1);
    assert.equal(
      [
        done.deliveries,
        done.delivered,
        done.failed,
        done.pending,
        done.attempts,
        done.first_attempt_delivered,
      ],
      [1, 1, 0, 0, 2, 0],
    );
  },
);

t.run();
