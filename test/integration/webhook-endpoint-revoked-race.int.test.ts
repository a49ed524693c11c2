// A webhook endpoint created while its credential is being revoked. The publisher deletes a revoked
// credential's endpoints as the read models show them at the revocation: one whose creation lands
// after it was never deleted, and held one of the restaurant's 20 slots for good. The creation reads
// the credential again once written. The interleaving is exact: the revocation runs just before the
// endpoint's WebhookEndpointCreated is appended (no timing).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { revokeApiKey } from '../../commands/credentials/handler';
import { createWebhookEndpoint, loadWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { applyBootstrap } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { withHook } from '../helpers/hooked-events';
import { demoBootstrap } from '../helpers/service';

const meta = operatorMeta('test');
const t = suite<{ rt: Runtime; dir: string }>('webhook endpoints: created while the credential is revoked');

t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-endpoint-revoked-'));
  ctx.rt = await createRuntime(
    loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }),
    { logger: createLogger('silent') },
  );
  const bootstrap = demoBootstrap({}, [
    {
      id: 'key_wh',
      token: 'couvert_pk_endpoint_race_0000000000000001',
      scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'],
    },
  ]);
  await ctx.rt.settle((await applyBootstrap(ctx.rt, bootstrap, meta)).position);
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

t('the endpoint is deleted and the creation answers 401; the slot is free again', async ({ rt }) => {
  let done = false;
  const deps = withHook(
    rt,
    (_stream, batch) => batch.some((e) => e.type === 'WebhookEndpointCreated'),
    async () => {
      done = true;
      await revokeApiKey(rt, 'key_wh', 'revoked meanwhile', meta);
    },
  );
  const err = await createWebhookEndpoint(
    deps,
    {
      restaurantId: 'rest_demo',
      url: 'https://hooks.example/in',
      credential: { id: 'key_wh', scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
      endpointId: 'we_race',
    },
    meta,
  ).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(done, 'the revocation ran inside the creation');
  assert.instance(err, ApiError);
  assert.is((err as ApiError).status, 401);
  // As every 401, with its Bearer challenge (RFC 9110 §11.6.1).
  assert.is(
    (err as ApiError).headers?.['www-authenticate'],
    'Bearer realm="Couvert Partner API", error="invalid_token"',
  );
  const state = await loadWebhookEndpoint(rt, 'we_race');
  assert.ok(state.deleted, 'an endpoint of a revoked credential was left');
  // Its slot is free: the restaurant's slot stream names no holder.
  const slots = await rt.events.readStream('webhook-slots-rest_demo');
  assert.is(slots.at(-1)?.type, 'WebhookEndpointSlotReleased', slots.map((e) => e.type).join(', '));
});

t.run();
