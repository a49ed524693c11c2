// A reservation detached from its customer keeps the text they wrote in their boxes; a later change
// of that text restates the old value (`previous`, `previous_attributes`): it is sealed with the key
// of whoever's box held it, never written in clear, so erasing them makes it unreadable in the log,
// the stored webhook bodies and the audit tools.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli as cli } from '../helpers/cli-in-process';
import { create, startWebhooksService as start, TOKENS } from '../helpers/reservations';
import { orClose, type TestService } from '../helpers/service';
import { startReceiver } from '../helpers/webhook-receiver';

const t = suite('erasure: text of a reservation detached from its customer');

const OF_C = /QQnuts|Qqcarla/;

t("a change of a detached reservation's text seals the old value with its owner's key", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-detached-'));
  const rx = await startReceiver();
  const svc = await orClose(start(dataDir), () => rx.close());
  try {
    const ep = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url('/hook') },
    });
    assert.is(ep.status, 201, ep.text);
    const made0 = await svc.api('POST', '/customers', {
      token: TOKENS.full,
      body: { name: 'Carla Qqcarla', email: 'carla@example.test', on_match: 'create_new' },
    });
    assert.is(made0.status, 201, made0.text);
    const c = made0.body.data.id as string;
    const made = await create(svc, { customer: { id: c }, allergies: 'C wrote: QQnuts' });
    assert.is(made.status, 201, made.text);
    const id = made.body.data.id as string;
    await patch(svc, id, { customer: null });
    await patch(svc, id, { allergies: 'now: gluten' });
    // customer.created, reservation.created, .updated (detached), .updated (allergies).
    const got = await rx.waitFor('/hook', 4);
    const last = got.map((r) => JSON.parse(r.body)).find((b) => b.data?.previous_attributes?.allergies);
    assert.is(last?.data.previous_attributes.allergies, 'C wrote: QQnuts', 'sent before the erasure');

    await cli(svc, 'audit erase', { customer: c });

    const stored = [];
    for await (const e of svc.rt.events.readAll()) stored.push(e);
    for (const e of stored.filter(
      (e) => e.stream.startsWith('reservation-') || e.type === 'WebhookDeliveriesScheduled',
    ))
      assert.not.match(JSON.stringify(e.data), OF_C, `${e.type} of ${e.stream}, read after C's erasure`);
    const kept = stored.find(
      (e) => e.type === 'ReservationUpdated' && JSON.stringify(e.data).includes('now: gluten'),
    );
    assert.ok(kept, 'the change itself is kept');
    const audit = (await cli(svc, 'audit history', { json: true }, [id])).join('\n');
    assert.not.match(audit, OF_C, 'audit history');
    assert.match(audit, /now: gluten/, "the new text (in clear: nobody's) is kept");
    const history = await svc.api('GET', `/reservations/${id}/history`, { token: TOKENS.full });
    assert.is(history.status, 200, history.text);
    assert.not.match(JSON.stringify(history.body), OF_C, 'the partner history');
  } finally {
    await svc.close();
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

async function patch(svc: TestService, id: string, body: Record<string, unknown>) {
  const res = await svc.api('PATCH', `/reservations/${id}`, { token: TOKENS.full, body });
  assert.is(res.status, 200, res.text);
}

t(
  "text a PATCH sets with the customer it creates for inline details is sealed with that customer's key",
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-inline-'));
    const svc = await start(dataDir);
    try {
      const made = await create(svc, {});
      assert.is(made.status, 201, made.text);
      const id = made.body.data.id as string;
      // The customer is written after the reservation's other changes (the tags) and connected with the
      // text: one box, the new customer's (docs/RESERVATIONS.md, "Order of writes").
      const res = await svc.api('PATCH', `/reservations/${id}`, {
        token: TOKENS.full,
        body: {
          tags: ['vip'],
          allergies: 'D wrote: QQsesame',
          customer: { name: 'Dora Qqdora', email: 'dora@example.test' },
        },
      });
      assert.is(res.status, 200, res.text);
      assert.equal([res.body.data.allergies, res.body.data.tags], ['D wrote: QQsesame', ['vip']]);
      await cli(svc, 'audit erase', { customer: res.body.data.customer.id });
      const stored = [];
      for await (const e of svc.rt.events.readAll()) stored.push(e);
      for (const e of stored.filter((e) => e.stream === `reservation-${id}`))
        assert.not.match(JSON.stringify(e.data), /QQsesame|Qqdora/, `${e.type}, read after the erasure`);
    } finally {
      await svc.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

t.run();
