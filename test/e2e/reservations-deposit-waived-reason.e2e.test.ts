// A PATCH that moves a reservation onto a seating asking no deposit voids the pending deposit, and a
// reservation that only waited for it is confirmed automatically. Nothing was paid: the status change
// says "deposit no longer required" (before, "payment received"), in the history and nowhere else
// otherwise (the webhook tells the status and the voided row, as for any change).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const t = suite<{ svc: ReservationService; rx: Receiver }>('reservations: a deposit voided by a PATCH');

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

t(
  'the confirmation says the deposit is no longer required, not that a payment was received',
  async ({ svc, rx }) => {
    // Brunch asks a deposit per cover; dinner none.
    const r = (await create(svc, { start_at: '2026-06-11T10:00:00+02:00', party_size: 2 }, TOKENS.noCancel))
      .body.data;
    assert.is(r.status, 'PENDING_PAYMENT');
    const moved = await svc.api('PATCH', `/reservations/${r.id}`, {
      token: TOKENS.noCancel,
      body: { start_at: '2026-06-11T19:00:00+02:00' },
    });
    assert.is(moved.status, 200, moved.text);
    assert.is(moved.body.data.status, 'CONFIRMED');

    const history = await svc.api('GET', `/reservations/${r.id}/history`, { token: TOKENS.full });
    assert.is(history.status, 200, history.text);
    // biome-ignore lint/suspicious/noExplicitAny: the answer's JSON
    const confirmed = history.body.data.find((i: any) =>
      // biome-ignore lint/suspicious/noExplicitAny: the answer's JSON
      i.changes.some((c: any) => c.field === 'status' && c.to === 'CONFIRMED'),
    );
    assert.ok(confirmed, history.text);
    assert.equal(
      // biome-ignore lint/suspicious/noExplicitAny: the answer's JSON
      confirmed.changes.find((c: any) => c.field === 'reason'),
      { field: 'reason', to: 'deposit no longer required' },
    );
    assert.not.match(history.text, 'payment received');

    const hooks = await rx.waitFor('/hook', 3);
    assert.is(hooks.at(-1)?.json.data.object.status, 'CONFIRMED');
    for (const h of hooks) assert.not.match(h.body, 'payment received');
  },
);

t.run();
