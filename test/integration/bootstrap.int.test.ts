// DESIGN.md §3's own bootstrap example (copied verbatim into test/fixtures/design-bootstrap.json):
// the report counts every event it appended, names every section it did not apply, and a second
// application appends nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { applyBootstrap, type BootstrapFile, readBootstrapFile } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';

const DESIGN_EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/design-bootstrap.json');

const UNAPPLIED: string[] = [];

const t = suite<{ rt: Runtime; dir: string }>('bootstrap file');
t.before(async (ctx) => {
  // The catalog's section applier is registered: the unapplied sections are named all the same.
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-bootstrap-'));
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

async function log(rt: Runtime): Promise<string[]> {
  const types: string[] = [];
  for await (const e of rt.events.readAll()) types.push(e.type);
  return types;
}

t("DESIGN.md's example: every appended event counted, every skipped section named", async ({ rt }) => {
  const file = readBootstrapFile(DESIGN_EXAMPLE);
  const first = await applyBootstrap(rt, file, operatorMeta('bootstrap'));
  const types = await log(rt);
  assert.equal(types.filter((x) => x === 'CatalogItemConfigured').length, 7);
  assert.ok(types.includes('RestaurantCreated') && types.includes('ApiKeyCreated'));
  assert.is(first.appended, types.length);
  // 11 for the restaurant, its key and catalog; the user and its access (2); the application (1); the
  // legacy webhook endpoint (1), the slot it takes of its restaurant's limit (1) and the mark that the
  // log's older endpoints were counted (1: there were none).
  assert.ok(types.includes('UserCreated') && types.includes('OAuthApplicationRegistered'));
  assert.ok(types.includes('WebhookEndpointCreated'), 'the legacy endpoint is created');
  assert.ok(types.includes('WebhookEndpointSlotTaken'), 'and counts for the limit');
  assert.is(first.appended, 17);
  assert.is(first.position, await rt.events.headPosition());
  assert.equal(first.notes, [
    'catalog: 7 item change(s)',
    'users: 1 created or changed',
    'oauth_applications: 1 registered or changed',
    'webhook endpoints: 1 created, 0 change(s)',
    ...UNAPPLIED,
  ]);

  const second = await applyBootstrap(rt, file, operatorMeta('bootstrap'));
  assert.equal(second, { position: null, appended: 0, notes: UNAPPLIED });
  assert.is((await log(rt)).length, 17);
});

t(
  'empty or absent sections are not mentioned; a faulty endpoint entry is named by its path',
  async ({ rt }) => {
    const base = readBootstrapFile(DESIGN_EXAMPLE).restaurants?.[0] as NonNullable<
      BootstrapFile['restaurants']
    >[number];
    const file: BootstrapFile = {
      users: [],
      restaurants: [
        { ...base, webhook_endpoints: [] },
        {
          ...base,
          id: 'rest_two',
          slug: 'two',
          api_keys: [],
          webhook_endpoints: [{ id: 'we_a' }, { id: 'we_b' }],
        },
      ],
    };
    const err = await applyBootstrap(rt, file, operatorMeta('bootstrap')).catch((e: Error) => e);
    assert.instance(err, Error);
    assert.match((err as Error).message, 'restaurants.1.webhook_endpoints.0.url');
    assert.match((err as Error).message, 'restaurants.1.webhook_endpoints.1.api_key_id');
    const ok = await applyBootstrap(
      rt,
      { ...file, restaurants: file.restaurants?.slice(0, 1) },
      operatorMeta('bootstrap'),
    );
    assert.equal(ok.notes, []);
  },
);

t.run();
