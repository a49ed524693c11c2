// One row of a file as the import sees it before matching: the values read, every fault by the
// customers module's rules, and its matching keys (phone numbers parsed with the restaurant's
// country). Pure and the same on either thread: a large import computes it in a worker thread
// (analysis-worker.ts), on the second core, ahead of the rows the main thread is matching and
// writing; a small one (and the preview) computes it inline.
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { ProfileInput } from '../../commands/customers/bounds';
import { emailKey, matchablePhoneKey, phoneLookupKey } from '../../commands/customers/contact';
import type { CustomFieldDefinition } from '../../commands/customers/custom-fields';
import type { CustomerProfile } from '../../commands/customers/events';
import { prepareProfile } from '../../commands/customers/prepare';
import type { MatchKey } from '../../queries/customers';
import type { Issue } from '../core/errors';
import { deterministicUuid } from '../core/ids';
import { packText, type ThreadText, transferable, unpackText } from '../core/thread-text';
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
  /** An import's row without faults: its customer's ids (analyzeForImport). */
  ids?: ImportIds;
}

/** What analysing a row needs besides its cells: plain data, so it can be sent to a worker. */
export interface AnalysisContext {
  columns: Column[];
  country: string | null;
  definitions: readonly CustomFieldDefinition[];
  /**
   * The import job (an import, not a preview): a row without faults also gets the ids its customer
   * would be created with (ImportIds), derived where the row is analysed, off the main thread.
   */
  jobId?: string;
}

/** The ids a row of a job creates its customer with: the same every time the row is written. */
export interface ImportIds {
  customerId: string;
  createdEventId: string;
}

/** The customer a row of a job creates: the same id every time the row is written. */
export function importedCustomerId(jobId: string, row: number): string {
  const h = createHash('sha256').update(`customer-import:${jobId}:${row}`).digest();
  return `cus_${h.subarray(0, 12).toString('base64url').replace(/[-_]/g, 'x').toLowerCase()}`;
}

/** The event id of the CustomerCreated a row of a job appends (a retry is answered as one). */
export const importedCreatedEventId = (jobId: string, row: number): string =>
  deterministicUuid(`customer-import:${jobId}:${row}:created`);

/** analyzeCells, plus the row's ImportIds when the context names a job and the row has no faults. */
export function analyzeForImport(cells: readonly string[], row: number, ctx: AnalysisContext): AnalyzedRow {
  const a = analyzeCells(cells, row, ctx);
  if (ctx.jobId !== undefined && a.issues.length === 0)
    a.ids = {
      customerId: importedCustomerId(ctx.jobId, row),
      createdEventId: importedCreatedEventId(ctx.jobId, row),
    };
  return a;
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
 * Rows per message to and from the worker. A chunk's rows go to the worker as one string (their cells
 * joined, with their lengths in an Int32Array) and come back as one string of their analyses (each
 * row's JSON, with their ends): two strings a chunk instead of an object or string per cell, so the
 * main thread spends little to send them, and a chunk waiting to be read is one large string (kept
 * out of the young generation) rather than an object graph that every scavenge copies. A row is
 * parsed (JSON.parse of its slice) only when the import takes it.
 */
export const ANALYSIS_CHUNK = 250;
/** Chunks asked for ahead of the row being read. */
const AHEAD = 3;

/** A chunk's rows as sent to the worker: their cells joined, and per row its cell count then the cells' lengths. */
export interface EncodedCells {
  /** The joined cells, as UTF-8 bytes to transfer when well formed (src/core/thread-text.ts). */
  text: ThreadText;
  lens: Int32Array;
}

export function encodeCells(rows: readonly (readonly string[])[]): EncodedCells {
  let n = rows.length;
  for (const r of rows) n += r.length;
  const lens = new Int32Array(n);
  const parts: string[] = [];
  let at = 0;
  for (const r of rows) {
    lens[at++] = r.length;
    for (const cell of r) {
      lens[at++] = cell.length;
      parts.push(cell);
    }
  }
  return { text: packText(parts.join('')), lens };
}

export function decodeCells({ text: packed, lens }: EncodedCells): string[][] {
  const text = unpackText(packed);
  const rows: string[][] = [];
  let pos = 0;
  for (let at = 0; at < lens.length; ) {
    const count = lens[at++] as number;
    const cells: string[] = new Array(count);
    for (let c = 0; c < count; c++) {
      const len = lens[at++] as number;
      cells[c] = text.slice(pos, pos + len);
      pos += len;
    }
    rows.push(cells);
  }
  return rows;
}

/** A chunk's analysed rows as the worker answers them: each row's JSON, one after the other. */
export interface EncodedRows {
  json: string;
  /** ends[i]: where row i's JSON ends in `json` (it starts where row i-1's ends). */
  ends: Int32Array;
}

export function encodeRows(rows: readonly AnalyzedRow[]): EncodedRows {
  const ends = new Int32Array(rows.length);
  const parts: string[] = [];
  let at = 0;
  rows.forEach((r, i) => {
    const json = JSON.stringify(r);
    parts.push(json);
    at += json.length;
    ends[i] = at;
  });
  return { json: parts.join(''), ends };
}

/** A chunk of analysed rows: parsed in the worker's answer one row at a time, or analysed inline. */
class Chunk {
  constructor(
    private readonly encoded: EncodedRows | null,
    private readonly rows: AnalyzedRow[] | null,
  ) {}

  row(index: number): AnalyzedRow {
    if (this.rows !== null) return this.rows[index] as AnalyzedRow;
    const { json, ends } = this.encoded as EncodedRows;
    const start = index === 0 ? 0 : (ends[index - 1] as number);
    return JSON.parse(json.slice(start, ends[index])) as AnalyzedRow;
  }
}

/**
 * The analysed rows of a table, read in order (row numbers from 1). With a worker, chunks are
 * analysed there up to AHEAD chunks ahead of the row asked for; should the worker fail (it cannot start,
 * it dies), the rows it owed are analysed inline, so the import goes on either way.
 */
export class RowSource {
  private worker: Worker | null = null;
  private readonly chunks = new Map<number, Promise<Chunk>>();
  private readonly ready = new Map<number, Chunk>();
  private readonly waiting = new Map<number, (rows: EncodedRows | null) => void>();
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
      worker.on('message', (m: { chunk: number } & EncodedRows) => {
        this.workerChunks++;
        this.settle(m.chunk, { json: m.json, ends: m.ends });
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

  private settle(chunk: number, rows: EncodedRows | null): void {
    const resolve = this.waiting.get(chunk);
    this.waiting.delete(chunk);
    resolve?.(rows);
  }

  private inline(chunk: number): Chunk {
    const first = chunk * ANALYSIS_CHUNK;
    const out: AnalyzedRow[] = [];
    for (let i = first; i < Math.min(this.rows.length, first + ANALYSIS_CHUNK); i++)
      out.push(analyzeForImport(this.rows[i] as string[], i + 1, this.ctx));
    return new Chunk(null, out);
  }

  private load(chunk: number): Promise<Chunk> | Chunk {
    const done = this.ready.get(chunk);
    if (done) return done;
    let p = this.chunks.get(chunk);
    if (p === undefined) {
      const keep = (rows: Chunk) => {
        this.ready.set(chunk, rows);
        this.chunks.delete(chunk);
        return rows;
      };
      const worker = this.worker;
      if (worker === null) return keep(this.inline(chunk));
      const first = chunk * ANALYSIS_CHUNK;
      p = new Promise<EncodedRows | null>((resolve) => {
        this.waiting.set(chunk, resolve);
        const cells = encodeCells(this.rows.slice(first, first + ANALYSIS_CHUNK));
        worker.postMessage({ chunk, first, ...cells }, [
          cells.lens.buffer as ArrayBuffer,
          ...transferable(cells.text),
        ]);
      }).then((rows) => keep(rows === null ? this.inline(chunk) : new Chunk(rows, null)));
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
    return rows instanceof Chunk ? rows.row(index) : rows.then((r) => r.row(index));
  }

  close(): void {
    const worker = this.worker;
    this.worker = null;
    if (worker) void worker.terminate();
  }
}
