// The OAuth operator commands in-process against a real runtime: applications (register, list,
// disable, enable, rotate-secret), users (create, grant), a restaurant's API option, connections (list,
// disconnect). Secrets are printed once and only their hashes reach the log.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyStream } from '../../commands/credentials/events';
import { authenticateClient, loadApplication } from '../../commands/oauth/application-handler';
import { GrantRefused } from '../../commands/oauth/codes';
import { verifyPassword } from '../../commands/oauth/passwords';
import { issueCode, redeemCode } from '../../commands/oauth/token-handler';
import { loadUser } from '../../commands/oauth/user-handler';
import { createRestaurant } from '../../commands/restaurants/handler';
import { createWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { CliUsageError, cliCommands } from '../../src/cli/registry';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { PRIVILEGED_SCOPES, SCOPES } from '../../src/core/scopes';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { startWebhooks } from '../../src/webhooks/runner';
import { runCli as cli, refusedCli as refused } from '../helpers/cli-in-process';
import { withHook } from '../helpers/hooked-events';
import { pkce } from '../helpers/oauth';
import {
  activeKeyIds,
  consentedCode,
  exchangeCode,
  issueToken,
  testManager,
} from '../helpers/oauth-commands';
import { restaurantProfile } from '../helpers/restaurants';
import { until } from '../helpers/webhooks-world';

const t = suite<{ rt: Runtime; dir: string }>('OAuth CLI');
t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-oauth-cli-'));
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  await createRestaurant(ctx.rt, 'rest_x', restaurantProfile('x', { api_option: false }), operatorMeta());
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

const allEvents = async (rt: Runtime) => {
  const out: string[] = [];
  for await (const e of rt.events.readAll()) out.push(JSON.stringify([e.data, e.metadata]));
  return out.join('\n');
};

t(
  'applications register prints the secret once, stores its hash; list, disable, enable, rotate-secret',
  async ({ rt }) => {
    const out = await cli(rt, 'applications register', {
      name: 'Till',
      'redirect-uris': 'https://till.example/cb,http://127.0.0.1:9000/cb',
      scopes: 'RESERVATIONS_READ,CATALOG_READ',
      'client-id': 'app_till',
    });
    assert.is(out[0], 'client_id     app_till');
    const secret = (out[1] as string).split(/\s+/)[1] as string;
    assert.match(secret, /^couvert_cs_[A-Za-z0-9_-]{43}$/);
    assert.not.ok((await allEvents(rt)).includes(secret), 'only the hash is stored');
    assert.ok(await authenticateClient(rt, 'app_till', secret));
    assert.equal((await loadApplication(rt, 'app_till')).profile?.allowed_scopes, [
      'CATALOG_READ',
      'RESERVATIONS_READ',
    ]);
    const listed = (await cli(rt, 'applications list', {})).map((l) => l.split('\t'));
    assert.equal(listed[0]?.slice(0, 4), ['app_till', 'Till', 'third-party', 'enabled']);

    assert.equal(await cli(rt, 'applications disable', { 'client-id': 'app_till' }), [
      'disabled application app_till',
    ]);
    assert.not.ok(await authenticateClient(rt, 'app_till', secret), 'a disabled client cannot authenticate');
    assert.equal(await cli(rt, 'applications disable', { 'client-id': 'app_till' }), [
      'application app_till was already disabled',
    ]);
    await cli(rt, 'applications enable', { 'client-id': 'app_till' });
    const rotated = (
      (await cli(rt, 'applications rotate-secret', { 'client-id': 'app_till' }))[0] as string
    ).split(/\s+/)[1] as string;
    assert.ok(rotated !== secret);
    assert.not.ok(await authenticateClient(rt, 'app_till', secret), 'the old secret stops working');
    assert.ok(await authenticateClient(rt, 'app_till', rotated));
  },
);

t('applications register refuses what cannot be registered, appending nothing', async ({ rt }) => {
  const base = { name: 'Bad', 'redirect-uris': 'https://ok.example/cb', scopes: 'CATALOG_READ' };
  for (const flags of [
    { ...base, 'redirect-uris': 'http://evil.example/cb' },
    { ...base, 'redirect-uris': 'https://ok.example/cb#frag' },
    { ...base, 'redirect-uris': 'not a url' },
    { ...base, scopes: 'NOPE' },
    { ...base, 'logo-url': 'http://logo.example/x.png' },
    { ...base, 'client-id': 'app_till' },
    { ...base, 'client-id': 'a b' },
  ])
    assert.instance(await refused(rt, 'applications register', flags), ApiError, JSON.stringify(flags));
  assert.instance(await refused(rt, 'applications register', { ...base, nmae: 'x' }), CliUsageError);
  assert.instance(await refused(rt, 'applications disable', { 'client-id': 'app_nope' }), ApiError);
});

t('users create (generated password printed once, scrypt-hashed) and grant', async ({ rt }) => {
  const out = await cli(rt, 'users create', { email: 'Owner@X.test' });
  assert.is(out[0], 'created user owner@x.test');
  const password = (out[1] as string).split(/\s+/)[1] as string;
  const user = await loadUser(rt, 'owner@x.test');
  assert.match(user.password_hash as string, /^scrypt\$32768\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.ok(await verifyPassword(password, user.password_hash as string));
  assert.not.ok(await verifyPassword(`${password}x`, user.password_hash as string));
  assert.not.ok((await allEvents(rt)).includes(password));
  assert.instance(
    await refused(rt, 'users create', { email: 'owner@x.test' }),
    ApiError,
    'one user per email',
  );
  assert.instance(await refused(rt, 'users create', { email: 'not-an-email' }), ApiError);
  assert.equal(await cli(rt, 'users grant', { email: 'owner@x.test', restaurant: 'rest_x' }), [
    'owner@x.test manages integrations of rest_x',
  ]);
  assert.equal((await loadUser(rt, 'owner@x.test')).restaurants, { rest_x: true });
  assert.instance(
    await refused(rt, 'users grant', { email: 'owner@x.test', restaurant: 'rest_nope' }),
    ApiError,
  );
  assert.instance(
    await refused(rt, 'users grant', { email: 'nobody@x.test', restaurant: 'rest_x' }),
    CliUsageError,
  );
  await cli(rt, 'users grant', {
    email: 'owner@x.test',
    restaurant: 'rest_x',
    'manage-integrations': 'false',
  });
  assert.equal((await loadUser(rt, 'owner@x.test')).restaurants, { rest_x: false });
});

t('restaurants api-option turns the option on and off', async ({ rt }) => {
  assert.equal(await cli(rt, 'restaurants api-option', { id: 'rest_x', enabled: 'true' }), [
    'rest_x: API option on',
  ]);
  assert.equal(await cli(rt, 'restaurants api-option', { id: 'rest_x', enabled: 'true' }), [
    'rest_x: API option on (unchanged)',
  ]);
  assert.instance(await refused(rt, 'restaurants api-option', { id: 'rest_x' }), CliUsageError);
});

t('connections list and disconnect', async ({ rt }) => {
  const app = await loadApplication(rt, 'app_till');
  const tokens: string[] = [];
  for (let i = 0; i < 2; i++) {
    const { verifier, challenge } = pkce();
    const request = {
      client_id: 'app_till',
      redirect_uri: 'https://till.example/cb',
      scopes: ['CATALOG_READ' as const],
      state: 's',
      code_challenge: challenge,
      restaurant_hint: null,
    };
    const { code } = await issueCode(rt, request, 'rest_x', await testManager(rt, 'rest_x'), operatorMeta());
    const issued = await redeemCode(
      rt,
      app,
      { code, redirect_uri: 'https://till.example/cb', code_verifier: verifier },
      operatorMeta(),
    );
    await rt.settle(issued.position);
    tokens.push(issued.keyId);
  }
  const rows = (await cli(rt, 'connections list', { restaurant: 'rest_x' })).map((l) => l.split('\t'));
  assert.is(rows.length, 1);
  assert.equal(
    [rows[0]?.[0], rows[0]?.[1], rows[0]?.[3], rows[0]?.[4]],
    ['app_till', 'Till', '2 token(s)', 'CATALOG_READ'],
  );
  assert.equal(rows[0]?.slice(5), ['active', 'not used yet']);
  // A third-party application while the restaurant's API option is off: its tokens are kept but
  // refused, which the operator must see (the dashboard says so), in text and in --json.
  await cli(rt, 'restaurants api-option', { id: 'rest_x', enabled: 'false' });
  const paused = (await cli(rt, 'connections list', { restaurant: 'rest_x' })).map((l) => l.split('\t'));
  assert.is(paused[0]?.[5], "paused: the restaurant's API option is off");
  const json = (await cli(rt, 'connections list', { restaurant: 'rest_x', json: true })).map((l) =>
    JSON.parse(l),
  );
  assert.equal(
    json.map((c) => [c.client_id, c.active_tokens, c.paused_by_api_option]),
    [['app_till', 2, true]],
  );
  await cli(rt, 'restaurants api-option', { id: 'rest_x', enabled: 'true' });
  const again = await cli(rt, 'connections list', { restaurant: 'rest_x', json: true });
  assert.is(JSON.parse(again[0] as string).paused_by_api_option, false);
  const out = await cli(rt, 'connections disconnect', { restaurant: 'rest_x', 'client-id': 'app_till' });
  assert.equal(out, [`disconnected app_till from rest_x: revoked ${tokens.join(', ')}`]);
  assert.equal(await cli(rt, 'connections list', { restaurant: 'rest_x' }), [
    'no application is connected to rest_x',
  ]);
  assert.equal(await cli(rt, 'connections disconnect', { restaurant: 'rest_x', 'client-id': 'app_till' }), [
    'app_till had no active token at rest_x',
  ]);
});

t(
  "keys update keeps an OAuth token's scopes within the manager's consent: narrowed and given back, never widened",
  async ({ rt }) => {
    await cli(rt, 'restaurants api-option', { id: 'rest_x', enabled: 'true' });
    const issued = await issueToken(rt, 'app_till', 'rest_x', ['CATALOG_READ', 'RESERVATIONS_READ']);
    await rt.settle(issued.position);
    for (const scopes of ['CATALOG_READ,RESERVATIONS_READ,CUSTOMERS_READ', 'ALL', 'RESERVATIONS_WRITE']) {
      const err = await refused(rt, 'keys update', { id: issued.keyId, scopes });
      assert.instance(err, ApiError, scopes);
      assert.match(err.message, /OAuth token of the application Till \(app_till\).*consent flow/, scopes);
    }
    assert.equal(await cli(rt, 'keys update', { id: issued.keyId, scopes: 'CATALOG_READ' }), ['key updated']);
    assert.equal(
      await cli(rt, 'keys update', { id: issued.keyId, scopes: 'RESERVATIONS_READ,CATALOG_READ' }),
      ['key updated'],
      'what was narrowed may be given back: it was consented to',
    );
    assert.equal(await cli(rt, 'keys update', { id: issued.keyId, name: 'Till at X' }), ['key updated']);
  },
);

t(
  '--scopes ALL is every scope for applications register as for keys create and keys update',
  async ({ rt }) => {
    await cli(rt, 'applications register', {
      name: 'Everything',
      'redirect-uris': 'https://all.example/cb',
      scopes: 'ALL',
      'client-id': 'app_all',
    });
    assert.equal((await loadApplication(rt, 'app_all')).profile?.allowed_scopes, [...SCOPES]);
    const created = await cli(rt, 'keys create', { restaurant: 'rest_x', name: 'All', scopes: 'ALL' });
    const keyId = /key (\S+) created/.exec(created[0] as string)?.[1] as string;
    await cli(rt, 'keys update', { id: keyId, scopes: 'CATALOG_READ' });
    assert.equal(await cli(rt, 'keys update', { id: keyId, scopes: ' ALL ' }), ['key updated']);
    const listed = (await cli(rt, 'keys list', { restaurant: 'rest_x', json: true }))
      .map((l) => JSON.parse(l))
      .find((k) => k.id === keyId);
    assert.equal(listed.scopes, [...SCOPES]);
    // ALL gives the privileged scopes too: every usage line that takes --scopes says so.
    for (const s of PRIVILEGED_SCOPES) assert.ok(listed.scopes.includes(s), s);
    for (const name of ['applications register', 'keys create', 'keys update']) {
      const usage = cliCommands().find((c) => c.name === name)?.usage ?? '';
      for (const s of PRIVILEGED_SCOPES) assert.ok(usage.includes(s), `${name}'s usage names ${s}`);
    }
    for (const [name, flags] of [
      [
        'applications register',
        { name: 'Mixed', 'redirect-uris': 'https://mixed.example/cb', scopes: 'ALL,CATALOG_READ' },
      ],
      ['keys create', { restaurant: 'rest_x', name: 'Mixed', scopes: 'CATALOG_READ,ALL' }],
    ] as const) {
      const err = await refused(rt, name, flags);
      assert.instance(err, CliUsageError, name);
      assert.match(err.message, /ALL stands alone/);
    }
  },
);

t(
  'a token widened before the rule is marked by keys list and may be narrowed step by step, never widened again',
  async ({ rt }) => {
    await cli(rt, 'restaurants api-option', { id: 'rest_x', enabled: 'true' });
    const issued = await issueToken(rt, 'app_till', 'rest_x', ['CATALOG_READ']);
    // What the old keys update wrote: the token given every scope, beyond the manager's consent.
    await rt.events.append(
      apiKeyStream(issued.keyId),
      [
        {
          type: 'ApiKeyUpdated',
          data: {
            key_id: issued.keyId,
            restaurant_id: 'rest_x',
            at: new Date().toISOString(),
            scopes: [...SCOPES],
          },
        },
      ],
      'any',
    );
    const listed = async () => {
      await rt.settle((await rt.events.headPosition()) as bigint);
      const line = (await cli(rt, 'keys list', { restaurant: 'rest_x' })).find((l) =>
        l.startsWith(`${issued.keyId}\t`),
      ) as string;
      const json = (await cli(rt, 'keys list', { restaurant: 'rest_x', json: true }))
        .map((l) => JSON.parse(l))
        .find((k) => k.id === issued.keyId);
      return { marker: line.split('\t')[8], beyond: json.scopes_beyond_grant as string[] };
    };
    const widened = await listed();
    assert.is(widened.marker, `BEYOND GRANT: ${SCOPES.filter((s) => s !== 'CATALOG_READ').join(',')}`);
    assert.equal(
      widened.beyond,
      SCOPES.filter((s) => s !== 'CATALOG_READ'),
    );
    assert.equal(
      await cli(rt, 'keys update', { id: issued.keyId, scopes: 'CATALOG_READ,CUSTOMERS_READ' }),
      ['key updated'],
      'narrowing a widened token keeps a scope it holds now',
    );
    assert.equal((await listed()).beyond, ['CUSTOMERS_READ']);
    const err = await refused(rt, 'keys update', {
      id: issued.keyId,
      scopes: 'CATALOG_READ,RESERVATIONS_READ',
    });
    assert.instance(err, ApiError);
    assert.match(err.message, /consent flow/);
    assert.equal(await cli(rt, 'keys update', { id: issued.keyId, scopes: 'CATALOG_READ' }), ['key updated']);
    assert.equal(await listed(), { marker: '-', beyond: [] });
  },
);

// A disabled application keeps the tokens it holds (docs/OAUTH.md): an operator cutting off one that
// leaked its secret or misbehaves needs them gone too, at every restaurant, without looking each up.
t(
  'applications disable --disconnect revokes its tokens at every restaurant; another application keeps its own',
  async ({ rt }) => {
    await createRestaurant(rt, 'rest_y', restaurantProfile('y', { api_option: true }), operatorMeta());
    await createRestaurant(rt, 'rest_z', restaurantProfile('z', { api_option: true }), operatorMeta());
    await cli(rt, 'applications register', {
      name: 'Leaky',
      'redirect-uris': 'https://till.example/cb',
      scopes: 'CATALOG_READ',
      'client-id': 'app_leaky',
    });
    await cli(rt, 'applications register', {
      name: 'Other',
      'redirect-uris': 'https://till.example/cb',
      scopes: 'CATALOG_READ',
      'client-id': 'app_other',
    });
    const leakyY = await issueToken(rt, 'app_leaky', 'rest_y', ['CATALOG_READ']);
    const leakyZ = await issueToken(rt, 'app_leaky', 'rest_z', ['CATALOG_READ']);
    const other = await issueToken(rt, 'app_other', 'rest_y', ['CATALOG_READ']);
    // A webhook endpoint each token created: the disconnection deletes the leaky one's only.
    const endpointOf = (id: string, restaurantId: string, keyId: string) =>
      createWebhookEndpoint(
        rt,
        {
          restaurantId,
          url: `https://till.example/hooks/${id}`,
          credential: { id: keyId, scopes: ['CATALOG_READ'] },
          endpointId: id,
          allowUnreadable: true,
        },
        { ...operatorMeta(), restaurant_id: restaurantId },
      );
    await endpointOf('we_leaky_y', 'rest_y', leakyY.keyId);
    await endpointOf('we_leaky_z', 'rest_z', leakyZ.keyId);
    const made = await endpointOf('we_other_y', 'rest_y', other.keyId);
    await rt.settle(made.position);
    const webhooks = startWebhooks(rt);
    const out = await cli(rt, 'applications disable', { 'client-id': 'app_leaky', disconnect: true }).finally(
      async () => {
        // The revocations' positions, not the log's head: the publisher subscribes to ApiKeyRevoked, not
        // to the WebhookEndpointDeleted it appends for them, so a head read after those was never reached
        // (the test hung 120 s when the publisher was quicker than this read).
        const revoked = await Promise.all(
          [leakyY.keyId, leakyZ.keyId].map(async (id) =>
            (await rt.events.readStream(apiKeyStream(id))).at(-1),
          ),
        );
        const upTo = revoked.reduce(
          (m, e) => (e && e.type === 'ApiKeyRevoked' && e.position > m ? e.position : m),
          0n,
        );
        await until(
          'the publisher handled the revocations',
          120_000,
          () => (webhooks.handledUpTo() ?? -1n) >= upTo,
        );
        await webhooks.stop();
      },
    );
    const endpointEvents = async (id: string) =>
      (await rt.events.readStream(`webhook-endpoint-${id}`)).map((e) => e.type);
    assert.equal(await endpointEvents('we_leaky_y'), ['WebhookEndpointCreated', 'WebhookEndpointDeleted']);
    assert.equal(await endpointEvents('we_leaky_z'), ['WebhookEndpointCreated', 'WebhookEndpointDeleted']);
    assert.equal(
      await endpointEvents('we_other_y'),
      ['WebhookEndpointCreated'],
      "another application's stays",
    );
    assert.equal(out, [
      'disabled application app_leaky',
      `disconnected app_leaky from rest_y: revoked ${leakyY.keyId}`,
      `disconnected app_leaky from rest_z: revoked ${leakyZ.keyId}`,
    ]);
    const revoked = async (id: string) =>
      (await rt.events.readStream(apiKeyStream(id))).some((e) => e.type === 'ApiKeyRevoked');
    assert.ok(await revoked(leakyY.keyId));
    assert.ok(await revoked(leakyZ.keyId));
    assert.not.ok(await revoked(other.keyId), 'another application is untouched');
    assert.is((await loadApplication(rt, 'app_leaky')).disabled, true);
    // Again: nothing left to revoke, said so.
    assert.equal(await cli(rt, 'applications disable', { 'client-id': 'app_leaky', disconnect: true }), [
      'application app_leaky was already disabled',
      'app_leaky holds no active token at any restaurant',
    ]);
  },
);

// A code issued before the cut-off is refused even once the application is enabled again: enabling
// it must not undo the disconnection (a code lives 5 minutes). Here the restaurant holds the code only,
// no token, so no restaurant's own disconnection covers it.
t('a code issued before disable --disconnect is refused after enable', async ({ rt }) => {
  await createRestaurant(rt, 'rest_w', restaurantProfile('w', { api_option: true }), operatorMeta());
  await cli(rt, 'applications register', {
    name: 'Pending',
    'redirect-uris': 'https://till.example/cb',
    scopes: 'CATALOG_READ',
    'client-id': 'app_pending',
  });
  const before = await consentedCode(rt, 'app_pending', 'rest_w', ['CATALOG_READ']);
  assert.equal(await cli(rt, 'applications disable', { 'client-id': 'app_pending', disconnect: true }), [
    'disabled application app_pending',
    'app_pending holds no active token at any restaurant',
  ]);
  assert.equal(await cli(rt, 'applications enable', { 'client-id': 'app_pending' }), [
    'enabled application app_pending',
  ]);
  const err = await exchangeCode(rt, 'app_pending', before).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, GrantRefused, 'the code issued before the cut-off gives no token');
  assert.match((err as GrantRefused).message, /disconnected this application from every restaurant/);
  // A code issued after the re-enable works: the cut-off ends what was consented to before it only.
  const after = await exchangeCode(
    rt,
    'app_pending',
    await consentedCode(rt, 'app_pending', 'rest_w', ['CATALOG_READ']),
  );
  assert.match(after.token, /^couvert_/);
});

// Another API process exchanging a code while the operator disables the application: its token is
// added after the sweep looked for connections, so the sweep misses it; the exchange reads the cut-off
// again once its key exists and revokes it.
t('a token added after the disable --disconnect sweep is revoked and refused', async ({ rt }) => {
  await createRestaurant(rt, 'rest_v', restaurantProfile('v', { api_option: true }), operatorMeta());
  await cli(rt, 'applications register', {
    name: 'Racing',
    'redirect-uris': 'https://till.example/cb',
    scopes: 'CATALOG_READ',
    'client-id': 'app_racing',
  });
  const consented = await consentedCode(rt, 'app_racing', 'rest_v', ['CATALOG_READ']);
  let swept: string[] = [];
  const deps = withHook(
    rt,
    (_stream, batch) => batch.some((e) => e.type === 'OAuthTokenAdded'),
    async () => {
      swept = await cli(rt, 'applications disable', { 'client-id': 'app_racing', disconnect: true });
    },
  );
  const err = await exchangeCode(rt, 'app_racing', consented, deps).then(
    () => null,
    (e: unknown) => e,
  );
  assert.equal(swept, [
    'disabled application app_racing',
    'app_racing holds no active token at any restaurant',
  ]);
  assert.instance(err, GrantRefused);
  assert.equal(await activeKeyIds(rt, 'rest_v'), [], 'the token the sweep missed is revoked');
});

t.run();
