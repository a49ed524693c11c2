// A token being issued while the connection changes (spec §5): a disconnection, or newer tokens past the
// cap of 3, may retire the key between the connection taking it and the key being created, when revoking
// it is still a no-op. The interleaving is made exact by running the other command just before the
// key's ApiKeyCreated is appended (no timing).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadApplication, registerApplication } from '../../commands/oauth/application-handler';
import { GrantRefused } from '../../commands/oauth/codes';
import { disconnectApplication, issueCode, redeemCode } from '../../commands/oauth/token-handler';
import { createRestaurant } from '../../commands/restaurants/handler';
import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import type { EventStore } from '../../src/ports/event-store';
import { createRuntime, type Runtime } from '../../src/runtime';
import { pkce } from '../helpers/oauth';
import { restaurantProfile } from '../helpers/restaurants';

const CALLBACK = 'https://till.example/cb';
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
  await registerApplication(
    ctx.rt,
    {
      clientId: 'app_till',
      profile: {
        name: 'Till',
        logo_url: null,
        redirect_uris: [CALLBACK],
        allowed_scopes: ['CATALOG_READ'],
        published_by_operator: false,
      },
    },
    meta,
  );
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The runtime's log, running `before` once just before the first append of an ApiKeyCreated. */
function interleaved(rt: Runtime, before: () => Promise<void>): WriteDeps {
  let done = false;
  const events = new Proxy(rt.events, {
    get(target, prop) {
      if (prop === 'append')
        return async (...args: Parameters<EventStore['append']>) => {
          if (!done && args[1].some((e) => e.type === 'ApiKeyCreated')) {
            done = true;
            await before();
          }
          return target.append(...args);
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { events, clock: rt.clock };
}

async function redeem(rt: Runtime, deps: WriteDeps, restaurant: string) {
  const { verifier, challenge } = pkce();
  const request = {
    client_id: 'app_till',
    redirect_uri: CALLBACK,
    scopes: ['CATALOG_READ' as const],
    state: 's',
    code_challenge: challenge,
    restaurant_hint: null,
  };
  const { code } = await issueCode(rt, request, restaurant, 'usr_x', meta);
  const app = await loadApplication(rt, 'app_till');
  return redeemCode(deps, app, { code, redirect_uri: CALLBACK, code_verifier: verifier }, meta);
}

const activeKeys = async (rt: Runtime, restaurant: string) => {
  await rt.projections.catchUp();
  return (
    await rt.docs.collection<ApiKeyDoc>(API_KEYS).find({ restaurant_id: restaurant, revoked_at: null })
  ).map((k) => k._id);
};

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
  assert.equal(await activeKeys(rt, 'rest_a'), []);
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
  assert.equal((await activeKeys(rt, 'rest_b')).sort(), [...newer].sort(), 'the three newest only');
  assert.instance(err, GrantRefused);
});

t.run();
