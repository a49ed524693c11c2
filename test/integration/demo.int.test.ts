// The demo restaurant and key made at a start without a bootstrap file: never lost, never twice.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { catalogStream } from '../../commands/catalog/events';
import { apiKeyStream } from '../../commands/credentials/events';
import { createApiKey, revokeApiKey } from '../../commands/credentials/handler';
import { createRestaurant } from '../../commands/restaurants/handler';
import { deleteWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { listRestaurants } from '../../queries/restaurants';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { DEMO_KEY, DEMO_RESTAURANT, demoBelongsHere, ensureDemo } from '../../src/demo';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime } from '../../src/runtime';
import { restaurantProfile } from '../helpers/restaurants';

registerModules();
const config = () => loadConfig({ PORT: '0', LOG_LEVEL: 'silent' });
const runtime = () =>
  createRuntime(config(), { events: new MemoryEventStore(), logger: createLogger('silent') });

test('concurrent starts: one creates, the others find it; one key, printed once', async () => {
  const rt = await runtime();
  try {
    const results = await Promise.all([1, 2, 3].map(() => ensureDemo(rt, { withKey: true })));
    assert.equal(
      results.map((r) => r.restaurantId),
      [DEMO_RESTAURANT, DEMO_RESTAURANT, DEMO_RESTAURANT],
    );
    assert.is(results.filter((r) => r.token).length, 1, 'exactly one start holds the plain key');
    const created = (await rt.events.readStream(apiKeyStream(DEMO_KEY))).filter(
      (e) => e.type === 'ApiKeyCreated',
    );
    assert.is(created.length, 1);
    assert.is((await ensureDemo(rt, { withKey: true })).token, null, 'a later start creates nothing');
  } finally {
    await rt.close();
  }
});

test('a start that died after the restaurant and before the key: the next start makes the key', async () => {
  const rt = await runtime();
  try {
    await ensureDemo(rt, { withKey: false });
    assert.is((await rt.events.readStream(apiKeyStream(DEMO_KEY))).length, 0);
    const next = await ensureDemo(rt, { withKey: true });
    assert.match(next.token ?? '', /^couvert_pk_/);
  } finally {
    await rt.close();
  }
});

test('a data directory whose demo key has another id (made before the fixed id): no second key', async () => {
  const rt = await runtime();
  try {
    await ensureDemo(rt, { withKey: false });
    const old = await createApiKey(
      rt,
      { restaurantId: DEMO_RESTAURANT, name: 'Demo key (every scope)', scopes: ['CATALOG_READ'] },
      operatorMeta(),
    );
    await revokeApiKey(rt, old.keyId, 'operator', operatorMeta());
    await rt.settle(await rt.events.headPosition());
    const demo = await ensureDemo(rt, { withKey: true });
    assert.is(demo.token, null, 'a revoked or older demo key is respected: no new key with every scope');
    assert.is((await rt.events.readStream(apiKeyStream(DEMO_KEY))).length, 0);
  } finally {
    await rt.close();
  }
});

test('a restaurant left without its catalog is seeded at the next start; a catalog with anything is left alone', async () => {
  const rt = await runtime();
  try {
    await createRestaurant(
      rt,
      DEMO_RESTAURANT,
      restaurantProfile('le-demo', { name: 'Le Demo' }),
      operatorMeta(),
    );
    assert.is((await rt.events.readStream(catalogStream(DEMO_RESTAURANT))).length, 0);
    await ensureDemo(rt, { withKey: false });
    const seeded = (await rt.events.readStream(catalogStream(DEMO_RESTAURANT))).length;
    assert.ok(seeded > 0, 'the catalog was seeded');
    await ensureDemo(rt, { withKey: false });
    assert.is(
      (await rt.events.readStream(catalogStream(DEMO_RESTAURANT))).length,
      seeded,
      'a later start appends nothing to an existing catalog',
    );
  } finally {
    await rt.close();
  }
});

test("the demo key's endpoints: made once while the key is active, even by the start after one that died first", async () => {
  // The demo key made as a start that died before its seeders would have made it.
  const demoKey = (
    rt: Awaited<ReturnType<typeof runtime>>,
    scopes: Parameters<typeof createApiKey>[1]['scopes'],
  ) =>
    createApiKey(
      rt,
      { restaurantId: DEMO_RESTAURANT, keyId: DEMO_KEY, name: 'Demo key (every scope)', scopes },
      operatorMeta(),
    );
  const endpoints = async (rt: Awaited<ReturnType<typeof runtime>>) =>
    (await rt.events.readStream('webhook-endpoint-we_demo_pos')).map((e) => e.type);
  // A start that died after making the key, before its seeders ran.
  const died = await runtime();
  try {
    await ensureDemo(died, { withKey: false });
    await demoKey(died, ['WEBHOOKS_WRITE', 'CUSTOMERS_READ']);
    assert.equal(await endpoints(died), []);
    assert.is((await ensureDemo(died, { withKey: true })).token, null, 'the key is not made again');
    assert.equal(await endpoints(died), ['WebhookEndpointCreated'], 'the next start makes them');
    // Deleted by the operator since: a later start does not make it again.
    await deleteWebhookEndpoint(died, DEMO_RESTAURANT, 'we_demo_pos', 'DELETED', operatorMeta());
    await ensureDemo(died, { withKey: true });
    assert.equal(await endpoints(died), ['WebhookEndpointCreated', 'WebhookEndpointDeleted']);
  } finally {
    await died.close();
  }
  // A revoked demo key gets none.
  const revoked = await runtime();
  try {
    await ensureDemo(revoked, { withKey: false });
    await demoKey(revoked, ['WEBHOOKS_WRITE']);
    await revokeApiKey(revoked, DEMO_KEY, 'operator', operatorMeta());
    await ensureDemo(revoked, { withKey: true });
    assert.equal(await endpoints(revoked), []);
  } finally {
    await revoked.close();
  }
});

test('scaled out (withKey false) no key is made, so none lands in container logs', async () => {
  const rt = await runtime();
  try {
    const demo = await ensureDemo(rt, { withKey: false });
    assert.is(demo.token, null);
    assert.is((await rt.events.readStream(apiKeyStream(DEMO_KEY))).length, 0);
  } finally {
    await rt.close();
  }
});

test('a start that cannot listen writes nothing: the next start still prints the demo key', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-demo-'));
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  const port = (busy.address() as { port: number }).port;
  try {
    const failed = await startService(
      loadConfig({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }),
      { logger: createLogger('silent') },
    ).then(
      () => null,
      (err: NodeJS.ErrnoException) => err,
    );
    assert.is(failed?.code, 'EADDRINUSE');
    const svc = await startService(loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
    });
    try {
      assert.match(svc.demo?.token ?? '', /^couvert_pk_/, 'the key is made by the start that can print it');
    } finally {
      await svc.stop();
    }
  } finally {
    busy.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("the demo's past month reads as a partner sees it: each reservation's shift, guest and endpoint exist", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-demo-'));
  const svc = await startService(loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  try {
    const headers = { authorization: `Bearer ${svc.demo?.token}` };
    const get = async (path: string) => {
      const res = await fetch(`${svc.url}/api/partner/v1${path}`, { headers });
      assert.is(res.status, 200, path);
      return (await res.json()) as { data: Record<string, unknown>[]; pagination?: { total: number } };
    };
    const shifts = new Map((await get('/shifts')).data.map((s) => [s.id, s]));
    const seen = { reservations: 0, withGuest: 0 };
    for (let page = 1; ; page++) {
      const { data } = await get(`/reservations?per_page=100&page=${page}`);
      for (const r of data) {
        seen.reservations++;
        const shift = r.shift as { id: string; name: string; start_time: string; end_time: string };
        const own = shifts.get(shift.id);
        assert.ok(own, `${r.id}: shift ${shift.id} is one of the restaurant's`);
        assert.equal(
          [shift.name, shift.start_time, shift.end_time],
          [own?.name, own?.start_time, own?.end_time],
        );
        if (r.source === 'WALK_IN' && r.customer === null) continue;
        const guest = r.customer as { id: string; name: string } | null;
        assert.ok(guest, `${r.id} (${r.source}): its guest exists`);
        assert.ok(guest?.name, `${r.id}: its guest has a name`);
        seen.withGuest++;
      }
      if (data.length < 100) break;
    }
    assert.ok(seen.reservations > 200 && seen.withGuest > 150, JSON.stringify(seen));
    const customers = await get('/customers?limit=100');
    assert.ok(customers.data.length >= 50, `${customers.data.length} demo guests`);
    for (const c of customers.data) assert.match(String(c.email), /@example\.com$/);
    // The endpoints the month's deliveries went to exist, disabled (nothing is sent to them).
    const endpoints = await get('/webhook-endpoints');
    assert.equal(
      endpoints.data.map((e) => [e.id, e.disabled, new URL(String(e.url)).hostname.endsWith('.example.com')]),
      [
        ['we_demo_pos', true, true],
        ['we_demo_crm', true, true],
      ],
    );
  } finally {
    await svc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a start without BOOTSTRAP_FILE on a log that already holds restaurants (a later start): no demo restaurant, no key', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-demo-'));
  const file = join(dataDir, '..', `${dataDir.split('/').pop()}-bootstrap.json`);
  writeFileSync(
    file,
    JSON.stringify({
      restaurants: [
        {
          id: 'rest_prod',
          name: 'Production',
          slug: 'production',
          country_code: 'FR',
          timezone: 'Europe/Paris',
          currency: 'EUR',
        },
      ],
    }),
  );
  try {
    const first = await startService(
      loadConfig({ PORT: '0', DATA_DIR: dataDir, BOOTSTRAP_FILE: file, LOG_LEVEL: 'silent' }),
      { logger: createLogger('silent') },
    );
    await first.stop();
    const later = await startService(loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
    });
    try {
      assert.is(later.demo, null, 'no demo on a log that holds a restaurant of its own');
      const streams = await later.rt.events.readStream(`restaurant-${DEMO_RESTAURANT}`);
      assert.is(streams.length, 0, 'nothing of the demo is written');
      assert.is(
        (await later.rt.events.readStream(apiKeyStream(DEMO_KEY))).length,
        0,
        'no key with every scope',
      );
    } finally {
      await later.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(file, { force: true });
  }
});

test('a start without BOOTSTRAP_FILE on a log holding the demo and restaurants made since: the demo is healed as before', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-demo-'));
  try {
    const first = await startService(loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
    });
    assert.match(first.demo?.token ?? '', /^couvert_pk_/);
    await createRestaurant(first.rt, 'rest_other', restaurantProfile('other'), operatorMeta());
    await first.stop();
    const later = await startService(loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
      logger: createLogger('silent'),
    });
    try {
      assert.is(later.demo?.restaurantId, DEMO_RESTAURANT, 'the demo restaurant is still announced');
      assert.is(later.demo?.token, null, 'its key is not made again');
    } finally {
      await later.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('read models not filled yet (scaled out, the projector behind): decided from the log, a restaurant there means no demo', async () => {
  // Without projections the read models stay empty whatever the log holds, as MongoDB's are for an
  // API process that starts before the projector has caught up.
  const rt = await createRuntime(config(), {
    events: new MemoryEventStore(),
    logger: createLogger('silent'),
    projections: [],
  });
  try {
    assert.ok(await demoBelongsHere(rt), 'an empty log: a first start');
    await createRestaurant(rt, 'rest_prod', restaurantProfile('prod'), operatorMeta());
    assert.equal(await listRestaurants(rt.docs), [], 'the read models hold nothing');
    assert.not.ok(await demoBelongsHere(rt), 'the log holds a restaurant: no demo');
  } finally {
    await rt.close();
  }
});

test.run();
