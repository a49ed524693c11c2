// Right to erasure and the customer.deleted webhook: the deletion notice is what a partner needs to
// erase its own copy (spec §4: detect deletions with customer.deleted), so it must reach the endpoint
// like any event, retries and resends included (spec §6). Its body describes the customer erased: it
// is stored unsealed, written erased whatever the reads it was built from. Before, its fan-out was
// sealed with the key the erasure had just destroyed: the first attempt went out from memory, and a
// retry or a resend found the body erased and canceled the delivery, so an endpoint that failed once
// never learned of the deletion.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { runCli as cli, rawDataFiles as rawFiles } from '../helpers/cli-in-process';
import { startWebhooksService, TOKENS } from '../helpers/reservations';
import { orClose } from '../helpers/service';
import { startReceiver } from '../helpers/webhook-receiver';

const t = suite('erasure: the customer.deleted webhook');

const PERSONAL = /Lovelace|ada@example\.test|687654329|likes the window|window-seat/;

t('the deletion notice of an erased customer is resent, erased, after a refusal', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-deleted-'));
  const rx = await startReceiver();
  // customer.created is taken; the deletion is refused once (final, 4xx); the resend is taken.
  rx.on('/hook', { statuses: [200, 400, 200] });
  const svc = await orClose(startWebhooksService(dataDir), () => rx.close());
  try {
    const ep = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url('/hook'), enabled_events: ['customer.deleted', 'customer.created'] },
    });
    assert.is(ep.status, 201, ep.text);
    const endpointId = ep.body.data.id;
    const made = await svc.api('POST', '/customers', {
      token: TOKENS.full,
      body: {
        name: 'Ada Lovelace',
        email: 'ada@example.test',
        phone_number: '+33687654329',
        note: 'likes the window',
        external_id: 'crm-42',
        tags: ['window-seat'],
      },
    });
    assert.is(made.status, 201, made.text);
    const customerId = made.body.data.id;
    await rx.waitFor('/hook', 1);

    await cli(svc, 'audit erase', { customer: customerId });
    const [, refused] = await rx.waitFor('/hook', 2);
    assert.is(refused?.json?.type, 'customer.deleted');
    assert.not.match(refused?.body ?? '', PERSONAL, 'the notice says nothing personal');

    let doc: WebhookDeliveryDoc | null = null;
    for (let i = 0; i < 4_800 && doc?.status !== 'failed'; i++) {
      await svc.rt.projections.catchUp();
      doc = await svc.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .findOne({ endpoint_id: endpointId, event_type: 'customer.deleted' });
      if (doc?.status !== 'failed') await new Promise((r) => setTimeout(r, 25));
    }
    assert.is(doc?.status, 'failed', 'the refused notice failed');
    const resend = await svc.api('POST', `/webhook-endpoints/${endpointId}/deliveries/${doc?._id}/resend`, {
      token: TOKENS.full,
    });
    assert.is(resend.status, 202, resend.text);
    const [, , again] = await rx.waitFor('/hook', 3);
    assert.is(again?.json?.type, 'customer.deleted', 'the resend sends the notice again');
    assert.equal(
      [again?.json?.data.object.id, again?.json?.data.object.external_id, again?.json?.data.object.name],
      [customerId, 'crm-42', '[erased]'],
    );
    assert.equal(
      [again?.json?.data.object.email, again?.json?.data.object.phone_number, again?.json?.data.object.note],
      [null, null, null],
    );
    assert.equal(again?.json?.data.object.tags, []);
    assert.is(again?.headers['x-service-delivery'], refused?.headers['x-service-delivery']);
    const raw = rawFiles(dataDir);
    const at = raw.search(PERSONAL);
    assert.is(at, -1, `nothing personal in any file: ${raw.slice(Math.max(0, at - 300), at + 100)}`);
  } finally {
    await svc.close();
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

t.run();
