// One row of a file as the import sees it before matching: the values read, every fault by the
// customers module's rules, and its matching keys (phone numbers parsed with the restaurant's
// country). Pure and the same on either thread: a large import computes it in a worker thread
// (analysis-worker.ts), on the second core, ahead of the rows the main thread is matching and
// writing; a small one (and the preview) computes it inline.
import { Worker } from 'node:worker_threads';
import type { ProfileInput } from '../../commands/customers/bounds';
import { emailKey, matchablePhoneKey, phoneLookupKey } from '../../commands/customers/contact';
import type { CustomFieldDefinition } from '../../commands/customers/custom-fields';
import type { CustomerProfile } from '../../commands/customers/events';
import { prepareProfile } from '../../commands/customers/prepare';
import type { MatchKey } from '../../queries/customers';
import type { Issue } from '../core/errors';
import type { Column } from './columns';
import { type ReadRow, readRow, validateRow } from './rows';

export interface AnalyzedRow {
  row: number;
  read: ReadRow;
  issues: Issue[];
  /** Matching keys as findMatch derives them (null when absent or unusable). */
  keys: Record<MatchKey, string | null>;
  /**
   * A row without faults: the profile the customers module's prepareProfile makes of it (phone
   * normalised, custom fields checked), so a created customer is not checked a second time.
   */
  profile?: CustomerProfile;
}

/** What analysing a row needs besides its cells: plain data, so it can be sent to a worker. */
export interface AnalysisContext {
  columns: Column[];
  country: string | null;
  definitions: readonly CustomFieldDefinition[];
}

export function analyzeCells(cells: readonly string[], row: number, ctx: AnalysisContext): AnalyzedRow {
  const read = readRow(cells, ctx.columns);
  const issues = validateRow(read, ctx.country, ctx.definitions);
  const { external_id: ext, phone_number: phone, email } = read.input;
  const keys = {
    external_id: issues.length || !ext ? null : `x:${ext}`,
    phone: issues.length || !phone ? null : matchablePhoneKey(phoneLookupKey(phone, ctx.country)),
    email: issues.length || !email ? null : `e:${emailKey(email)}`,
  };
  if (keys.phone) keys.phone = `p:${keys.phone}`;
  if (issues.length > 0) return { row, read, issues, keys };
  let profile: CustomerProfile | undefined;
  try {
    profile = prepareProfile(read.input as ProfileInput & { name: string }, {
      restaurantId: '',
      country: ctx.country,
      definitions: ctx.definitions,
    });
  } catch {
    // The module refuses what the checks above let through: its decide will say why.
  }
  return { row, read, issues, keys, profile };
}

// A worker thread does not inherit tsx's loader hooks (the service runs its TypeScript through
// tsx): the worker registers them, then loads its module.
const WORKER_BOOT = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then(({ register }) => { register(); return import(${JSON.stringify(new URL('./analysis-worker.ts', import.meta.url).href)}); });`;

/**
 * Rows per message to and from the worker. Taking a chunk in (JSON.parse of its rows) is one stretch
 * of the main thread: 250 rows keep it near 2 ms.
 */
export const ANALYSIS_CHUNK = 250;
/** Chunks asked for ahead of the row being read. */
const AHEAD = 3;

/**
 * The analysed rows of a table, read in order (row numbers from 1). With a worker, chunks are
 * analysed there up to AHEAD chunks ahead of the row asked for; should the worker fail (it cannot start,
 * it dies), the rows it owed are analysed inline, so the import goes on either way.
 */
export class RowSource {
  private worker: Worker | null = null;
  private readonly chunks = new Map<number, Promise<AnalyzedRow[]>>();
  private readonly ready = new Map<number, AnalyzedRow[]>();
  private readonly waiting = new Map<number, (rows: AnalyzedRow[] | null) => void>();
  /** How many chunks were analysed in the worker (for tests and benchmarks). */
  workerChunks = 0;

  constructor(
    private readonly rows: readonly (readonly string[])[],
    private readonly ctx: AnalysisContext,
    useWorker: boolean,
  ) {
    if (!useWorker) return;
    try {
      const worker = new Worker(WORKER_BOOT, { eval: true, workerData: ctx });
      worker.unref();
      worker.on('message', (m: { chunk: number; json: string }) => {
        this.workerChunks++;
        this.settle(m.chunk, JSON.parse(m.json) as AnalyzedRow[]);
      });
      // A worker that fails hands its chunks back to the main thread.
      const fail = () => {
        this.worker = null;
        for (const chunk of [...this.waiting.keys()]) this.settle(chunk, null);
      };
      worker.on('error', fail);
      worker.on('exit', fail);
      this.worker = worker;
    } catch {
      this.worker = null;
    }
  }

  private settle(chunk: number, rows: AnalyzedRow[] | null): void {
    const resolve = this.waiting.get(chunk);
    this.waiting.delete(chunk);
    resolve?.(rows);
  }

  private inline(chunk: number): AnalyzedRow[] {
    const first = chunk * ANALYSIS_CHUNK;
    const out: AnalyzedRow[] = [];
    for (let i = first; i < Math.min(this.rows.length, first + ANALYSIS_CHUNK); i++)
      out.push(analyzeCells(this.rows[i] as string[], i + 1, this.ctx));
    return out;
  }

  private load(chunk: number): Promise<AnalyzedRow[]> | AnalyzedRow[] {
    const done = this.ready.get(chunk);
    if (done) return done;
    let p = this.chunks.get(chunk);
    if (p === undefined) {
      const keep = (rows: AnalyzedRow[]) => {
        this.ready.set(chunk, rows);
        this.chunks.delete(chunk);
        return rows;
      };
      const worker = this.worker;
      if (worker === null) return keep(this.inline(chunk));
      const first = chunk * ANALYSIS_CHUNK;
      p = new Promise<AnalyzedRow[] | null>((resolve) => {
        this.waiting.set(chunk, resolve);
        worker.postMessage({ chunk, first, rows: this.rows.slice(first, first + ANALYSIS_CHUNK) });
      }).then((rows) => keep(rows ?? this.inline(chunk)));
      this.chunks.set(chunk, p);
    }
    return p;
  }

  /** Row `row` (from 1), analysed; asks for the next chunk ahead of time. */
  row(row: number): Promise<AnalyzedRow> | AnalyzedRow {
    const chunk = Math.floor((row - 1) / ANALYSIS_CHUNK);
    const index = (row - 1) % ANALYSIS_CHUNK;
    // Chunks behind are not needed again: rows are read in order.
    this.ready.delete(chunk - 1);
    for (let ahead = 1; ahead <= AHEAD; ahead++)
      if (this.worker !== null && (chunk + ahead) * ANALYSIS_CHUNK < this.rows.length)
        void Promise.resolve(this.load(chunk + ahead)).catch(() => undefined);
    const rows = this.load(chunk);
    return Array.isArray(rows) ? (rows[index] as AnalyzedRow) : rows.then((r) => r[index] as AnalyzedRow);
  }

  close(): void {
    const worker = this.worker;
    this.worker = null;
    if (worker) void worker.terminate();
  }
}
