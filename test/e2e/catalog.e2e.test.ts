import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { applyCatalog } from '../../commands/catalog/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const CATALOG = 'couvert_pk_catalog_00000000000000000000000001';
const CUSTOMERS = 'couvert_pk_customers_000000000000000000000002';
const OTHER = 'couvert_pk_other_0000000000000000000000000003';
const NONE = 'couvert_pk_none_00000000000000000000000000004';
const P = '/api/partner/v1';

const restaurant = {
  rooms: [
    { id: 'room_main', name: 'Main room' },
    { id: 'room_terrace', name: 'Terrace' },
  ],
  tables: [
    { id: 'tbl_1', name: '1', room_id: 'room_main', min_pax: 1, max_pax: 2 },
    { id: 'tbl_2', name: '2', room_id: 'room_terrace', min_pax: 2, max_pax: 6 },
  ],
  shifts: [
    {
      id: 'shift_dinner',
      name: 'Dinner',
      start_time: '19:00',
      end_time: '22:00',
      days_of_week: [1, 2, 3, 4, 5, 6, 7],
      slot_interval_minutes: 15,
      duration_minutes: 90,
      max_covers: 60,
      requires_room_selection: false,
      requires_approval: false,
      deposit: null,
    },
  ],
  prescribers: [{ id: 'pre_1', name: 'Hotel Concierge', phone_number: '+33 6 12 34 56 78' }],
  discounts: [
    {
      id: 'disc_old',
      is_active: false,
      value: 10,
      message: '-10% winter',
      start_date: '2026-01-01T00:00:00+01:00',
      end_date: '2026-02-28T23:59:00+01:00',
      start_time: '19:00',
      end_time: '22:00',
      days_of_week: [1, 2],
      max_covers_per_day: 10,
    },
    {
      id: 'disc_1',
      is_active: true,
      value: 20,
      message: '-20% lunch',
      start_date: null,
      end_date: null,
      start_time: '12:00',
      end_time: '14:00',
      days_of_week: [1, 2, 3, 4, 5],
      max_covers_per_day: 20,
    },
  ],
  customer_fields: [
    { id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] },
    { id: 'cf_visits', name: 'Visits', type: 'NUMBER', min: 0, max: 100 },
    {
      id: 'cf_diet',
      name: 'Diet',
      type: 'MULTI_SELECT',
      options: ['vegan', 'halal', 'kosher'],
      max_items: 2,
    },
  ],
  message_templates: [
    {
      id: 'tpl_missed',
      type: 'MISSED_CALL',
      channel: 'WHATSAPP',
      status: 'APPROVED',
      body: 'Sorry we missed your call',
    },
  ],
};

const bootstrap = demoBootstrap(restaurant, [
  { id: 'key_catalog', token: CATALOG, scopes: ['CATALOG_READ'] },
  { id: 'key_customers', token: CUSTOMERS, scopes: ['CUSTOMERS_READ'] },
  { id: 'key_none', token: NONE, scopes: ['RESERVATIONS_READ'] },
]);
bootstrap.restaurants.push({
  ...demoBootstrap({}, [{ id: 'key_other', token: OTHER, scopes: ['CATALOG_READ', 'CUSTOMERS_READ'] }])
    .restaurants[0],
  id: 'rest_other',
  slug: 'other',
  name: 'Other',
} as (typeof bootstrap.restaurants)[number]);

const t = suite<{ svc: TestService; openapi: OpenApiChecker }>('catalog routes');

t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap });
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async (ctx) => {
  await ctx.svc.close();
});

t('GET /rooms and /tables answer the configured floor', async ({ svc, openapi }) => {
  const rooms = await svc.api('GET', '/rooms', { token: CATALOG });
  assert.is(rooms.status, 200);
  openapi.check('GET', `${P}/rooms`, rooms);
  assert.equal(rooms.body, { data: restaurant.rooms });
  const tables = await svc.api('GET', '/tables', { token: CATALOG });
  assert.is(tables.status, 200);
  openapi.check('GET', `${P}/tables`, tables);
  assert.equal(tables.body.data, restaurant.tables);
});

t('GET /shifts answers every rule with its defaults filled in', async ({ svc, openapi }) => {
  const res = await svc.api('GET', '/shifts', { token: CATALOG });
  assert.is(res.status, 200);
  openapi.check('GET', `${P}/shifts`, res);
  assert.equal(res.body.data, [
    {
      ...restaurant.shifts[0],
      durations_by_party_size: [],
      min_party_size: 1,
      max_party_size: null,
      booking_window_days: null,
      minimum_notice_minutes: 0,
    },
  ]);
});

t('GET /prescribers and /message-templates', async ({ svc, openapi }) => {
  const pre = await svc.api('GET', '/prescribers', { token: CATALOG });
  openapi.check('GET', `${P}/prescribers`, pre);
  assert.equal(pre.body.data, [
    { id: 'pre_1', name: 'Hotel Concierge', phone_number: '+33612345678', email: null },
  ]);
  const tpl = await svc.api('GET', '/message-templates', { token: CATALOG });
  openapi.check('GET', `${P}/message-templates`, tpl);
  // name defaults to the id and language to null (the restaurant's country decides when sending).
  assert.equal(
    tpl.body.data,
    restaurant.message_templates.map((m) => ({ ...m, name: m.id, language: null })),
  );
});

t('GET /discounts: active discounts first', async ({ svc, openapi }) => {
  const res = await svc.api('GET', '/discounts', { token: CATALOG });
  assert.is(res.status, 200);
  openapi.check('GET', `${P}/discounts`, res);
  assert.equal(
    res.body.data.map((d: { id: string }) => d.id),
    ['disc_1', 'disc_old'],
  );
  assert.equal(res.body.data[1], restaurant.discounts[0]);
});

t(
  'GET /discounts: the document says how each rule is read and that max_covers_per_day is not enforced',
  async ({ svc }) => {
    const doc = (await svc.api('GET', '/openapi.json')).body;
    const schema = doc.paths[`${P}/discounts`].get.responses['200'].content['application/json'].schema;
    const ref: string = schema.properties.data.items.$ref ?? '';
    const item = ref ? doc.components.schemas[ref.split('/').at(-1) as string] : schema.properties.data.items;
    const said = (field: string): string => item.properties[field].description ?? '';
    // The rules POST /reservations applies (commands/reservations/discount-rules.ts).
    for (const field of ['start_date', 'end_date', 'start_time', 'end_time'])
      assert.match(said(field), 'inclusive', field);
    assert.match(said('start_date'), "reservation's start");
    assert.match(said('max_covers_per_day'), 'not enforced');
  },
);

t('GET /customer-fields needs CUSTOMERS_READ and answers type, options, bounds', async ({ svc, openapi }) => {
  const res = await svc.api('GET', '/customer-fields', { token: CUSTOMERS });
  assert.is(res.status, 200);
  openapi.check('GET', `${P}/customer-fields`, res);
  assert.equal(res.body.data, [
    {
      id: 'cf_vip',
      name: 'VIP level',
      type: 'SELECT',
      options: ['gold', 'silver'],
      min: null,
      max: null,
      max_items: null,
    },
    { id: 'cf_visits', name: 'Visits', type: 'NUMBER', options: null, min: 0, max: 100, max_items: null },
    {
      id: 'cf_diet',
      name: 'Diet',
      type: 'MULTI_SELECT',
      options: ['vegan', 'halal', 'kosher'],
      min: null,
      max: null,
      max_items: 2,
    },
  ]);
  const denied = await svc.api('GET', '/customer-fields', { token: CATALOG });
  assert.is(denied.status, 403);
  assert.is(denied.body.error.code, 'INSUFFICIENT_SCOPE');
});

t('every catalog route needs its scope (403) and a token (401)', async ({ svc, openapi }) => {
  for (const path of ['/rooms', '/tables', '/shifts', '/prescribers', '/discounts', '/message-templates']) {
    const denied = await svc.api('GET', path, { token: NONE });
    assert.is(denied.status, 403, path);
    assert.is(denied.body.error.code, 'INSUFFICIENT_SCOPE');
    assert.equal(denied.body.error.details.missing_scopes, ['CATALOG_READ']);
    openapi.check('GET', `${P}${path}`, denied);
    const anonymous = await svc.api('GET', path);
    assert.is(anonymous.status, 401, path);
  }
});

t('another restaurant sees only its own (empty) catalog', async ({ svc }) => {
  for (const path of ['/rooms', '/tables', '/shifts', '/discounts', '/customer-fields']) {
    const res = await svc.api('GET', path, { token: OTHER });
    assert.is(res.status, 200);
    assert.equal(res.body, { data: [] }, path);
  }
});

t('a catalog change is visible on the next request; re-applying appends nothing', async ({ svc }) => {
  const meta = operatorMeta('test');
  const out = await applyCatalog(
    svc.rt,
    'rest_demo',
    { tables: [{ id: 'tbl_9', max_pax: 8 }] },
    meta,
    'merge',
  );
  await svc.rt.settle(out.position);
  const res = await svc.api('GET', '/tables', { token: CATALOG });
  assert.equal(
    res.body.data.map((x: { id: string }) => x.id),
    ['tbl_1', 'tbl_2', 'tbl_9'],
  );
  const again = await applyCatalog(
    svc.rt,
    'rest_demo',
    { tables: [{ id: 'tbl_9', max_pax: 8 }] },
    meta,
    'merge',
  );
  assert.equal(again.appended, []);
});

t('a bootstrap file with a faulty catalog names each fault by its path and applies nothing', async () => {
  const bad = demoBootstrap({
    rooms: [{ id: 'room_main', name: 'Main' }],
    tables: [
      { id: 'tbl_1', room_id: 'room_gone', max_pax: 2 },
      { id: 'tbl_2', min_pax: 5, max_pax: 2 },
    ],
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-catalog-'));
  try {
    const err = await startTestService({ bootstrap: bad, dataDir }).then(
      async (svc) => {
        await svc.close();
        return null;
      },
      (e: Error) => e,
    );
    assert.ok(err, 'the service refuses to start');
    assert.match(err?.message ?? '', /restaurants\.0\.tables\.0\.room_id: table tbl_1 is in room room_gone/);
    assert.match(err?.message ?? '', /restaurants\.0\.tables\.1\.min_pax/);
    // Same data, a file without catalog sections: nothing of the faulty catalog was written.
    const svc = await startTestService({
      bootstrap: demoBootstrap({}, [{ id: 'k', token: CATALOG, scopes: ['CATALOG_READ'] }]),
      dataDir,
    });
    try {
      assert.equal((await svc.api('GET', '/rooms', { token: CATALOG })).body, { data: [] });
      assert.equal((await svc.api('GET', '/tables', { token: CATALOG })).body, { data: [] });
    } finally {
      await svc.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

t.run();
