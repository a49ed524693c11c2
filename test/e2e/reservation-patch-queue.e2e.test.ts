// Concurrent PATCHes of one reservation within a process run one after the other (as the commands of
// one stream do, src/core/command.ts): none loses its optimistic-concurrency retries to the others and
// answers 409 "a concurrent change conflicted; retry" (a partner's retry of a PATCH that timed out
// meets its first attempt so), and none loses its change.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventStore } from '../../src/ports/event-store';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';

const t = suite<{ svc: ReservationService }>('reservations: concurrent PATCHes of one reservation');
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

/**
 * Appends to `stream` (or to the streams it picks) wait 50 turns of the event loop, after `first` runs
 * at the first of them; the returned function restores the store.
 */
function slowAppends(
  svc: ReservationService,
  stream: string | ((s: string) => boolean),
  first?: () => void,
): () => void {
  const store = svc.rt.events as { append: EventStore['append'] };
  const own = Object.hasOwn(store, 'append');
  const append = store.append;
  const picks = typeof stream === 'string' ? (s: string) => s === stream : stream;
  let fired = false;
  store.append = async function (this: unknown, s, ...rest) {
    if (picks(s)) {
      if (!fired) first?.();
      fired = true;
      for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    }
    return append.call(this, s, ...rest);
  };
  return () => {
    if (own) store.append = append;
    else delete (store as { append?: unknown }).append;
  };
}

t('twelve concurrent PATCHes of one reservation all answer 200, each change kept', async ({ svc }) => {
  const created = await create(svc, { tags: [] });
  assert.is(created.status, 201);
  const id = (created.body as { data: { id: string } }).data.id;
  // A slow log (a writer thread's round trip on a busy machine): each append to the reservation's stream
  // lets the event loop turn a few times first, so every request reads the stream before any lands.
  // Before, each of five rounds then let one append win: five of the twelve ran out of retries (409).
  const restore = slowAppends(svc, `reservation-${id}`);
  const bodies: Record<string, unknown>[] = [
    { custom_message: 'by the window' },
    { allergies: 'peanuts' },
    { metadata: { pos: 'p-1' } },
    { source: 'PHONE' },
    { send_followup_email: true },
    { is_table_definitive: true },
    { total_amount_paid: 1234 },
    { attached_files: ['menu.pdf'] },
    { external_id: 'patched-ext' },
    { tags: ['vip'] },
    { prescriber_id: null },
    { custom_message: 'by the window' },
  ];
  const answers = await Promise.all(
    bodies.map((body) => svc.api('PATCH', `/reservations/${id}`, { token: TOKENS.full, body })),
  ).finally(restore);
  assert.equal(
    answers.map((a) => (a.status === 200 ? 200 : `${a.status} ${JSON.stringify(a.body)}`)),
    bodies.map(() => 200),
  );
  const r = (
    (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body as {
      data: Record<string, unknown>;
    }
  ).data;
  assert.equal(
    [
      r.custom_message,
      r.allergies,
      r.metadata,
      r.source,
      r.send_followup_email,
      r.is_table_definitive,
      r.total_amount_paid,
      r.attached_files,
      r.external_id,
      r.tags,
    ],
    [
      'by the window',
      'peanuts',
      { pos: 'p-1' },
      'PHONE',
      true,
      true,
      1234,
      ['menu.pdf'],
      'patched-ext',
      ['vip'],
    ],
  );
});

t(
  'a cancel sent while a PATCH writes the customer it creates waits for the PATCH: no customer is left unlinked',
  async ({ svc }) => {
    const created = await create(svc, { start_at: '2026-06-04T19:00:00+02:00' });
    assert.is(created.status, 201);
    const id = (created.body as { data: { id: string } }).data.id;
    // The cancel arrives as the PATCH creates its customer (slowly). Before, it landed first: the PATCH
    // was overtaken, and its next attempt refused the move (422 RESERVATION_CANCELED) with the customer
    // it had created left behind, linked to nothing: a refused request that wrote.
    let cancel: Promise<{ status: number; body: unknown }> | undefined;
    const restore = slowAppends(
      svc,
      (s) => s.startsWith('customer-'),
      () => {
        cancel = svc.api('POST', `/reservations/${id}/cancel`, { token: TOKENS.full, body: {} });
      },
    );
    let patched: { status: number; body: unknown };
    try {
      patched = await svc.api('PATCH', `/reservations/${id}`, {
        token: TOKENS.full,
        body: { start_at: '2026-06-04T20:00:00+02:00', customer: { name: 'Queue Newcomer' } },
      });
    } finally {
      restore();
    }
    assert.ok(cancel, 'the PATCH created a customer');
    const canceled = await cancel;
    assert.is(patched.status, 200, JSON.stringify(patched.body));
    assert.is(canceled.status, 200, JSON.stringify(canceled.body));
    const r = (
      (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body as {
        data: { status: string; start_at: string; customer: { id: string; name: string } | null };
      }
    ).data;
    assert.equal(
      [r.status, r.start_at, r.customer?.name],
      ['CANCELED_BY_RESTAURANT', '2026-06-04T20:00:00+02:00', 'Queue Newcomer'],
    );
  },
);

t.run();
