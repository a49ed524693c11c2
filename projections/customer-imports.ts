// The import history of each restaurant (the dashboard's import page): one document per customer CSV
// import job — file, who, when, row counts, status. Only `$set` of the values an event carries
// (CustomerImportRowsRecorded carries running totals), so applying an event twice changes nothing;
// the row outcomes themselves stay in the job's stream (its summary CSV).
import type { ImportCounts } from '../commands/customer-import/events';
import type { Projection } from '../src/projection/projection';

export const CUSTOMER_IMPORTS = 'customer_imports';

export interface CustomerImportDoc {
  _id: string;
  restaurant_id: string;
  file_name: string;
  /** `user:<id>`, `operator:cli`… as on the job's events. */
  actor: string;
  on_match: string;
  row_count: number;
  processed: number;
  counts: ImportCounts;
  status: 'running' | 'finished' | 'failed';
  started_at: string;
  /** The job's latest event (a running job silent for long has stopped: commands/customer-import/slot.ts). */
  last_event_at: string;
  ended_at: string | null;
  failure: string | null;
  /**
   * A failed job's rows after `processed` that were written anyway (CustomerImportFailed.written;
   * `counts` include them). Absent before any such failure, and again once the job is resumed.
   */
  written_after?: number;
  [k: string]: unknown;
}

export const customerImportsProjection: Projection = {
  name: 'customer_imports',
  eventTypes: [
    'CustomerImportStarted',
    'CustomerImportRowsRecorded',
    'CustomerImportResumed',
    'CustomerImportFinished',
    'CustomerImportFailed',
  ],
  async setup(docs) {
    await docs
      .collection(CUSTOMER_IMPORTS)
      .createIndex({ keys: { restaurant_id: 1, started_at: -1 }, name: 'by_restaurant' });
  },
  async apply(event, docs) {
    const d = event.data as Record<string, unknown>;
    const col = docs.collection<CustomerImportDoc>(CUSTOMER_IMPORTS);
    const id = d.job_id as string;
    const at = d.at as string;
    switch (event.type) {
      case 'CustomerImportStarted':
        await col.updateOne(
          { _id: id },
          {
            $set: {
              restaurant_id: d.restaurant_id,
              file_name: d.file_name,
              actor: d.actor,
              on_match: d.on_match,
              row_count: d.row_count,
              started_at: at,
            },
            $setOnInsert: {
              processed: 0,
              counts: { created: 0, updated: 0, matched: 0, skipped: 0 },
              status: 'running',
              last_event_at: at,
              ended_at: null,
              failure: null,
            },
          },
          { upsert: true },
        );
        return;
      case 'CustomerImportRowsRecorded':
        // Totals after these rows: a later record always carries more, so an older one never wins.
        await col.updateOne(
          { _id: id, processed: { $lt: d.processed as number } },
          { $set: { processed: d.processed, counts: d.counts, last_event_at: at } },
        );
        return;
      case 'CustomerImportResumed':
        await col.updateOne(
          { _id: id },
          // Unset, not 0: a store built before `written_after` existed has no such field on a resumed
          // job, and a replay must write the same document (audit verify compares them).
          {
            $set: { status: 'running', ended_at: null, failure: null, last_event_at: at },
            $unset: { written_after: '' },
          },
        );
        return;
      case 'CustomerImportFinished':
        await col.updateOne(
          { _id: id },
          { $set: { status: 'finished', counts: d.counts, ended_at: at, last_event_at: at } },
        );
        return;
      case 'CustomerImportFailed':
        await col.updateOne(
          { _id: id },
          {
            $set: {
              status: 'failed',
              failure: d.reason,
              ended_at: at,
              last_event_at: at,
              // With the rows written after the last recorded one (reconcile.ts), when it says them.
              ...(d.counts ? { counts: d.counts, written_after: (d.written as unknown[]).length } : {}),
            },
          },
        );
        return;
    }
  },
};
