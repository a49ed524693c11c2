// Right to erasure and what an endpoint answered: the answer to a delivery attempt is kept as an
// excerpt (src/webhooks/excerpt.ts) for the dashboard's delivery history, and an endpoint may echo
// what it was sent (the guest's name in an error page, a debugging echo). Such an excerpt is sealed in
// the log with the key of the customer the delivery described, and erased with them: in the raw files,
// in the live read model, after a replay.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { runCli as cli, rawDataFiles as rawFiles } from '../helpers/cli-in-process';
import { DINNER, startWebhooksService, TOKENS } from '../helpers/reservations';
import { orClose, type TestService } from '../helpers/service';
import { startReceiver } from '../helpers/webhook-receiver';

const t = suite('erasure: endpoint answers kept with webhook deliveries');

const PERSONAL = /Lovelace/;

const start = startWebhooksService;

async function deliveries(svc: TestService, endpointId: string): Promise<WebhookDeliveryDoc[]> {
  await svc.rt.projections.catchUp();
  return svc.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).find({ endpoint_id: endpointId });
}

const excerpts = (docs: WebhookDeliveryDoc[]) =>
  docs.flatMap((d) => d.attempts.map((a) => a.response_excerpt));

t('an echoed answer is sealed with the customer, and erased with them', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-answers-'));
  const rx = await startReceiver();
  // The endpoint echoes the guest's name back.
  rx.on('/hook', { body: (r) => (PERSONAL.test(r.body) ? 'thanks, booked for Ada Lovelace' : 'ok') });
  let svc = await orClose(start(dataDir), () => rx.close());
  let endpointId = '';
  let customerId = '';
  try {
    const ep = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url('/hook') },
    });
    assert.is(ep.status, 201, ep.text);
    endpointId = ep.body.data.id;
    const made = await svc.api('POST', '/reservations', {
      token: TOKENS.full,
      body: { party_size: 2, start_at: DINNER, customer: { name: 'Ada Lovelace' } },
    });
    assert.is(made.status, 201, made.text);
    customerId = made.body.data.customer.id;
    await rx.waitFor('/hook', 2);
    let docs: WebhookDeliveryDoc[] = [];
    // Until a hang bound (100 looks 50 ms apart were a deadline a loaded machine could miss).
    for (const end = Date.now() + 120_000; Date.now() < end; ) {
      docs = await deliveries(svc, endpointId);
      if (docs.length >= 2 && docs.every((d) => d.attempts.length > 0)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(
      excerpts(docs).some((x) => x?.includes('Ada Lovelace')),
      `the dashboard shows the answer while the customer exists: ${JSON.stringify(excerpts(docs))}`,
    );
    assert.not.match(rawFiles(dataDir), PERSONAL, 'the answer is not in clear in any file');

    await cli(svc, 'audit erase', { customer: customerId });
    docs = await deliveries(svc, endpointId);
    assert.ok(docs.length >= 2);
    assert.not.match(JSON.stringify(excerpts(docs)), PERSONAL, 'the live read model is erased at once');
    for (const d of docs) {
      const history = (await cli(svc, 'audit history', { json: true }, [d._id])).join('\n');
      assert.not.match(history, PERSONAL, `the history of ${d._id}`);
    }
    assert.not.match(rawFiles(dataDir), PERSONAL);
    const verified = await cli(svc, 'audit verify', { 'no-progress': true });
    assert.match(verified.join('\n'), /0 difference\(s\)/, 'a replay builds what the live model shows');

    await svc.close({ keepData: true });
    svc = await start(dataDir);
    const replayed = await deliveries(svc, endpointId);
    assert.ok(replayed.length >= 2);
    assert.not.match(JSON.stringify(excerpts(replayed)), PERSONAL, 'a replay shows it erased');
    assert.ok(
      excerpts(replayed).some((x) => x === 'ok' || x === null),
      'answers that said nothing of the customer read as before',
    );
  } finally {
    await svc.close();
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

t.run();
