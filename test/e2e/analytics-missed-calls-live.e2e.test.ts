// Missed-call analytics fed by the real flow: calls reported over HTTP (a message sent, then the same
// caller skipped by the cooldown), and a reservation made for the caller afterwards, show up in
// `analytics export --dataset missed-calls` on the call's local day.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/cli-in-process';
import { MC_TOKENS, type MissedCallService, report, startMissedCallService } from '../helpers/missed-calls';
import { DINNER } from '../helpers/reservations';

const t = suite<{ svc: MissedCallService }>('missed-call analytics, live');
t.before(async (ctx) => {
  ctx.svc = await startMissedCallService();
});
t.after(async ({ svc }) => svc?.close());

async function exportCalls(svc: MissedCallService): Promise<Record<string, unknown>[]> {
  const flags = { restaurant: 'rest_demo', dataset: 'missed-calls', format: 'ndjson' };
  return (await runCli(svc, 'analytics export', flags)).map((l) => JSON.parse(l));
}

t('a call messaged, a call skipped by the cooldown, then the caller books', async ({ svc }) => {
  const first = await report(svc, {
    caller_phone_number: '06 12 34 56 77',
    occurred_at: '2026-06-01T22:30:00Z',
  });
  assert.is(first.status, 201, first.text);
  assert.is(first.body.data.outcome, 'SENT');
  const second = await report(svc, { caller_phone_number: '+33612345677' });
  assert.is(second.body.data.outcome, 'SKIPPED_COOLDOWN');
  // 22:30 UTC is 00:30 in Paris: the first call belongs to 2 June, as does the second.
  let [day, ...rest] = await exportCalls(svc);
  assert.is(rest.length, 0);
  assert.is(day?.date, '2026-06-02');
  assert.is(day?.reported, 2);
  assert.equal(day?.by_outcome, { PENDING: 0, SENT: 1, SKIPPED_COOLDOWN: 1 });
  assert.is(day?.matched, 2);
  assert.is(day?.new_customers, 1, 'the first call created the customer');
  assert.is(day?.known_customers, 1);
  assert.is(day?.messages_requested, 1);
  assert.is(day?.followed_by_reservation, 0);

  const booked = await svc.api('POST', '/reservations', {
    token: MC_TOKENS.demo,
    body: { start_at: DINNER, party_size: 2, customer: { id: first.body.data.customer_id } },
  });
  assert.is(booked.status, 201, booked.text);
  [day] = await exportCalls(svc);
  assert.is(day?.followed_by_reservation, 1, 'the reservation follows the latest call, once');
});

t.run();
