// The catalog and bookings projections on the embedded store: idempotent under redelivery, and the
// read-side caches see every change.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SeatingHeldData } from '../../commands/availability/capacity-events';
import { decideApplyCatalog } from '../../commands/catalog/decide';
import { emptyCatalog } from '../../commands/catalog/types';
import { BOOKINGS, bookingsProjection, reservationIdOfKey, seatingKey } from '../../projections/bookings';
import { catalogProjection, catalogProjectionV2, removedAfter } from '../../projections/catalog';
import { bookingsOn } from '../../queries/availability';
import { getCatalog, getRemovedCatalogItems } from '../../queries/catalog';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { RecordedEvent } from '../../src/ports/event-store';
import { AliasedDocumentStore } from '../../src/projection/versions';

const R = 'rest_x';
let position = 0n;
const recorded = (type: string, data: Record<string, unknown>): RecordedEvent => {
  position += 1n;
  return { id: `e${position}`, type, data, metadata: {}, created: '', stream: 's', revision: 0, position };
};

const seating = (o: Partial<SeatingHeldData> = {}): Record<string, unknown> => ({
  restaurant_id: R,
  service_date: '2026-05-01',
  reservation_id: 'res_1',
  shift_id: 'shift_dinner',
  room_id: null,
  table_ids: ['t1'],
  start_at: '2026-05-01T17:00:00.000Z',
  end_at: '2026-05-01T18:30:00.000Z',
  party_size: 2,
  at: '2026-05-01T08:00:00.000Z',
  ...o,
});

/** Applies like the runner does: the event, then the checkpoint the caches look at. */
async function apply(docs: EmbeddedDocumentStore, e: RecordedEvent) {
  for (const p of [catalogProjectionV2, bookingsProjection])
    if (p.eventTypes.includes(e.type)) await p.apply(e, docs);
  for (const p of [catalogProjectionV2, bookingsProjection]) await docs.setCheckpoint(p.name, e.position);
}

const t = suite('catalog read models');

t('seating keys survive characters MongoDB reads as paths', () => {
  for (const id of ['res_1', 'a.b', '$x', '100%', '%2E', 'a.$%.b'])
    assert.is(reservationIdOfKey(seatingKey(id)), id);
  assert.not.match(seatingKey('a.b$c'), /[.$]/);
});

t('bookings: held, moved within the day, released; redelivery changes nothing', async () => {
  const docs = new EmbeddedDocumentStore();
  await bookingsProjection.setup?.(docs);
  const held = recorded('SeatingHeld', seating());
  await apply(docs, held);
  await apply(docs, recorded('SeatingHeld', seating({ reservation_id: 'res.2', table_ids: ['t2'] })));
  assert.equal(
    (await bookingsOn(docs, R, ['2026-05-01'])).map((b) => [b.reservation_id, b.table_ids]),
    [
      ['res_1', ['t1']],
      ['res.2', ['t2']],
    ],
  );
  const moved = recorded('SeatingHeld', seating({ table_ids: ['t3'], start_at: '2026-05-01T18:00:00.000Z' }));
  await apply(docs, moved);
  const released = recorded('SeatingReleased', {
    restaurant_id: R,
    service_date: '2026-05-01',
    reservation_id: 'res.2',
    reason: 'canceled',
    at: '',
  });
  await apply(docs, released);
  // Redelivered older events are skipped (the day document already passed their position).
  await bookingsProjection.apply(held, docs);
  await bookingsProjection.apply(released, docs);
  const after = await bookingsOn(docs, R, ['2026-05-01', '2026-05-02']);
  assert.equal(
    after.map((b) => [b.reservation_id, b.table_ids, b.start_ms]),
    [['res_1', ['t3'], Date.parse('2026-05-01T18:00:00.000Z')]],
  );
  assert.is(await docs.collection(BOOKINGS).count({ restaurant_id: R }), 1);
});

t('catalog: folded with the write side evolve; the cached read follows each change', async () => {
  const docs = new EmbeddedDocumentStore();
  const first = decideApplyCatalog(
    emptyCatalog(R),
    R,
    { rooms: [{ id: 'r1', name: 'One' }] },
    'replace',
    'now',
  );
  for (const e of first) await apply(docs, recorded(e.type, e.data));
  const before = await getCatalog(docs, R);
  assert.equal(before.rooms, [{ id: 'r1', name: 'One' }]);
  assert.is(await getCatalog(docs, R), before, 'unchanged: the same frozen object');
  assert.ok(Object.isFrozen(before.rooms));
  const rename = decideApplyCatalog(before, R, { rooms: [{ id: 'r1', name: 'Uno' }] }, 'replace', 'now');
  const event = recorded(rename[0]?.type as string, rename[0]?.data as Record<string, unknown>);
  await apply(docs, event);
  await catalogProjectionV2.apply(event, docs);
  assert.equal((await getCatalog(docs, R)).rooms, [{ id: 'r1', name: 'Uno' }]);
  assert.equal((await getCatalog(docs, 'rest_none')).rooms, []);
});

t(
  'catalog version 2: a removed item is kept as it was, until configured again; version 1 keeps none',
  async () => {
    const docs = new EmbeddedDocumentStore();
    const v1 = new EmbeddedDocumentStore();
    let catalog = emptyCatalog(R);
    const step = async (config: Record<string, unknown[]>, mode: 'replace' | 'merge' = 'replace') => {
      for (const e of decideApplyCatalog(catalog, R, config, mode, 'now')) {
        const event = recorded(e.type, e.data);
        await apply(docs, event);
        await catalogProjection.apply(event, v1);
        await v1.setCheckpoint(catalogProjection.name, event.position);
        // Redelivered: nothing changes.
        await catalogProjectionV2.apply(event, docs);
      }
      catalog = await getCatalog(docs, R);
    };
    await step({
      rooms: [
        { id: 'r1', name: 'One' },
        { id: 'r2', name: 'Two' },
      ],
    });
    assert.equal(await getRemovedCatalogItems(docs, R), {});
    await step({ rooms: [{ id: 'r2', name: 'Two' }] });
    assert.equal((await getCatalog(docs, R)).rooms, [{ id: 'r2', name: 'Two' }]);
    assert.equal(await getRemovedCatalogItems(docs, R), { rooms: [{ id: 'r1', name: 'One' }] });
    assert.not.ok('removed' in (await getCatalog(docs, R)), 'the catalog itself holds no removed items');
    await step({ rooms: [{ id: 'r1', name: 'One again' }] }, 'merge');
    assert.equal(await getRemovedCatalogItems(docs, R), { rooms: [] });
    assert.equal(await getRemovedCatalogItems(v1, R), {}, 'version 1: nothing kept');
    assert.equal((await getCatalog(v1, R)).rooms, (await getCatalog(docs, R)).rooms, 'the same catalog');
  },
);

t('the cached catalog follows a version that takes over while the checkpoint has not moved', async () => {
  // What queries read through (src/projection/versions.ts): version 1 serves, version 2 is built beside
  // it and takes over once caught up, at the checkpoint both have applied.
  const raw = new EmbeddedDocumentStore();
  const docs = new AliasedDocumentStore(raw);
  docs.setAliases({ catalogs: 'catalogs' });
  const base = { ...emptyCatalog(R), _id: R, updated_at: 'now', _pos: '00000000000000000001' };
  const table = { id: 't9', name: '9', room_id: null, min_pax: 2, max_pax: 4 };
  await raw.collection('catalogs').replaceOne({ _id: R }, base, { upsert: true });
  await raw
    .collection('catalogs_v2')
    .replaceOne({ _id: R }, { ...base, removed: { tables: [table] } }, { upsert: true });
  await raw.setCheckpoint(catalogProjection.name, 1n);
  assert.equal(await getRemovedCatalogItems(docs, R), {}, 'version 1 keeps none');
  docs.setAliases({ catalogs: 'catalogs_v2' });
  assert.equal(await getRemovedCatalogItems(docs, R), { tables: [table] }, 'version 2 read at once');
});

t('removedAfter: pure; an unknown id or another event changes nothing', () => {
  const catalog = { ...emptyCatalog(R), shifts: [{ id: 's1' } as never] };
  const before = {};
  const ev = (type: string, data: Record<string, unknown>) =>
    recorded(type, { restaurant_id: R, at: '', ...data });
  assert.is(removedAfter(before, catalog, ev('CatalogItemRemoved', { kind: 'shifts', id: 'nope' })), before);
  assert.is(removedAfter(before, catalog, ev('SomethingElse', {})), before);
  const gone = removedAfter(before, catalog, ev('CatalogItemRemoved', { kind: 'shifts', id: 's1' }));
  assert.equal(gone, { shifts: [{ id: 's1' }] });
  assert.equal(before, {}, 'the input is not changed');
  const back = removedAfter(
    gone,
    catalog,
    ev('CatalogItemConfigured', { kind: 'shifts', item: { id: 's1' } }),
  );
  assert.equal(back, { shifts: [] });
  assert.equal(gone, { shifts: [{ id: 's1' }] }, 'the input is not changed');
  const twice = removedAfter(gone, catalog, ev('CatalogItemRemoved', { kind: 'shifts', id: 's1' }));
  assert.equal(twice, { shifts: [{ id: 's1' }] }, 'removed again (configured in between): kept once');
});

t.run();
