// What a CSV import's thread (import-thread.ts) and the main thread (thread-host.ts) say to each other.
import type { ImportJobState } from '../../commands/customer-import/state';
import { ApiError, type ErrorCode } from '../core/errors';
import type { SealedPlain } from '../privacy/sealing-event-store';
import type { EncodedCells } from './analysis';
import type { ImportProgress, MatchLookup, PreparedImport, RowMatch } from './engine';

/** The thread's workerData. */
export interface ThreadStart {
  eventsFile: string;
  keysFile: string;
  /** settled-ring.ts: where the thread publishes the positions it wrote. */
  ring: SharedArrayBuffer;
  jobId: string;
  resumed: boolean;
  restaurant: PreparedImport['restaurant'];
  columns: PreparedImport['columns'];
  header: string[];
  delimiter: PreparedImport['table']['delimiter'];
  fileSha256: string;
  onMatch: string;
  fileName: string;
  meta: Record<string, unknown>;
  batchSize: number | undefined;
}

/** An error thrown in the thread, as it crosses over (an ApiError keeps what the API shows). */
export interface ThreadError {
  message: string;
  name: string;
  code?: string | undefined;
  stack?: string | undefined;
  api?: { status: number; code: ErrorCode; details: Record<string, unknown> | undefined };
}

export type ToHost =
  /** `take`: the match keys to hold first (match-key-hold.ts), in the import's spelling. */
  | { ask: number; match: MatchLookup[]; take: string[] }
  /** Match keys the thread lets go of (their slice is in the read models, or its rows were left). */
  | { release: string[] }
  | { ask: number; settle: string; plains: SealedPlain[] }
  | { progress: ImportProgress }
  | { done: ImportJobState }
  | { failed: ThreadError }
  /** Failed before the job's run began, having written nothing: the main thread runs the job. */
  | { unable: ThreadError };

export type ToThread =
  | { answer: number; value: (RowMatch | null)[] | null }
  /** The main thread could not answer (its read models failed): the job fails as it would in-process. */
  | { answer: number; error: ThreadError }
  | { rows: EncodedCells; last: boolean }
  /** The read models have taken in the retirement asked by `inModels` (or failed to). */
  | { inModels: number }
  | { inModels: number; error: ThreadError }
  /** The server is stopping: write no further slice, record those in flight, fail as interrupted. */
  | { stop: true };

/** An error as it crosses to the other thread (an ApiError keeps its status, code and details). */
export function threadError(err: unknown): ThreadError {
  if (err instanceof ApiError)
    return {
      message: err.message,
      name: err.name,
      api: { status: err.status, code: err.code, details: err.details },
    };
  const e = err as { message?: unknown; name?: unknown; code?: unknown; stack?: unknown };
  return {
    message: typeof e?.message === 'string' ? e.message : String(err),
    name: typeof e?.name === 'string' ? e.name : 'Error',
    code: typeof e?.code === 'string' ? e.code : undefined,
    stack: typeof e?.stack === 'string' ? e.stack : undefined,
  };
}

/** The error a ThreadError stands for, on this side. */
export function rebuiltError(e: ThreadError): Error {
  const err = e.api ? new ApiError(e.api.status, e.api.code, e.message, e.api.details) : new Error(e.message);
  if (!e.api) err.name = e.name;
  if (e.code !== undefined) (err as Error & { code?: string }).code = e.code;
  if (e.stack !== undefined) err.stack = e.stack;
  return err;
}
