// `audit export` on the embedded log: the fast path (lines built inside SQLite from the stored JSON
// text, one Buffer a page, through SqliteLogReader) writes exactly what the generic path (through the
// port, as on EventStoreDB) writes, byte for byte: for every filter and page size, the rows its SQL
// pre-filter lets through and it must drop, hostile strings in every field (fast-check), sealed
// customers (left sealed) and erased ones (shown erased), --from/--to windows and positions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { SqliteLogReader } from '../../src/adapters/event-store/sqlite-log-reader';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { type ExportChunk, type ExportFilter, exportEvents } from '../../src/audit/export';
import { FixedClock } from '../../src/core/clock';
import { ANY, type EventStore } from '../../src/ports/event-store';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';

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

/** The export's bytes through one path, and how many events it said it wrote. */
async function exported(
  events: EventStore,
  filter: ExportFilter,
  batchSize: number,
  forceGeneric: boolean,
): Promise<{ bytes: Buffer; n: number; progress: bigint[] }> {
  const chunks: Buffer[] = [];
  const progress: bigint[] = [];
  const n = await exportEvents(
    events,
    filter,
    (c: ExportChunk) => {
      chunks.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c));
    },
    (p) => progress.push(p.position),
    { batchSize, forceGeneric },
  );
  return { bytes: Buffer.concat(chunks), n, progress };
}

/** Both paths, held to the same bytes; the lines parsed. */
async function both(filter: ExportFilter, batchSize: number, events: EventStore = store) {
  const fastRun = await exported(events, filter, batchSize, false);
  const genericRun = await exported(events, filter, batchSize, true);
  assert.is(fastRun.n, genericRun.n);
  const fast = fastRun.bytes.toString('utf8');
  assert.ok(
    fastRun.bytes.equals(genericRun.bytes),
    'the fast path writes the same bytes as the generic path',
  );
  assert.is(fast.split('\n').length - 1, fastRun.n, 'one line per event it counted');
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

test('hostile strings in every field: both paths write the same bytes (fast-check)', async () => {
  const text = fc.string({ unit: 'binary', maxLength: 12 });
  const value = fc.oneof(
    text,
    fc.constant(null),
    fc.integer(),
    fc.constant(undefined),
    fc.dictionary(text, text, { maxKeys: 2 }),
  );
  let round = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          stream: text.filter((s) => s.length > 0 && !s.startsWith('$')),
          type: text.filter((s) => s.length > 0 && !s.startsWith('$')),
          // What the store accepts in metadata: restaurant_id a string or null, actor and request_id strings.
          restaurantInMetadata: fc.oneof(
            fc.constant('rest_x'),
            text,
            fc.constant(null),
            fc.constant(undefined),
          ),
          restaurantInData: fc.oneof(fc.constant('rest_x'), value),
          actor: fc.oneof(text, fc.constant(undefined)),
          requestId: fc.oneof(text, fc.constant(undefined)),
          note: text,
        }),
        { minLength: 1, maxLength: 6 },
      ),
      async (rows) => {
        const log = SqliteEventStore.open(join(dir, `hostile-${round++}.sqlite`));
        try {
          for (const r of rows) {
            const metadata: Record<string, unknown> = {
              restaurant_id: r.restaurantInMetadata,
              actor: r.actor,
              request_id: r.requestId,
            };
            for (const k of Object.keys(metadata)) if (metadata[k] === undefined) delete metadata[k];
            const data: Record<string, unknown> = { restaurant_id: r.restaurantInData, note: r.note };
            if (data.restaurant_id === undefined) delete data.restaurant_id;
            await log.append(r.stream, [{ type: r.type, data, metadata }], ANY);
          }
          for (const restaurantId of ['rest_x', null])
            await both({ restaurantId, from: null, to: null }, 4, log);
        } finally {
          await log.close();
        }
      },
    ),
    { numRuns: 60, seed: Number(process.env.EXPORT_SEED ?? 16) },
  );
});

test('sealed customers stay sealed, erased ones are shown erased, on both paths; windows and positions', async () => {
  const clock = new FixedClock('2026-05-01T10:00:00.000Z');
  const log = SqliteEventStore.open(join(dir, 'sealed.sqlite'), { clock });
  const sealing = new SealingEventStore(log, new MemoryKeyStore(), () => clock.now());
  const meta = { restaurant_id: 'rest_s', actor: 'credential:key_s', request_id: 'req_s' };
  const customer = (id: string, name: string) => ({
    type: 'CustomerCreated',
    data: {
      customer_id: id,
      restaurant_id: 'rest_s',
      profile: { name, email: `${id}@example.com`, phone_number: '+33612345678' },
    },
    metadata: meta,
  });
  try {
    await sealing.append('customer-cus_kept', [customer('cus_kept', 'Ada Kept')], ANY);
    clock.set('2026-05-02T10:00:00.000Z');
    await sealing.append('customer-cus_gone', [customer('cus_gone', 'Bob Gone')], ANY);
    await sealing.append(
      'reservation-res_g',
      [
        {
          type: 'ReservationCreated',
          data: {
            reservation_id: 'res_g',
            restaurant_id: 'rest_s',
            reservation: { customer_id: 'cus_gone', allergies: 'peanuts', party_size: 2 },
          },
          metadata: meta,
        },
      ],
      ANY,
    );
    await sealing.append(
      'other',
      [{ type: 'Other', data: { x: 1 }, metadata: { restaurant_id: 'rest_other' } }],
      ANY,
    );
    clock.set('2026-05-03T10:00:00.000Z');
    await sealing.append(
      'customer-cus_gone',
      [
        {
          type: 'CustomerDeleted',
          data: { customer_id: 'cus_gone', restaurant_id: 'rest_s', reason: 'asked to be forgotten' },
          metadata: meta,
        },
      ],
      ANY,
    );
    await sealing.append(
      'reservation-res_g',
      [
        {
          type: 'ReservationUpdated',
          data: {
            reservation_id: 'res_g',
            restaurant_id: 'rest_s',
            changes: { allergies: 'none' },
            previous: { allergies: 'peanuts' },
          },
          metadata: meta,
        },
      ],
      ANY,
    );
    // An endpoint as a version before 2026-11-28 wrote it (a header value in clear): read redacted and
    // marked, also beside an erased customer's events (the fast path then runs another data function).
    await log.append(
      'webhook-endpoint-we_old',
      [
        {
          type: 'WebhookEndpointCreated',
          data: { endpoint_id: 'we_old', restaurant_id: 'rest_s', headers: { 'X-Token': 'clear-token' } },
          metadata: meta,
        },
      ],
      ANY,
    );
    for (const batchSize of [1, 2, 4096]) {
      const all = await both({ restaurantId: 'rest_s', from: null, to: null }, batchSize, sealing);
      assert.equal(
        all.map((l) => l.position),
        ['1', '2', '3', '5', '6', '7'],
        'positions in log order; the other restaurant left out',
      );
      assert.equal(
        all.map((l) => l.redacted ?? false),
        [false, false, false, false, false, true],
        'only the line whose values in clear were masked is marked',
      );
      assert.equal((all[5]!.data as { headers: unknown }).headers, { 'X-Token': '[redacted]' });
      const [kept, gone, reservation, deleted, after] = all.map((l) => l.data as Record<string, unknown>);
      assert.ok(kept!.sealed, 'a customer not erased stays sealed: a later erasure still reaches the file');
      assert.not.ok('erased' in kept!);
      assert.equal(gone!.profile, { name: '[erased]', email: null, phone_number: null });
      assert.is(gone!.erased, true);
      assert.not.ok('sealed' in gone!);
      assert.is((reservation!.reservation as { allergies: unknown }).allergies, null);
      assert.is(reservation!.erased, true);
      assert.is(deleted!.erased, true, "the deletion's own reason was sealed with the key it destroyed");
      assert.is(deleted!.reason, null);
      assert.is(after!.erased, true, 'written after the erasure: stored erased');
      assert.not.ok('sealed' in after!);
      const window = await both(
        { restaurantId: 'rest_s', from: '2026-05-02T00:00:00.000Z', to: '2026-05-02T23:59:59.999Z' },
        batchSize,
        sealing,
      );
      assert.equal(
        window.map((l) => l.position),
        ['2', '3'],
        '--from/--to inclusive on the recorded time',
      );
    }
    const text = (
      await exported(sealing, { restaurantId: 'rest_s', from: null, to: null }, 4096, false)
    ).bytes.toString();
    for (const clear of [
      'clear-token',
      'Bob Gone',
      'cus_gone@example.com',
      'peanuts',
      'Ada Kept',
      'cus_kept@example.com',
    ])
      assert.not.ok(text.includes(clear), `${clear} is not in the export`);
  } finally {
    await log.close();
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

test('a row damaged in the file is refused with its position, stream and revision, on both paths', async () => {
  // Damages an edit or the disk can leave: the data cut short, the data not an object, the metadata
  // cut short (SQLite's lookups throw on it), the data damaged in a page of several good rows.
  const cases: [string, string, string][] = [
    ['data cut short', 'data', `substr(data, 1, 20)`],
    ['data not an object', 'data', `'[1,2]'`],
    ['metadata cut short', 'metadata', `substr(metadata, 1, 15)`],
    ['data with its end brace lost', 'data', `substr(data, 1, length(data) - 1)`],
    // Damage inside that keeps both braces: let through as an invalid line before the data was parsed.
    ['data damaged inside, both braces kept', 'data', `'{oops}'`],
    ['data cut inside, both braces kept', 'data', `substr(data, 1, 10) || '}'`],
  ];
  for (const [label, column, damaged] of cases) {
    const where = mkdtempSync(join(tmpdir(), 'couvert-export-damaged-'));
    const path = join(where, 'events.sqlite');
    const log = SqliteEventStore.open(path);
    try {
      for (let i = 0; i < 5; i++)
        await log.append(
          `reservation-d${i}`,
          [
            {
              type: 'ReservationCreated',
              data: { restaurant_id: 'rest_d', n: i },
              metadata: { restaurant_id: 'rest_d', actor: 'operator:cli' },
            },
          ],
          ANY,
        );
      const db = new Database(path);
      db.prepare(`UPDATE events SET ${column} = ${damaged} WHERE stream = 'reservation-d3'`).run();
      db.close();
      for (const forceGeneric of [false, true])
        for (const batchSize of [2, 4096]) {
          let written = '';
          const err = await exportEvents(
            log,
            { restaurantId: 'rest_d', from: null, to: null },
            (c) => {
              written += c.toString();
            },
            undefined,
            { batchSize, forceGeneric },
          ).then(
            () => null,
            (e: unknown) => e as Error,
          );
          const how = `${label}, ${forceGeneric ? 'generic' : 'fast'} path, pages of ${batchSize}`;
          assert.ok(err, `${how}: refused`);
          assert.match(
            err.message,
            /^the event at position 4 \(reservation-d3 revision 0\) does not hold valid JSON/,
            how,
          );
          for (const line of written.split('\n').filter(Boolean)) JSON.parse(line); // never an invalid line
          assert.not.match(written, /"n":3/, `${how}: the damaged row is not written`);
        }
    } finally {
      await log.close();
      rmSync(where, { recursive: true, force: true });
    }
  }
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
