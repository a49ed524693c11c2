// Missed calls stored before the input rule refused an occurred_at outside years 0001-9998 (UTC):
// year 0000 with a positive offset was stored as "-000001-…", a late offset on 9999-12-31 as
// "+010000-…". The log keeps them; every reader gets the nearest accepted instant
// (commands/missed-calls/legacy-occurred-at.ts): the list, a call read by id, the occurred_at
// filters, the analytics and the write side all agree, and the list's documented format holds.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ANALYTICS_MISSED_CALL_DAYS,
  type MissedCallDayDoc,
} from '../../projections/analytics/missed-call-projection';
import type { NewEvent } from '../../src/ports/event-store';
import { runCli as cli } from '../helpers/cli-in-process';
import { MC_TOKENS, type MissedCallService, report, startMissedCallService } from '../helpers/missed-calls';

const t = suite<{ svc: MissedCallService; early: string; late: string; today: string }>(
  'missed calls: occurred_at stored outside years 0001-9998',
);

/**
 * Reports a call (a valid occurred_at) while the store writes `stored` in its place, as the route
 * did before the rule: what the log of an older version holds.
 */
async function reportStoredAs(svc: MissedCallService, phone: string, valid: string, stored: string) {
  // biome-ignore lint/suspicious/noExplicitAny: the test swaps one method of the runtime's store
  const events = svc.rt.events as any;
  const real = events.append;
  events.append = (stream: string, batch: NewEvent[], ...rest: unknown[]) =>
    real.call(
      events,
      stream,
      batch.map((e) =>
        e.type === 'MissedCallReported' ? { ...e, data: { ...e.data, occurred_at: stored } } : e,
      ),
      ...rest,
    );
  try {
    // Its own answer showed the stored text (before the read rule): not checked against the document here.
    const made = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: phone, occurred_at: valid },
      unchecked: true,
    });
    assert.is(made.status, 201, made.text);
    return made.body.data.id as string;
  } finally {
    events.append = real;
  }
}

t.before(async (ctx) => {
  ctx.svc = await startMissedCallService();
  ctx.early = await reportStoredAs(
    ctx.svc,
    '0700000301',
    '0001-01-01T00:00:00Z',
    // '0000-01-01T00:00:00+14:00' as the old route stored it.
    new Date(Date.parse('0000-01-01T00:00:00+14:00')).toISOString(),
  );
  ctx.late = await reportStoredAs(
    ctx.svc,
    '0700000302',
    '2026-06-02T09:59:00Z',
    new Date(Date.parse('9999-12-31T23:59:59-14:00')).toISOString(),
  );
  ctx.today = (await report(ctx.svc, { caller_phone_number: '0700000303' })).body.data.id;
});
t.after(async ({ svc }) => svc.close());

t('the log holds what the old route wrote', async ({ svc, early, late }) => {
  const { storedEvents } = await import('../../src/privacy/sealing-event-store');
  const stored = new Map<string, string>();
  for await (const e of storedEvents(svc.rt.events).readAll())
    if (e.type === 'MissedCallReported')
      stored.set(e.data.missed_call_id as string, e.data.occurred_at as string);
  assert.is(stored.get(early), '-000001-12-31T10:00:00.000Z');
  assert.is(stored.get(late), '+010000-01-01T13:59:59.000Z');
});

t(
  'list and read by id: RFC 3339 instants, the nearest accepted, in their order',
  async ({ svc, early, late, today }) => {
    // svc.api holds every answer to the OpenAPI document: "-000001-…" failed its date-time format.
    const list = await svc.api('GET', '/missed-calls?limit=100', { token: MC_TOKENS.demo });
    assert.is(list.status, 200, list.text);
    const shown = (list.body.data as { id: string; occurred_at: string }[]).map((c) => [c.id, c.occurred_at]);
    assert.equal(shown, [
      [late, '9998-12-31T23:59:59.999Z'],
      [today, '2026-06-02T10:00:00.000Z'],
      [early, '0001-01-01T00:00:00.000Z'],
    ]);
    const one = await svc.api('GET', `/missed-calls/${early}`, { token: MC_TOKENS.demo });
    assert.is(one.body.data.occurred_at, '0001-01-01T00:00:00.000Z');
    assert.is(one.body.data.outcome, 'SKIPPED_TOO_OLD');
  },
);

t('filters: the calls are where their instants say', async ({ svc, early, late, today }) => {
  const ids = async (query: string) =>
    (await svc.api('GET', `/missed-calls?limit=100&${query}`, { token: MC_TOKENS.demo })).body.data.map(
      (c: { id: string }) => c.id,
    );
  assert.equal(await ids(`occurred_at_to=${encodeURIComponent('0001-01-01T00:00:00Z')}`), [early]);
  assert.equal(await ids(`occurred_at_from=${encodeURIComponent('0001-01-01T00:00:00Z')}`), [
    late,
    today,
    early,
  ]);
  assert.equal(await ids(`occurred_at_from=${encodeURIComponent('2026-06-01T00:00:00Z')}`), [late, today]);
  assert.equal(
    await ids(
      `occurred_at_from=${encodeURIComponent('2026-06-01T00:00:00Z')}&occurred_at_to=${encodeURIComponent('2026-06-03T00:00:00Z')}`,
    ),
    [today],
  );
});

t('analytics and the operators’ list: real calendar days', async ({ svc }) => {
  await svc.rt.refresh();
  const days = (
    await svc.rt.docs
      .collection<MissedCallDayDoc>(ANALYTICS_MISSED_CALL_DAYS)
      .find({ restaurant_id: 'rest_demo' })
  )
    .map((d) => d.date)
    .sort();
  assert.equal(days, ['0001-01-01', '2026-06-02', '9999-01-01']);
  const lines = await cli(svc, 'missed-calls list', { restaurant: 'rest_demo' });
  assert.ok(
    lines.some((l) => l.startsWith('0001-01-01T00:00:00.000Z')),
    lines.join('\n'),
  );
  assert.not.ok(
    lines.some((l) => /^[-+]0/.test(l)),
    lines.join('\n'),
  );
});

t.run();
