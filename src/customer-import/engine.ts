// The customer CSV import: read a file, preview it, import it as a job. A page or the CLI is a thin
// layer over these functions.
//
// - prepareImport: reads the file and its header against the restaurant's custom fields; a file that
//   is not UTF-8 CSV, or a header with an unknown, duplicate or ambiguous column or without `name`,
//   is refused (400) before any row is read.
// - planImport (preview, dry run): every row's faults by the rules of POST /customers, and what the
//   import would do with it (match against the customers and the earlier rows of the file). Writes
//   nothing.
// - importCustomers / resumeImport: the job (commands/customer-import) and the customers. Matching is
//   POST /customers' (queries/customers.ts findMatch, in CUSTOMER_MATCH_ORDER; a slice's rows together
//   through findMatches, which answers what findMatch would for each), writes are the customers
//   module's command handlers, so no rule exists twice. Every customer event is marked "publish no
//   webhook" (src/core/no-webhook.ts) and shows in the sync feed like any other change.
//
// Speed without blocking the API: rows go in batches. A batch's commands are issued together, so the
// embedded store writes them in one transaction (its group commit: one fsync per batch, not per row);
// then the batch's row outcomes are recorded on the job, the read models are brought up to date (the
// next batch matches against this one's customers), and the loop yields to the event loop before the
// next batch, so requests are served between batches. A batch ends early before a row that shares a
// matching key (external_id, phone, email) with an earlier row of the batch: that row is decided only
// once the earlier one is in the read model, exactly as if the rows had been sent to POST /customers
// one after the other.
//
// Restarts: created customers get an id derived from the job and the row, with a deterministic event
// id, so a batch written but not recorded before a crash is written again as a no-op. resumeImport
// (same file, checked by SHA-256) goes on after the last recorded row and reports those rows as they
// were (created / updated), not as matches of themselves.

import { createHash } from 'node:crypto';
import type { MatchedOn, OnMatch, RowResult } from '../../commands/customer-import/events';
import { type ImportCounts, noCounts } from '../../commands/customer-import/events';
import {
  failImportJob,
  finishImportJob,
  type ImportJob,
  loadImportJob,
  recordImportRows,
  resumeImportJob,
  startImportJob,
} from '../../commands/customer-import/handler';
import { freeUnstartedSlot, takeImportSlot } from '../../commands/customer-import/slot';
import type { ImportJobState } from '../../commands/customer-import/state';
import type { CustomFieldDefinition } from '../../commands/customers/custom-fields';
import { customerStream } from '../../commands/customers/events';
import { loadCustomFieldDefinitions } from '../../commands/customers/field-definitions';
import { type CustomerRestaurant, createCustomer, updateCustomer } from '../../commands/customers/handler';
import { REMATCHES, settleVanished, vanishedAt } from '../../commands/customers/upsert';
import { loadRestaurant } from '../../commands/restaurants/handler';
import type { CustomerDoc } from '../../projections/customer-docs';
import { CUSTOMER_MATCH_ORDER, findMatches, type MatchKey, matchCandidates } from '../../queries/customers';
import { SqliteEventStore } from '../adapters/event-store/sqlite';
import type { CommandMeta } from '../core/command-meta';
import { ApiError, type Issue, notFound, validationError } from '../core/errors';
import { giveWayToRequests } from '../core/foreground';
import { newId } from '../core/ids';
import { NO_WEBHOOK } from '../core/no-webhook';
import { SettledByCallerEvents } from '../core/settled-by-caller';
import type { WriteDeps } from '../core/write-deps';
import type { DocumentStore } from '../ports/document-store';
import { WrongExpectedRevisionError } from '../ports/event-store';
import { SealingEventStore, storedEvents } from '../privacy/sealing-event-store';
import {
  type AnalysisContext,
  type AnalyzedRow,
  analyzeCells,
  importedCreatedEventId,
  importedCustomerId,
  RowSource,
} from './analysis';
import { type Column, type HeaderMap, mapHeader } from './columns';
import { CsvFileError, type CsvTable, readCsv } from './csv';
import { failureReason } from './failure';
import { ImportKeyHold } from './match-key-hold';
import { writtenAfterRecorded } from './reconcile';
import type { RowInput } from './rows';
import { canImportInThread, runJobInThread } from './thread-host';

/** What an import needs: the log, the clock, the read models it matches against, and read-your-writes. */
export interface ImportDeps extends WriteDeps {
  docs: DocumentStore;
  settle(position: bigint | null | undefined): Promise<unknown>;
  /**
   * Looks the rows' matches up somewhere else than `docs` (the import's thread asks the main
   * thread's read models: import-thread.ts): what findMatches answers, as RowMatch, once the match
   * keys `take` (match-key-hold.ts) are held there.
   */
  matchRows?: (inputs: readonly MatchLookup[], take: readonly string[]) => Promise<(RowMatch | null)[]>;
  /** With matchRows: lets go of match keys taken with it. */
  releaseMatchKeys?: (keys: string[]) => void;
  /**
   * When `settle` answers before the read models have taken the positions in (the import's thread:
   * the main thread catches up meanwhile), what resolves once everything settled so far is in them.
   * A retired slice's keys and customers stay held until then: a row sharing one waits for it, so
   * the rows matched meanwhile against read models without it are those it cannot change.
   */
  inReadModels?: () => Promise<void>;
}

/** A row's match: the customer and the key it matched on. */
export interface RowMatch {
  id: string;
  on: MatchKey;
}

/** What a row is matched by: its values, and its phone's key as the analysis derived it. */
export interface MatchLookup {
  input: RowInput;
  phoneKey: string | null;
}

/** The matches of `inputs` in the restaurant's customers (findMatches), as RowMatch. */
export async function lookUpMatches(
  docs: DocumentStore,
  restaurant: { _id: string; country_code: string | null },
  inputs: readonly MatchLookup[],
): Promise<(RowMatch | null)[]> {
  const found = await findMatches(docs, restaurant, inputs, CUSTOMER_MATCH_ORDER);
  return found.map((m) => (m ? { id: m.doc._id, on: m.on } : null));
}

export interface PreparedImport {
  restaurant: CustomerRestaurant & { customer_fields: readonly CustomFieldDefinition[] };
  table: CsvTable;
  columns: Column[];
  fileSha256: string;
}

/** At most this many rows a slice (slices are cut by time: SLICE_MS). */
export const DEFAULT_BATCH_SIZE = 500;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Reads the file and checks its header; throws 400 (the file or header issues) or 404 (restaurant). */
export async function prepareImport(
  deps: WriteDeps,
  restaurantId: string,
  bytes: Uint8Array,
): Promise<PreparedImport> {
  const r = await loadRestaurant(deps, restaurantId);
  if (!r.exists || !r.profile) throw notFound(`restaurant ${restaurantId}`);
  const definitions = await loadCustomFieldDefinitions(deps, restaurantId);
  let header: HeaderMap | null = null;
  let table: CsvTable;
  try {
    // The header is checked as soon as it is read: a file it refuses is not parsed further.
    table = await readCsv(bytes, (row) => {
      header = checkedHeader(row, definitions);
    });
  } catch (err) {
    if (err instanceof CsvFileError)
      throw validationError([{ path: 'file', code: err.code, message: err.message }], err.message);
    throw err;
  }
  const columns = (header as HeaderMap | null)?.columns ?? [];
  return {
    restaurant: {
      _id: restaurantId,
      country_code: r.profile.country_code,
      customer_matching: r.profile.customer_matching,
      customer_fields: definitions,
    },
    table,
    columns,
    fileSha256: await sha256InSteps(bytes),
  };
}

/** The header mapped onto the restaurant's custom fields; 400 with one issue per problem. */
function checkedHeader(row: readonly string[], definitions: readonly CustomFieldDefinition[]): HeaderMap {
  const header = mapHeader(row, definitions);
  if (header.issues.length)
    throw validationError(
      header.issues.map((i) => ({
        path: i.column === null ? 'header' : `header.${i.column}`,
        code: i.code,
        message: i.message,
      })),
      'The header row cannot be imported',
    );
  return header;
}

/**
 * A file read earlier (a dashboard upload waits up to 30 minutes for its Import) with the rules in
 * force now: the restaurant's country and custom fields as POST /customers would apply them at this
 * moment. Unchanged: the very same object. A custom field removed since, or one whose options or
 * bounds changed, is not written by the earlier rules: the header is mapped again (400 as at the
 * upload when it no longer fits) and the rows are checked by the current definitions.
 */
export async function withCurrentRules(deps: WriteDeps, prepared: PreparedImport): Promise<PreparedImport> {
  const restaurantId = prepared.restaurant._id;
  const r = await loadRestaurant(deps, restaurantId);
  if (!r.exists || !r.profile) throw notFound(`restaurant ${restaurantId}`);
  const definitions = await loadCustomFieldDefinitions(deps, restaurantId);
  const same =
    r.profile.country_code === prepared.restaurant.country_code &&
    r.profile.customer_matching === prepared.restaurant.customer_matching &&
    JSON.stringify(definitions) === JSON.stringify(prepared.restaurant.customer_fields);
  if (same) return prepared;
  const header = checkedHeader(prepared.table.header, definitions);
  return {
    ...prepared,
    restaurant: {
      _id: restaurantId,
      country_code: r.profile.country_code,
      customer_matching: r.profile.customer_matching,
      customer_fields: definitions,
    },
    columns: header.columns,
  };
}

/** The file's SHA-256, a megabyte at a time with a yield between: a large file does not hold the loop. */
export async function sha256InSteps(bytes: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  const step = 1024 * 1024;
  for (let i = 0; i < bytes.byteLength; i += step) {
    if (i > 0) await yieldToLoop();
    hash.update(bytes.subarray(i, i + step));
  }
  return hash.digest('hex');
}

const analysisContext = (prepared: PreparedImport): AnalysisContext => ({
  columns: prepared.columns,
  country: prepared.restaurant.country_code,
  definitions: prepared.restaurant.customer_fields,
});

function analyze(prepared: PreparedImport, row: number): AnalyzedRow {
  return analyzeCells(prepared.table.rows[row - 1] as string[], row, analysisContext(prepared));
}

const keyList = (a: AnalyzedRow) => Object.values(a.keys).filter((k): k is string => k !== null);

const skipped = (row: number, errors: Issue[]): RowResult => ({
  row,
  outcome: 'skipped',
  customer_id: null,
  matched_on: null,
  errors,
});

// ---------------------------------------------------------------------------------------------------
// Preview and dry run

export interface PlannedRow extends RowResult {
  /** The values read from the row (as POST /customers would receive them). */
  input: RowInput;
  /** When the match is an earlier row of the file (not yet a customer): that row. */
  matched_row: number | null;
}

export interface ImportPlan {
  row_count: number;
  rows: PlannedRow[];
  counts: ImportCounts;
}

/**
 * What importing would do, row by row, without writing: faults (skipped), or created / matched /
 * updated against the restaurant's customers and the earlier rows of the file. `limit` plans only
 * the first rows (a preview); without it the whole file (a dry run). With on_match update a match
 * plans "updated" even where the values turn out to be the same.
 */
export async function planImport(
  deps: ImportDeps,
  prepared: PreparedImport,
  onMatch: OnMatch,
  limit = Number.POSITIVE_INFINITY,
): Promise<ImportPlan> {
  const total = prepared.table.rows.length;
  const end = Math.min(total, limit);
  // The customers the file has written so far, as the import would leave them: each one's matching
  // keys now (`ref`: a customer's id, or `row:N` for the one row N creates), who holds each key now
  // (`holders`), and for a customer already there the row that gave it a key it did not have.
  // A key designates the oldest customer holding it, as findMatch chooses: a customer already there
  // (in creation order) before any a row creates (in row order). When a row moves a customer's key
  // away, the key designates the next customer holding it.
  const current = new Map<string, Record<MatchKey, string | null>>();
  const holders = new Map<string, Set<string>>();
  const age = new Map<string, number>();
  const givenBy = new Map<string, number>();
  const hold = (k: string, ref: string) => {
    const set = holders.get(k) ?? new Set<string>();
    set.add(ref);
    holders.set(k, set);
  };
  const rowOfRef = (ref: string) => (ref.startsWith('row:') ? Number(ref.slice(4)) : null);
  const older = (a: string, b: string) => {
    const [ra, rb] = [rowOfRef(a), rowOfRef(b)];
    if (ra === null && rb === null) return (age.get(a) ?? 0) < (age.get(b) ?? 0);
    if (ra === null || rb === null) return ra === null;
    return ra < rb;
  };
  const rows: PlannedRow[] = [];
  const counts = noCounts();
  for (let row = 1; row <= end; row++) {
    if (row % 500 === 0) await yieldToLoop();
    const a = analyze(prepared, row);
    let planned: PlannedRow;
    if (a.issues.length) planned = { ...skipped(row, a.issues), input: a.read.input, matched_row: null };
    else {
      let target: {
        customer_id: string | null;
        on: MatchKey;
        row: number | null;
        ref: string;
        keys: Record<MatchKey, string | null>;
      } | null = null;
      if (onMatch !== 'create_new')
        for (const on of CUSTOMER_MATCH_ORDER) {
          const k = a.keys[on];
          if (!k) continue;
          let best: string | null = null;
          let bestKeys: Record<MatchKey, string | null> | null = null;
          // The customers already there holding the key in the read model, oldest first: the first
          // that no row has given another key since.
          for (const doc of await matchCandidates(deps.docs, prepared.restaurant, a.read.input, on)) {
            const now = current.get(doc._id);
            if (now && now[on] !== k) continue;
            age.set(doc._id, doc.created_seq);
            best = doc._id;
            bestKeys = now ?? docKeys(doc);
            break;
          }
          // The customers the file has given the key so far (created by a row, or updated).
          for (const ref of holders.get(k) ?? [])
            if (best === null || older(ref, best)) {
              best = ref;
              bestKeys = current.get(ref) ?? noKeys;
            }
          if (best !== null && bestKeys !== null) {
            const createdBy = rowOfRef(best);
            target = {
              customer_id: createdBy === null ? best : null,
              on,
              row: createdBy ?? givenBy.get(`${best} ${k}`) ?? null,
              ref: best,
              keys: bestKeys,
            };
            break;
          }
        }
      if (!target) {
        planned = {
          row,
          outcome: 'created',
          customer_id: null,
          matched_on: null,
          errors: [],
          input: a.read.input,
          matched_row: null,
        };
        if (onMatch !== 'create_new') {
          const ref = `row:${row}`;
          current.set(ref, { ...a.keys });
          for (const k of keyList(a)) hold(k, ref);
        }
      } else {
        planned = {
          row,
          outcome: onMatch === 'update' ? 'updated' : 'matched',
          customer_id: target.customer_id,
          matched_on: target.on as MatchedOn,
          errors: [],
          input: a.read.input,
          matched_row: target.row,
        };
        if (onMatch === 'update') {
          // The row's keys replace the customer's: its former ones designate it no more.
          const { ref } = target;
          const now = { ...target.keys };
          const fromDb = rowOfRef(ref) === null && !current.has(ref);
          for (const on of CUSTOMER_MATCH_ORDER) {
            const k = a.keys[on];
            if (fromDb && now[on]) hold(now[on] as string, ref);
            if (!k || k === now[on]) continue;
            const old = now[on];
            if (old !== null) holders.get(old)?.delete(ref);
            now[on] = k;
            hold(k, ref);
            if (rowOfRef(ref) === null) givenBy.set(`${ref} ${k}`, row);
          }
          current.set(ref, now);
        }
      }
    }
    counts[planned.outcome]++;
    rows.push(planned);
  }
  return { row_count: total, rows, counts };
}

/** A customer's matching keys as the analysis spells a row's (analysis.ts). */
const docKeys = (doc: CustomerDoc): Record<MatchKey, string | null> => ({
  external_id: doc.external_id ? `x:${doc.external_id}` : null,
  phone: doc.phone_key ? `p:${doc.phone_key}` : null,
  email: doc.email_key ? `e:${doc.email_key}` : null,
});

const noKeys: Record<MatchKey, string | null> = { external_id: null, phone: null, email: null };

// ---------------------------------------------------------------------------------------------------
// Import

export interface ImportProgress {
  jobId: string;
  processed: number;
  rowCount: number;
  counts: ImportCounts;
}

export interface ImportOptions {
  onMatch: OnMatch;
  fileName: string;
  /** The actor (a manager, an operator) and request; copied onto every event. */
  meta: CommandMeta;
  /** At most this many rows a slice (default 500; slices are cut by time). */
  batchSize?: number;
  onProgress?: (progress: ImportProgress) => void;
  /** A job id chosen by the caller (default: a new one). */
  jobId?: string;
  /**
   * Read and check the rows in a worker thread, ahead of the matching and writing, and write through
   * the log's writer thread (default: from WORKER_MIN_ROWS rows on; a smaller file is not worth a
   * thread's start).
   */
  worker?: boolean;
  /**
   * Run the job's command side in a thread of its own (thread-host.ts), where the deployment allows
   * it (embedded, on files, the system clock). Default: when the import is large (see `worker`).
   */
  thread?: boolean;
  /**
   * The server is stopping (stopImports): the job writes no further slice, records those in flight
   * and fails as interrupted (ImportInterrupted), before the stores close under it.
   */
  stopSignal?: AbortSignal;
  /**
   * The caller has just run `withCurrentRules` on the prepared file (the dashboard's Import, before it
   * takes the slot): importCustomers does not check it again.
   */
  rulesChecked?: boolean;
}

/** A job stopped because its server was stopping (its page says so, and offers to finish it). */
export class ImportInterrupted extends Error {
  override name = 'ImportInterrupted';
  constructor() {
    super('the server stopped');
  }
}

/** Imports running in this process, by the event store they write to (a runtime's `events`). */
const runningImports = new Map<object, Set<{ stop: AbortController; ended: Promise<unknown> }>>();

/**
 * Owners stopImports was called on: an import that begins on one afterwards (a request that was in
 * flight when the stop began, answered during the drain) is stopped as it begins.
 */
const stoppedOwners = new WeakSet<object>();

/**
 * Runs `run` as an import of `owner`'s that stopImports can stop. Registered at once (the call's
 * synchronous part), before `run` takes the restaurant's slot or starts its job: a stop that begins
 * meanwhile finds it.
 */
async function tracked<T>(owner: object, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  if (stoppedOwners.has(owner)) stop.abort();
  const ended = run(stop.signal);
  const entry = { stop, ended };
  const set = runningImports.get(owner) ?? new Set();
  runningImports.set(owner, set);
  set.add(entry);
  try {
    return await ended;
  } finally {
    set.delete(entry);
    if (set.size === 0) runningImports.delete(owner);
  }
}

/**
 * Stops the imports running on `owner` (a runtime's events) before its stores close: each writes no
 * further slice, records the rows in flight and fails as interrupted. Waits for them, `graceMs` at
 * the most (one still running then finds its stores closed: its page reads the log once it is seen
 * stopped, reconcile.ts).
 */
export async function stopImports(owner: object, graceMs = 20_000): Promise<void> {
  stoppedOwners.add(owner);
  const set = runningImports.get(owner);
  if (!set || set.size === 0) return;
  const all = [...set];
  for (const r of all) r.stop.abort();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(all.map((r) => r.ended)),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    }),
  ]);
  clearTimeout(timer);
}

/** From this many rows on an import analyses its rows in a worker thread. */
export const WORKER_MIN_ROWS = 2000;

export { importedCustomerId } from './analysis';

/** Starts a job and imports every row; answers the finished job. */
export async function importCustomers(
  deps: ImportDeps,
  given: PreparedImport,
  options: ImportOptions,
): Promise<ImportJobState> {
  const jobId = options.jobId ?? newId('imp');
  const slot = { jobId, restaurantId: given.restaurant._id };
  // A failure before the job's first event frees the slot at once (the caller may have taken it).
  const early = async (err: unknown): Promise<never> => {
    await freeUnstartedSlot(deps, slot, options.meta);
    throw err;
  };
  // The rows are checked and written by the rules in force now, not those of when the file was read
  // (unless the caller has just checked them: the dashboard's Import, before it takes the slot).
  const prepared = options.rulesChecked ? given : await withCurrentRules(deps, given).catch(early);
  return tracked(deps.events, async (stopSignal) => {
    // One import at a time per restaurant (409 otherwise); a no-op when the caller took the slot already.
    await takeImportSlot(deps, slot, options.meta);
    const { job } = await startImportJob(
      deps,
      {
        jobId,
        restaurantId: prepared.restaurant._id,
        fileName: options.fileName,
        fileSha256: prepared.fileSha256,
        rowCount: prepared.table.rows.length,
        onMatch: options.onMatch,
        columns: prepared.table.header,
        actor: options.meta.actor,
      },
      { ...options.meta, restaurant_id: prepared.restaurant._id },
    ).catch(early);
    return inThread(deps, options, prepared.table.rows.length)
      ? runJobInThread(deps, prepared, jobId, { ...options, stopSignal }, false)
      : runJob(deps, prepared, jobId, job, { ...options, stopSignal }, false);
  });
}

/**
 * The deployment's choice of where a large import runs (config IMPORT_THREAD), as ImportOptions: the
 * dashboard, the CLI and the benchmark pass it along.
 */
export const threadChoice = (config: { importThread: boolean }): Pick<ImportOptions, 'thread'> =>
  config.importThread ? {} : { thread: false };

/**
 * Whether the job runs in a thread of its own (thread-host.ts): a large one (or `worker`), unless
 * `thread` is false, where the deployment allows it.
 */
function inThread(
  deps: ImportDeps,
  options: Pick<ImportOptions, 'worker' | 'thread'>,
  rows: number,
): boolean {
  const large = options.worker ?? rows >= WORKER_MIN_ROWS;
  return (options.thread ?? large) && canImportInThread(deps);
}

/**
 * Goes on with a job whose process stopped (or that failed), from the row after the last recorded
 * one. Needs the very file it started with (its SHA-256); the job's on_match is kept.
 */
export async function resumeImport(
  deps: ImportDeps,
  prepared: PreparedImport,
  jobId: string,
  options: Omit<ImportOptions, 'onMatch' | 'fileName' | 'jobId'>,
): Promise<ImportJobState> {
  return tracked(deps.events, async (stopSignal) => {
    const loaded = await loadImportJob(deps, jobId);
    if (loaded.state.status === 'none' || loaded.state.restaurantId !== prepared.restaurant._id)
      throw notFound(`import ${jobId}`);
    await takeImportSlot(deps, { jobId, restaurantId: prepared.restaurant._id }, options.meta);
    const { job } = await resumeImportJob(deps, jobId, loaded, prepared.fileSha256, {
      ...options.meta,
      restaurant_id: prepared.restaurant._id,
    });
    const jobOptions = { ...options, onMatch: job.state.onMatch, fileName: job.state.fileName ?? '' };
    return inThread(deps, options, prepared.table.rows.length - job.state.processed)
      ? runJobInThread(deps, prepared, jobId, { ...jobOptions, stopSignal }, true)
      : runJob(deps, prepared, jobId, job, { ...jobOptions, stopSignal }, true);
  });
}

export async function runJob(
  deps: ImportDeps,
  prepared: PreparedImport,
  jobId: string,
  start: ImportJob,
  options: ImportOptions,
  resumed: boolean,
): Promise<ImportJobState> {
  const jobMeta = { ...options.meta, restaurant_id: prepared.restaurant._id };
  // The rows' writes and the job's records are settled here (each slice retired, then the end): a
  // request arriving meanwhile does not wait for the read models to take them in (runtime refresh).
  const writes: ImportDeps = {
    events: new SettledByCallerEvents(deps.events),
    clock: deps.clock,
    docs: deps.docs,
    settle: (position) => deps.settle(position),
    matchRows: deps.matchRows,
  };
  // The slices' match keys, held in this process's queue with POST /customers' (match-key-hold.ts)
  // from before their rows are matched until the read models have them. With on_match create_new,
  // which matches nothing, none (as POST /customers).
  const keyHold =
    options.onMatch === 'create_new'
      ? null
      : new ImportKeyHold(prepared.restaurant._id, deps.releaseMatchKeys);
  const maxRows = Math.max(1, options.batchSize ?? DEFAULT_BATCH_SIZE);
  const total = prepared.table.rows.length;
  let job = start;
  // Rows a crashed run may have written without recording them: the slices in flight and the
  // outcomes being recorded.
  const uncertainUntil = resumed ? job.state.processed + IN_FLIGHT_ROWS + 2 * maxRows : 0;
  // What the log shows those runs wrote after the last recorded row (reconcile.ts): each such row is
  // reported as it was written and not written again (an update re-applied would undo a change made
  // to its customer since, through the API say). The checks below stay for a log that cannot say.
  const wroteBefore = resumed
    ? await writtenAfterRecorded(deps, jobId, job.state.processed, total).then(
        (rows) => new Map(rows.map((r) => [r.row, r])),
        () => null,
      )
    : null;
  let done = job.state.processed;
  const running = { ...job.state.counts };
  const report = () =>
    options.onProgress?.({ jobId, processed: done, rowCount: total, counts: { ...running } });
  report();
  // Outcomes are recorded on the job in row order, once their customers are written (a recorded
  // row is always written): one record at a time, each taking every outcome retired meanwhile.
  let toRecord: RowResult[] = [];
  let recordingNow: Promise<void> | null = null;
  let recordError: unknown = null;
  const kick = () => {
    const rows = toRecord;
    toRecord = [];
    recordingNow = recordImportRows(writes, jobId, job, rows, jobMeta).then(
      (r) => {
        job = r.job;
        recordingNow = null;
        if (toRecord.length > 0) kick();
      },
      (err) => {
        recordError ??= err;
        recordingNow = null;
      },
    );
  };
  const record = (rows: RowResult[]) => {
    if (recordError !== null) throw recordError;
    toRecord.push(...rows);
    if (recordingNow === null && toRecord.length > 0) kick();
  };
  const recorded = async () => {
    while (recordingNow !== null || (toRecord.length > 0 && recordError === null)) {
      if (recordingNow === null) kick();
      await recordingNow;
    }
    if (recordError !== null) throw recordError;
  };
  // A large import's group commits go to the log's writer thread (SQLite): their fsync does not
  // hold the event loop. A small one is not worth the thread's start.
  const large = options.worker ?? total - done >= WORKER_MIN_ROWS;
  const stored = storedEvents(deps.events);
  if (stored instanceof SqliteEventStore && large) stored.startWriterThread();
  // Sealing keys for the new customers made ahead in large pages, the first now: otherwise the first
  // slices wait for a small page and are then sealed all in one turn.
  if (large && deps.events instanceof SealingEventStore) deps.events.expectNewCustomers(total - done);
  // The rows' customer ids and event ids are derived where the rows are analysed (the worker).
  const source = new RowSource(prepared.table.rows, { ...analysisContext(prepared), jobId }, large);
  // Slices written but whose customers are not yet in the read models, oldest first, and the
  // matching keys and customers they touch: a row that shares one with them waits for them.
  const inFlight: Slice[] = [];
  let inFlightRows = 0;
  const flightKeys = new Map<string, number>();
  const flightCustomers = new Map<string, number>();
  const hold = (m: Map<string, number>, ks: Iterable<string>, by: number) => {
    for (const k of ks) {
      const n = (m.get(k) ?? 0) + by;
      if (n === 0) m.delete(k);
      else m.set(k, n);
    }
  };
  // Retired slices whose positions the read models have not taken in yet (deps.inReadModels),
  // oldest first, their keys and customers still held; and the first failure of that catch-up.
  const settling: Promise<void>[] = [];
  let settlingError: unknown = null;
  // Slices let go since the current batch's matches were answered: a row of the batch that shares a key
  // or a customer with one is matched again. (One let go before the answer arrived is in it: the main
  // thread says a slice is in after taking it in, and answers a question within one turn, in order.)
  let releasedSince: Slice[] = [];
  const release = (slice: Slice) => {
    releasedSince.push(slice);
    hold(flightKeys, slice.keys, -1);
    hold(flightCustomers, slice.customers, -1);
    keyHold?.letGo([...slice.keys].filter((k) => !flightKeys.has(k)));
  };
  // Oldest slice: its writes committed, the read models caught up (or catching up: settling), its
  // outcomes recorded.
  const retire = async () => {
    if (settlingError !== null) throw settlingError;
    const slice = inFlight[0] as Slice;
    // Left in flight until its writes have all ended: a job that fails waits for them (below).
    const results = await slice.results;
    inFlight.shift();
    inFlightRows -= slice.rows;
    await deps.settle(await deps.events.headPosition());
    if (deps.inReadModels === undefined) release(slice);
    else {
      const inModels = deps.inReadModels().then(
        () => {
          release(slice);
          settling.shift();
        },
        (err: unknown) => {
          settlingError ??= err;
        },
      );
      settling.push(inModels);
    }
    record(results);
    done = (results.at(-1) as RowResult).row;
    for (const r of results) running[r.outcome]++;
    report();
  };
  // Rows per slice, adapted so that a slice's main-thread work (matching, then its writes: the
  // customers module's decide, sealing, the append's preparation) stays near SLICE_MS.
  let sliceRows = Math.min(maxRows, 50);
  let writeFailed = false;
  try {
    // Rows taken from the source and not yet in a slice, in row order (a row that waits for a slice
    // in flight, rows looked up for a slice that ended before them): the next slice starts with them.
    const queued: AnalyzedRow[] = [];
    let fetched = done;
    const more = () => fetched < total || queued.length > 0;
    while (more() || inFlight.length > 0) {
      // A slice's writes failed: no further slice is written (the job fails at that slice, and the
      // manager is told to import the rows after the last recorded one again).
      if (writeFailed) {
        await retire();
        continue;
      }
      // The server is stopping: no further slice is written, those in flight are retired and recorded,
      // then the job fails as interrupted (its page offers to finish it).
      if (options.stopSignal?.aborted) {
        if (inFlight.length > 0) {
          await retire();
          continue;
        }
        await Promise.all(settling);
        if (settlingError !== null) throw settlingError;
        await recorded();
        throw new ImportInterrupted();
      }
      const began = performance.now();
      const batch: AnalyzedRow[] = [];
      const decisions: Decision[] = [];
      const keys = new Set<string>();
      const customers = new Set<string>();
      let wait = false;
      while (queued.length < sliceRows && fetched < total) {
        const got = source.row(fetched + 1);
        queued.push(got instanceof Promise ? await got : got);
        fetched++;
      }
      // The slice's rows matched against the read models together: one query per key field.
      const matching = queued.slice(0, sliceRows);
      const matches = await matchAll(deps, prepared, options, matching, keyHold);
      releasedSince = [];
      let taken = 0;
      while (taken < queued.length && batch.length < sliceRows) {
        const a = queued[taken] as AnalyzedRow;
        const own = keyList(a);
        if (releasedSince.some((s) => own.some((k) => s.keys.has(k)))) break;
        // A row sharing a key with an earlier row is decided once that row is in the read model,
        // exactly as if the rows had been sent to POST /customers one after the other.
        if (own.some((k) => keys.has(k) || flightKeys.has(k))) {
          wait = batch.length === 0;
          break;
        }
        const d = await decideRow(
          deps,
          prepared,
          options,
          jobId,
          a,
          a.row <= uncertainUntil,
          matches.get(a.row),
          wroteBefore?.get(a.row),
        );
        // A match on a customer a slice in flight writes: decided again once that slice is in.
        const target = 'update' in d ? d.update.id : 'done' in d ? d.done.customer_id : null;
        if (target !== null && releasedSince.some((s) => s.customers.has(target))) break;
        if (target !== null && flightCustomers.has(target)) {
          wait = batch.length === 0;
          break;
        }
        if (target !== null && 'update' in d) {
          if (customers.has(target)) break;
          customers.add(target);
        }
        for (const k of own) keys.add(k);
        batch.push(a);
        decisions.push(d);
        taken++;
        if (performance.now() - began >= SLICE_MS / 2) break;
      }
      queued.splice(0, taken);
      // The keys of the rows matched but left for the next slice: taken again when they are matched again.
      if (keyHold !== null && taken < matching.length)
        keyHold.letGo(
          matching.slice(taken).flatMap((a) => keyList(a).filter((k) => !keys.has(k) && !flightKeys.has(k))),
        );
      if (batch.length > 0) {
        // Written without waiting: the slice's new sealing keys are asked for in one key-store write
        // (the sealing layer gathers an event-loop turn's), its appends go into the log's next group
        // commit, written by the writer thread, while the next slices are matched.
        const rowWrites = batch.map((a, i) =>
          writeRow(writes, prepared, jobId, options, a, decisions[i] as Decision, a.row <= uncertainUntil),
        );
        const results = Promise.all(rowWrites);
        const slice: Slice = { results, rowWrites, keys, customers, rows: batch.length, written: false };
        results.then(
          () => {
            slice.written = true;
          },
          () => {
            // Failed: nothing more is written; the slices before it are retired, then it fails the job.
            slice.written = true;
            writeFailed = true;
          },
        );
        inFlight.push(slice);
        inFlightRows += batch.length;
        hold(flightKeys, keys, 1);
        hold(flightCustomers, customers, 1);
        await yieldToLoop();
        // Requests being served go first: the next slice waits for them (20 ms at the most). Unless
        // one waits for a key this import holds: it waits for the slices in flight to be retired, and
        // waiting for it would only lengthen that.
        if (!keyHold?.waitedFor()) await giveWayToRequests();
        // Adapt the slice: its matching and its writes' preparation against SLICE_MS.
        const perRow = (performance.now() - began) / batch.length;
        sliceRows = Math.max(
          1,
          Math.min(maxRows, Math.round((SLICE_MS / Math.max(perRow, 0.001) + sliceRows) / 2)),
        );
      }
      // Retire the oldest slice when the pipeline is full, when a row waits for it, or at the end.
      // Slices already written are retired at once (each catch-up then stays small); the oldest is
      // waited for when the pipeline is full, when a row waits for it, or at the end.
      if (
        inFlight[0]?.written ||
        (inFlight.length > 0 && (inFlightRows >= IN_FLIGHT_ROWS || wait || !more()))
      ) {
        await retire();
        await yieldToLoop();
      } else if (wait && settling.length > 0) {
        // The row waits for a retired slice the read models are still taking in.
        await settling[0];
        if (settlingError !== null) throw settlingError;
      }
    }
    await Promise.all(settling);
    if (settlingError !== null) throw settlingError;
    await recorded();
    job = (await finishImportJob(writes, jobId, job, jobMeta)).job;
    await deps.settle(await deps.events.headPosition());
    return job.state;
  } catch (err) {
    // No further slice is written; the writes already issued end first (one of a slice may still run
    // when another failed), so that the log says what each row did.
    await Promise.allSettled(inFlight.flatMap((slice) => slice.rowWrites));
    // Its writes are settled by this job (a request does not wait for them): the read models take in
    // those of the slices not retired, so the customers written show in the API like the others.
    try {
      await deps.settle(await deps.events.headPosition());
    } catch {
      // The read models failed (maybe the cause): the next catch-up takes them in.
    }
    // In the import's thread the settle above is answered before the main thread's read models have
    // the slices (thread-host.ts): their keys are let go (finally) only once they do, or a request
    // waiting for one would match without the imported customer and make a second.
    await Promise.allSettled([...settling, deps.inReadModels?.()]);
    await recorded().catch(() => undefined);
    // Stored for operators, scrubbed of anything that could be someone's data (failure.ts); the
    // manager's page shows a sentence of its own, and the caller logs the detail.
    const reason = failureReason(err, job.state.processed);
    // The rows written after the last recorded one (reconcile.ts), kept on the failure: the summary
    // says them written, and only the others not imported. Unknown if the log cannot be read (the
    // job's page then reads it once the job is seen stopped).
    const written = await writtenAfterRecorded(deps, jobId, job.state.processed, total).catch(
      () => undefined,
    );
    await failImportJob(deps, jobId, job, reason, jobMeta, written).catch(() => undefined);
    throw err;
  } finally {
    source.close();
    keyHold?.letGoAll();
  }
}

/** Rows written together: their outcomes once written, and what they touch. */
interface Slice {
  results: Promise<RowResult[]>;
  /** Each row's write (results rejects at the first that fails, while others may still run). */
  rowWrites: Promise<RowResult>[];
  keys: Set<string>;
  customers: Set<string>;
  rows: number;
  /** Its writes have settled (committed, or failed). */
  written: boolean;
}

/** Main-thread work a slice aims at (ms) before the import yields to the event loop. */
export const SLICE_MS = 4;
/** Rows written ahead of the read models: their keys, commit and catch-up overlap the next slices. */
export const IN_FLIGHT_ROWS = 1000;

type Decision =
  | { done: RowResult }
  | { create: true; ownId: string }
  | { update: { id: string; on: MatchedOn } };

/**
 * The matches of a slice's rows without faults, by row, looked up together (findMatches: what
 * findMatch answers for each, one query per key field for them all). Empty with on_match create_new.
 */
async function matchAll(
  deps: ImportDeps,
  prepared: PreparedImport,
  options: ImportOptions,
  rows: readonly AnalyzedRow[],
  /** The job's match keys (runJob): the rows' are held before they are matched. */
  keyHold: ImportKeyHold | null,
): Promise<Map<number, RowMatch | null>> {
  const out = new Map<number, RowMatch | null>();
  if (options.onMatch === 'create_new') return out;
  const valid = rows.filter((a) => a.issues.length === 0);
  if (valid.length === 0) return out;
  // The phone's key as the analysis derived it (analysis.ts: `p:` + findMatch's own key).
  const inputs = valid.map((a) => ({
    input: a.read.input,
    phoneKey: a.keys.phone === null ? null : a.keys.phone.slice(2),
  }));
  const take = keyHold === null ? [] : keyHold.fresh(valid.flatMap(keyList));
  if (!deps.matchRows) {
    const taking = keyHold?.takeHere(take);
    if (taking) await taking;
  }
  let found: (RowMatch | null)[];
  if (deps.matchRows) {
    found = await deps.matchRows(inputs, take);
    // Answered: the main thread holds them (thread-host.ts takes them before it looks the rows up).
    keyHold?.granted(take);
  } else found = await lookUpMatches(deps.docs, prepared.restaurant, inputs);
  valid.forEach((a, i) => {
    out.set(a.row, found[i] ?? null);
  });
  return out;
}

/** What a row comes to before anything is written: its faults, or its match. Reads only. */
async function decideRow(
  deps: ImportDeps,
  prepared: PreparedImport,
  options: ImportOptions,
  jobId: string,
  a: AnalyzedRow,
  uncertain: boolean,
  /** The row's match, looked up with its slice's (matchAll); undefined: looked up here. */
  matched?: RowMatch | null,
  /** What an earlier run of the job wrote for this row without recording it (the log says). */
  wroteBefore?: RowResult,
): Promise<Decision> {
  if (a.issues.length) return { done: skipped(a.row, a.issues) };
  if (wroteBefore !== undefined) {
    // A log written before updates carried their key: matched again (its own update may show).
    const again = matched?.id === wroteBefore.customer_id ? matched.on : null;
    const on = wroteBefore.matched_on ?? again;
    return { done: { ...wroteBefore, matched_on: wroteBefore.outcome === 'updated' ? on : null } };
  }
  const ownId = a.ids?.customerId ?? importedCustomerId(jobId, a.row);
  // A crashed run wrote this row's customer but did not record it: it was created by this job.
  if (uncertain && (await deps.events.readStream(customerStream(ownId), { limit: 1 })).length)
    return { done: rowResult(a.row, 'created', ownId, null) };
  const match =
    options.onMatch === 'create_new'
      ? null
      : matched !== undefined
        ? matched
        : ((await matchAll(deps, prepared, options, [a], null)).get(a.row) ?? null);
  if (!match) return { create: true, ownId };
  if (options.onMatch === 'return_existing') return { done: rowResult(a.row, 'matched', match.id, match.on) };
  return { update: { id: match.id, on: match.on } };
}

const rowResult = (
  row: number,
  outcome: RowResult['outcome'],
  id: string,
  on: MatchedOn | null,
): RowResult => ({
  row,
  outcome,
  customer_id: id,
  matched_on: on,
  errors: [],
});

async function writeRow(
  deps: ImportDeps,
  prepared: PreparedImport,
  jobId: string,
  options: ImportOptions,
  a: AnalyzedRow,
  decision: Decision,
  uncertain: boolean,
): Promise<RowResult> {
  if ('done' in decision) return decision.done;
  const { restaurant } = prepared;
  const input = a.read.input;
  const meta: CommandMeta = {
    ...options.meta,
    restaurant_id: restaurant._id,
    ...NO_WEBHOOK,
    import_job_id: jobId,
    import_row: a.row,
  };
  try {
    if ('update' in decision) {
      let { id, on } = decision.update;
      for (let attempt = 1, raced = 0; ; attempt++) {
        try {
          // The key it matched on goes with the write: a resume reporting this row from the log
          // cannot match it again (the row's own update may have given the customer an earlier key).
          const out = await updateCustomer(deps, restaurant, id, input, { ...meta, import_matched_on: on });
          const written = out.appended.length > 0 || (uncertain && (await updatedBy(deps, id, jobId, a.row)));
          return rowResult(a.row, written ? 'updated' : 'matched', id, on);
        } catch (err) {
          // Another writer kept landing first on this customer (each update retries 5 times): a
          // partner's PATCHes in another process, or in this one while the import runs in its own
          // thread (its own queues: shareCommandQueues cannot reach them). Matched and decided again
          // on the customer as it is now, a few rounds more; still losing, the row is skipped with
          // that reason, never the whole job failed.
          if (err instanceof WrongExpectedRevisionError) {
            raced += 1;
            if (raced > RACED_ROUNDS) return skipped(a.row, [RACED_ISSUE]);
            attempt -= 1;
            await deps.settle(await vanishedAt(deps, id));
          } else {
            // Deleted or merged since the read models showed it (an erasure, a merge meanwhile): as
            // POST /customers does, matched again once the read models include that customer's last
            // event (and, merged away, the survivor's write: vanishedAt); no match now creates the
            // row's customer.
            await settleVanished(deps, id, err, attempt < REMATCHES);
          }
          // The row's keys are held by its slice (runJob) until the read models have it.
          const again = (await matchAll(deps, prepared, options, [a], null)).get(a.row) ?? null;
          if (again === null) break;
          ({ id, on } = again);
        }
      }
    }
    const ownId =
      'create' in decision ? decision.ownId : (a.ids?.customerId ?? importedCustomerId(jobId, a.row));
    await createCustomer(deps, restaurant, input, meta, {
      customerId: ownId,
      eventId: a.ids?.createdEventId ?? importedCreatedEventId(jobId, a.row),
      origin: 'IMPORT',
      // Checked and prepared by the module's own rule once, with this restaurant's context.
      prepared: a.profile,
    });
    return rowResult(a.row, 'created', ownId, null);
  } catch (err) {
    // A rule of the customers module refused the row after all (a custom field changed meanwhile, its
    // matches vanished three times over): the row is skipped with the module's own issues.
    if (!(err instanceof ApiError)) throw err;
    const issues = (err.details?.issues as Issue[] | undefined) ?? [
      { path: '', code: err.code.toLowerCase(), message: err.message },
    ];
    return skipped(a.row, issues);
  }
}

/** How many more times a row whose update keeps losing its race is matched and written again. */
const RACED_ROUNDS = 3;

const RACED_ISSUE: Issue = {
  path: '',
  code: 'concurrent_change',
  message: 'the customer was changed by another writer during the import; import this row again',
};

/** Whether the customer's last event is this row's update (written by a run that then crashed). */
async function updatedBy(deps: ImportDeps, customerId: string, jobId: string, row: number): Promise<boolean> {
  const [last] = await deps.events.readStream(customerStream(customerId), {
    direction: 'backwards',
    limit: 1,
  });
  return last?.metadata.import_job_id === jobId && last.metadata.import_row === row;
}
