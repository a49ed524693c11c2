import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type CatalogConfig, decideApplyCatalog, evolveCatalog } from '../../commands/catalog/decide';
import { applyCatalog, loadCatalog } from '../../commands/catalog/handler';
import { emptyCatalog } from '../../commands/catalog/types';
import { createRestaurant } from '../../commands/restaurants/handler';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';

const AT = '2026-05-01T08:00:00.000Z';
const R = 'rest_x';

const config: CatalogConfig = {
  rooms: [
    { id: 'room_main', name: 'Main room' },
    { id: 'room_terrace', name: 'Terrace' },
  ],
  tables: [
    { id: 'tbl_1', name: '1', room_id: 'room_main', min_pax: 1, max_pax: 2 },
    { id: 'tbl_2', room_id: 'room_terrace', max_pax: 4 },
  ],
  shifts: [
    {
      id: 'shift_dinner',
      name: 'Dinner',
      start_time: '19:00',
      end_time: '22:00',
      days_of_week: [5, 1, 2],
      slot_interval_minutes: 15,
      duration_minutes: 90,
      max_covers: 60,
      requires_room_selection: false,
      requires_approval: false,
      deposit: null,
    },
  ],
  customer_fields: [{ id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] }],
};

const fold = (events: { type: string; data: Record<string, unknown> }[]) =>
  events.reduce((s, e) => evolveCatalog(s, e), emptyCatalog(R));

function issuesOf(fn: () => unknown): { path: string; code: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    assert.instance(err, ApiError);
    assert.is((err as ApiError).status, 400);
    return ((err as ApiError).details?.issues ?? []) as never;
  }
  assert.unreachable('expected a validation error');
  return [];
}

const t = suite('catalog decide');

t('a configuration becomes one event per item, normalised with defaults', () => {
  const events = decideApplyCatalog(emptyCatalog(R), R, config, 'replace', AT);
  assert.is(events.length, 6);
  const catalog = fold(events);
  assert.equal(catalog.tables[1], {
    id: 'tbl_2',
    name: 'tbl_2',
    room_id: 'room_terrace',
    min_pax: 1,
    max_pax: 4,
  });
  const dinner = catalog.shifts[0];
  assert.equal(dinner?.days_of_week, [1, 2, 5]);
  assert.is(dinner?.min_party_size, 1);
  assert.is(dinner?.max_party_size, null);
  assert.is(dinner?.minimum_notice_minutes, 0);
  assert.is(dinner?.booking_window_days, null);
  assert.equal(dinner?.durations_by_party_size, []);
  assert.equal(catalog.customer_fields[0], {
    id: 'cf_vip',
    name: 'VIP level',
    type: 'SELECT',
    options: ['gold', 'silver'],
    min: null,
    max: null,
    max_items: null,
  });
});

t('applying the same configuration twice appends nothing; a change appends only that item', () => {
  const catalog = fold(decideApplyCatalog(emptyCatalog(R), R, config, 'replace', AT));
  assert.equal(decideApplyCatalog(catalog, R, config, 'replace', AT), []);
  const changed = {
    ...config,
    tables: [config.tables?.[0], { id: 'tbl_2', room_id: 'room_terrace', max_pax: 6 }],
  };
  const events = decideApplyCatalog(catalog, R, changed, 'replace', AT);
  assert.equal(
    events.map((e) => [e.type, (e.data.item as { id: string }).id]),
    [['CatalogItemConfigured', 'tbl_2']],
  );
});

t(
  'replace removes items missing from a given section; merge keeps them; absent sections are untouched',
  () => {
    const catalog = fold(decideApplyCatalog(emptyCatalog(R), R, config, 'replace', AT));
    const replace = decideApplyCatalog(catalog, R, { tables: [config.tables?.[0]] }, 'replace', AT);
    assert.equal(
      replace.map((e) => [e.type, e.data.id]),
      [['CatalogItemRemoved', 'tbl_2']],
    );
    assert.equal(decideApplyCatalog(catalog, R, { tables: [config.tables?.[0]] }, 'merge', AT), []);
    const after = fold([...decideApplyCatalog(emptyCatalog(R), R, config, 'replace', AT), ...replace]);
    assert.is(after.shifts.length, 1);
    assert.is(after.rooms.length, 2);
  },
);

t('every faulty item is reported with its path', () => {
  const issues = issuesOf(() =>
    decideApplyCatalog(
      emptyCatalog(R),
      R,
      {
        tables: [
          { id: 'ok', max_pax: 2 },
          { id: 'small', min_pax: 4, max_pax: 2 },
          { id: 'bad id!', max_pax: 2 },
          { id: 'ok', max_pax: 2 },
          { id: 'typo', max_pax: 2, maxpax: 3 },
        ],
        shifts: [
          {
            id: 's',
            name: 'S',
            start_time: '25:00',
            end_time: '22:00',
            days_of_week: [0, 8],
            slot_interval_minutes: 15,
            duration_minutes: 90,
          },
          {
            id: 's2',
            name: 'S2',
            start_time: '12:00',
            end_time: '14:00',
            days_of_week: [1],
            slot_interval_minutes: 15,
            duration_minutes: 90,
            min_party_size: 6,
            max_party_size: 2,
          },
        ],
        customer_fields: [
          { id: 'a', name: 'A', type: 'SELECT' },
          { id: 'b', name: 'B', type: 'MULTI_SELECT', options: ['x'], max_items: 2 },
          { id: 'c', name: 'C', type: 'TEXT', min: 1 },
          { id: 'd', name: 'D', type: 'NUMBER', min: 5, max: 1 },
          { id: 'e', name: 'E', type: 'COLOR' },
        ],
        message_templates: [
          { id: 'm', type: 'MISSED_CALL', channel: 'PIGEON', status: 'APPROVED', body: 'x' },
        ],
      },
      'replace',
      AT,
    ),
  );
  const paths = issues.map((i) => i.path);
  for (const p of [
    'tables.1.min_pax',
    'tables.2.id',
    'tables.3.id',
    'tables.4.maxpax',
    'shifts.0.start_time',
    'shifts.0.days_of_week.0',
    'shifts.0.days_of_week.1',
    'shifts.1.min_party_size',
    'customer_fields.0.options',
    'customer_fields.1.max_items',
    'customer_fields.2.min',
    'customer_fields.3.min',
    'customer_fields.4.type',
    'message_templates.0.channel',
  ])
    assert.ok(paths.includes(p), `${p} reported in ${JSON.stringify(paths)}`);
  assert.is(issues.find((i) => i.path === 'tables.4.maxpax')?.code, 'unknown_property');
});

t('customer field ids: an Object.prototype name is refused (the API could never set such a field)', () => {
  for (const id of ['constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty']) {
    const issues = issuesOf(() =>
      decideApplyCatalog(
        emptyCatalog(R),
        R,
        { customer_fields: [{ id, name: 'X', type: 'TEXT' }] },
        'merge',
        AT,
      ),
    );
    assert.equal(
      issues.map((i) => i.path),
      ['customer_fields.0.id'],
      id,
    );
    assert.match(issues[0]?.message ?? '', /reserved/);
  }
  // A table may still be called so: its id is never a property name.
  decideApplyCatalog(emptyCatalog(R), R, { tables: [{ id: 'constructor', max_pax: 2 }] }, 'merge', AT);
});

t('references: a table in an unknown room, a room removed while a table uses it', () => {
  const bad = issuesOf(() =>
    decideApplyCatalog(
      emptyCatalog(R),
      R,
      { tables: [{ id: 't', room_id: 'nowhere', max_pax: 2 }] },
      'replace',
      AT,
    ),
  );
  assert.equal(
    bad.map((i) => [i.path, i.code]),
    [['tables.0.room_id', 'unknown_reference']],
  );
  const catalog = fold(decideApplyCatalog(emptyCatalog(R), R, config, 'replace', AT));
  const removed = issuesOf(() =>
    decideApplyCatalog(catalog, R, { rooms: [{ id: 'room_main', name: 'M' }] }, 'replace', AT),
  );
  assert.equal(
    removed.map((i) => i.path),
    ['tables'],
  );
  assert.match(removed[0]?.message ?? '', /tbl_2/);
});

t('discounts: dates in order, times in order, active by default', () => {
  const d = {
    id: 'disc',
    value: 20,
    message: '-20% lunch',
    start_time: '12:00',
    end_time: '14:00',
    days_of_week: [1, 2, 3, 4, 5],
    max_covers_per_day: 20,
  };
  const catalog = fold(decideApplyCatalog(emptyCatalog(R), R, { discounts: [d] }, 'replace', AT));
  assert.is(catalog.discounts[0]?.is_active, true);
  assert.is(catalog.discounts[0]?.start_date, null);
  const issues = issuesOf(() =>
    decideApplyCatalog(
      emptyCatalog(R),
      R,
      {
        discounts: [
          { ...d, start_date: '2026-06-01T00:00:00+02:00', end_date: '2026-05-01T00:00:00+02:00' },
          { ...d, id: 'd2', start_time: '14:00', end_time: '12:00' },
          { ...d, id: 'd3', start_date: '2026-06-01' },
        ],
      },
      'replace',
      AT,
    ),
  );
  assert.equal(
    issues.map((i) => i.path),
    ['discounts.0.end_date', 'discounts.1.end_time', 'discounts.2.start_date'],
  );
});

t('loadCatalog folds the stream, then reads only what was appended since', async () => {
  const events = new MemoryEventStore();
  const deps = { events, clock: new FixedClock(AT) };
  const meta = operatorMeta('test');
  const missing = await applyCatalog(deps, R, config, meta).catch((err: unknown) => err);
  assert.is((missing as ApiError).status, 404, 'an unknown restaurant has no catalog');
  await createRestaurant(
    deps,
    R,
    {
      name: 'X',
      slug: 'x',
      country_code: 'FR',
      timezone: 'Europe/Paris',
      currency: 'EUR',
      api_option: false,
      customer_matching: true,
      features: [],
    },
    meta,
  );
  assert.equal((await loadCatalog(deps, R)).tables, []);
  await applyCatalog(deps, R, config, meta);
  const first = await loadCatalog(deps, R);
  assert.is(first.tables.length, 2);
  assert.is(await loadCatalog(deps, R), first, 'unchanged stream: the same fold');
  const again = await applyCatalog(deps, R, config, meta);
  assert.equal(again.appended, []);
  await applyCatalog(deps, R, { tables: [{ id: 'tbl_3', max_pax: 8 }] }, meta, 'merge');
  const second = await loadCatalog(deps, R);
  assert.equal(
    second.tables.map((x) => x.id),
    ['tbl_1', 'tbl_2', 'tbl_3'],
  );
  assert.is(first.tables.length, 2, 'an earlier fold is not changed');
});

t.run();
