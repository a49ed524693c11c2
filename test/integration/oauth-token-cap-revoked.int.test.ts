// A token revoked outside its connection (the operator's `keys revoke`, which revokes the key alone; or a
// replay of the code that raced its first exchange, whose token step 5 revokes) stayed among the
// connection's active tokens and counted toward the cap of 3: the next exchange retired a working token
// when only two were active (spec §5: "issuing a fourth revokes the oldest"). Now the next exchange
// retires such an id (OAuthTokenRemoved, reason key_revoked) outside the count.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyStream } from '../../commands/credentials/events';
import { connectionStream } from '../../commands/oauth/events';
import { revokeClientToken } from '../../commands/oauth/token-handler';
import { createRestaurant } from '../../commands/restaurants/handler';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import type { EventStore } from '../../src/ports/event-store';
import { createRuntime, type Runtime } from '../../src/runtime';
import { runCli } from '../helpers/cli-in-process';
import { activeKeyIds, issueToken, registerTestApplication } from '../helpers/oauth-commands';
import { restaurantProfile } from '../helpers/restaurants';

const meta = operatorMeta('test');

const t = suite<{ rt: Runtime; dir: string }>('OAuth: a token revoked outside its connection');
t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-oauth-revoked-'));
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  await createRestaurant(ctx.rt, 'rest_a', restaurantProfile('rest-a', { api_option: true }), meta);
  await registerTestApplication(ctx.rt, 'app_till', ['CATALOG_READ']);
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

t(
  'a token the operator revoked stops counting toward the cap: the two working tokens stay with the new one',
  async ({ rt }) => {
    const redeem = async () => (await issueToken(rt, 'app_till', 'rest_a', ['CATALOG_READ'])).keyId;
    const first = await redeem();
    const second = await redeem();
    const third = await redeem();
    assert.equal(await activeKeyIds(rt, 'rest_a'), [first, second, third].sort());

    // The operator revokes the second (a token that leaked, say): the key alone, through the CLI.
    assert.equal(await runCli(rt, 'keys revoke', { id: second }), ['key revoked']);
    assert.equal(await activeKeyIds(rt, 'rest_a'), [first, third].sort());

    const fourth = await redeem();
    assert.equal(
      await activeKeyIds(rt, 'rest_a'),
      [first, third, fourth].sort(),
      'three working tokens: none retired in place of the revoked one',
    );
    // The cap still holds for working tokens: another retires the oldest, and only it.
    const fifth = await redeem();
    assert.equal(await activeKeyIds(rt, 'rest_a'), [third, fourth, fifth].sort());
  },
);

t(
  "a token the application revokes, retired by an exchange between its two writes, is logged as the client's",
  async ({ rt }) => {
    const issued = await issueToken(rt, 'app_till', 'rest_a', ['CATALOG_READ']);
    // RFC 7009: the key is revoked, then removed from the connection; an exchange runs in between.
    let other: string | null = null;
    const events = new Proxy(rt.events, {
      get(target, prop, receiver) {
        if (prop !== 'append') return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<EventStore['append']>) => {
          const out = await target.append(...args);
          const [stream, appended] = args;
          if (
            other === null &&
            stream === apiKeyStream(issued.keyId) &&
            appended.some((e) => e.type === 'ApiKeyRevoked')
          )
            other = (await issueToken(rt, 'app_till', 'rest_a', ['CATALOG_READ'])).keyId;
          return out;
        };
      },
    }) as EventStore;
    await revokeClientToken({ events, clock: rt.clock }, 'app_till', issued.token, meta);
    assert.ok(other, 'an exchange ran between the revocation and the removal');
    const removed = (await rt.events.readStream(connectionStream('rest_a', 'app_till'))).filter(
      (e) => e.type === 'OAuthTokenRemoved' && e.data.key_id === issued.keyId,
    );
    assert.equal(
      removed.map((e) => e.data.reason),
      ['revoked_by_client'],
      'removed once, as the application revoked it',
    );
  },
);

t.run();
