// DESIGN.md §3's own bootstrap example (copied verbatim into test/fixtures/design-bootstrap.json):
// the report counts every event it appended, names every section it did not apply, and a second
// application appends nothing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { applicationStream } from '../../commands/oauth/events';
import { applyBootstrap, type BootstrapFile, readBootstrapFile } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { sha256 } from '../../src/core/ids';
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
  // 12 for the restaurant (with the start of its night-seatings stream), its key and catalog; the user and its access (2); the application (1); the
  // legacy webhook endpoint (1), the slot it takes of its restaurant's limit (1) and the mark that the
  // log's older endpoints were counted (1: there were none).
  assert.ok(types.includes('UserCreated') && types.includes('OAuthApplicationRegistered'));
  assert.ok(types.includes('WebhookEndpointCreated'), 'the legacy endpoint is created');
  assert.ok(types.includes('WebhookEndpointSlotTaken'), 'and counts for the limit');
  assert.is(first.appended, 18);
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
  assert.is((await log(rt)).length, 18);
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

// A file refused by any section, or by its second restaurant or key, must change nothing: before, the
// restaurants and their keys were applied before the catalog, webhook, user and missed-call sections
// checked theirs, so a faulty catalog left a restaurant without it (and a faulty second key, a
// restaurant without its keys), and applying the corrected file could not say what was there.
t('a file refused by any section, or by a later restaurant or key, appends nothing', async ({ rt }) => {
  const base = readBootstrapFile(DESIGN_EXAMPLE).restaurants?.[0] as NonNullable<
    BootstrapFile['restaurants']
  >[number];
  const fresh = (id: string, slug: string) => ({
    id,
    name: 'Fresh',
    slug,
    country_code: 'FR',
    timezone: 'Europe/Paris',
    currency: 'EUR',
    api_keys: [{ id: `key_${id}`, name: 'K', token: `couvert_pk_${id}_00000001`, scopes: ['CATALOG_READ'] }],
  });
  const refused: [BootstrapFile, string][] = [
    [
      {
        restaurants: [
          {
            ...fresh('rest_f1', 'f-one'),
            tables: [{ id: 't', name: '1', room_id: 'nope', min_pax: 1, max_pax: 2 }],
          },
        ],
      },
      'restaurants.0.tables.0.room_id',
    ],
    [
      { restaurants: [{ ...fresh('rest_f2', 'f-two'), booking_url: 'not a url' }] },
      'restaurants.0.booking_url',
    ],
    [
      { restaurants: [fresh('rest_f3', 'f-three')], users: [{ email: 'not-an-email', password: 'x' }] },
      'users.0',
    ],
    [
      {
        restaurants: [
          fresh('rest_f4', 'f-four'),
          { ...fresh('rest_f5', 'f-five'), timezone: 'Mars/Olympus' },
        ],
      },
      'restaurants.1.timezone',
    ],
    [
      { restaurants: [fresh('rest_f6', 'f-six'), { ...fresh('rest_f7', base.slug), api_keys: [] }] },
      'restaurants.1.slug',
    ],
    [
      {
        restaurants: [
          {
            ...fresh('rest_f8', 'f-eight'),
            api_keys: [
              { id: 'key_demo', name: 'K', token: 'couvert_pk_f8_00000001', scopes: ['CATALOG_READ'] },
            ],
          },
        ],
      },
      'restaurants.0.api_keys.0.id',
    ],
    // The endpoint rules (commands/webhook-endpoints/decide.ts), named by their place in the file.
    ...(
      [
        ['url', { url: 'https://example.test/ho ok' }],
        ['url', { url: 'http://127.0.0.1/hook' }],
        ['headers.x-tab', { headers: { 'x-tab': 'a\nb' } }],
        ['enabled_events', { enabled_events: ['*', 'customer.created'] }],
      ] as const
    ).map(([field, change], n): [BootstrapFile, string] => [
      {
        restaurants: [
          {
            ...fresh(`rest_w${n}`, `w-${n}`),
            webhook_endpoints: [
              {
                id: `we_w${n}`,
                url: 'https://example.test/w',
                secret: 'whsec_w0w0w0w0',
                api_key_id: `key_rest_w${n}`,
                ...change,
              },
            ],
          },
        ],
      },
      `restaurants.0.webhook_endpoints.0.${field}`,
    ]),
  ];
  // The example's restaurant (slug and key taken by it) is there from the first test.
  const head = await rt.events.headPosition();
  for (const [file, path] of refused) {
    const err = await applyBootstrap(rt, file, operatorMeta('bootstrap')).catch((e: Error) => e);
    assert.instance(err, Error, path);
    assert.match((err as Error).message, path);
    assert.is(await rt.events.headPosition(), head, `${path}: nothing appended`);
  }
  // The webhook section finds a key the same entry declares, before it exists.
  const withEndpoint: BootstrapFile = {
    restaurants: [
      {
        ...fresh('rest_f9', 'f-nine'),
        webhook_endpoints: [
          {
            id: 'we_f9',
            url: 'https://example.test/f9',
            secret: 'whsec_f9f9f9f9',
            api_key_id: 'key_rest_f9',
          },
        ],
      },
    ],
  };
  const ok = await applyBootstrap(rt, withEndpoint, operatorMeta('bootstrap'));
  assert.ok(ok.appended > 0);
  assert.is((await applyBootstrap(rt, withEndpoint, operatorMeta('bootstrap'))).appended, 0);
});

t(
  'a file that gives a name twice in one object is refused, saying where, not read as its last value',
  ({ dir }) => {
    // The DESIGN.md example with its first restaurant's name given a second time.
    const text = readFileSync(DESIGN_EXAMPLE, 'utf8').replace('"name":', '"name": "First", "name":');
    assert.ok(text.includes('"name": "First"'), 'the example has a name to repeat');
    const file = join(dir, 'twice.json');
    writeFileSync(file, text);
    assert.throws(
      () => readBootstrapFile(file),
      /BOOTSTRAP_FILE \S+ is invalid: restaurants\.0\.name is given more than once/,
    );
    writeFileSync(file, '{"restaurants":[],"__proto__":{"x":1}}');
    assert.throws(() => readBootstrapFile(file), /__proto__ is not allowed/);
  },
);

// The host-character rule of redirect and logo URLs came after deployments registered applications: a
// bootstrap file applied at every start naming an application's stored https://pos_app.internal/cb
// stopped the service from starting. A URI the application already holds is kept; a new one is checked.
t("an application's stored URIs are kept by the file applied again; a new one is checked", async ({ rt }) => {
  const client_id = 'app_legacy';
  // Registered before the rule (its event as then written).
  await rt.events.append(
    applicationStream(client_id),
    [
      {
        type: 'OAuthApplicationRegistered',
        data: {
          client_id,
          name: 'Legacy POS',
          logo_url: 'https://logo_cdn.internal/l.png',
          redirect_uris: ['https://pos_app.internal/cb'],
          allowed_scopes: ['CATALOG_READ'],
          published_by_operator: false,
          secret_hash: sha256('couvert_cs_legacy_secret'),
          at: new Date().toISOString(),
        },
      },
    ],
    'no_stream',
  );
  const entry = {
    client_id,
    client_secret: 'couvert_cs_legacy_secret',
    name: 'Legacy POS',
    logo_url: 'https://logo_cdn.internal/l.png',
    redirect_uris: ['https://pos_app.internal/cb'],
    allowed_scopes: ['CATALOG_READ'],
  };
  const again = await applyBootstrap(rt, { oauth_applications: [entry] }, operatorMeta('bootstrap'));
  assert.equal(again, { position: null, appended: 0, notes: UNAPPLIED }, 'kept as stored: nothing to do');
  const head = await rt.events.headPosition();
  for (const [change, path] of [
    [{ redirect_uris: ['https://pos_app.internal/cb', 'https://pos_two.internal/cb'] }, 'redirect_uris.1'],
    [{ logo_url: 'https://logo_cdn.internal/other.png' }, 'logo_url'],
  ] as const) {
    const err = await applyBootstrap(
      rt,
      { oauth_applications: [{ ...entry, ...change }] },
      operatorMeta('bootstrap'),
    ).catch((e: Error) => e);
    assert.instance(err, Error, path);
    assert.match((err as Error).message, `oauth_applications.0.${path}`);
    assert.is(await rt.events.headPosition(), head, `${path}: nothing appended`);
  }
  // A new application is held to the rule from the start.
  const err = await applyBootstrap(
    rt,
    { oauth_applications: [{ ...entry, client_id: 'app_new' }] },
    operatorMeta('bootstrap'),
  ).catch((e: Error) => e);
  assert.instance(err, Error);
  assert.match((err as Error).message, 'oauth_applications.0.redirect_uris.0');
  // Dropping the stored URI for a valid one is an ordinary change.
  const moved = await applyBootstrap(
    rt,
    { oauth_applications: [{ ...entry, logo_url: null, redirect_uris: ['https://pos.example/cb'] }] },
    operatorMeta('bootstrap'),
  );
  assert.is(moved.appended, 1);
});

t.run();
