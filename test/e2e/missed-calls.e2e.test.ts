// POST /missed-calls and its reads, against the real server with the default sender (the outbox):
// every outcome, the cooldown boundary on the test clock, duplicates, tenancy, number spellings, the
// link to the next reservation, and parallel reports of one caller.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addMarketingOptOut, blacklistCustomer } from '../../commands/customers/handler';
import { legacyExternalCallClaimStream } from '../../commands/missed-calls/events';
import { MESSAGES, type MessageDoc } from '../../projections/missed-calls';
import { OUTBOX_EVENT } from '../../src/adapters/message-sender/outbox';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { type EventStore, NO_STREAM } from '../../src/ports/event-store';
import { runCli as cli } from '../helpers/cli-in-process';
import {
  advance,
  MC_NOW,
  MC_TOKENS,
  type MissedCallService,
  missedCallBootstrap,
  report,
  startMissedCallService,
} from '../helpers/missed-calls';
import { DINNER } from '../helpers/reservations';
import { startTestService } from '../helpers/service';

const t = suite<{ svc: MissedCallService }>('missed calls (outbox)');
t.before(async (ctx) => {
  ctx.svc = await startMissedCallService();
});
t.after(async ({ svc }) => svc.close());

const meta = operatorMeta('test');

async function outboxCount(svc: MissedCallService): Promise<number> {
  let n = 0;
  for await (const e of svc.rt.events.readAll()) if (e.type === OUTBOX_EVENT) n += 1;
  return n;
}

const messagesOf = (svc: MissedCallService, callId: string) =>
  svc.rt.docs.collection<MessageDoc>(MESSAGES).find({ missed_call_id: callId });

const customersWithPhone = async (svc: MissedCallService, phone: string) =>
  (await svc.api('GET', `/customers?phone=${encodeURIComponent(phone)}`, { token: MC_TOKENS.demo })).body
    .data;

t(
  'a new caller (national spelling) gets the MISSED_CALL template; a customer is created from the number',
  async ({ svc }) => {
    const before = await outboxCount(svc);
    const res = await report(svc, { caller_phone_number: '06 12 34 56 01' });
    assert.is(res.status, 201, res.text);
    const d = res.body.data;
    assert.is(d.outcome, 'SENT');
    assert.is(d.caller_phone_number, '+33612345601');
    assert.is(d.template_type, 'MISSED_CALL');
    assert.is(d.reservation_id, null);
    assert.match(d.id, /^mc_/);
    const customer = (await svc.api('GET', `/customers/${d.customer_id}`, { token: MC_TOKENS.demo })).body
      .data;
    assert.is(customer.phone_number, '+33612345601');
    assert.is(customer.name, '+33 6 12 34 56 01');
    assert.is(customer.lang, 'FR');
    // The message: rendered in the template's language, unknown guest greeted politely, booking link in.
    const [m] = await messagesOf(svc, d.id);
    assert.ok(m);
    assert.is(m?.status, 'SENT');
    assert.is(m?.left_machine, false);
    assert.is(m?.template_name, 'missed_call_fr');
    assert.is(m?.language, 'fr');
    assert.is(
      m?.text,
      "Bonjour Madame, Monsieur, désolés d'avoir manqué votre appel ! Réservez chez Le Demo : https://le-demo.example/book",
    );
    assert.is(await outboxCount(svc), before + 1);
    // Read back.
    const back = await svc.api('GET', `/missed-calls/${d.id}`, { token: MC_TOKENS.demo });
    assert.is(back.status, 200);
    assert.equal(back.body.data, d);
  },
);

t(
  'the same caller again (international spelling) within 6 hours: SKIPPED_COOLDOWN, same customer',
  async ({ svc }) => {
    const first = (await report(svc, { caller_phone_number: '+33 6 12 34 56 02' })).body.data;
    assert.is(first.outcome, 'SENT');
    const before = await outboxCount(svc);
    for (const spelling of ['0612345602', '+33612345602', '0033 6 12 34 56 02', '06.12.34.56.02']) {
      const again = (await report(svc, { caller_phone_number: spelling })).body.data;
      assert.is(again.outcome, 'SKIPPED_COOLDOWN', spelling);
      assert.is(again.customer_id, first.customer_id, spelling);
      assert.is(again.template_type, null);
    }
    assert.is(await outboxCount(svc), before);
    assert.is((await customersWithPhone(svc, '0612345602')).length, 1);
  },
);

t('cooldown boundary on the test clock: 6 h minus 1 s still cools down, 6 h sends again', async ({ svc }) => {
  const first = (await report(svc, { caller_phone_number: '0612345603' })).body.data;
  assert.is(first.outcome, 'SENT');
  await advance(svc, 6 * 3600 - 1);
  assert.is((await report(svc, { caller_phone_number: '0612345603' })).body.data.outcome, 'SKIPPED_COOLDOWN');
  await advance(svc, 1);
  const later = (await report(svc, { caller_phone_number: '0612345603' })).body.data;
  assert.is(later.outcome, 'SENT');
  assert.is(later.customer_id, first.customer_id);
  // The cooldown now runs from the second message.
  await advance(svc, 3600);
  assert.is((await report(svc, { caller_phone_number: '0612345603' })).body.data.outcome, 'SKIPPED_COOLDOWN');
});

t(
  'a replayed external_call_id answers the first record as SKIPPED_DUPLICATE and sends nothing',
  async ({ svc }) => {
    const first = (await report(svc, { caller_phone_number: '0612345604', external_call_id: 'tel-0001' }))
      .body.data;
    assert.is(first.outcome, 'SENT');
    assert.is(first.external_call_id, 'tel-0001');
    const before = await outboxCount(svc);
    // A replay: the same number in any spelling, the same instant at any offset (or none given).
    const at = new Date(first.occurred_at);
    const plus2 = `${new Date(at.getTime() + 2 * 3600_000).toISOString().slice(0, 19)}+02:00`;
    for (const body of [
      { caller_phone_number: '0612345604', external_call_id: 'tel-0001' },
      { caller_phone_number: '+33 6 12 34 56 04', external_call_id: 'tel-0001', occurred_at: plus2 },
    ]) {
      const again = await report(svc, body);
      assert.is(again.status, 201, again.text);
      assert.equal(again.body.data, { ...first, outcome: 'SKIPPED_DUPLICATE' });
    }
    // The same id for another call (another number, another time): 409 naming what differs, never the
    // first call's record as if this one had been handled.
    for (const [body, fields] of [
      [{ caller_phone_number: '0699999999', external_call_id: 'tel-0001' }, ['caller_phone_number']],
      [
        {
          caller_phone_number: '0612345604',
          external_call_id: 'tel-0001',
          occurred_at: '2020-01-01T12:00:00Z',
        },
        ['occurred_at'],
      ],
      [
        {
          caller_phone_number: '0699999999',
          external_call_id: 'tel-0001',
          occurred_at: '2020-01-01T12:00:00Z',
        },
        ['caller_phone_number', 'occurred_at'],
      ],
    ] as const) {
      const reused = await report(svc, body);
      assert.is(reused.status, 409, reused.text);
      assert.is(reused.body.error.code, 'RESOURCE_CONFLICT');
      assert.equal(reused.body.error.details, {
        external_call_id: 'tel-0001',
        missed_call_id: first.id,
        fields,
      });
      // Neither number is told back.
      assert.not.match(reused.text, /699999999|612345604/);
    }
    assert.is(await outboxCount(svc), before);
    // The record itself still says SENT; the same external id in another restaurant is another call.
    assert.is(
      (await svc.api('GET', `/missed-calls/${first.id}`, { token: MC_TOKENS.demo })).body.data.outcome,
      'SENT',
    );
    const elsewhere = (
      await report(svc, { caller_phone_number: '0612345604', external_call_id: 'tel-0001' }, MC_TOKENS.other)
    ).body.data;
    assert.is(elsewhere.outcome, 'SENT');
    assert.is.not(elsewhere.id, first.id);
  },
);

t(
  'a guest with an upcoming reservation gets MISSED_CALL_WITH_RESERVATION with its date and time in Paris, in French',
  async ({ svc }) => {
    const booked = await svc.api('POST', '/reservations', {
      token: MC_TOKENS.demo,
      body: {
        start_at: DINNER,
        party_size: 2,
        customer: { name: 'Ada Lovelace', phone_number: '+33612345605' },
      },
    });
    assert.is(booked.status, 201, booked.text);
    const r = booked.body.data;
    const res = (await report(svc, { caller_phone_number: '06 12 34 56 05' })).body.data;
    assert.equal(
      {
        outcome: res.outcome,
        customer: res.customer_id,
        reservation: res.reservation_id,
        type: res.template_type,
      },
      { outcome: 'SENT', customer: r.customer.id, reservation: r.id, type: 'MISSED_CALL_WITH_RESERVATION' },
    );
    const [m] = await messagesOf(svc, res.id);
    assert.is(m?.text, 'Bonjour Ada Lovelace, nous vous attendons mercredi 3 juin à 19:00 chez Le Demo !');
    assert.equal(
      m?.parameters.map((p) => p.name),
      ['guest_name', 'reservation_date', 'reservation_time', 'restaurant_name'],
    );
  },
);

t('a canceled reservation does not count: the plain template, no reservation_id', async ({ svc }) => {
  const booked = (
    await svc.api('POST', '/reservations', {
      token: MC_TOKENS.demo,
      body: {
        start_at: DINNER,
        party_size: 2,
        customer: { name: 'Grace Hopper', phone_number: '+33612345606' },
      },
    })
  ).body.data;
  const canceled = await svc.api('POST', `/reservations/${booked.id}/cancel`, {
    token: MC_TOKENS.demo,
    body: {},
  });
  assert.is(canceled.status, 200);
  const res = (await report(svc, { caller_phone_number: '0612345606' })).body.data;
  assert.equal([res.outcome, res.reservation_id, res.template_type], ['SENT', null, 'MISSED_CALL']);
  const [m] = await messagesOf(svc, res.id);
  assert.match(m?.text ?? '', /^Bonjour Grace Hopper,/);
});

t(
  'opted out of WhatsApp: SKIPPED_OPTED_OUT; blacklisted: SKIPPED_BLACKLISTED; nothing sent',
  async ({ svc }) => {
    const mk = async (name: string, phone: string) =>
      (
        await svc.api('POST', '/customers', {
          token: MC_TOKENS.demo,
          body: { name, phone_number: phone },
        })
      ).body.data.id as string;
    const opted = await mk('Opted Out', '+33612345607');
    const black = await mk('Black Listed', '+33612345608');
    const email = await mk('Email Only Optout', '+33612345609');
    await svc.rt.settle((await addMarketingOptOut(svc.rt, opted, 'WHATSAPP', 'blocked us', meta)).position);
    await svc.rt.settle((await blacklistCustomer(svc.rt, black, 'no-shows', meta)).position);
    await svc.rt.settle((await addMarketingOptOut(svc.rt, email, 'EMAIL', null, meta)).position);
    const before = await outboxCount(svc);
    const o = (await report(svc, { caller_phone_number: '0612345607' })).body.data;
    assert.equal([o.outcome, o.customer_id, o.template_type], ['SKIPPED_OPTED_OUT', opted, null]);
    const b = (await report(svc, { caller_phone_number: '0612345608' })).body.data;
    assert.equal([b.outcome, b.customer_id], ['SKIPPED_BLACKLISTED', black]);
    assert.is(await outboxCount(svc), before);
    // An email opt-out is not a WhatsApp one.
    assert.is((await report(svc, { caller_phone_number: '0612345609' })).body.data.outcome, 'SENT');
    // A skip is not a message: the cooldown does not start (the opted-out caller is still skipped for the opt-out).
    assert.is(
      (await report(svc, { caller_phone_number: '0612345607' })).body.data.outcome,
      'SKIPPED_OPTED_OUT',
    );
  },
);

t(
  'feature disabled: SKIPPED_FEATURE_DISABLED and no customer; no template: SKIPPED_NO_TEMPLATE',
  async ({ svc }) => {
    const off = await report(svc, { caller_phone_number: '0612345610' }, MC_TOKENS.off);
    assert.is(off.status, 201);
    assert.equal([off.body.data.outcome, off.body.data.customer_id], ['SKIPPED_FEATURE_DISABLED', null]);
    const offCustomers = await svc.api('GET', '/customers?phone=0612345610', { token: MC_TOKENS.off });
    assert.equal(offCustomers.body.data, []);
    const bare = (await report(svc, { caller_phone_number: '0612345610' }, MC_TOKENS.bare)).body.data;
    assert.is(bare.outcome, 'SKIPPED_NO_TEMPLATE');
    assert.type(bare.customer_id, 'string');
  },
);

t(
  'a call older than follow_up_max_age_hours (24 by default): SKIPPED_TOO_OLD, recorded, nothing sent, nobody created',
  async ({ svc }) => {
    // The service clock (the test-clock route has moved it in earlier tests).
    const now = Date.parse((await advance(svc, 0)).body.now);
    const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();
    const before = await outboxCount(svc);
    const ancient = await report(svc, {
      caller_phone_number: '0612345620',
      occurred_at: '1970-01-01T00:00:00Z',
    });
    assert.is(ancient.status, 201, ancient.text);
    assert.equal([ancient.body.data.outcome, ancient.body.data.customer_id], ['SKIPPED_TOO_OLD', null]);
    assert.equal(await customersWithPhone(svc, '0612345620'), []);
    const late = await report(svc, { caller_phone_number: '0612345621', occurred_at: ago(24 * 3600 + 1) });
    assert.is(late.body.data.outcome, 'SKIPPED_TOO_OLD');
    assert.is(await outboxCount(svc), before, 'nothing sent');
    // Read back and listed under its outcome, and counted in the analytics as the other skips are.
    const read = await svc.api('GET', `/missed-calls/${ancient.body.data.id}`, { token: MC_TOKENS.demo });
    assert.is(read.body.data.outcome, 'SKIPPED_TOO_OLD');
    const listed = await svc.api('GET', '/missed-calls?outcome=SKIPPED_TOO_OLD', { token: MC_TOKENS.demo });
    assert.is(listed.status, 200, listed.text);
    assert.equal(
      listed.body.data.map((c: { id: string }) => c.id).sort(),
      [ancient.body.data.id, late.body.data.id].sort(),
    );
    const days = (
      await cli(svc, 'analytics export', {
        restaurant: 'rest_demo',
        dataset: 'missed-calls',
        format: 'ndjson',
      })
    ).map((l) => JSON.parse(l) as { date: string; by_outcome: Record<string, number> });
    assert.is(days.find((d) => d.date === '1970-01-01')?.by_outcome.SKIPPED_TOO_OLD, 1);
    // At exactly the limit the follow-up is still sent.
    const edge = await report(svc, { caller_phone_number: '0612345622', occurred_at: ago(24 * 3600) });
    assert.is(edge.body.data.outcome, 'SENT');

    // A restaurant may allow more (1 to 168 hours): the setting is theirs.
    const bad = await cli(svc, 'missed-calls configure', {
      restaurant: 'rest_other',
      'follow-up-max-age-hours': '0',
    }).catch((err: Error) => err.message);
    assert.match(String(bad), /follow.up.max.age.hours.*1 to 168/);
    await cli(svc, 'missed-calls configure', { restaurant: 'rest_other', 'follow-up-max-age-hours': '48' });
    const shown = (await cli(svc, 'missed-calls configure', { restaurant: 'rest_other' })).join('\n');
    assert.match(shown, /"follow_up_max_age_hours": 48/);
    const other = await report(
      svc,
      { caller_phone_number: '0612345623', occurred_at: ago(30 * 3600) },
      MC_TOKENS.other,
    );
    assert.is(other.body.data.outcome, 'SENT');
    const older = await report(
      svc,
      { caller_phone_number: '0612345624', occurred_at: ago(48 * 3600 + 1) },
      MC_TOKENS.other,
    );
    assert.is(older.body.data.outcome, 'SKIPPED_TOO_OLD');
  },
);

t('tenancy: another restaurant reads 404 and lists none of these calls', async ({ svc }) => {
  const mine = (await report(svc, { caller_phone_number: '0612345611' })).body.data;
  const theirs = await svc.api('GET', `/missed-calls/${mine.id}`, { token: MC_TOKENS.other });
  assert.is(theirs.status, 404);
  assert.is(theirs.body.error.code, 'RESOURCE_NOT_FOUND');
  const list = (await svc.api('GET', '/missed-calls?limit=100', { token: MC_TOKENS.other })).body.data;
  assert.ok(list.every((c: { id: string }) => c.id !== mine.id));
  assert.is((await svc.api('GET', '/missed-calls/mc_nope', { token: MC_TOKENS.demo })).status, 404);
  // A customer of another restaurant with the same number is not this restaurant's.
  const there = (await report(svc, { caller_phone_number: '0612345611' }, MC_TOKENS.other)).body.data;
  assert.is.not(there.customer_id, mine.customer_id);
  assert.is(there.outcome, 'SENT', 'cooldowns are per restaurant');
});

t(
  'bad input: impossible number 400, future occurred_at 422, missing scope 403, unknown property 400',
  async ({ svc }) => {
    const bad = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: '12' },
      invalid: true,
    });
    assert.is(bad.status, 400);
    for (const phone of ['call me maybe', '0612', '+99912345678901234']) {
      const r = await report(svc, { caller_phone_number: phone });
      assert.is(r.status, 400, phone);
      assert.is(r.body.error.details.issues[0].path, 'caller_phone_number');
    }
    // A number with an extension reads (customers keep it), but the line that rang has none: 400 saying so.
    for (const phone of ['06 12 34 56 06 ext. 12', '+33 6 12 34 56 06 ext. 12']) {
      const r = await report(svc, { caller_phone_number: phone });
      assert.is(r.status, 400, phone);
      assert.match(r.body.error.details.issues[0].message, /extension/, phone);
    }
    const future = await report(svc, {
      caller_phone_number: '0612345612',
      occurred_at: '2030-01-01T00:00:00Z',
    });
    assert.is(future.status, 422);
    assert.is(future.body.error.details.reason, 'OCCURRED_IN_FUTURE');
    const scope = await report(svc, { caller_phone_number: '0612345612' }, MC_TOKENS.noScope);
    assert.is(scope.status, 403);
    const extra = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: '0612345612', channel: 'sms' },
      invalid: true,
    });
    assert.is(extra.status, 400);
    assert.is(extra.body.error.details.issues[0].code, 'unknown_property');
  },
);

t(
  'parallel reports of one new caller: one message, one customer, the rest SKIPPED_COOLDOWN',
  async ({ svc }) => {
    const before = await outboxCount(svc);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        report(svc, { caller_phone_number: i % 2 ? '0612345613' : '+33 6 12 34 56 13' }),
      ),
    );
    assert.ok(
      answers.every((a) => a.status === 201),
      answers.map((a) => a.status).join(),
    );
    const outcomes = answers.map((a) => a.body.data.outcome);
    assert.is(outcomes.filter((o) => o === 'SENT').length, 1, outcomes.join());
    assert.is(outcomes.filter((o) => o === 'SKIPPED_COOLDOWN').length, 11);
    assert.is(new Set(answers.map((a) => a.body.data.customer_id)).size, 1);
    assert.is((await customersWithPhone(svc, '0612345613')).length, 1);
    assert.is(await outboxCount(svc), before + 1);
  },
);

t(
  'parallel reports and POST /customers of one new number: one customer, whichever comes first',
  async ({ svc }) => {
    // The missed call matched and created in a queue of its own, POST /customers in another: with a
    // slow log (a customer's creation lets the event loop turn 50 times before it is written), each
    // matched nobody on the read model and created a customer of its own.
    const store = svc.rt.events as { append: EventStore['append'] };
    const own = Object.hasOwn(store, 'append');
    const append = store.append;
    store.append = async function (this: unknown, stream, ...rest) {
      if (stream.startsWith('customer-')) for (let i = 0; i < 50; i++) await new Promise(setImmediate);
      return append.call(this, stream, ...rest);
    };
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2
          ? report(svc, { caller_phone_number: '06 12 34 56 15' })
          : svc.api('POST', '/customers', {
              token: MC_TOKENS.demo,
              body: { name: 'Caller Fifteen', phone_number: '+33612345615' },
            }),
      ),
    ).finally(() => {
      if (own) store.append = append;
      else delete (store as { append?: unknown }).append;
    });
    assert.ok(
      answers.every((a) => a.status === 201 || a.status === 200),
      answers.map((a) => a.status).join(),
    );
    const ids = answers.map((a, i) => (i % 2 ? a.body.data.customer_id : a.body.data.id));
    assert.is(new Set(ids).size, 1, ids.join());
    assert.is((await customersWithPhone(svc, '0612345615')).length, 1);
  },
);

t(
  'parallel reports of one external_call_id: one call, one message, the rest SKIPPED_DUPLICATE',
  async ({ svc }) => {
    const before = await outboxCount(svc);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        report(svc, { caller_phone_number: '0612345614', external_call_id: 'tel-burst' }),
      ),
    );
    assert.ok(
      answers.every((a) => a.status === 201),
      answers.map((a) => a.text).join('\n'),
    );
    const outcomes = answers.map((a) => a.body.data.outcome);
    assert.is(outcomes.filter((o) => o === 'SENT').length, 1, outcomes.join());
    assert.is(outcomes.filter((o) => o === 'SKIPPED_DUPLICATE').length, 9);
    assert.is(new Set(answers.map((a) => a.body.data.id)).size, 1);
    assert.is(await outboxCount(svc), before + 1);
  },
);

t(
  'GET /missed-calls: newest first, outcome and date filters, cursor pages, invalid_range, bad cursor',
  async ({ svc }) => {
    const base = svc.rt.clock.now().getTime();
    const iso = (min: number) => new Date(base - min * 60_000).toISOString();
    const ids: string[] = [];
    for (const [i, min] of [50, 40, 30, 20, 10].entries()) {
      const r = (
        await report(svc, {
          caller_phone_number: `07000000${10 + i}`,
          occurred_at: iso(min),
          external_call_id: `list-${i}`,
        })
      ).body.data;
      assert.is(r.occurred_at, iso(min));
      ids.push(r.id);
    }
    const window = `occurred_at_from=${encodeURIComponent(iso(50))}&occurred_at_to=${encodeURIComponent(iso(20))}`;
    const all = (await svc.api('GET', `/missed-calls?${window}`, { token: MC_TOKENS.demo })).body;
    assert.equal(
      all.data.map((c: { id: string }) => c.id),
      [ids[3], ids[2], ids[1], ids[0]],
    );
    assert.equal(all.pagination, { next_cursor: null, has_more: false });
    // Two pages of two.
    const p1 = (await svc.api('GET', `/missed-calls?${window}&limit=2`, { token: MC_TOKENS.demo })).body;
    assert.equal(
      p1.data.map((c: { id: string }) => c.id),
      [ids[3], ids[2]],
    );
    assert.is(p1.pagination.has_more, true);
    const p2 = (
      await svc.api('GET', `/missed-calls?${window}&limit=2&cursor=${p1.pagination.next_cursor}`, {
        token: MC_TOKENS.demo,
      })
    ).body;
    assert.equal(
      p2.data.map((c: { id: string }) => c.id),
      [ids[1], ids[0]],
    );
    assert.is(p2.pagination.has_more, false);
    // Outcome filter.
    const cooled = (
      await svc.api('GET', '/missed-calls?outcome=SKIPPED_COOLDOWN&limit=100', { token: MC_TOKENS.demo })
    ).body.data;
    assert.ok(cooled.length >= 1);
    assert.ok(cooled.every((c: { outcome: string }) => c.outcome === 'SKIPPED_COOLDOWN'));
    // Mistakes.
    const range = await svc.api(
      'GET',
      `/missed-calls?occurred_at_from=${encodeURIComponent(iso(10))}&occurred_at_to=${encodeURIComponent(iso(20))}`,
      { token: MC_TOKENS.demo },
    );
    assert.is(range.status, 400);
    assert.is(range.body.error.details.issues[0].code, 'invalid_range');
    const cursor = await svc.api('GET', '/missed-calls?cursor=not-a-cursor', { token: MC_TOKENS.demo });
    assert.is(cursor.status, 400);
    assert.is(cursor.body.error.details.issues[0].code, 'invalid_cursor');
    const foreign = await svc.api('GET', `/missed-calls?cursor=${p1.pagination.next_cursor}`, {
      token: MC_TOKENS.other,
    });
    assert.is(foreign.status, 400);
    assert.is((await svc.api('GET', '/missed-calls?outcome=MAYBE', { token: MC_TOKENS.demo })).status, 400);
    assert.is((await svc.api('GET', '/missed-calls?limit=101', { token: MC_TOKENS.demo })).status, 400);
  },
);

t(
  'GET /missed-calls cursors are signed and keep their filters: an altered one answers 400, a next page without the filters keeps them',
  async ({ svc }) => {
    const base = svc.rt.clock.now().getTime();
    const iso = (min: number) => new Date(base - min * 60_000).toISOString();
    const ids: string[] = [];
    for (const [i, min] of [35, 34, 33].entries()) {
      const r = await report(svc, {
        caller_phone_number: `07000001${10 + i}`,
        occurred_at: iso(min),
        external_call_id: `signed-${i}`,
      });
      ids.push(r.body.data.id);
    }
    const window = `occurred_at_from=${encodeURIComponent(iso(35))}&occurred_at_to=${encodeURIComponent(iso(33))}`;
    const get = (q: string) => svc.api('GET', `/missed-calls?${q}`, { token: MC_TOKENS.demo });
    const p1 = (await get(`${window}&limit=2`)).body;
    assert.equal(
      p1.data.map((c: { id: string }) => c.id),
      [ids[2], ids[1]],
    );
    const cursor: string = p1.pagination.next_cursor;
    // Left out, the filters come with the cursor: the last call of the window, not every older call.
    const p2 = (await get(`limit=2&cursor=${cursor}`)).body;
    assert.equal(
      p2.data.map((c: { id: string }) => c.id),
      [ids[0]],
    );
    assert.equal(p2.pagination, { next_cursor: null, has_more: false });
    // Repeated, they are fine; other filters are a mistake.
    assert.is((await get(`${window}&limit=2&cursor=${cursor}`)).status, 200);
    const other = await get(`outcome=SENT&limit=2&cursor=${cursor}`);
    assert.is(other.status, 400, other.text);
    assert.is(other.body.error.details.issues[0].code, 'cursor_mismatch');
    // A cursor rewritten to start elsewhere is not one this API gave.
    const [body, mac] = cursor.split('.');
    const payload = JSON.parse(Buffer.from(body as string, 'base64url').toString('utf8'));
    payload.k = `${iso(0)}|mc_zzz`;
    const altered = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
    const refused = await get(`limit=2&cursor=${altered}`);
    assert.is(refused.status, 400, refused.text);
    assert.is(refused.body.error.details.issues[0].code, 'invalid_cursor');
    const unsigned = await get(
      `limit=2&cursor=${Buffer.from(JSON.stringify(payload)).toString('base64url')}`,
    );
    assert.is(unsigned.status, 400, unsigned.text);
    assert.is(unsigned.body.error.details.issues[0].code, 'invalid_cursor');
  },
);

t(
  'occurred_at and its filters at the ends of the calendar: never a year outside 0001-9998 stored, bounds past 9999 match nothing',
  async ({ svc }) => {
    // Year 0000 with a positive offset is an instant of year -1, whose UTC form ("-000001-…") is no
    // RFC 3339 date-time: it was stored, and every list page holding it failed the document.
    const early = await report(svc, {
      caller_phone_number: '0700000190',
      occurred_at: '0000-01-01T00:00:00+14:00',
    });
    assert.is(early.status, 400, early.text);
    assert.is(early.body.error.details.issues[0].path, 'occurred_at');
    assert.is(early.body.error.details.issues[0].code, 'out_of_range');
    const old = await report(svc, { caller_phone_number: '0700000191', occurred_at: '0001-01-01T00:00:00Z' });
    assert.is(old.status, 201, old.text);
    assert.is(old.body.data.outcome, 'SKIPPED_TOO_OLD');
    // A lower bound of year 10000 ("+010000-…" in UTC) is after every call.
    const late = await svc.api(
      'GET',
      `/missed-calls?occurred_at_from=${encodeURIComponent('9999-12-31T23:59:59-14:00')}`,
      { token: MC_TOKENS.demo },
    );
    assert.is(late.status, 200, late.text);
    assert.equal(late.body, { data: [], pagination: { next_cursor: null, has_more: false } });
    const upTo = await svc.api(
      'GET',
      `/missed-calls?limit=100&occurred_at_to=${encodeURIComponent('0001-01-01T00:00:00Z')}`,
      { token: MC_TOKENS.demo },
    );
    assert.equal(
      upTo.body.data.map((c: { id: string }) => c.id),
      [old.body.data.id],
    );
  },
);

t(
  'operators: missed-calls list and messages list show the calls and the outbox messages',
  async ({ svc }) => {
    const calls = await cli(svc, 'missed-calls list', { restaurant: 'rest_demo', limit: '500' });
    assert.match(calls[0] ?? '', /^occurred_at\tid\toutcome/);
    assert.ok(calls.some((l) => l.includes('SKIPPED_COOLDOWN')));
    const messages = await cli(svc, 'messages list', { restaurant: 'rest_demo', limit: '500' });
    assert.ok(messages.some((l) => l.includes('recorded in the outbox: nothing left the machine')));
    assert.ok(messages.some((l) => l.includes('Réservez chez Le Demo')));
    const json = await cli(svc, 'messages list', { restaurant: 'rest_demo', json: true, limit: '1' });
    assert.is(JSON.parse(json[0] ?? '{}').status, 'SENT');
    assert.equal(await cli(svc, 'missed-calls list', { restaurant: 'rest_noscope' }), [
      'no missed calls for rest_noscope',
    ]);
  },
);

t(
  "operators: a partner's new line or tab (external_call_id, a guest's name) prints escaped, never as a row of its own",
  async ({ svc }) => {
    const forged = '2099-01-01T00:00:00.000Z\tmc_forged\tSENT\t+33600000000\tcus_forged\t-\tMISSED_CALL\tx';
    const call = await report(svc, { caller_phone_number: '0612345691', external_call_id: `tel\n${forged}` });
    assert.is(call.status, 201, call.text);
    const guest = await svc.api('POST', '/customers', {
      token: MC_TOKENS.demo,
      body: {
        name: 'Jean\n2099-01-01T00:00:00.000Z  msg_forged  to +33600000000',
        phone_number: '0612345692',
      },
    });
    assert.is(guest.status, 201, guest.text);
    assert.is((await report(svc, { caller_phone_number: '0612345692' })).body.data.outcome, 'SENT');
    const lines = (out: string[]) => out.join('\n').split('\n');
    const calls = lines(await cli(svc, 'missed-calls list', { restaurant: 'rest_demo', limit: '500' }));
    assert.not.ok(calls.some((l) => l.startsWith('2099-')));
    assert.ok(calls.some((l) => l.endsWith(`\ttel\\u000a${forged.replace(/\t/g, '\\u0009')}`)));
    const messages = lines(await cli(svc, 'messages list', { restaurant: 'rest_demo', limit: '500' }));
    assert.not.ok(messages.some((l) => l.startsWith('2099-')));
    assert.ok(messages.some((l) => l.includes('Bonjour Jean\\u000a2099-01-01T00:00:00.000Z  msg_forged')));
    // --json is JSON already: the values as they are.
    const json = await cli(svc, 'missed-calls list', { restaurant: 'rest_demo', json: true, limit: '500' });
    assert.ok(json.some((l) => JSON.parse(l).external_call_id === `tel\n${forged}`));
  },
);

t('a past reservation does not count (after the clock passes it)', async ({ svc }) => {
  const booked = (
    await svc.api('POST', '/reservations', {
      token: MC_TOKENS.demo,
      body: {
        start_at: DINNER,
        party_size: 2,
        customer: { name: 'Past Guest', phone_number: '+33612345615' },
      },
    })
  ).body.data;
  await advance(svc, 3 * 24 * 3600);
  const res = (await report(svc, { caller_phone_number: '0612345615' })).body.data;
  assert.equal(
    [res.outcome, res.customer_id, res.reservation_id, res.template_type],
    ['SENT', booked.customer.id, null, 'MISSED_CALL'],
  );
});

t.run();

// Restaurant ids are the operator's choice, `-` included: `rest` with external_call_id `a-1` and `rest-a`
// with `1` once named one claim stream, so the second call was answered with the first restaurant's
// call (a 404 of its own record) or, after a 502, carried it on to the other restaurant's caller.
const ids = suite<{ svc: MissedCallService }>('missed calls: external_call_id within its restaurant');
const DASHED = {
  rest: 'couvert_pk_mc_rest_0000000000000000000000000006',
  restA: 'couvert_pk_mc_rest_a_00000000000000000000000007',
};
ids.before(async (ctx) => {
  const boot = missedCallBootstrap();
  const template = boot.restaurants.find((r) => r.id === 'rest_other') as (typeof boot.restaurants)[number];
  const like = (id: string, token: string) => ({
    ...template,
    id,
    name: `Restaurant ${id}`,
    slug: `slug-${id}`,
    api_keys: [{ id: `key_${id}`, name: id, token, scopes: ['MISSED_CALLS_WRITE'] }],
  });
  boot.restaurants.push(like('rest', DASHED.rest), like('rest-a', DASHED.restA));
  const clock = new FixedClock(MC_NOW);
  ctx.svc = Object.assign(await startTestService({ bootstrap: boot, clock, env: { TEST_CLOCK: 'true' } }), {
    clock,
  });
});
ids.after(async ({ svc }) => svc.close());

ids('one external_call_id in two restaurants whose ids run into each other: two calls', async ({ svc }) => {
  const first = (
    await report(svc, { caller_phone_number: '0699000001', external_call_id: '1' }, DASHED.restA)
  ).body.data;
  assert.is(first.outcome, 'SENT');
  const second = await report(
    svc,
    { caller_phone_number: '0699000002', external_call_id: 'a-1' },
    DASHED.rest,
  );
  assert.is(second.status, 201, second.text);
  assert.equal(
    [second.body.data.outcome, second.body.data.caller_phone_number, second.body.data.external_call_id],
    ['SENT', '+33699000002', 'a-1'],
  );
  assert.is.not(second.body.data.id, first.id);
  // Each restaurant's replay still answers its own call.
  const again = await report(svc, { caller_phone_number: '0699000001', external_call_id: '1' }, DASHED.restA);
  assert.equal([again.body.data.outcome, again.body.data.id], ['SKIPPED_DUPLICATE', first.id]);
});

ids(
  'a claim made under the former stream name still answers its replay, for its restaurant only',
  async ({ svc }) => {
    const call = (await report(svc, { caller_phone_number: '0699000003' }, DASHED.restA)).body.data;
    await svc.rt.events.append(
      legacyExternalCallClaimStream('rest-a', '7'),
      [{ type: 'Claimed', data: { owner: call.id, at: MC_NOW }, metadata: { restaurant_id: 'rest-a' } }],
      NO_STREAM,
    );
    const replay = await report(
      svc,
      { caller_phone_number: '0699000003', external_call_id: '7' },
      DASHED.restA,
    );
    assert.equal([replay.body.data.outcome, replay.body.data.id], ['SKIPPED_DUPLICATE', call.id]);
    // `rest` with `a-7` has the very same former name, and the claim there is not its own.
    const other = await report(
      svc,
      { caller_phone_number: '0699000004', external_call_id: 'a-7' },
      DASHED.rest,
    );
    assert.is(other.status, 201, other.text);
    assert.is.not(other.body.data.id, call.id);
  },
);

ids.run();
