// A reservation given to another customer: what it holds of the customer it came from (their profile,
// the previous value partners see in `previous_attributes.customer`; feedback given while it was
// theirs; text it held then and changed in the move) is sealed with *their* key, beside the new
// customer's data, never under the new customer's key alone. Erasing the first customer makes it
// unreadable everywhere — the stored webhook bodies, a resend, the partner history, the audit tools —
// while the new customer's data stays as it is.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES } from '../../projections/webhook-deliveries';
import { runCli as cli } from '../helpers/cli-in-process';
import { create, startWebhooksService as start, TOKENS } from '../helpers/reservations';
import { orClose, type TestService } from '../helpers/service';
import { startReceiver } from '../helpers/webhook-receiver';

const t = suite('erasure: a reservation moved to another customer');

/** Everything personal of the first customer (A). */
const OF_A = /Qqamelia|amelia@example\.test|A said: QQsuperb|A wrote: QQcelery/;

t("the first customer's data in a moved reservation is erased with them, the new one's kept", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-move-'));
  const rx = await startReceiver();
  let svc = await orClose(start(dataDir), () => rx.close());
  try {
    const ep = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url('/hook') },
    });
    assert.is(ep.status, 201, ep.text);
    const endpointId = ep.body.data.id as string;
    // The endpoint echoes what changed first (an error page quoting the body): its answer is kept.
    rx.on('/hook', { body: (r) => JSON.stringify(r.json?.data?.previous_attributes ?? null) });
    const a = await newCustomer(svc, 'Amelia Qqamelia', 'amelia@example.test');
    const b = await newCustomer(svc, 'Bertrand Qqbertrand', 'bertrand@example.test');
    const made = await create(svc, { customer: { id: a }, allergies: 'A wrote: QQcelery' });
    assert.is(made.status, 201, made.text);
    const id = made.body.data.id as string;
    await cli(svc, 'reservations feedback', { id, rating: '5', comment: 'A said: QQsuperb' });
    // The move changes the text too: its previous value is A's.
    await patch(svc, id, { customer: { id: b }, allergies: 'B wrote: QQsesame' });
    // A later change of B's reservation: its body still holds the feedback given under A.
    await patch(svc, id, { party_size: 3 });
    // customer.created ×2, reservation.created, .updated (feedback), .updated (move), .updated (size).
    const got = await rx.waitFor('/hook', 6);
    const move = got
      .map((r) => JSON.parse(r.body))
      .find((b) => b.data?.previous_attributes?.customer?.id === a);
    assert.ok(move, 'the move was published with A as the previous customer');
    assert.is(move.data.previous_attributes.customer.name, 'Amelia Qqamelia');
    assert.is(move.data.object.customer.name, 'Bertrand Qqbertrand');
    const moveDeliveryId = got.find((r) => r.body.includes('"previous_attributes":{"customer"'))?.headers[
      'x-service-delivery'
    ] as string;
    assert.ok(moveDeliveryId);

    // What the endpoint answered to the move keeps nothing of A (sealed with B's key alone).
    const answers = async () => {
      await svc.rt.projections.catchUp();
      return svc.rt.docs.collection(WEBHOOK_DELIVERIES).find({ _id: moveDeliveryId });
    };
    const [answered] = await until(async () => {
      const docs = await answers();
      return (docs[0]?.attempts as unknown[] | undefined)?.length ? docs : undefined;
    });
    assert.match(JSON.stringify(answered), /\[redacted\]/, 'the echo came back');
    assert.not.match(JSON.stringify(answered), OF_A, "the answer holds nothing of A's");

    await cli(svc, 'audit erase', { customer: a });

    const fanouts = async () => {
      const out = [];
      for await (const e of svc.rt.events.readAll()) if (e.type === 'WebhookDeliveriesScheduled') out.push(e);
      return out;
    };
    for (const f of await fanouts())
      assert.not.match(JSON.stringify(f.data), OF_A, `stored bodies of ${f.stream}, read after A's erasure`);
    const moved = (await fanouts()).find((f) =>
      JSON.stringify(f.data.payloads).includes('\\"previous_attributes\\":{\\"customer\\"'),
    );
    assert.ok(moved, "the move's fan-out still holds its bodies");
    assert.match(JSON.stringify(moved?.data.payloads), /Qqbertrand/, "B's data is kept");
    assert.match(JSON.stringify(moved?.data.payloads), /\[erased\]/, 'A reads erased in it');

    // A resend sends B's reservation with A erased (after A's customer.deleted has arrived).
    await rx.waitFor('/hook', 7);
    const sent = rx.for('/hook').length;
    const resend = await svc.api(
      'POST',
      `/webhook-endpoints/${endpointId}/deliveries/${moveDeliveryId}/resend`,
      { token: TOKENS.full },
    );
    assert.is(resend.status, 202, resend.text);
    const again = (await rx.waitFor('/hook', sent + 1)).slice(sent);
    for (const r of again) assert.not.match(r.body, OF_A, 'the resent body');
    const resent = JSON.parse(again[0]?.body ?? '{}');
    assert.is(resent.data.object.customer.name, 'Bertrand Qqbertrand');
    assert.is(resent.data.previous_attributes.customer.id, a);
    assert.is(resent.data.previous_attributes.customer.name, '[erased]');

    const seen = async () => {
      const history = await svc.api('GET', `/reservations/${id}/history`, { token: TOKENS.full });
      assert.is(history.status, 200, history.text);
      assert.not.match(JSON.stringify(history.body), OF_A, 'the partner history');
      const deliveries = await svc.api('GET', `/webhook-endpoints/${endpointId}/deliveries`, {
        token: TOKENS.full,
      });
      assert.is(deliveries.status, 200, deliveries.text);
      assert.not.match(JSON.stringify(deliveries.body), OF_A, 'the delivery history');
      const audit = (await cli(svc, 'audit history', { json: true }, [id])).join('\n');
      assert.not.match(audit, OF_A, 'audit history');
      assert.match(audit, /QQsesame/, "B's text is kept");
      const asOf = (
        await cli(svc, 'audit as-of', { at: String(await svc.rt.events.headPosition()) }, [id])
      ).join('\n');
      assert.not.match(asOf, OF_A, 'audit as-of');
      await svc.rt.projections.catchUp();
      const docs = await svc.rt.docs.collection(WEBHOOK_DELIVERIES).find({});
      assert.not.match(JSON.stringify(docs), OF_A, 'the delivery history and its answers');
      const deliveryAudit = (await cli(svc, 'audit history', { json: true }, [moveDeliveryId])).join('\n');
      assert.not.match(deliveryAudit, OF_A, "audit history of the move's delivery");
      const verified = await cli(svc, 'audit verify', { 'no-progress': true });
      assert.match(verified[0] as string, /0 problem\(s\)/, 'replay equals the read models');
    };
    await seen();
    await svc.close({ keepData: true });
    svc = await start(dataDir);
    await seen();
    for (const f of await fanouts())
      assert.not.match(JSON.stringify(f.data), OF_A, `stored bodies of ${f.stream}, after a restart`);
  } finally {
    await svc.close();
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Waits for a value; the bound only ends a hang. */
async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + 120_000;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function newCustomer(svc: TestService, name: string, email: string) {
  const made = await svc.api('POST', '/customers', {
    token: TOKENS.full,
    body: { name, email, on_match: 'create_new' },
  });
  assert.is(made.status, 201, made.text);
  return made.body.data.id as string;
}

async function patch(svc: TestService, id: string, body: Record<string, unknown>) {
  const res = await svc.api('PATCH', `/reservations/${id}`, { token: TOKENS.full, body });
  assert.is(res.status, 200, res.text);
}

t.run();
