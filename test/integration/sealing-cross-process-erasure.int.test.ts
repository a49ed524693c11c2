// Two processes on one log and one key store (two SealingEventStore over the same SQLite files, as a
// server and the CLI's `audit erase`, or two servers): rows written before a move's or a fan-out's
// previous customer was sealed with their own key (src/privacy/legacy-fanouts.ts) read that customer
// erased in the other process as soon as the erasure is done, not once its key cache forgets them
// (KEY_TTL_MS): whether they are erased is asked of the key store at each read call (once a customer
// within one: ReadScope in src/privacy/sealing-event-store.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { NO_STREAM, type RecordedEvent } from '../../src/ports/event-store';
import { isUncheckedFanout, uncheckedMove } from '../../src/privacy/legacy-fanouts';
import { customerSubject, sealData } from '../../src/privacy/seal';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { movedToB, seedTwoCustomers } from '../helpers/sealing-world';

const t = suite('sealing: an erasure in another process, legacy rows');

function processOn(dir: string) {
  const inner = SqliteEventStore.open(join(dir, 'events.sqlite'));
  const keys = SqliteKeyStore.open(join(dir, 'keys.sqlite'));
  const store = new SealingEventStore(inner, keys);
  return {
    inner,
    keys,
    store,
    close: async () => {
      await inner.close();
      await keys.close();
    },
  };
}

const body = movedToB;

for (const kind of ['move', 'fan-out'] as const)
  t(`erased in one process, the other reads a legacy ${kind} erased at once`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'couvert-cross-erase-'));
    const a = processOn(dir);
    const b = processOn(dir);
    try {
      await seedTwoCustomers(a.store);
      // Written as an older version did: A's previous text and A's name in boxes sealed with B's key.
      const keyB = await a.keys.obtain(customerSubject('cus_b'));
      const move = {
        reservation_id: 'res_1',
        restaurant_id: 'r',
        changes: { customer_id: 'cus_b', allergies: 'B wrote: sesame' },
        previous: { customer_id: 'cus_a', allergies: 'A wrote: celery' },
      };
      await a.inner.append(
        'reservation-res_1',
        [{ type: 'ReservationUpdated', data: sealData('ReservationUpdated', move, keyB, 'cus_b') }],
        0,
      );
      const fanout = {
        restaurant_id: 'r',
        customer_id: 'cus_b',
        source_event_id: 'e1',
        source_position: '1',
        event_types: { v1: 'reservation.updated' },
        event_created: 't',
        deliveries: [],
        at: 't',
        payloads: { v1: body('Amelia Qqa') },
      };
      await a.inner.append(
        'webhook-fanout-1',
        [
          {
            type: 'WebhookDeliveriesScheduled',
            data: sealData('WebhookDeliveriesScheduled', fanout, keyB, 'cus_b'),
          },
        ],
        NO_STREAM,
      );
      const storedMove = (await b.inner.readStream('reservation-res_1')).at(-1) as RecordedEvent;
      const storedFanout = (await b.inner.readStream('webhook-fanout-1')).at(-1) as RecordedEvent;
      assert.is(uncheckedMove(storedMove.type, storedMove.data), 'cus_a', 'a legacy move');
      assert.ok(isUncheckedFanout(storedFanout.data), 'a legacy fan-out');

      // One kind read a test: an answer the key store gives for one must not stand in for the other.
      const read = async () =>
        kind === 'move'
          ? {
              move: ((await b.store.readStream('reservation-res_1')).at(-1) as RecordedEvent).data,
              // The synchronous path (undefined: it defers to open()).
              now: b.store.openNow(storedMove)?.data,
            }
          : {
              fanout: ((await b.store.readStream('webhook-fanout-1')).at(-1) as RecordedEvent).data,
              opened: (await b.store.open(storedFanout)).data,
            };
      // B reads them twice while A lives: its cache now knows A's key alive.
      for (let i = 0; i < 2; i++) {
        const r = await read();
        if (kind === 'move') assert.equal(r.move?.previous, move.previous);
        else assert.equal(r.fanout?.payloads, { v1: body('Amelia Qqa') });
      }
      // A's erasure, in the other process; B has read no deletion.
      await a.store.append(
        'customer-cus_a',
        [
          {
            type: 'CustomerDeleted',
            data: { customer_id: 'cus_a', restaurant_id: 'r', at: 't', reason: null },
          },
        ],
        0,
      );
      const r = await read();
      if (kind === 'move') {
        assert.ok(r.move, 'the move was read');
        assert.equal(r.move.previous, { customer_id: 'cus_a', allergies: null }, 'the move');
        assert.equal(r.move.changes, move.changes, "B's change kept");
        // A legacy move naming a previous customer never opens on the synchronous path: open() asks.
        assert.is(r.now, undefined, 'openNow defers to open()');
      } else {
        assert.equal(r.fanout?.payloads, { v1: body('[erased]') }, 'the fan-out read');
        assert.equal(r.opened?.payloads, { v1: body('[erased]') }, 'the fan-out opened');
      }
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

const ROWS = 20;

t(
  'a read call asks the key store once a customer, not once a legacy row; the next call asks again',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'couvert-cross-erase-'));
    const a = processOn(dir);
    const b = processOn(dir);
    try {
      await seedTwoCustomers(a.store, { reservation: false });
      // ROWS fan-outs written as an older version did, each naming A in a body sealed with B's key.
      const keyB = await a.keys.obtain(customerSubject('cus_b'));
      for (let i = 1; i <= ROWS; i++) {
        const fanout = {
          restaurant_id: 'r',
          customer_id: 'cus_b',
          source_event_id: `e${i}`,
          source_position: String(i),
          event_types: { v1: 'reservation.updated' },
          event_created: 't',
          deliveries: [],
          at: 't',
          payloads: { v1: body('Amelia Qqa') },
        };
        await a.inner.append(
          `webhook-fanout-${i}`,
          [
            {
              type: 'WebhookDeliveriesScheduled',
              data: sealData('WebhookDeliveriesScheduled', fanout, keyB, 'cus_b'),
            },
          ],
          NO_STREAM,
        );
      }
      const find = b.keys.find.bind(b.keys);
      let asked = 0;
      b.keys.find = (subject) => {
        if (subject === customerSubject('cus_a')) asked++;
        return find(subject);
      };
      const payloads = async () => {
        const out: unknown[] = [];
        for await (const e of b.store.readAll())
          if (e.type === 'WebhookDeliveriesScheduled') out.push(e.data.payloads);
        return out;
      };
      assert.equal(await payloads(), Array(ROWS).fill({ v1: body('Amelia Qqa') }));
      // Once a read (a page older than READ_SCOPE_MS asks again: a slow machine's few more), never
      // once a row.
      const first = asked;
      assert.ok(first >= 1 && first < ROWS, `${first} asks for ${ROWS} rows`);
      assert.equal(await payloads(), Array(ROWS).fill({ v1: body('Amelia Qqa') }));
      assert.ok(asked > first && asked - first < ROWS, `the next read asks again: ${asked - first}`);
      await a.store.append(
        'customer-cus_a',
        [
          {
            type: 'CustomerDeleted',
            data: { customer_id: 'cus_a', restaurant_id: 'r', at: 't', reason: null },
          },
        ],
        0,
      );
      assert.equal(
        await payloads(),
        Array(ROWS).fill({ v1: body('[erased]') }),
        'erased in the other process: read so',
      );
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

t.run();
