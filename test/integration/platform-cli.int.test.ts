// The platform's operator commands (restaurants, bootstrap apply, read-models rebuild) run in-process
// against a real runtime, checked through the event log and the read models; every refusal appends
// nothing. The spawned CLI beside a running server is test/e2e/platform-cli.e2e.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { restaurantStream } from '../../commands/restaurants/events';
import { createRestaurant } from '../../commands/restaurants/handler';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { NOT_READ_MODELS, planRebuild } from '../../src/cli/read-models-commands';
import { CliUsageError } from '../../src/cli/registry';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { RATE_LIMITS_COLLECTION } from '../../src/http/rate-limit';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { SESSIONS } from '../../src/web/sessions';
import { runCli as cli, refusedCli as refused } from '../helpers/cli-in-process';
import { restaurantProfile } from '../helpers/restaurants';

const DESIGN_EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/design-bootstrap.json');
const silent = { logger: createLogger('silent') };

const t = suite<{ rt: Runtime; dir: string }>('platform CLI');
t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-platform-cli-'));
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), silent);
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

const types = async (rt: Runtime, id: string) =>
  (await rt.events.readStream(restaurantStream(id))).map((e) => e.type);
const listed = async (rt: Runtime) => (await cli(rt, 'restaurants list', {})).map((l) => l.split('\t'));

const X = {
  id: 'rest_x',
  name: 'Chez X',
  slug: 'chez-x',
  country: 'FR',
  timezone: 'Europe/Paris',
  currency: 'EUR',
};

t('restaurants create, update, suspend and resume: the log and the read model follow', async ({ rt }) => {
  assert.equal(await cli(rt, 'restaurants create', { ...X, 'api-option': true }), [
    'created restaurant rest_x',
  ]);
  const [created] = await rt.events.readStream(restaurantStream('rest_x'));
  assert.is(created?.type, 'RestaurantCreated');
  assert.is(created?.metadata.actor, 'operator:cli');
  assert.equal(
    { ...created?.data, at: undefined },
    {
      restaurant_id: 'rest_x',
      at: undefined,
      name: 'Chez X',
      slug: 'chez-x',
      country_code: 'FR',
      timezone: 'Europe/Paris',
      currency: 'EUR',
      api_option: true,
      customer_matching: true,
      features: [],
    },
  );
  assert.equal(await listed(rt), [['rest_x', 'chez-x', 'Chez X', 'Europe/Paris', 'active']]);

  assert.equal(await cli(rt, 'restaurants update', { id: 'rest_x', name: 'Chez Y', currency: 'EUR' }), [
    'updated restaurant rest_x',
  ]);
  const updated = (await rt.events.readStream(restaurantStream('rest_x'))).at(-1);
  assert.equal(updated?.data.changes, { name: 'Chez Y' });
  assert.equal(await cli(rt, 'restaurants update', { id: 'rest_x', name: 'Chez Y' }), [
    'restaurant rest_x unchanged',
  ]);

  assert.equal(await cli(rt, 'restaurants suspend', { id: 'rest_x', reason: 'unpaid' }), [
    'suspended restaurant rest_x',
  ]);
  assert.equal(await cli(rt, 'restaurants suspend', { id: 'rest_x' }), [
    'restaurant rest_x was already suspended',
  ]);
  assert.equal((await listed(rt))[0]?.slice(2), ['Chez Y', 'Europe/Paris', 'SUSPENDED']);
  assert.equal(await cli(rt, 'restaurants resume', { id: 'rest_x' }), ['resumed restaurant rest_x']);
  assert.equal(await cli(rt, 'restaurants resume', { id: 'rest_x' }), [
    'restaurant rest_x was not suspended',
  ]);
  assert.equal((await listed(rt))[0]?.[4], 'active');
  assert.equal(await types(rt, 'rest_x'), [
    'RestaurantCreated',
    'RestaurantUpdated',
    'RestaurantSuspended',
    'RestaurantResumed',
  ]);
});

t('usage errors: a clear message and nothing appended', async ({ rt }) => {
  for (const [name, flags] of [
    ['restaurants update', { id: 'rest_nope', name: 'N' }],
    ['restaurants suspend', { id: 'rest_nope' }],
    ['restaurants resume', { id: 'rest_nope' }],
  ] as const) {
    const err = await refused(rt, name, flags);
    assert.instance(err, ApiError);
    assert.is((err as ApiError).status, 404);
    assert.is(err.message, 'restaurant rest_nope not found');
  }
  const { slug: _slug, ...noSlug } = X;
  assert.is(
    (await refused(rt, 'restaurants create', { ...noSlug, id: 'rest_z' })).message,
    '--slug is required',
  );
  assert.is(
    (await refused(rt, 'restaurants create', { id: 'rest_z' })).message,
    '--name, --slug, --country, --timezone, --currency are required',
  );
  assert.is((await refused(rt, 'restaurants suspend', {})).message, '--id is required');
  for (const [flag, value, expected] of [
    ['country', 'France', '--country: country_code must be an ISO 3166-1 alpha-2 code such as FR'],
    ['timezone', 'Mars/Olympus', '--timezone: timezone must be an IANA time zone such as Europe/Paris'],
    ['currency', 'euro', '--currency: currency must be an ISO 4217 code such as EUR'],
  ] as const) {
    const create = await refused(rt, 'restaurants create', { ...X, id: 'rest_z', slug: 'z', [flag]: value });
    assert.instance(create, CliUsageError);
    assert.match(create.message, expected);
    const update = await refused(rt, 'restaurants update', { id: 'rest_x', [flag]: value });
    assert.match(update.message, expected);
  }
  assert.match(
    (await refused(rt, 'restaurants update', { id: 'rest_x' })).message,
    /give at least one of --name/,
  );
  assert.match(
    (await refused(rt, 'restaurants update', { id: 'rest_x', nmae: 'Typo' })).message,
    /unknown flag --nmae/,
  );
  assert.match(
    (await refused(rt, 'restaurants update', { id: 'rest_x', 'api-option': 'maybe' })).message,
    '--api-option takes true or false',
  );
  const again = await refused(rt, 'restaurants create', { ...X, slug: 'another-slug' });
  assert.is((again as ApiError).status, 409);
  assert.match(again.message, 'restaurant rest_x already exists');
  assert.equal(await types(rt, 'rest_z'), []);
});

t(
  'bootstrap apply: counts every event, names what it skipped, and a second run appends nothing',
  async ({ rt }) => {
    const first = await cli(rt, 'bootstrap apply', {}, [DESIGN_EXAMPLE]);
    assert.equal(first, [
      `bootstrap ${DESIGN_EXAMPLE}: 18 event(s) appended`,
      'note: catalog: 7 item change(s)',
      'note: users: 1 created or changed',
      'note: oauth_applications: 1 registered or changed',
      'note: webhook endpoints: 1 created, 0 change(s)',
    ]);
    assert.ok((await listed(rt)).some((r) => r[0] === 'rest_demo'));
    const head = await rt.events.headPosition();
    const second = await cli(rt, 'bootstrap apply', {}, [DESIGN_EXAMPLE]);
    assert.is(second[0], `bootstrap ${DESIGN_EXAMPLE}: already applied, nothing appended`);
    assert.is(second.length, 1);
    assert.is(await rt.events.headPosition(), head);
    assert.instance(await refused(rt, 'bootstrap apply', {}), CliUsageError);
  },
);

t(
  'read-models rebuild, embedded: a replay of the whole log that says nothing on disk changed',
  async ({ rt }) => {
    let events = 0;
    for await (const _ of rt.events.readAll()) events++;
    const head = await rt.events.headPosition();
    const lines = await cli(rt, 'read-models rebuild', { 'no-progress': true });
    assert.match(
      lines[0] ?? '',
      /read models live in the server process and are rebuilt from the event log at each start/,
    );
    assert.match(lines[0] ?? '', /nothing changed/);
    assert.match(
      lines[1] ?? '',
      new RegExp(
        `^consistency check passed: replayed ${events} events from the log in .+ into ${rt.projections.projections.length} fresh read models`,
      ),
    );
    assert.is(await rt.events.headPosition(), head);
    // The runtime's own read models were not dropped.
    assert.ok((await listed(rt)).length >= 2);
  },
);

t('read-models rebuild, scaled out: refused without --force', () => {
  assert.equal(planRebuild({ store: 'embedded', mongodbDb: 'couvert' }, false), { action: 'check-embedded' });
  assert.equal(planRebuild({ store: 'embedded', mongodbDb: 'couvert' }, true), { action: 'check-embedded' });
  assert.equal(planRebuild({ store: 'eventstoredb', mongodbDb: 'couvert' }, true), {
    action: 'drop-and-rebuild',
  });
  const refusal = planRebuild({ store: 'eventstoredb', mongodbDb: 'couvert' }, false);
  assert.is(refusal.action, 'refuse');
  assert.match((refusal as { message: string }).message, /Stop the projector and every API process first/);
  assert.match((refusal as { message: string }).message, /--force/);
});

t('read-models rebuild, scaled out: the command keeps the read models without --force', async () => {
  // A scaled-out runtime over in-process stand-ins for EventStoreDB and MongoDB.
  const config = loadConfig({
    STORE: 'eventstoredb',
    EVENTSTORE_URL: 'esdb://unused:2113',
    MONGODB_URL: 'mongodb://unused',
    SECRETS_KEY: 'ab'.repeat(32),
    LOG_LEVEL: 'silent',
  });
  const docs = new EmbeddedDocumentStore();
  const rt = await createRuntime(config, { ...silent, events: new MemoryEventStore(), docs });
  try {
    await createRestaurant(
      rt,
      'rest_s',
      restaurantProfile('s', { name: 'S', api_option: false }),
      operatorMeta('test'),
    );
    await docs.collection('sentinel').insertOne({ _id: 'still here' });
    const err = await cli(rt, 'read-models rebuild', { 'no-progress': true }).catch(
      (e: unknown) => e as Error,
    );
    assert.instance(err, CliUsageError);
    assert.match((err as Error).message, /MongoDB database "couvert"/);
    assert.is(await docs.collection('sentinel').count(), 1);

    const lines = await cli(rt, 'read-models rebuild', { force: true, 'no-progress': true });
    // RestaurantCreated, its slug's claim and the start of its night-seatings stream.
    assert.match(lines[0] ?? '', /^rebuilt \d+ read models from 3 events/);
    assert.is(await docs.collection('sentinel').count(), 0);
    assert.equal(
      (await listed(rt)).map((r) => r[0]),
      ['rest_s'],
    );
    // What is no read model is not in the log: a rebuild keeps it (managers stay signed in, the
    // shared rate-limit budgets are not reset).
    await docs.collection(SESSIONS).insertOne({ _id: 'session of a manager' });
    await docs.collection(RATE_LIMITS_COLLECTION).insertOne({ _id: 'rl:203.0.113.9', points: 599 });
    await cli(rt, 'read-models rebuild', { force: true, 'no-progress': true });
    assert.is(await docs.collection(SESSIONS).count(), 1);
    assert.is(await docs.collection(RATE_LIMITS_COLLECTION).count(), 1);
    assert.equal(NOT_READ_MODELS, ['web_sessions', 'rate_limits']);
  } finally {
    await rt.close();
  }
});

t.run();
