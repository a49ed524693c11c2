// An event holding two customers' data (a reservation moved from A to B: the move's previous text, the
// webhook bodies naming A as the previous customer) seals each one's data under their own key
// (src/privacy/seal.ts, Sealed.more): erasing either leaves nothing of theirs readable and the other's
// data as it was. An event of one customer is sealed in one box, as before. Fan-outs written before
// this (bodies naming A sealed under B's key alone) read with A erased once A is
// (src/privacy/legacy-fanouts.ts).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { NO_STREAM, type RecordedEvent } from '../../src/ports/event-store';
import { uncheckedMove } from '../../src/privacy/legacy-fanouts';
import { customerSubject, sealData } from '../../src/privacy/seal';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { movedToB, seedTwoCustomers } from '../helpers/sealing-world';

const t = suite('sealing: events holding two customers');

// biome-ignore lint/suspicious/noExplicitAny: tests read the stored boxes' arbitrary JSON
type Stored = Record<string, any>;

async function world() {
  const inner = new MemoryEventStore();
  const keys = new MemoryKeyStore();
  const store = new SealingEventStore(inner, keys);
  await seedTwoCustomers(store);
  /** The same log and keys read by another process: nothing remembered, every box decrypted. */
  const other = () => new SealingEventStore(inner, keys);
  const erase = async (id: string) => {
    await store.append(
      `customer-${id}`,
      [{ type: 'CustomerDeleted', data: { customer_id: id, restaurant_id: 'r', at: 't', reason: null } }],
      0,
    );
  };
  return { inner, keys, store, other, erase };
}

const last = async (s: { readStream(x: string): Promise<RecordedEvent[]> }, stream: string) =>
  (await s.readStream(stream)).at(-1) as RecordedEvent;

t(
  "a move's previous text is sealed with the previous customer's key, the change with the new one's",
  async () => {
    const w = await world();
    await w.store.append(
      'reservation-res_1',
      [
        {
          type: 'ReservationUpdated',
          data: {
            reservation_id: 'res_1',
            restaurant_id: 'r',
            changes: {
              customer_id: 'cus_b',
              allergies: 'B wrote: sesame',
              custom_message: 'kept the window',
            },
            previous: {
              customer_id: 'cus_a',
              allergies: 'A wrote: celery',
              custom_message: 'kept the window',
            },
          },
        },
      ],
      0,
    );
    const stored = (await last(w.inner, 'reservation-res_1')).data as Stored;
    assert.not.match(JSON.stringify(stored), /celery|sesame|kept the window/, 'nothing in clear');
    assert.is(stored.sealed.customer_id, 'cus_b');
    assert.equal(
      stored.sealed.more.map((b: { owners: unknown; paths: unknown }) => [b.owners, b.paths]),
      [[[{ customer_id: 'cus_a', kid: stored.sealed.more[0].owners[0].kid }], ['previous.allergies']]],
      "only the previous text that differs is A's (a restated value is the change's)",
    );
    for (const s of [w.store, w.other()]) {
      const e = await last(s, 'reservation-res_1');
      assert.equal(e.data.previous, {
        customer_id: 'cus_a',
        allergies: 'A wrote: celery',
        custom_message: 'kept the window',
      });
      assert.equal(e.data.changes, {
        customer_id: 'cus_b',
        allergies: 'B wrote: sesame',
        custom_message: 'kept the window',
      });
    }
    await w.erase('cus_a');
    for (const s of [w.store, w.other()]) {
      const e = await last(s, 'reservation-res_1');
      assert.equal(
        e.data.previous,
        { customer_id: 'cus_a', allergies: null, custom_message: 'kept the window' },
        "A's erased",
      );
      assert.equal(e.data.changes, {
        customer_id: 'cus_b',
        allergies: 'B wrote: sesame',
        custom_message: 'kept the window',
      });
      assert.is(e.data.erased, true);
    }
  },
);

t("a reservation taken from its customer: the previous text is sealed with that customer's key", async () => {
  const w = await world();
  await w.store.append(
    'reservation-res_1',
    [
      {
        type: 'ReservationUpdated',
        data: {
          reservation_id: 'res_1',
          restaurant_id: 'r',
          changes: { customer_id: null, allergies: 'nobody: soy' },
          previous: { customer_id: 'cus_a', allergies: 'A wrote: celery' },
        },
      },
    ],
    0,
  );
  const stored = (await last(w.inner, 'reservation-res_1')).data as Stored;
  assert.not.match(JSON.stringify(stored), /celery/, "A's text is not in clear");
  assert.match(
    JSON.stringify(stored),
    /nobody: soy/,
    'a reservation without a customer: in clear, as before',
  );
  assert.is(stored.sealed.customer_id, 'cus_a');
  assert.equal((await last(w.other(), 'reservation-res_1')).data.previous, {
    customer_id: 'cus_a',
    allergies: 'A wrote: celery',
  });
  await w.erase('cus_a');
  for (const s of [w.store, w.other()])
    assert.equal((await last(s, 'reservation-res_1')).data.previous, {
      customer_id: 'cus_a',
      allergies: null,
    });
});

const fanout = (data: Record<string, unknown>) => [
  {
    type: 'WebhookDeliveriesScheduled',
    data: {
      restaurant_id: 'r',
      customer_id: 'cus_b',
      source_event_id: 'e1',
      source_position: '1',
      event_types: { v1: 'reservation.updated' },
      event_created: 't',
      deliveries: [],
      at: 't',
      ...data,
    },
  },
];
const body = movedToB;

t(
  'a fan-out describing two customers: erasing the other leaves the stand-in, erasing its own all',
  async () => {
    for (const erased of ['cus_a', 'cus_b']) {
      const w = await world();
      await w.store.append(
        'webhook-fanout-1',
        fanout({
          other_customer_ids: ['cus_a'],
          payloads: { v1: body('Amelia Qqa') },
          payloads_without_others: { v1: body('[erased]') },
        }),
        NO_STREAM,
      );
      const stored = (await last(w.inner, 'webhook-fanout-1')).data as Stored;
      assert.not.match(
        JSON.stringify(stored),
        /Amelia|Bertrand|\[erased\]/,
        'both bodies sealed (a box is base64: longer words than it may hold by chance)',
      );
      assert.is(stored.payloads_without_others, undefined);
      assert.is(stored.sealed.more[0].joint, true);
      for (const s of [w.store, w.other()]) {
        const e = await last(s, 'webhook-fanout-1');
        assert.equal(e.data.payloads, { v1: body('Amelia Qqa') });
        assert.equal(e.data.payloads_without_others, { v1: body('[erased]') }, 'read as appended');
      }
      await w.erase(erased);
      for (const s of [w.store, w.other()]) {
        const e = await last(s, 'webhook-fanout-1');
        assert.equal(e.data.payloads, erased === 'cus_a' ? { v1: body('[erased]') } : {}, erased);
        assert.is(e.data.erased, true);
      }
    }
  },
);

t('an event of one customer is sealed in one box, as before', async () => {
  const w = await world();
  await w.store.append(
    'webhook-fanout-1',
    fanout({ other_customer_ids: [], payloads: { v1: body('Bertrand Qqb') } }),
    NO_STREAM,
  );
  await w.store.append(
    'reservation-res_1',
    [
      {
        type: 'ReservationUpdated',
        data: {
          reservation_id: 'res_1',
          restaurant_id: 'r',
          changes: { allergies: 'A wrote: lupin' },
          previous: { allergies: 'A wrote: celery' },
        },
      },
    ],
    0,
  );
  for (const stream of ['webhook-fanout-1', 'reservation-res_1']) {
    const stored = (await last(w.inner, stream)).data as Stored;
    assert.is(stored.sealed.more, undefined, stream);
  }
});

t('a fan-out written before: the previous customer its bodies name reads erased once they are', async () => {
  const w = await world();
  // As the code before wrote it: no other_customer_ids, sealed with B's key alone.
  await w.store.append('webhook-fanout-1', fanout({ payloads: { v1: body('Amelia Qqa') } }), NO_STREAM);
  assert.is(((await last(w.inner, 'webhook-fanout-1')).data as Stored).sealed.more, undefined);
  for (const s of [w.store, w.other()])
    assert.equal((await last(s, 'webhook-fanout-1')).data.payloads, { v1: body('Amelia Qqa') });
  await w.erase('cus_a');
  for (const s of [w.store, w.other()]) {
    const e = await last(s, 'webhook-fanout-1');
    assert.equal(e.data.payloads, { v1: body('[erased]') }, 'read with A erased, B kept');
    assert.is(e.data.erased, true);
  }
});

t("a move's ReservationUpdated written before: its previous text reads erased once A is", async () => {
  const w = await world();
  // As the code before wrote it: the whole event sealed with B's key (a v1 box of B's own key).
  const data = {
    reservation_id: 'res_1',
    restaurant_id: 'r',
    changes: { customer_id: 'cus_b', allergies: 'B wrote: sesame', custom_message: 'kept the window' },
    previous: { customer_id: 'cus_a', allergies: 'A wrote: celery', custom_message: 'kept the window' },
  };
  const key = await w.keys.obtain(customerSubject('cus_b'));
  await w.inner.append(
    'reservation-res_1',
    [{ type: 'ReservationUpdated', data: sealData('ReservationUpdated', data, key, 'cus_b') }],
    0,
  );
  for (const s of [w.store, w.other()])
    assert.equal((await last(s, 'reservation-res_1')).data.previous, data.previous);
  await w.erase('cus_a');
  for (const s of [w.store, w.other()]) {
    const e = await last(s, 'reservation-res_1');
    assert.equal(e.data.previous, {
      customer_id: 'cus_a',
      allergies: null,
      custom_message: 'kept the window',
    });
    assert.equal(e.data.changes, data.changes, "B's change kept");
    assert.is(e.data.erased, true);
  }
});

t('an old fan-out whose bodies name no previous customer opens at once (no parse, no look-up)', async () => {
  const w = await world();
  const sized = JSON.stringify({
    id: 'evt_1',
    type: 'reservation.updated',
    data: { object: { id: 'res_1', party_size: 3 }, previous_attributes: { party_size: 2 } },
  });
  await w.store.append('webhook-fanout-1', fanout({ payloads: { v1: sized } }), NO_STREAM);
  await w.store.append('webhook-fanout-2', fanout({ payloads: { v1: body('Amelia Qqa') } }), NO_STREAM);
  const one = await last(w.inner, 'webhook-fanout-1');
  assert.equal(w.store.openNow(one)?.data.payloads, { v1: sized }, 'opened without open()');
  // Naming A: read by open(), which asks the key store whether A is erased (another process may
  // have erased A: test/integration/sealing-cross-process-erasure.int.test.ts).
  const two = await last(w.inner, 'webhook-fanout-2');
  assert.is(w.store.openNow(two), undefined, 'A named: open() reads it');
  assert.equal((await w.store.open(two)).data.payloads, { v1: body('Amelia Qqa') });
  await w.erase('cus_a');
  assert.is(w.store.openNow(two), undefined, 'A erased: open() reads it');
  assert.equal((await w.store.open(two)).data.payloads, { v1: body('[erased]') });
});

t(
  "a move written now with nothing of A's is marked (`more: []`): not read as a row written before",
  async () => {
    const w = await world();
    await w.store.append(
      'reservation-res_1',
      [
        {
          type: 'ReservationUpdated',
          data: {
            reservation_id: 'res_1',
            restaurant_id: 'r',
            changes: { customer_id: 'cus_b', allergies: 'A wrote: celery' },
            previous: { customer_id: 'cus_a', allergies: 'A wrote: celery' },
          },
        },
      ],
      0,
    );
    const stored = await last(w.inner, 'reservation-res_1');
    assert.equal((stored.data as Stored).sealed.more, []);
    assert.is(uncheckedMove(stored.type, stored.data), null);
  },
);

t("detached, then given to B with its text changed: the previous text stays A's (A's key)", async () => {
  const w = await world();
  const update = (changes: Record<string, unknown>, previous: Record<string, unknown>) => ({
    type: 'ReservationUpdated',
    data: { reservation_id: 'res_1', restaurant_id: 'r', changes, previous },
  });
  await w.store.append('reservation-res_1', [update({ customer_id: null }, { customer_id: 'cus_a' })], 0);
  await w.store.append(
    'reservation-res_1',
    [
      update(
        { customer_id: 'cus_b', allergies: 'B wrote: sesame' },
        { customer_id: null, allergies: 'A wrote: celery' },
      ),
    ],
    1,
  );
  const stored = (await last(w.inner, 'reservation-res_1')).data as Stored;
  assert.is(stored.sealed.more?.[0]?.owners[0].customer_id, 'cus_a', "in a box of A's");
  await w.erase('cus_a');
  for (const s of [w.store, w.other()]) {
    const e = await last(s, 'reservation-res_1');
    assert.equal(e.data.previous, { customer_id: null, allergies: null }, "A's erased");
    assert.equal(e.data.changes, { customer_id: 'cus_b', allergies: 'B wrote: sesame' }, "B's kept");
  }
});

t.run();
