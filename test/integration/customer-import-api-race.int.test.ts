// A CSV import and POST /customers (upsertCustomer) creating the same new guests at the same moment,
// in one process: one customer per guest. The import holds its slices' match keys in the queue the
// API's matching takes (src/customer-import/match-key-hold.ts): a request waits for the imported
// customer and matches it, a row waits for the request's customer and matches it. Before, each
// matched nothing and each created one.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { matchKeyHolds, upsertCustomer } from '../../commands/customers/upsert';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customer-docs';
import { operatorMeta } from '../../src/core/command-meta';
import { importCustomers, prepareImport } from '../../src/customer-import/engine';
import { importThreadsStarted } from '../../src/customer-import/thread-host';
import { IMPORT_HEADER, importWorld } from '../helpers/import-file';

const ROWS = 1500;

/** Row i's guest: a phone (and for every third an email) no customer has yet. */
const phoneOf = (i: number) =>
  `06 55 ${String(Math.floor(i / 100) % 100).padStart(2, '0')} ${String(i % 100).padStart(2, '0')} 00`;
const emailOf = (i: number) => (i % 3 === 0 ? `new${i}@example.com` : '');
/** The same guest as the API spells it: the phone in E.164, the email in capitals (one key each). */
const apiPhoneOf = (i: number) => `+33${phoneOf(i).replace(/ /g, '').slice(1)}`;
const apiEmailOf = (i: number) => emailOf(i).toUpperCase();

function raceFile(): Uint8Array {
  const lines = [
    IMPORT_HEADER.join(','),
    ...Array.from({ length: ROWS }, (_, k) =>
      [`Guest ${k + 1}`, emailOf(k + 1), phoneOf(k + 1), '', '', ''].join(','),
    ),
  ];
  return new TextEncoder().encode(`${lines.join('\r\n')}\r\n`);
}

const t = suite('a CSV import and POST /customers for the same new guests');

for (const thread of [false, true])
  t(`${thread ? 'in its own thread' : 'on the main thread'}: one customer per guest`, async () => {
    const { w, deps, close } = await importWorld();
    try {
      const before = importThreadsStarted();
      const prepared = await prepareImport(deps, 'rest_a', raceFile());
      let processed = 0;
      let finished = false;
      const importing = importCustomers(deps, prepared, {
        onMatch: 'update',
        fileName: 'race.csv',
        meta: operatorMeta('test'),
        thread,
        worker: true,
        onProgress: (p) => {
          processed = p.processed;
        },
      }).finally(() => {
        finished = true;
      });
      // Waves of requests for the guests of the rows the import is about to match (and those it has
      // just matched), each wave once the one before is answered.
      const apiOutcomes: string[] = [];
      const asked = new Map<number, number>();
      let wave = 0;
      while (!finished) {
        const from = processed + 1 + (wave % 4) * 40;
        // Each guest asked for twice at the most: once the import is past a guest, asking again only
        // matches (and a thread's progress can lag behind its rows).
        const guests = Array.from({ length: 12 }, (_, k) => from + k * 9).filter(
          (i) => i <= ROWS && (asked.get(i) ?? 0) < 2,
        );
        for (const i of guests) asked.set(i, (asked.get(i) ?? 0) + 1);
        const outcomes = await Promise.all(
          guests.map((i) =>
            upsertCustomer(
              { ...deps, settle: async () => void (await w.settle()) },
              w.restaurant,
              {
                name: `Caller ${i}`,
                phone_number: apiPhoneOf(i),
                ...(emailOf(i) ? { email: apiEmailOf(i) } : {}),
              },
              'return_existing',
              w.meta,
            ),
          ),
        );
        for (const o of outcomes) apiOutcomes.push(o.result);
        wave++;
        await new Promise((resolve) => setImmediate(resolve));
      }
      const state = await importing;
      assert.is(state.status, 'finished');
      assert.is(importThreadsStarted() - before, thread ? 1 : 0);
      await w.settle();
      const docs = await w.docs.collection<CustomerDoc>(CUSTOMERS).find({ restaurant_id: 'rest_a' });
      const perPhone = new Map<string, number>();
      for (const d of docs) if (d.phone_key) perPhone.set(d.phone_key, (perPhone.get(d.phone_key) ?? 0) + 1);
      const twice = [...perPhone].filter(([, n]) => n > 1).length;
      assert.ok(apiOutcomes.length > 0, 'requests ran during the import');
      assert.ok(
        apiOutcomes.includes('created') && state.counts.matched + state.counts.updated > 0,
        `some guests created by a request and matched by the import (requests: ${apiOutcomes.length}, import ${JSON.stringify(state.counts)})`,
      );
      assert.is(twice, 0, `guests with two customers (of ${perPhone.size})`);
      assert.is(perPhone.size, ROWS, 'every guest has a customer');
      assert.is(matchKeyHolds.size, 0, 'no match key left held');
    } finally {
      await close();
    }
  });

t.run();
