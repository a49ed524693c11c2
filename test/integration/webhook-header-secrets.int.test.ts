// Custom header values are secrets (commands/webhook-endpoints/header-secrets.ts): partners carry their
// receivers' credentials in them. They are sealed in the log and the read models, shown by name only
// by the API and the auditors' commands (history, as-of of an id and of a read model, export), and
// still sent with every delivery, after a restart too. An endpoint event written in clear before the
// sealing is redacted on every output, still delivered, and sealed again by a save of its headers.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { webhookEndpointStream } from '../../commands/webhook-endpoints/events';
import { createWebhookEndpoint, updateWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { openHeaders } from '../../commands/webhook-endpoints/header-secrets';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { getEndpoint, presentEndpoint } from '../../queries/webhooks';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { NO_STREAM } from '../../src/ports/event-store';
import { createRuntime, type Runtime } from '../../src/runtime';
import { type RunningWebhooks, startWebhooks } from '../../src/webhooks/runner';
import { rawDataFiles, runCli } from '../helpers/cli-in-process';
import { demoCustomer, startWebhooksWorld, until, type WebhooksWorld } from '../helpers/webhooks-world';

const FIRST = 'hdr-secret-value-123';
const SECOND = 'hdr-secret-value-456-rotated';
const TOKEN = 'tok-auth-value-789-xyz';
const LEGACY = 'legacy-clear-value-000-abc';
const KEY = { id: 'key_hdr', token: 'couvert_pk_header_secrets_00000000000001', scopes: ['CUSTOMERS_READ'] };
const credential = { id: KEY.id, scopes: KEY.scopes };

const t = suite<{ w: WebhooksWorld; dir: string }>('webhook custom header values are secrets');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({ name: 'webhook-header-secrets', key: KEY, endpoint: null });
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-header-secrets-out-'));
});
t.after(async (ctx) => {
  await ctx.w?.close();
  if (ctx.dir) rmSync(ctx.dir, { recursive: true, force: true });
});

const endpointDoc = async (rt: Runtime, id: string) => {
  await rt.refresh();
  return (await rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .findOne({ _id: id })) as WebhookEndpointDoc;
};

/** Every audit output about the restaurant and the endpoint, as one text. */
async function auditOutputs(rt: Runtime, id: string, dir: string, name: string): Promise<string> {
  const at = new Date().toISOString();
  const out = join(dir, `${name}.ndjson`);
  const asOfModel = join(dir, `${name}-as-of.ndjson`);
  const parts = [
    ...(await runCli(rt, 'audit history', {}, [id])),
    ...(await runCli(rt, 'audit history', { json: true }, [id])),
    ...(await runCli(rt, 'audit as-of', { at }, [id])),
  ];
  await runCli(rt, 'audit as-of', {
    at,
    restaurant: 'rest_demo',
    collection: 'webhook_endpoints',
    out: asOfModel,
    'no-progress': true,
  });
  await runCli(rt, 'audit export', { restaurant: 'rest_demo', out, 'no-progress': true });
  return [...parts, readFileSync(asOfModel, 'utf8'), readFileSync(out, 'utf8')].join('\n');
}

t(
  'sealed in the log and read models, redacted in every audit output, sent with deliveries, after a restart',
  async (ctx) => {
    const { w } = ctx;
    const created = await createWebhookEndpoint(
      w.rt,
      {
        restaurantId: 'rest_demo',
        url: w.rx.url('/hdr'),
        headers: { 'X-Api-Key': FIRST, 'X-Auth-Token': TOKEN },
        credential,
      },
      operatorMeta('test'),
    );
    const id = created.endpointId;
    const updated = await updateWebhookEndpoint(
      w.rt,
      'rest_demo',
      id,
      // X-Auth-Token as the API showed it: kept.
      { headers: { 'X-Api-Key': SECOND, 'X-Auth-Token': '[redacted]' } },
      KEY.scopes,
      operatorMeta('test'),
    );
    await w.rt.settle(updated.position);

    const doc = await endpointDoc(w.rt, id);
    assert.equal(Object.keys(doc.headers), ['X-Api-Key', 'X-Auth-Token']);
    for (const v of Object.values(doc.headers)) assert.match(v, /^v1\./, 'the read model holds boxes');
    assert.equal(presentEndpoint(doc, new Date()).headers, {
      'X-Api-Key': '[redacted]',
      'X-Auth-Token': '[redacted]',
    });
    assert.ok((await getEndpoint(w.rt.docs, { restaurantId: 'rest_demo', owner: null }, id)) !== null);

    const stored = rawDataFiles(w.dir);
    for (const v of [FIRST, SECOND, TOKEN]) assert.not.ok(stored.includes(v), `${v} is stored in clear`);
    const shown = await auditOutputs(w.rt, id, ctx.dir, 'sealed');
    for (const v of [FIRST, SECOND, TOKEN])
      assert.not.ok(shown.includes(v), `${v} is shown by an audit output`);
    assert.ok(shown.includes('X-Api-Key'), 'the names are shown');

    // The receiver echoes the request's headers: the answer kept with the attempt does not hold them.
    w.rx.on('/hdr', { body: (r) => JSON.stringify(r.headers) });
    await demoCustomer(w.rt, 'Header');
    const [got] = await w.rx.waitFor('/hdr', 1);
    assert.is(got?.headers['x-api-key'], SECOND);
    assert.is(got?.headers['x-auth-token'], TOKEN);
    await until('the attempt recorded', 120_000, async () => {
      await w.rt.refresh();
      return (await runCli(w.rt, 'audit history', {}, [id])).some((l) =>
        l.includes('WebhookAttemptRecorded'),
      );
    });
    const afterAttempt = rawDataFiles(w.dir);
    for (const v of [SECOND, TOKEN])
      assert.not.ok(afterAttempt.includes(v), `${v} kept from the echoed answer`);

    // A restart: the read models replayed from the log, deliveries still carry the values.
    await w.running?.stop();
    w.running = null;
    await w.rt.close();
    const config = loadConfig({
      DATA_DIR: w.dir,
      LOG_LEVEL: 'silent',
      ROLES: 'webhooks',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    const rt = await createRuntime(config, { logger: createLogger('silent') });
    w.rt = rt;
    const running: RunningWebhooks = startWebhooks(rt, {});
    w.running = running;
    await demoCustomer(rt, 'After restart');
    const both = await w.rx.waitFor('/hdr', 2);
    assert.is(both[1]?.headers['x-api-key'], SECOND);
    assert.is(both[1]?.headers['x-auth-token'], TOKEN);
  },
);

t(
  'an endpoint written in clear before the sealing: redacted everywhere, delivered, sealed by a save',
  async (ctx) => {
    const { w } = ctx;
    // As a version before 2026-11-28 wrote it (the signing secret was sealed already).
    const id = 'we_legacy_clear';
    const appended = await w.rt.events.append(
      webhookEndpointStream(id),
      [
        {
          type: 'WebhookEndpointCreated',
          data: {
            endpoint_id: id,
            restaurant_id: 'rest_demo',
            credential_id: KEY.id,
            owner: `key:${KEY.id}`,
            api_version: 'v1',
            url: w.rx.url('/legacy'),
            description: null,
            enabled_events: ['*'],
            headers: { 'X-Api-Key': LEGACY },
            disabled: false,
            secret: w.rt.secrets.seal('whsec_legacy_clear_headers_0000001'),
            at: new Date().toISOString(),
          },
          metadata: { ...operatorMeta('test'), restaurant_id: 'rest_demo' },
        },
      ],
      NO_STREAM,
    );
    await w.rt.settle(appended.position);
    const shown = await auditOutputs(w.rt, id, ctx.dir, 'legacy');
    assert.not.ok(shown.includes(LEGACY), 'a value stored in clear is shown by an audit output');
    assert.equal(presentEndpoint(await endpointDoc(w.rt, id), new Date()).headers, {
      'X-Api-Key': '[redacted]',
    });

    await demoCustomer(w.rt, 'Legacy');
    const [got] = await w.rx.waitFor('/legacy', 1);
    assert.is(got?.headers['x-api-key'], LEGACY);

    // Saved again as the API shows it: the same value, now sealed (what `webhooks seal-headers` does).
    const saved = await updateWebhookEndpoint(
      w.rt,
      'rest_demo',
      id,
      { headers: { 'X-Api-Key': '[redacted]' } },
      KEY.scopes,
      operatorMeta('test'),
    );
    assert.is(saved.appended.length, 1);
    await w.rt.settle(saved.position);
    const doc = await endpointDoc(w.rt, id);
    assert.match(doc.headers['X-Api-Key'] as string, /^v1\./);
    const last = saved.appended[0] as unknown as { data: { previous: { headers: Record<string, string> } } };
    assert.equal(
      last.data.previous.headers,
      { 'X-Api-Key': '[redacted]' },
      'the clear value is not restated',
    );
    await demoCustomer(w.rt, 'Legacy sealed');
    const again = await w.rx.waitFor('/legacy', 2);
    assert.is(again[1]?.headers['x-api-key'], LEGACY);
  },
);

t('webhooks seal-headers seals every endpoint holding values in clear, once', async (ctx) => {
  const { w } = ctx;
  const id = 'we_legacy_cli';
  const appended = await w.rt.events.append(
    webhookEndpointStream(id),
    [
      {
        type: 'WebhookEndpointCreated',
        data: {
          endpoint_id: id,
          restaurant_id: 'rest_demo',
          credential_id: KEY.id,
          owner: `key:${KEY.id}`,
          api_version: 'v1',
          url: w.rx.url('/legacy-cli'),
          description: null,
          enabled_events: ['customer.created'],
          headers: { 'X-Api-Key': LEGACY, 'X-Short': 'a' },
          disabled: false,
          secret: w.rt.secrets.seal('whsec_legacy_clear_headers_0000002'),
          at: new Date().toISOString(),
        },
        metadata: { ...operatorMeta('test'), restaurant_id: 'rest_demo' },
      },
    ],
    NO_STREAM,
  );
  await w.rt.settle(appended.position);
  const first = await runCli(w.rt, 'webhooks seal-headers', {});
  assert.ok(first.includes(`endpoint ${id}: custom header values sealed`), first.join('\n'));
  assert.match(first.at(-1) as string, /^1 endpoint\(s\) sealed/);
  const doc = await endpointDoc(w.rt, id);
  assert.equal(openHeaders(doc.headers, w.rt.secrets), { 'X-Api-Key': LEGACY, 'X-Short': 'a' });
  assert.not.ok(Object.values(doc.headers).includes(LEGACY));
  const again = await runCli(w.rt, 'webhooks seal-headers', {});
  assert.equal(again, [
    '0 endpoint(s) sealed; the events written before still hold the old values in clear (docs/WEBHOOKS.md)',
  ]);
});

t.run();
