// The sealing layer with key pages (issue 16 item 5): new customers sealed with keys of a page made in
// one key-store write, erasure of one customer's page key for good (after a restart too) while the
// page's other customers stay readable, pool keys of the layout before pages still read and erased,
// the tombstone look-up skipped only for ids minted at random (AppendOptions.mintedId), and appends
// whose keys are at hand sealed without waiting.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer } from '../../commands/customers/handler';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { ANY, type EventStore, type NewEvent, NO_STREAM } from '../../src/ports/event-store';
import type { KeyStore } from '../../src/ports/key-store';
import { sealData } from '../../src/privacy/seal';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { customerWorld } from '../helpers/customers';

const test = suite('sealing with key pages');
const dir = mkdtempSync(join(tmpdir(), 'couvert-key-pages-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const created = (id: string): NewEvent => ({
  type: 'CustomerCreated',
  data: { customer_id: id, restaurant_id: 'r', at: 't', profile: { name: `N ${id}`, email: `${id}@x.test` } },
});
const deleted = (id: string): NewEvent => ({
  type: 'CustomerDeleted',
  data: { customer_id: id, restaurant_id: 'r', at: 't', reason: null },
});

/** Counts the key store's look-ups and writes. */
function watched(keys: KeyStore) {
  const calls: string[] = [];
  for (const m of ['find', 'findMany', 'obtain', 'obtainMany', 'createPage'] as const) {
    const f = (keys[m] as (...a: unknown[]) => Promise<unknown>).bind(keys);
    (keys as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
      calls.push(m);
      return f(...a);
    };
  }
  return calls;
}

test('one customer of a page erased: gone for good, after a restart too; the page-mates stay', async () => {
  const logFile = join(dir, 'erase.sqlite');
  const keyFile = join(dir, 'erase-keys.sqlite');
  let inner = SqliteEventStore.open(logFile);
  let keys = SqliteKeyStore.open(keyFile);
  let store = new SealingEventStore(inner, keys);
  const ids = ['cus_p1', 'cus_p2', 'cus_p3'];
  for (const id of ids) await store.append(`customer-${id}`, [created(id)], NO_STREAM, { mintedId: true });
  const kids = await Promise.all(
    ids.map(
      async (id) => ((await inner.readStream(`customer-${id}`))[0]!.data.sealed as { kid: string }).kid,
    ),
  );
  assert.is(new Set(kids.map((k) => k.split('.')[0])).size, 1, 'one page for the three');
  await store.append('customer-cus_p2', [deleted('cus_p2')], 0);
  assert.is((await keys.find(`key:${kids[1]}`)).state, 'destroyed');
  await store.close();
  await keys.close();
  // A restart: another process, nothing cached.
  inner = SqliteEventStore.open(logFile);
  keys = SqliteKeyStore.open(keyFile);
  store = new SealingEventStore(inner, keys);
  try {
    const [p2] = await store.readStream('customer-cus_p2');
    assert.equal(p2!.data.profile, { name: '[erased]', email: null });
    assert.is(p2!.data.erased, true);
    for (const id of ['cus_p1', 'cus_p3']) {
      const [e] = await store.readStream(`customer-${id}`);
      assert.equal(e!.data.profile, { name: `N ${id}`, email: `${id}@x.test` }, `${id} still reads`);
    }
    assert.is(await store.erasurePending('cus_p2'), false);
    // No key is ever made again for the erased customer: what is appended for them is erased.
    await store.append(
      'customer-cus_p2',
      [{ type: 'CustomerUpdated', data: { customer_id: 'cus_p2', changes: { note: 'x' }, previous: {} } }],
      1,
    );
    const stored = (await inner.readStream('customer-cus_p2'))[2]!;
    assert.is(stored.data.erased, true);
    assert.not.ok(JSON.stringify(stored.data).includes('"x"'));
  } finally {
    await store.close();
    await keys.close();
  }
});

test('boxes sealed with pool keys of the layout before pages (key:<kid>) still open and erase', async () => {
  const keys = SqliteKeyStore.open(join(dir, 'old-pool.sqlite'));
  const inner = new MemoryEventStore();
  try {
    // What the code before pages wrote: a pool key at `key:<kid>` (one row), a v2 box naming it.
    const kid = '00mhx2k9zAbCdEfGhIjKlMnOp';
    const key = await keys.obtain(`key:${kid}`);
    const e = created('cus_old');
    await inner.append(
      'customer-cus_old',
      [{ ...e, data: sealData(e.type, e.data, key, 'cus_old', kid) }],
      NO_STREAM,
    );
    const store = new SealingEventStore(inner, keys);
    const [read] = await store.readStream('customer-cus_old');
    assert.equal(read!.data.profile, { name: 'N cus_old', email: 'cus_old@x.test' });
    // Its later events are sealed with the same key (the binding its stream names).
    await store.append(
      'customer-cus_old',
      [{ type: 'CustomerUpdated', data: { customer_id: 'cus_old', changes: { note: 'n' }, previous: {} } }],
      0,
    );
    assert.is(((await inner.readStream('customer-cus_old'))[1]!.data.sealed as { kid: string }).kid, kid);
    await store.append('customer-cus_old', [deleted('cus_old')], 1);
    assert.is((await keys.find(`key:${kid}`)).state, 'destroyed');
    const fresh = new SealingEventStore(inner, keys);
    for (const r of (await fresh.readStream('customer-cus_old')).slice(0, 2))
      assert.is(r.data.erased, true, `${r.type} reads erased`);
  } finally {
    await keys.close();
  }
});

test('POST /customers ids (minted at random) are not looked up; chosen or derived ids are', async () => {
  const keys = new MemoryKeyStore();
  await keys.destroy('customer:cus_chosen_gone', 't');
  const calls = watched(keys);
  let layer: SealingEventStore | null = null;
  const w = await customerWorld(undefined, (clock) => {
    layer = new SealingEventStore(new MemoryEventStore({ clock }), keys);
    return layer;
  });
  const restaurant = { _id: 'rest_a', country_code: 'FR', customer_matching: true };
  const minted = await createCustomer(w, restaurant, { name: 'Minted', email: 'm@x.test' }, w.meta);
  assert.equal(calls, ['createPage'], 'a pool key, no look-up');
  // An id chosen by the caller (the import's derived ids, with an event id of their own): looked up,
  // and a tombstone there is honoured (nothing personal written).
  const chosen = await createCustomer(w, restaurant, { name: 'Gone', email: 'g@x.test' }, w.meta, {
    customerId: 'cus_chosen_gone',
    eventId: '7f0c2f7e-5b7e-4c61-9d8a-2a3b4c5d6e7f',
  });
  assert.ok(calls.includes('findMany') || calls.includes('find'), 'the chosen id was looked up');
  const inner = (layer as unknown as SealingEventStore).inner as EventStore;
  const [gone] = await inner.readStream(`customer-${chosen.customerId}`);
  assert.is(gone!.data.erased, true);
  assert.not.ok(JSON.stringify(gone!.data).includes('g@x.test'));
  const [kept] = await inner.readStream(`customer-${minted.customerId}`);
  assert.is((kept!.data.sealed as { v: number }).v, 2);
  await w.settle();
});

test('an append whose keys are at hand reaches the store without waiting; a miss waits, then the same', async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const store = new SealingEventStore(inner, keys);
  const append = inner.append.bind(inner);
  let reached = 0;
  inner.append = (...a) => {
    reached++;
    return append(...a);
  };
  // The pool is filled (one page), then a minted new customer and their next event: no wait at all.
  await store.append('customer-cus_w0', [created('cus_w0')], NO_STREAM, { mintedId: true });
  const before = reached;
  const p = store.append('customer-cus_w1', [created('cus_w1')], NO_STREAM, { mintedId: true });
  assert.is(reached, before + 1, 'sealed and handed to the store in the same turn');
  await p;
  const q = store.append(
    'customer-cus_w1',
    [{ type: 'CustomerUpdated', data: { customer_id: 'cus_w1', changes: { note: 'n' }, previous: {} } }],
    0,
  );
  assert.is(reached, before + 2, 'a cached key: no wait');
  await q;
  // A customer whose key is not cached waits for the key store first.
  const r = store.append(
    'customer-cus_other',
    [{ type: 'CustomerUpdated', data: { customer_id: 'cus_other', changes: { note: 'n' }, previous: {} } }],
    ANY,
  );
  assert.is(reached, before + 2, 'a key to fetch: the store is reached later');
  await r;
  assert.is(reached, before + 3);
  // Both paths read back alike, in this process and in another.
  const other = new SealingEventStore(inner, keys);
  for (const s of ['customer-cus_w1', 'customer-cus_other'])
    assert.equal(
      (await store.readStream(s)).map((e) => e.data),
      (await other.readStream(s)).map((e) => e.data),
    );
  assert.equal((await other.readStream('customer-cus_w1'))[1]!.data.changes, { note: 'n' });
  await store.close();
});

test.run();
