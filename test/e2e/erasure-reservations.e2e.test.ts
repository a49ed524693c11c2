// Right to erasure beyond the customer's own events: what a guest wrote on a reservation (allergies,
// message, partner metadata, cancellation reason, feedback) and the webhook bodies the publisher keeps
// in the log are sealed with the reservation's customer's key. After erasure nothing personal is
// readable anywhere: not in the raw SQLite files, not in the API, the history, the audit tools, nor
// after a replay; and a delivery of the erased customer is never resent.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES } from '../../projections/webhook-deliveries';
import { customerSubject } from '../../src/privacy/seal';
import { runCli as cli, rawDataFiles as rawFiles } from '../helpers/cli-in-process';
import { create, DINNER, startWebhooksService, TOKENS } from '../helpers/reservations';
import { orClose, type TestService } from '../helpers/service';
import { publisherQuiet, quietNow, type Receiver, startReceiver } from '../helpers/webhook-receiver';

const t = suite('erasure: reservations and webhook bodies');

const PERSONAL =
  /Lovelace|ada@example\.test|611223344|peanuts|birthday cake|Ada L\.|is ill|loved the soufflé/;

const start = startWebhooksService;

t('reservation free text and webhook bodies are sealed, then erased everywhere', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-res-'));
  const rx = await startReceiver();
  try {
    await erasedEverywhere(dataDir, rx);
  } finally {
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

async function erasedEverywhere(dataDir: string, rx: Receiver) {
  let svc = await start(dataDir);
  let id = '';
  let customerId = '';
  let endpointId = '';
  try {
    const ep = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url('/hook') },
    });
    assert.is(ep.status, 201, ep.text);
    endpointId = ep.body.data.id;
    const made = await svc.api('POST', '/reservations', {
      token: TOKENS.full,
      body: {
        party_size: 2,
        start_at: DINNER,
        customer: { name: 'Ada Lovelace', email: 'ada@example.test', phone_number: '06 11 22 33 44' },
        allergies: 'peanuts',
        custom_message: 'a birthday cake please',
        metadata: { crm_note: 'Ada L.' },
      },
    });
    assert.is(made.status, 201, made.text);
    id = made.body.data.id;
    customerId = made.body.data.customer.id;
    // An update and a cancellation do not name the customer: the layer finds them from the stream.
    const patched = await svc.api('PATCH', `/reservations/${id}`, {
      token: TOKENS.full,
      body: { custom_message: 'a birthday cake for Lovelace' },
    });
    assert.is(patched.status, 200, patched.text);
    const canceled = await svc.api('POST', `/reservations/${id}/cancel`, {
      token: TOKENS.full,
      body: { reason: 'Ada is ill' },
    });
    assert.is(canceled.status, 200, canceled.text);
    // reservation.created, .updated, .canceled and customer.created reach the endpoint in clear.
    const got = await rx.waitFor('/hook', 4);
    assert.match(got.map((r) => r.body).join('\n'), /peanuts/);
    assert.match(got.map((r) => r.body).join('\n'), /Lovelace/);
    const read = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
    assert.equal(
      [
        read.body.data.allergies,
        read.body.data.custom_message,
        read.body.data.metadata,
        read.body.data.cancellation_reason,
      ],
      ['peanuts', 'a birthday cake for Lovelace', { crm_note: 'Ada L.' }, 'Ada is ill'],
    );
    const before = await svc.api('GET', `/reservations/${id}/history`, { token: TOKENS.full });
    assert.match(
      JSON.stringify(before.body),
      /birthday cake for Lovelace/,
      'history in clear while the key exists',
    );
    assert.not.match(
      rawFiles(dataDir),
      PERSONAL,
      'nothing personal in clear in any file, even before erasure',
    );
    // The fan-outs name their customer, and their bodies are sealed.
    const fanouts = [];
    for await (const e of svc.rt.events.readAll())
      if (e.type === 'WebhookDeliveriesScheduled') fanouts.push(e);
    assert.ok(fanouts.length >= 4);
    for (const f of fanouts) assert.is(f.data.customer_id, customerId);

    await cli(svc, 'audit erase', { customer: customerId });
    assert.is((await svc.rt.keys.find(customerSubject(customerId))).state, 'destroyed');
    const after = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
    assert.is(after.status, 200);
    assert.equal(
      [
        after.body.data.allergies,
        after.body.data.custom_message,
        after.body.data.metadata,
        after.body.data.cancellation_reason,
        after.body.data.customer,
      ],
      [null, null, {}, null, null],
      'the live read model is erased at once',
    );
    const history = await svc.api('GET', `/reservations/${id}/history`, { token: TOKENS.full });
    assert.is(history.status, 200);
    assert.not.match(JSON.stringify(history.body), PERSONAL, 'the partner history shows them erased');
    const audit = (await cli(svc, 'audit history', { json: true }, [id])).map((l) => JSON.parse(l));
    assert.not.match(JSON.stringify(audit), PERSONAL);
    assert.ok(
      audit[0].changes.some((c: { field: string; to: unknown }) => c.field === 'erased' && c.to === true),
      'the history says so',
    );
    const asOf = (
      await cli(svc, 'audit as-of', { at: String(await svc.rt.events.headPosition()) }, [id])
    ).join('\n');
    assert.not.match(asOf, PERSONAL);
    assert.is(JSON.parse(asOf).erased, true, 'as-of says so: its nulls are an erasure, not "none"');
    let exported = '';
    const out = join(dataDir, 'export.ndjson');
    await cli(svc, 'audit export', { restaurant: 'rest_demo', out, 'no-progress': true });
    exported = readFileSync(out, 'utf8');
    rmSync(out);
    assert.ok(exported.length > 0);
    assert.not.match(exported, PERSONAL, 'an export holds them sealed');
    assert.match(exported, /"erased":true/, 'and shows them erased');
    // Every fan-out is in the log, the deletion notice's included (the publisher has handled the erasure).
    await publisherQuiet(svc.rt, svc.webhooks);
    const seen = { fanouts: 0, notices: 0, relinks: 0 };
    for await (const e of svc.rt.events.readAll())
      if (e.type === 'WebhookDeliveriesScheduled') {
        seen.fanouts++;
        const types = Object.values(e.data.event_types as Record<string, string>);
        if (types.includes('customer.deleted')) {
          seen.notices++;
          // The deletion notice describes the customer erased: stored so, unsealed (it is resent).
          assert.is(e.data.customer_id, undefined);
          assert.is(e.data.erased_customer_id, customerId);
          assert.not.match(JSON.stringify(e.data.payloads), PERSONAL);
          assert.match(JSON.stringify(e.data.payloads), /\[erased\]/);
        } else if (e.data.erased_customer_id === customerId) {
          // The reservation's notice that it shows no customer now (ReservationCustomerRelinked):
          // built without their data, so stored unsealed too.
          seen.relinks++;
          assert.equal(Object.values(e.data.event_types as Record<string, string>), ['reservation.updated']);
          assert.not.match(JSON.stringify(e.data.payloads), PERSONAL);
          assert.match(JSON.stringify(e.data.payloads), /\[erased\]/);
        } else assert.equal(e.data.payloads, {}, 'stored bodies read as erased');
      }
    assert.is(seen.relinks, 1, "one notice of the reservation's new customer (none)");
    // Both branches above ran: the checks were made, not skipped over an empty or notice-less log.
    assert.is(seen.notices, 1, 'one deletion notice fanned out');
    assert.ok(seen.fanouts > seen.notices, `fan-outs before the erasure: ${seen.fanouts}`);
    // A resend of a delivery of the erased customer is refused at once and sends nothing.
    const sent = rx.for('/hook').length;
    const deliveries = await svc.api('GET', `/webhook-endpoints/${endpointId}/deliveries`, {
      token: TOKENS.full,
    });
    const one = deliveries.body.data.find(
      (d: { event_type: string }) => d.event_type === 'reservation.created',
    );
    const resend = await svc.api('POST', `/webhook-endpoints/${endpointId}/deliveries/${one.id}/resend`, {
      token: TOKENS.full,
    });
    assert.is(resend.status, 409, resend.text);
    assert.is(resend.body.error.details.reason, 'customer_erased');
    assert.ok(await quietNow(svc.rt, svc.webhooks, rx, '/hook', sent), 'nothing more is sent');
    await svc.rt.projections.catchUp();
    const doc = await svc.rt.docs.collection(WEBHOOK_DELIVERIES).findOne({ _id: one.id });
    assert.is(doc?.status, one.status, 'the delivery is as it was');
    const verified = await cli(svc, 'audit verify', { 'no-progress': true });
    assert.match(verified[0]!, /0 problem\(s\)/, 'the log is intact: erasure rewrote nothing');
    assert.not.match(rawFiles(dataDir), PERSONAL);
  } finally {
    await svc.close({ keepData: true });
  }
  // A replay (the restart rebuilds every read model from the log) shows the same.
  svc = await start(dataDir);
  try {
    const replayed = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
    assert.equal(
      [
        replayed.body.data.allergies,
        replayed.body.data.custom_message,
        replayed.body.data.metadata,
        replayed.body.data.cancellation_reason,
      ],
      [null, null, {}, null],
    );
    const history = await svc.api('GET', `/reservations/${id}/history`, { token: TOKENS.full });
    assert.not.match(JSON.stringify(history.body), PERSONAL);
  } finally {
    await svc.close();
  }
}

t('a reservation moved to another customer: its free text goes with it, live as after a replay', async () => {
  // The free text is sealed with the key of the reservation's customer when it is written. Moved from
  // X to Y, it was still X's box: erasing X left it readable live (the read model blanks Y's
  // reservations only) and null after a restart; erasing Y blanked it live, and a restart showed it
  // again. The move now restates it, sealed with Y's key: it follows the reservation.
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-moved-'));
  let svc = await start(dataDir);
  const ids = { x: '', y: '', kept: '', erased: '' };
  try {
    ids.x = await newCustomer(svc, 'Xavier First');
    ids.y = await newCustomer(svc, 'Yolanda Second');
    // One reservation moves from X to Y, another from Y to X; then X is erased.
    ids.kept = await bookFor(svc, ids.x, { allergies: 'moved to Y: celery' });
    ids.erased = await bookFor(svc, ids.y, {
      allergies: 'moved to X: sesame',
      start_at: DINNER.replace('T19:00', 'T19:15'),
    });
    await patchReservation(svc, ids.kept, { customer: { id: ids.y } });
    await patchReservation(svc, ids.erased, { customer: { id: ids.x } });
    await cli(svc, 'audit erase', { customer: ids.x });
    const live = async () =>
      Promise.all(
        [ids.kept, ids.erased].map(async (id) => {
          const read = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
          assert.is(read.status, 200, read.text);
          return read.body.data.allergies;
        }),
      );
    assert.equal(await live(), ['moved to Y: celery', null], 'live');
    const history = await svc.api('GET', `/reservations/${ids.kept}/history`, { token: TOKENS.full });
    assert.not.match(JSON.stringify(history.body), /celery.*celery/, 'the restatement is no change');
    assert.match((await cli(svc, 'audit verify', { 'no-progress': true }))[0] as string, /0 problem/);
    await svc.close({ keepData: true });
    svc = await start(dataDir);
    assert.equal(await live(), ['moved to Y: celery', null], 'after a replay');
  } finally {
    await svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

t(
  "text left in an erased customer's boxes (feedback before a move, a detached reservation): live as after a replay",
  async () => {
    // Feedback is sealed with the key of the reservation's customer when it is given, and a reservation
    // taken from its customer (`customer: null`) keeps its text in that customer's boxes. The read model
    // blanked only the reservations the erased customer held *now*: a replay erased text the live read
    // model kept (and audit verify reported it), and erasing the customer holding it now blanked text a
    // replay showed again.
    const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-left-'));
    let svc = await start(dataDir);
    const ids = { x: '', y: '', detached: '', movedToY: '', movedToX: '' };
    try {
      ids.x = await newCustomer(svc, 'Xavier First');
      ids.y = await newCustomer(svc, 'Yolanda Second');
      const book = (customerId: string, body: Record<string, unknown>, minute: string) =>
        bookFor(svc, customerId, { start_at: DINNER.replace('T19:00', `T19:${minute}`), ...body });
      const patch = (id: string, body: Record<string, unknown>) => patchReservation(svc, id, body);
      ids.detached = await book(
        ids.x,
        { allergies: 'X wrote: lupin', custom_message: 'X wrote: window' },
        '00',
      );
      ids.movedToY = await book(ids.x, { allergies: 'X wrote: celery' }, '15');
      ids.movedToX = await book(ids.y, { allergies: 'Y wrote: sesame' }, '30');
      await cli(svc, 'reservations feedback', { id: ids.detached, rating: '4', comment: 'X said: lovely' });
      await cli(svc, 'reservations feedback', { id: ids.movedToY, rating: '5', comment: 'X said: superb' });
      await cli(svc, 'reservations feedback', { id: ids.movedToX, rating: '3', comment: 'Y said: slow' });
      await patch(ids.detached, { customer: null });
      // Written while it has no customer: in clear, nobody's to erase.
      await patch(ids.detached, { allergies: 'written detached: soy' });
      await patch(ids.movedToY, { customer: { id: ids.y } });
      await patch(ids.movedToX, { customer: { id: ids.x } });
      await cli(svc, 'audit erase', { customer: ids.x });
      const live = async () =>
        Promise.all(
          [ids.detached, ids.movedToY, ids.movedToX].map(async (id) => {
            const read = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
            assert.is(read.status, 200, read.text);
            const d = read.body.data;
            return [d.allergies, d.custom_message, d.feedback?.rating, d.feedback?.comment];
          }),
        );
      const expected = [
        ['written detached: soy', null, 4, null],
        ['X wrote: celery', null, 5, null],
        [null, null, 3, 'Y said: slow'],
      ];
      assert.equal(await live(), expected, 'live');
      assert.match((await cli(svc, 'audit verify', { 'no-progress': true }))[0] as string, /0 problem/);
      await svc.close({ keepData: true });
      svc = await start(dataDir);
      assert.equal(await live(), expected, 'after a replay');
    } finally {
      await svc.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

t(
  "a reservation taken from its customer: its webhook bodies are sealed with that customer's key",
  async () => {
    // A reservation without a customer was fanned out in clear, though the body of its detachment holds
    // the customer it lost (previous_attributes.customer: name, email) and its text stays in that
    // customer's boxes (custom_message, in every later body): both stayed readable in the log, and
    // resendable, after that customer's erasure.
    const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-detached-'));
    const rx = await startReceiver();
    const svc = await orClose(start(dataDir), () => rx.close());
    const LEFT = /Zzfirst|xav@example\.test|QQwindow/;
    try {
      const ep = await svc.api('POST', '/webhook-endpoints', {
        token: TOKENS.full,
        body: { url: rx.url('/hook') },
      });
      assert.is(ep.status, 201, ep.text);
      const x = await newCustomer(svc, 'Xavier Zzfirst', { email: 'xav@example.test' });
      const id = await bookFor(svc, x, { custom_message: 'QQwindow seat' });
      for (const body of [{ customer: null }, { party_size: 3 }]) await patchReservation(svc, id, body);
      // customer.created, reservation.created and two reservation.updated, in clear to the endpoint.
      const got = await rx.waitFor('/hook', 4);
      assert.match(got.map((r) => r.body).join('\n'), /Zzfirst/);
      assert.match(got.map((r) => r.body).join('\n'), /QQwindow/);
      const fanouts = async () => {
        const out = [];
        for await (const e of svc.rt.events.readAll())
          if (e.type === 'WebhookDeliveriesScheduled') out.push(e);
        return out;
      };
      await until(async () => (await fanouts()).length >= 4);
      await cli(svc, 'audit erase', { customer: x });
      for (const f of await fanouts())
        assert.not.match(JSON.stringify(f.data), LEFT, `fan-out of ${f.stream} after the erasure`);
      assert.not.match(rawFiles(dataDir), LEFT, 'nothing of them in clear in any file');
    } finally {
      await svc.close();
      await rx.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

t(
  "a cancellation reason given while a customer held the reservation leaves with that customer's erasure",
  async () => {
    // The reason of a cancellation is sealed with the key of the reservation's customer then, whoever
    // held it before. Detached afterwards, the reservation keeps it in that customer's box: their erasure must blank it live as
    // a replay does (the read model tracks whose box each text field is in).
    const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-reason-'));
    let svc = await start(dataDir);
    try {
      // Booked for Y, moved to X: X holds it when it is canceled, though its other text is Y's.
      const x = await newCustomer(svc, 'Xavier First');
      const y = await newCustomer(svc, 'Yolanda Second');
      const id = await bookFor(svc, y);
      await patchReservation(svc, id, { customer: { id: x } });
      const canceled = await svc.api('POST', `/reservations/${id}/cancel`, {
        token: TOKENS.full,
        body: { reason: 'X said: Xavier is ill' },
      });
      assert.is(canceled.status, 200, canceled.text);
      await patchReservation(svc, id, { customer: null });
      await cli(svc, 'audit erase', { customer: x });
      const reason = async () => {
        const read = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
        assert.is(read.status, 200, read.text);
        return [read.body.data.status, read.body.data.cancellation_reason];
      };
      assert.equal(await reason(), ['CANCELED_BY_RESTAURANT', null], 'live');
      assert.match((await cli(svc, 'audit verify', { 'no-progress': true }))[0] as string, /0 problem/);
      await svc.close({ keepData: true });
      svc = await start(dataDir);
      assert.equal(await reason(), ['CANCELED_BY_RESTAURANT', null], 'after a replay');
    } finally {
      await svc.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

/** A new customer (never matched to another) named `name`, `more` its other fields: its id. */
async function newCustomer(svc: TestService, name: string, more: Record<string, unknown> = {}) {
  const made = await svc.api('POST', '/customers', {
    token: TOKENS.full,
    body: { name, on_match: 'create_new', ...more },
  });
  assert.is(made.status, 201, made.text);
  return made.body.data.id as string;
}

/** A reservation of the customer `customerId` (a 2-guest dinner; `body` overrides): its id. */
async function bookFor(svc: TestService, customerId: string, body: Record<string, unknown> = {}) {
  const made = await create(svc, { customer: { id: customerId }, ...body });
  assert.is(made.status, 201, made.text);
  return made.body.data.id as string;
}

/** PATCH /reservations/{id} with `body`, which must be taken. */
async function patchReservation(svc: TestService, id: string, body: Record<string, unknown>) {
  const res = await svc.api('PATCH', `/reservations/${id}`, { token: TOKENS.full, body });
  assert.is(res.status, 200, res.text);
}

/** Waits for a condition; the bound only ends a hang. */
async function until(check: () => Promise<boolean>) {
  const end = Date.now() + 120_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.run();
