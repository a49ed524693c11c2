// What a code's exchange grants, and what a connection holds. Scopes the operator withdrew from the
// application since the consent are not granted. An OAuth connection (an application at a restaurant:
// its 3-token cap, its disconnection) is folded
// from `oauthconn-<restaurant>-<client_id>`. Restaurant ids are free text and client ids may hold a
// `-`, so restaurant `rest` with application `a-till` and restaurant `rest-a` with application `till`
// share that name: one restaurant's disconnection, or its fourth token, retired the other's tokens.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { updateApplication } from '../../commands/oauth/application-handler';
import { GrantRefused } from '../../commands/oauth/codes';
import { connectionStream } from '../../commands/oauth/events';
import { disconnectApplication } from '../../commands/oauth/token-handler';
import { createRestaurant } from '../../commands/restaurants/handler';
import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import {
  activeKeyIds,
  consentedCode,
  exchangeCode,
  issueToken,
  registerTestApplication,
} from '../helpers/oauth-commands';
import { restaurantProfile } from '../helpers/restaurants';

const meta = operatorMeta('test');

const t = suite<{ rt: Runtime; dir: string }>('OAuth: connections and the scopes a code grants');
t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-oauth-names-'));
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  await createRestaurant(ctx.rt, 'rest', restaurantProfile('rest', { api_option: true }), meta);
  await createRestaurant(ctx.rt, 'rest-a', restaurantProfile('rest-a', { api_option: true }), meta);
  for (const clientId of ['a-till', 'till'])
    await registerTestApplication(ctx.rt, clientId, ['CATALOG_READ']);
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

const redeem = async (rt: Runtime, clientId: string, restaurant: string) =>
  (await issueToken(rt, clientId, restaurant, ['CATALOG_READ'])).keyId;

t('the two connections share a stream name (the case this suite is about)', () => {
  assert.is(connectionStream('rest', 'a-till'), connectionStream('rest-a', 'till'));
});

t("one restaurant's fourth token and its disconnection leave the other's tokens active", async ({ rt }) => {
  const other = [await redeem(rt, 'till', 'rest-a'), await redeem(rt, 'till', 'rest-a')].sort();
  // Three tokens at `rest`: before, the cap counted the other connection's two and retired them.
  const mine = [];
  for (let i = 0; i < 3; i++) mine.push(await redeem(rt, 'a-till', 'rest'));
  assert.equal(await activeKeyIds(rt, 'rest'), mine.sort());
  assert.equal(await activeKeyIds(rt, 'rest-a'), other);
  await disconnectApplication(rt, 'rest', 'a-till', meta);
  assert.equal(await activeKeyIds(rt, 'rest'), []);
  assert.equal(await activeKeyIds(rt, 'rest-a'), other, "rest-a's tokens of `till` are not rest's to revoke");
  // And the other way round.
  await disconnectApplication(rt, 'rest-a', 'till', meta);
  assert.equal(await activeKeyIds(rt, 'rest-a'), []);
});

t(
  'scopes the operator withdrew between consent and exchange are not granted; none left is a refusal',
  async ({ rt }) => {
    await registerTestApplication(rt, 'app_shrink', ['CATALOG_READ', 'RESERVATIONS_READ']);
    const consented = () => consentedCode(rt, 'app_shrink', 'rest', ['CATALOG_READ', 'RESERVATIONS_READ']);
    const exchange = (c: { code: string; verifier: string }) => exchangeCode(rt, 'app_shrink', c);
    const first = await consented();
    const second = await consented();
    await updateApplication(rt, 'app_shrink', { allowed_scopes: ['CATALOG_READ'] }, meta);
    const issued = await exchange(first);
    assert.equal(issued.scopes, ['CATALOG_READ']);
    await rt.projections.catchUp();
    const key = await rt.docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: issued.keyId });
    assert.equal(key?.scopes, ['CATALOG_READ']);
    await updateApplication(rt, 'app_shrink', { allowed_scopes: ['CUSTOMERS_READ'] }, meta);
    const refused = await exchange(second).then(
      () => null,
      (err: unknown) => err,
    );
    assert.instance(refused, GrantRefused);
  },
);

t(
  'a scope whose companion the operator withdrew is not granted alone (CUSTOMERS_WRITE without CUSTOMERS_READ)',
  async ({ rt }) => {
    const all = ['CATALOG_READ', 'CUSTOMERS_READ', 'CUSTOMERS_WRITE'] as const;
    await registerTestApplication(rt, 'app_lone', [...all]);
    const first = await consentedCode(rt, 'app_lone', 'rest', [...all]);
    const second = await consentedCode(rt, 'app_lone', 'rest', ['CUSTOMERS_READ', 'CUSTOMERS_WRITE']);
    await updateApplication(rt, 'app_lone', { allowed_scopes: ['CATALOG_READ', 'CUSTOMERS_WRITE'] }, meta);
    // CUSTOMERS_WRITE alone does nothing (customer writes need CUSTOMERS_READ): the answer's `scope`
    // would promise writes the token cannot make.
    const issued = await exchangeCode(rt, 'app_lone', first);
    assert.equal(issued.scopes, ['CATALOG_READ']);
    await rt.projections.catchUp();
    const key = await rt.docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: issued.keyId });
    assert.equal(key?.scopes, ['CATALOG_READ']);
    // Nothing useful left: refused, as when no scope is left.
    const refused = await exchangeCode(rt, 'app_lone', second).then(
      () => null,
      (err: unknown) => err,
    );
    assert.instance(refused, GrantRefused);
  },
);

t(
  'a code consented to before the restaurant disconnected the application grants nothing after it',
  async ({ rt }) => {
    await registerTestApplication(rt, 'app_gone', ['CATALOG_READ']);
    const first = await issueToken(rt, 'app_gone', 'rest', ['CATALOG_READ']);
    const pending = await consentedCode(rt, 'app_gone', 'rest', ['CATALOG_READ']);
    await disconnectApplication(rt, 'rest', 'app_gone', meta);
    const refused = await exchangeCode(rt, 'app_gone', pending).then(
      () => null,
      (err: unknown) => err,
    );
    assert.instance(refused, GrantRefused);
    assert.match((refused as Error).message, /disconnected this application after this code was issued/);
    const active = await activeKeyIds(rt, 'rest');
    assert.not.ok(active.includes(first.keyId), 'the disconnection revoked the first token');
    await rt.projections.catchUp();
    const keys = await rt.docs
      .collection<ApiKeyDoc>(API_KEYS)
      .find({ restaurant_id: 'rest', revoked_at: null, 'application.id': 'app_gone' });
    assert.equal(keys, [], 'no token of app_gone is active');
    // Consent given after the disconnection connects again.
    const again = await issueToken(rt, 'app_gone', 'rest', ['CATALOG_READ']);
    assert.ok((await activeKeyIds(rt, 'rest')).includes(again.keyId));
  },
);

t.run();
