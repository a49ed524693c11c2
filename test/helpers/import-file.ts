// The CSV and the deployment the import's thread tests share (customer-import-thread*.int.test.ts): rows with faults,
// keys shared with earlier rows (across slices) and with the customers already there.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CustomFieldDefinition } from '../../commands/customers/custom-fields';
import { createCustomer } from '../../commands/customers/handler';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { SqliteKeyStore } from '../../src/adapters/key-store/sqlite';
import { systemClock } from '../../src/core/clock';
import type { ImportDeps } from '../../src/customer-import/engine';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { type CustomerWorld, customerWorld } from './customers';

export const IMPORT_FIELDS: CustomFieldDefinition[] = [
  { id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] },
];
export const IMPORT_HEADER = ['name', 'email', 'phone_number', 'external_id', 'tags', 'VIP level'];

/** Row i's cells: faults, and keys shared with earlier rows and with the customers already there. */
export function importCells(i: number): string[] {
  return [
    i % 13 === 0 ? '' : `Guest ${i}`,
    i % 5 === 0 ? `GUEST${i % 50}@Example.com` : i % 17 === 0 ? 'not an email' : `g${i}@example.com`,
    i % 3 === 0 ? `06 12 34 ${String(i % 100).padStart(2, '0')} 00` : '',
    i % 7 === 0 ? `crm-${i % 40}` : '',
    i % 4 === 0 ? 'vip| regular |' : '',
    i % 11 === 0 ? 'bronze' : i % 2 === 0 ? 'gold' : '',
  ];
}

/** The file: the header, `rows` rows of importCells, then `last` rows as given. */
export function importFile(rows: number, last: string[][] = []): Uint8Array {
  const lines = [
    IMPORT_HEADER.join(','),
    ...Array.from({ length: rows }, (_, i) => importCells(i + 1).join(',')),
    ...last.map((cells) => cells.join(',')),
  ];
  return new TextEncoder().encode(`${lines.join('\r\n')}\r\n`);
}

export interface ImportWorld {
  w: CustomerWorld;
  deps: ImportDeps;
  close: () => Promise<void>;
}

/**
 * A deployment like the service's (SQLite log and key file, sealed, system clock) with IMPORT_FIELDS and
 * 40 customers already there, which rows of the file match on email and external id. `settle`: the
 * read models' catch-up (default: at once).
 */
export async function importWorld(
  settle?: (position: bigint | null | undefined, w: CustomerWorld) => Promise<void>,
) {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-import-thread-'));
  let log: SqliteEventStore | null = null;
  let keys: SqliteKeyStore | null = null;
  const w = await customerWorld(undefined, () => {
    log = SqliteEventStore.open(join(dir, 'events.sqlite'), { writerThread: 'large' });
    keys = SqliteKeyStore.open(join(dir, 'keys.sqlite'));
    return new SealingEventStore(log, keys);
  });
  await w.defineFields(IMPORT_FIELDS);
  const deps: ImportDeps = {
    events: w.events,
    clock: systemClock,
    docs: w.docs,
    settle: settle ? (position) => settle(position, w) : async () => void (await w.settle()),
  };
  // Customers already there, which rows of the file match on email and external id.
  for (let i = 1; i <= 40; i++)
    await createCustomer(
      deps,
      w.restaurant,
      {
        name: `Known ${i}`,
        ...(i % 2 === 0 ? { email: `guest${i}@example.com` } : { external_id: `crm-${i}` }),
      },
      w.meta,
      { customerId: `cus_known${String(i).padStart(11, '0')}` },
    );
  await w.settle();
  const close = async () => {
    await (log as SqliteEventStore | null)?.close();
    await (keys as SqliteKeyStore | null)?.close();
  };
  return { w, deps, close } satisfies ImportWorld;
}
