// What a CSV import's thread (import-thread.ts) and the main thread (thread-host.ts) say to each other.
import type { ImportJobState } from '../../commands/customer-import/state';
import type { ErrorCode } from '../core/errors';
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
  | { ask: number; match: MatchLookup[] }
  | { ask: number; settle: string; plains: SealedPlain[] }
  | { progress: ImportProgress }
  | { done: ImportJobState }
  | { failed: ThreadError };

export type ToThread =
  | { answer: number; value: (RowMatch | null)[] | null }
  /** The main thread could not answer (its read models failed): the job fails as it would in-process. */
  | { answer: number; error: ThreadError }
  | { rows: EncodedCells; last: boolean };
