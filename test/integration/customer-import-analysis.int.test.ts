// The import's row analysis in a worker thread (src/customer-import/analysis.ts): the same rows,
// faults and matching keys as inline, across chunk boundaries; a worker that goes away hands its
// rows back to the main thread; and a whole import through the worker ends exactly as one without.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { CustomFieldDefinition } from '../../commands/customers/custom-fields';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { operatorMeta } from '../../src/core/command-meta';
import {
  ANALYSIS_CHUNK,
  type AnalysisContext,
  analyzeCells,
  importedCreatedEventId,
  importedCustomerId,
  RowSource,
} from '../../src/customer-import/analysis';
import { mapHeader } from '../../src/customer-import/columns';
import { type ImportDeps, importCustomers, prepareImport } from '../../src/customer-import/engine';
import { jobSummaryCsv } from '../../src/customer-import/summary';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { customerWorld } from '../helpers/customers';

const FIELDS: CustomFieldDefinition[] = [
  { id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] },
  { id: 'cf_kids', name: 'Children', type: 'NUMBER', min: 0, max: 10 },
];
const HEADER = [
  'name',
  'email',
  'phone_number',
  'external_id',
  'tags',
  'newsletter_consent',
  'VIP level',
  'Children',
];

/** Rows with every kind of value and fault, some sharing keys with others. */
function cells(i: number): string[] {
  return [
    i % 13 === 0 ? '' : `Guest ${i}`,
    i % 5 === 0 ? `GUEST${i % 50}@Example.com` : i % 17 === 0 ? 'not an email' : '',
    i % 3 === 0 ? `06 12 34 ${String(i % 100).padStart(2, '0')} 00` : i % 19 === 0 ? '12' : '',
    i % 7 === 0 ? `crm-${i % 40}` : '',
    i % 4 === 0 ? 'vip| regular |' : '',
    ['yes', 'no', '', 'maybe'][i % 4] as string,
    i % 11 === 0 ? 'bronze' : i % 2 === 0 ? 'gold' : '',
    i % 23 === 0 ? '11' : i % 6 === 0 ? '2' : '',
  ];
}

const ctx: AnalysisContext = {
  columns: mapHeader(HEADER, FIELDS).columns,
  country: 'FR',
  definitions: FIELDS,
};
const table = Array.from({ length: 2 * ANALYSIS_CHUNK + 345 }, (_, i) => cells(i + 1));

const t = suite('customer import: row analysis in a worker thread');

t('the worker analyses every row as the main thread would, in order, across chunks', async () => {
  const source = new RowSource(table, ctx, true);
  try {
    for (let row = 1; row <= table.length; row++) {
      const got = await source.row(row);
      assert.equal(got, analyzeCells(table[row - 1] as string[], row, ctx), `row ${row}`);
    }
    assert.is(
      source.workerChunks,
      Math.ceil(table.length / ANALYSIS_CHUNK),
      'every chunk came from the worker',
    );
  } finally {
    source.close();
  }
  const some = table.slice(0, ANALYSIS_CHUNK).map((c, i) => analyzeCells(c, i + 1, ctx));
  assert.ok(some.some((a) => a.issues.length > 0) && some.some((a) => a.keys.phone !== null));
});

t(
  'a worker that goes away leaves its rows to the main thread; without a worker rows are inline',
  async () => {
    const source = new RowSource(table, ctx, true);
    const pending = source.row(ANALYSIS_CHUNK + 5);
    source.close();
    assert.equal(await pending, analyzeCells(table[ANALYSIS_CHUNK + 4] as string[], ANALYSIS_CHUNK + 5, ctx));
    assert.equal(
      await source.row(2 * ANALYSIS_CHUNK + 1),
      analyzeCells(table[2 * ANALYSIS_CHUNK] as string[], 2 * ANALYSIS_CHUNK + 1, ctx),
    );
    const inline = new RowSource(table, ctx, false);
    const first = inline.row(1);
    assert.not.instance(first, Promise, 'inline rows are there at once');
    assert.equal(first, analyzeCells(table[0] as string[], 1, ctx));
    inline.close();
    assert.is(inline.workerChunks, 0);
  },
);

t(
  "for a job, the worker also derives each valid row's customer id and event id (inline the same)",
  async () => {
    const job = { ...ctx, jobId: 'imp_ids' };
    const threaded = new RowSource(table, job, true);
    const inline = new RowSource(table, job, false);
    try {
      let withIds = 0;
      for (let row = 1; row <= table.length; row++) {
        const got = await threaded.row(row);
        const { ids, ...rest } = got;
        assert.equal(rest, analyzeCells(table[row - 1] as string[], row, ctx), `row ${row}`);
        if (got.issues.length > 0) assert.is(ids, undefined, `row ${row} has faults: no ids`);
        else {
          withIds++;
          assert.equal(ids, {
            customerId: importedCustomerId('imp_ids', row),
            createdEventId: importedCreatedEventId('imp_ids', row),
          });
        }
        assert.equal(await inline.row(row), got, `row ${row} inline`);
      }
      assert.ok(withIds > 0 && withIds < table.length);
      assert.is(threaded.workerChunks, Math.ceil(table.length / ANALYSIS_CHUNK));
    } finally {
      threaded.close();
      inline.close();
    }
  },
);

t('an import through the worker ends exactly as one without: outcomes, customers, summary', async () => {
  const lines = [HEADER.join(','), ...table.slice(0, 2500).map((c) => c.join(','))];
  const file = new TextEncoder().encode(`${lines.join('\r\n')}\r\n`);
  let sqlite: SqliteEventStore | null = null;
  const outcome = async (worker: boolean, onSqlite = false) => {
    const w = await customerWorld(undefined, (clock) => {
      if (!onSqlite) return new MemoryEventStore({ clock });
      // The service's log: SQLite (writer thread for a large import's group commits), sealed.
      sqlite = SqliteEventStore.open(join(mkdtempSync(join(tmpdir(), 'couvert-import-')), 'e.sqlite'), {
        clock,
        writerThread: 'large',
      });
      return new SealingEventStore(sqlite, new MemoryKeyStore());
    });
    await w.defineFields(FIELDS);
    await w.settle();
    const deps: ImportDeps = {
      events: w.events,
      clock: w.clock,
      docs: w.docs,
      settle: async () => void (await w.settle()),
    };
    const prepared = await prepareImport(deps, 'rest_a', file);
    const state = await importCustomers(deps, prepared, {
      onMatch: 'update',
      fileName: 'f.csv',
      meta: operatorMeta('test'),
      jobId: 'imp_same',
      worker,
    });
    return { counts: state.counts, summary: await jobSummaryCsv(deps, 'imp_same') };
  };
  const [threaded, inline, onSqlite] = [await outcome(true), await outcome(false), await outcome(true, true)];
  assert.equal(threaded, inline);
  assert.equal(onSqlite, inline, 'the same on the sealed SQLite log, its commits in the writer thread');
  const log = sqlite as SqliteEventStore | null;
  assert.ok(log !== null && log.threadTransactions > 0, 'the writer thread wrote the commits');
  await log?.close();
  const c = inline.counts;
  assert.ok(c.created > 0 && c.updated > 0 && c.skipped > 0, JSON.stringify(c));
});

t.run();
