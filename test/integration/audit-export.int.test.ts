// `audit export` on the embedded log: the fast path (raw rows through SqliteLogReader, lines built from
// the stored JSON text) writes exactly what the generic path (through the port, as on EventStoreDB)
// writes, for every filter, including the rows its SQL pre-filter lets through and it must drop.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { SqliteLogReader } from '../../src/adapters/event-store/sqlite-log-reader';
import { type ExportFilter, exportEvents } from '../../src/audit/export';
import { ANY } from '../../src/ports/event-store';

const dir = mkdtempSync(join(tmpdir(), 'couvert-export-'));
const file = join(dir, 'events.sqlite');
const store = SqliteEventStore.open(file);

test.before(async () => {
  // Restaurant in metadata; only in data; a third restaurant whose text names rest_a (pre-filter
  // passes, the check drops it); strings JSON must escape; no actor.
  await store.append(
    'reservation-r1',
    [
      {
        type: 'ReservationCreated',
        data: { restaurant_id: 'rest_a', n: 1 },
        metadata: { restaurant_id: 'rest_a', actor: 'credential:key_1', request_id: 'req_1' },
      },
      {
        type: 'ReservationUpdated',
        data: { restaurant_id: 'rest_a', note: 'quote " and \\ and é ☃' },
        metadata: { restaurant_id: 'rest_a', actor: 'operator:"cli"' },
      },
    ],
    ANY,
  );
  await store.append(
    'restaurant-rest_a',
    [{ type: 'RestaurantCreated', data: { restaurant_id: 'rest_a' }, metadata: {} }],
    ANY,
  );
  await store.append(
    'reservation-r2',
    [
      {
        type: 'ReservationCreated',
        data: { restaurant_id: 'rest_b', note: 'moved from "rest_a"' },
        metadata: { restaurant_id: 'rest_b', nested: { restaurant_id: 'rest_a' } },
      },
    ],
    ANY,
  );
  await store.append(
    'odd stream "name"',
    [{ type: 'Odd\tType', data: { x: 1 }, metadata: { restaurant_id: 'rest_a' } }],
    ANY,
  );
});

test.after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function both(filter: ExportFilter, batchSize: number) {
  let fast = '';
  let generic = '';
  const n = await exportEvents(
    store,
    filter,
    (c) => {
      fast += c;
    },
    undefined,
    { batchSize },
  );
  const m = await exportEvents(
    store,
    filter,
    (c) => {
      generic += c;
    },
    undefined,
    { batchSize, forceGeneric: true },
  );
  assert.is(n, m);
  assert.is(fast, generic, 'the fast path writes the same bytes as the generic path');
  return fast
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('the fast path equals the generic path, whatever the filter and the page size', async () => {
  for (const batchSize of [1, 2, 3, 2048]) {
    const a = await both({ restaurantId: 'rest_a', from: null, to: null }, batchSize);
    assert.equal(
      a.map((l) => l.position),
      ['1', '2', '3', '5'],
      'metadata restaurant, data-only restaurant; never the other restaurant naming it',
    );
    assert.is(a[1]!.actor, 'operator:"cli"');
    assert.is((a[1]!.data as { note: string }).note, 'quote " and \\ and é ☃');
    assert.is(a[2]!.restaurant_id, 'rest_a');
    assert.is(a[3]!.stream, 'odd stream "name"');
    assert.is(a[3]!.type, 'Odd\tType');
    const b = await both({ restaurantId: 'rest_b', from: null, to: null }, batchSize);
    assert.equal(
      b.map((l) => l.position),
      ['4'],
    );
    assert.is(b[0]!.actor, null, 'no actor: null');
    const all = await both({ restaurantId: null, from: null, to: null }, batchSize);
    assert.is(all.length, 5);
    const none = await both(
      { restaurantId: 'rest_a', from: '2999-01-01T00:00:00.000Z', to: null },
      batchSize,
    );
    assert.is(none.length, 0);
    const until = await both(
      { restaurantId: 'rest_a', from: null, to: '2000-01-01T00:00:00.000Z' },
      batchSize,
    );
    assert.is(until.length, 0);
  }
});

test('the raw reader reads beside the writer and sees what was appended before it was asked', async () => {
  const reader = SqliteLogReader.open(file);
  assert.ok(reader);
  try {
    const rows = reader.rows(0, 100, { contains: null, from: null, to: null });
    assert.is(rows.length, 5);
    assert.is(rows[0]![5], '{"restaurant_id":"rest_a","n":1}', 'data as stored JSON text');
    assert.is(typeof rows[0]![8], 'string', 'the chain hash');
    await store.append('late', [{ type: 'Late', data: {}, metadata: {} }], ANY);
    assert.is(reader.rows(5, 100, { contains: null, from: null, to: null }).length, 1);
  } finally {
    reader.close();
  }
  assert.is(SqliteLogReader.open(':memory:'), null, 'a log in memory has no file to open');
});

test('a log in memory exports through the generic path', async () => {
  const mem = SqliteEventStore.open(':memory:');
  await mem.append('s', [{ type: 'T', data: { restaurant_id: 'rest_m' }, metadata: {} }], ANY);
  let out = '';
  assert.is(
    await exportEvents(mem, { restaurantId: 'rest_m', from: null, to: null }, (c) => {
      out += c;
    }),
    1,
  );
  assert.is((JSON.parse(out) as { restaurant_id: string }).restaurant_id, 'rest_m');
  await mem.close();
});

test.run();
