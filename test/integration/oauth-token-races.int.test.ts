// A token being issued while the connection changes (spec §5): a disconnection, or newer tokens past the
// cap of 3, may retire the key between the connection taking it and the key being created, when revoking
// it is still a no-op. The interleaving is made exact by running the other command just before the
// key's ApiKeyCreated is appended (no timing).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { GrantRefused } from '../../commands/oauth/codes';
import { disconnectApplication } from '../../commands/oauth/token-handler';
import { createRestaurant } from '../../commands/restaurants/handler';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { withHook } from '../helpers/hooked-events';
import { activeKeyIds, issueToken, registerTestApplication } from '../helpers/oauth-commands';
import { restaurantProfile } from '../helpers/restaurants';

const meta = operatorMeta('test');

const t = suite<{ rt: Runtime; dir: string }>('OAuth: a token issued while the connection changes');
t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-oauth-races-'));
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  for (const id of ['rest_a', 'rest_b'])
    await createRestaurant(ctx.rt, id, restaurantProfile(id.replace('_', '-'), { api_option: true }), meta);
  await registerTestApplication(ctx.rt, 'app_till', ['CATALOG_READ']);
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The runtime, running `before` once just before the first append of an ApiKeyCreated. */
const interleaved = (rt: Runtime, before: () => Promise<void>) =>
  withHook(rt, (_stream, batch) => batch.some((e) => e.type === 'ApiKeyCreated'), before);

const redeem = (rt: Runtime, deps: WriteDeps, restaurant: string) =>
  issueToken(rt, 'app_till', restaurant, ['CATALOG_READ'], deps);

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => err,
  );

t('a disconnection while the token is issued: refused, and no token stays active', async ({ rt }) => {
  const deps = interleaved(rt, async () => {
    await disconnectApplication(rt, 'rest_a', 'app_till', meta);
  });
  const err = await refusal(redeem(rt, deps, 'rest_a'));
  assert.equal(await activeKeyIds(rt, 'rest_a'), []);
  assert.instance(err, GrantRefused);
  assert.match((err as Error).message, /disconnected/);
});

t('newer tokens past the cap while one is issued: refused, and at most 3 stay active', async ({ rt }) => {
  for (let i = 0; i < 2; i++) await redeem(rt, rt, 'rest_b');
  const newer: string[] = [];
  // Three tokens issued while the third is in flight: they retire the two older ones, then it.
  const deps = interleaved(rt, async () => {
    for (let i = 0; i < 3; i++) newer.push((await redeem(rt, rt, 'rest_b')).keyId);
  });
  const err = await refusal(redeem(rt, deps, 'rest_b'));
  assert.equal(await activeKeyIds(rt, 'rest_b'), [...newer].sort(), 'the three newest only');
  assert.instance(err, GrantRefused);
});

t.run();
