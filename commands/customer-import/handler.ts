// Import job commands. The process running a job is its only writer and knows the job's revision, so
// each command appends with that revision without reading the stream again (a job of 100,000 rows is
// a few hundred events of row outcomes, which re-reading at every batch would make quadratic). Any
// other writer in between (a second process resuming the same job) makes the append fail: 409.
import type { CommandMeta } from '../../src/core/command-meta';
import { conflict } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import {
  type NewEvent,
  NO_STREAM,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store';
import {
  decideFailImport,
  decideFinishImport,
  decideRecordRows,
  decideResumeImport,
  decideStartImport,
  type StartImport,
} from './decide';
import { customerImportStream, type RowResult } from './events';
import { evolveImportJob, type ImportJobState, initialImportJob } from './state';

export interface ImportJob {
  state: ImportJobState;
  /** Revision of the job stream's last event. */
  revision: number | typeof NO_STREAM;
}

export interface ImportJobOutcome {
  job: ImportJob;
  position: bigint | null;
}

/**
 * The job's state without reading its row outcomes: CustomerImportRowsRecorded carries running totals,
 * so the state is the fold of its first event (started) and its events from the last such record on.
 * A dashboard polling a 100,000-row job reads a few events, not a thousand.
 */
export async function loadImportJob(deps: WriteDeps, jobId: string): Promise<ImportJob> {
  const stream = customerImportStream(jobId);
  const [first] = await deps.events.readStream(stream, { limit: 1 });
  if (!first) return { state: initialImportJob, revision: NO_STREAM };
  const tail: RecordedEvent[] = [];
  let from: number | undefined;
  for (;;) {
    const page = await deps.events.readStream(stream, {
      direction: 'backwards',
      fromRevision: from,
      limit: 8,
    });
    const stop = page.findIndex((e) => e.type === 'CustomerImportRowsRecorded' || e.revision === 0);
    tail.unshift(...(stop === -1 ? page : page.slice(0, stop + 1)).reverse());
    if (stop !== -1 || page.length < 8) break;
    from = (page.at(-1) as RecordedEvent).revision - 1;
  }
  const events = tail[0]?.revision === 0 ? tail : [first, ...tail];
  return {
    state: events.reduce(evolveImportJob, initialImportJob),
    revision: (events.at(-1) as RecordedEvent).revision,
  };
}

async function append(
  deps: WriteDeps,
  jobId: string,
  job: ImportJob,
  events: NewEvent[],
  meta: CommandMeta,
): Promise<ImportJobOutcome> {
  if (events.length === 0) return { job, position: null };
  const withMeta = events.map((e) => ({ ...e, metadata: { ...meta, ...e.metadata } }));
  try {
    const r = await deps.events.append(customerImportStream(jobId), withMeta, job.revision);
    return {
      job: { state: withMeta.reduce((s, e) => evolveImportJob(s, e), job.state), revision: r.nextRevision },
      position: r.position,
    };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError)
      throw conflict(`import ${jobId} was changed by another process (resumed elsewhere?)`);
    throw err;
  }
}

const now = (deps: WriteDeps) => deps.clock.now().toISOString();

export const startImportJob = (deps: WriteDeps, cmd: StartImport, meta: CommandMeta) =>
  append(
    deps,
    cmd.jobId,
    { state: initialImportJob, revision: NO_STREAM },
    decideStartImport(initialImportJob, cmd, now(deps)),
    meta,
  );

export const recordImportRows = (
  deps: WriteDeps,
  jobId: string,
  job: ImportJob,
  rows: RowResult[],
  meta: CommandMeta,
) => append(deps, jobId, job, decideRecordRows(job.state, jobId, rows, now(deps)), meta);

export const finishImportJob = (deps: WriteDeps, jobId: string, job: ImportJob, meta: CommandMeta) =>
  append(deps, jobId, job, decideFinishImport(job.state, jobId, now(deps)), meta);

export const failImportJob = (
  deps: WriteDeps,
  jobId: string,
  job: ImportJob,
  reason: string,
  meta: CommandMeta,
  written?: RowResult[],
) => append(deps, jobId, job, decideFailImport(job.state, jobId, reason, now(deps), written), meta);

export const resumeImportJob = (
  deps: WriteDeps,
  jobId: string,
  job: ImportJob,
  fileSha256: string,
  meta: CommandMeta,
) => append(deps, jobId, job, decideResumeImport(job.state, jobId, fileSha256, meta.actor, now(deps)), meta);

/** Every recorded row outcome of a job, in row order (for its summary). */
export async function* importRowResults(deps: WriteDeps, jobId: string): AsyncGenerator<RowResult> {
  for (const e of await deps.events.readStream(customerImportStream(jobId)))
    if (e.type === 'CustomerImportRowsRecorded') yield* (e.data as { rows: RowResult[] }).rows;
}
