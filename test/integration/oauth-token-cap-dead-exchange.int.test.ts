// An exchange that dies between "the connection takes the key id" (OAuthTokenAdded) and "the key is
// created" (ApiKeyCreated) left a key id that never existed counting toward the connection's cap of 3 for
// ever: the next exchanges retired a real token one issue early. Now the next exchange, once the dead one
// is past the grace an exchange may take (KEY_CREATION_GRACE_MS), retires that id as never created,
// outside the count (docs/OAUTH.md). The death is an append that fails at the ApiKeyCreated (no timing).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KEY_CREATION_GRACE_MS } from '../../commands/oauth/connections';
import { createRestaurant } from '../../commands/restaurants/handler';
import { loadConfig } from '../../src/config';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { deadFrom } from '../helpers/hooked-events';
import { activeKeyIds, issueToken, registerTestApplication } from '../helpers/oauth-commands';
import { restaurantProfile } from '../helpers/restaurants';

const meta = operatorMeta('test');

const t = suite<{ rt: Runtime; dir: string; clock: FixedClock }>(
  'OAuth: an exchange that died before creating its key',
);
t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-oauth-dead-'));
  ctx.clock = new FixedClock('2026-06-02T10:00:00Z');
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
    clock: ctx.clock,
  });
  await createRestaurant(ctx.rt, 'rest_a', restaurantProfile('rest-a', { api_option: true }), meta);
  await registerTestApplication(ctx.rt, 'app_till', ['CATALOG_READ']);
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

t(
  'a key id never created stops counting toward the cap: the two real tokens stay with the new one',
  async ({ rt, clock }) => {
    const redeem = () => issueToken(rt, 'app_till', 'rest_a', ['CATALOG_READ']);
    const first = (await redeem()).keyId;
    const second = (await redeem()).keyId;
    // The third exchange dies once the connection took its key id, before the key was created.
    const dying = deadFrom(rt, (_stream, batch) => batch.some((e) => e.type === 'ApiKeyCreated'));
    const died = await issueToken(rt, 'app_till', 'rest_a', ['CATALOG_READ'], dying).then(
      () => null,
      (err: Error) => err,
    );
    assert.match(died?.message ?? '', /died/);
    assert.equal(await activeKeyIds(rt, 'rest_a'), [first, second].sort());

    clock.advance(KEY_CREATION_GRACE_MS / 1000);
    const third = (await redeem()).keyId;
    assert.equal(
      await activeKeyIds(rt, 'rest_a'),
      [first, second, third].sort(),
      'three real tokens: none retired in place of the key that never existed',
    );
    // The cap still holds for real tokens: a fourth retires the oldest.
    const fourth = (await redeem()).keyId;
    assert.equal(await activeKeyIds(rt, 'rest_a'), [second, third, fourth].sort());
  },
);

t.run();
