// The sealing layer is an EventStore like any other: the port's whole contract holds through it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { NO_STREAM } from '../../src/ports/event-store';
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

test.run();
