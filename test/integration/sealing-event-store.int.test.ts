// The sealing layer is an EventStore like any other: the port's whole contract holds through it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { NO_STREAM } from '../../src/ports/event-store';
import { KeyStoreError } from '../../src/ports/key-store';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { eventStoreContract } from '../contracts/event-store.contract';
import { collect, take } from '../contracts/event-store.helpers';

const test = suite('event-store: sealing layer over memory');
eventStoreContract(
  test,
  { open: () => new SealingEventStore(new MemoryEventStore(), new MemoryKeyStore()) },
  { fresh: true, strictIds: true },
);

// As over EventStoreDB: events in clear are checked for an erased customer on every read.
const legacy = suite('event-store: sealing layer over memory, erasing events written in clear');
eventStoreContract(
  legacy,
  {
    open: () =>
      new SealingEventStore(new MemoryEventStore(), new MemoryKeyStore(), undefined, { eraseLegacy: true }),
  },
  { fresh: true, strictIds: true },
);
legacy.run();

test('every read path opens sealed events; the store below holds them sealed; deletion erases', async () => {
  const inner = new MemoryEventStore();
  const keys = new MemoryKeyStore();
  const store = new SealingEventStore(inner, keys);
  const sub = store.subscribe();
  try {
    const created = {
      type: 'CustomerCreated',
      data: {
        customer_id: 'cus_1',
        restaurant_id: 'r',
        at: 't',
        profile: { name: 'Ada', email: 'a@x.test' },
      },
    };
    await store.append('customer-cus_1', [created], NO_STREAM);
    const [live] = await take(sub[Symbol.asyncIterator](), 1, 2000);
    for (const e of [
      live!,
      ...(await store.readStream('customer-cus_1')),
      ...(await collect(store.readAll())),
    ])
      assert.equal(e.data.profile, { name: 'Ada', email: 'a@x.test' });
    assert.not.match(
      JSON.stringify((await inner.readStream('customer-cus_1')).map((e) => e.data)),
      /Ada|a@x/,
    );
    await store.append(
      'customer-cus_1',
      [
        {
          type: 'CustomerDeleted',
          data: { customer_id: 'cus_1', restaurant_id: 'r', at: 't', reason: null },
        },
      ],
      0,
    );
    assert.is((await keys.find('customer:cus_1')).state, 'destroyed');
    const [erased] = await store.readStream('customer-cus_1');
    assert.equal(erased!.data.profile, { name: '[erased]', email: null });
    assert.is(erased!.data.erased, true);
  } finally {
    await sub.close();
    await store.close();
  }
});

test('an event sealed here moments ago reads in clear without its key; an erasure clears that at once', async () => {
  const inner = new MemoryEventStore();
  const keys = new MemoryKeyStore();
  const store = new SealingEventStore(inner, keys);
  try {
    const id = '3b1f5c0e-8d2a-4e6b-9c47-1a2b3c4d5e6f';
    const created = {
      id,
      type: 'CustomerCreated',
      data: {
        customer_id: 'cus_2',
        restaurant_id: 'r',
        at: 't',
        profile: { name: 'Bea', email: 'b@x.test' },
      },
    };
    await store.append('customer-cus_2', [created], NO_STREAM);
    assert.not.match(JSON.stringify((await inner.readStream('customer-cus_2'))[0]!.data), /Bea/);
    // Neither the remembered keys nor the key store answer: only the remembered clear data can open it.
    (store as unknown as { cache: Map<string, unknown> }).cache.clear();
    const find = keys.find.bind(keys);
    keys.find = async () => {
      throw new Error('the key store was asked');
    };
    const [read] = await collect(store.readAll());
    assert.equal(read!.data.profile, { name: 'Bea', email: 'b@x.test' });
    keys.find = find;
    await store.append(
      'customer-cus_2',
      [
        {
          type: 'CustomerDeleted',
          data: { customer_id: 'cus_2', restaurant_id: 'r', at: 't', reason: null },
        },
      ],
      0,
    );
    const [erased] = await collect(store.readAll());
    assert.equal(erased!.data.profile, { name: '[erased]', email: null }, 'erased at once, not from memory');
  } finally {
    await store.close();
  }
});

test('new customers appended in one event-loop turn get their keys in one obtainMany', async () => {
  const keys = new MemoryKeyStore();
  const calls: string[][] = [];
  const obtainMany = keys.obtainMany.bind(keys);
  keys.obtainMany = (subjects) => {
    calls.push([...subjects]);
    return obtainMany(subjects);
  };
  keys.obtain = () => Promise.reject(new Error('obtain one by one'));
  const store = new SealingEventStore(new MemoryEventStore(), keys);
  try {
    await keys.destroy('customer:cus_gone', 't');
    const created = (id: string) => ({
      type: 'CustomerCreated',
      data: {
        customer_id: id,
        restaurant_id: 'r',
        at: 't',
        profile: { name: `N ${id}`, email: `${id}@x.test` },
      },
    });
    const ids = [...Array.from({ length: 30 }, (_, i) => `cus_${i}`), 'cus_gone'];
    await Promise.all(ids.map((id) => store.append(`customer-${id}`, [created(id)], NO_STREAM)));
    assert.is(calls.length, 1, 'one key-store call for the turn');
    assert.equal(calls[0]!.sort(), ids.map((id) => `customer:${id}`).sort());
    for (const id of ids.slice(0, 30)) {
      const [e] = await store.readStream(`customer-${id}`);
      assert.equal(e!.data.profile, { name: `N ${id}`, email: `${id}@x.test` });
    }
    const [gone] = await store.readStream('customer-cus_gone');
    assert.is(gone!.data.erased, true, 'an erased subject gets no key: nothing personal is written');
    await store.append('customer-cus_3', [created('cus_3')], 0);
    assert.is(calls.length, 1, 'a cached key is not asked for again');
    let err: unknown = null;
    try {
      await store.append('customer-long', [created('x'.repeat(300))], NO_STREAM);
    } catch (e) {
      err = e;
    }
    assert.instance(err, KeyStoreError, 'a bad subject fails its own append');
  } finally {
    await store.close();
  }
});

test.run();
