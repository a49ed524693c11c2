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

const UNAPPLIED = [
  'restaurants.0.webhook_endpoints (rest_demo): 1 entry not applied (webhooks are not built yet)',
];

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
  // 11 for the restaurant, its key and catalog; the user and its access (2); the application (1).
  assert.ok(types.includes('UserCreated') && types.includes('OAuthApplicationRegistered'));
  assert.is(first.appended, 14);
  assert.is(first.position, await rt.events.headPosition());
  assert.equal(first.notes, [
    'catalog: 7 item change(s)',
    'users: 1 created or changed',
    'oauth_applications: 1 registered or changed',
    ...UNAPPLIED,
  ]);

  const second = await applyBootstrap(rt, file, operatorMeta('bootstrap'));
  assert.equal(second, { position: null, appended: 0, notes: UNAPPLIED });
  assert.is((await log(rt)).length, 14);
});

t('empty or absent sections are not mentioned; each restaurant names its own endpoints', async ({ rt }) => {
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
  const report = await applyBootstrap(rt, file, operatorMeta('bootstrap'));
  assert.equal(report.notes, [
    'catalog: 7 item change(s)',
    'restaurants.1.webhook_endpoints (rest_two): 2 entries not applied (webhooks are not built yet)',
  ]);
  // rest_two: its slug claim, its creation and its 7 catalog items.
  assert.is(report.appended, 9);
});

t.run();
