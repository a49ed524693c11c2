// Finishing a stopped import (the dashboard's job page, POST /dashboard/import/jobs/{id}/resume): the
// rules deciding whether a job has stopped, whether it may be finished now, and why a file or a moment
// is refused. Pure: the route gathers the facts (the job's state, the time, the job this process runs
// for the restaurant, the file chosen) and answers as told; `resumeImport` (engine.ts) then writes
// through the job's commands (decideResumeImport refuses another file on the write side as well).
import { silentTooLong } from './slot';
import type { ImportJobState } from './state';

/**
 * Pure: when a running job went silent past the stale limit (its process stopped), the time of its last
 * event; null otherwise (finished, failed, or still recording). Read from the job stream's last event,
 * as the slot's rule reads it (slot.ts), not from the history's read model, which may lag.
 */
export function stoppedSince(
  state: Pick<ImportJobState, 'lastEventAt'> & { status: string },
  nowMs: number,
): string | null {
  const last = state.lastEventAt;
  return state.status === 'running' && last !== null && silentTooLong(last, nowMs) ? last : null;
}

/**
 * The same rule on a job of the history's read model (the dashboard's list of imports): its last event
 * as that document holds it.
 */
export const docStoppedSince = (
  doc: { status: string; last_event_at: string | null },
  nowMs: number,
): string | null => stoppedSince({ status: doc.status, lastEventAt: doc.last_event_at }, nowMs);

/** Pure: whether the job has stopped part way: failed, or running and silent past the stale limit. */
export const hasStopped = (state: ImportJobState, nowMs: number): boolean =>
  state.status === 'failed' || stoppedSince(state, nowMs) !== null;

/**
 * Pure: whether the job page offers the form that finishes the job. `reconciled`: its rows are known
 * (stoppedJobRows answered what was written after the last recorded row); `runningHere`: the job this
 * process runs for the restaurant. A job this process runs (a resume just started) is not offered
 * again; one that has recorded its failure is over, even while its run ends here (a resume waits for
 * that run to end first).
 */
export function offersResume(
  state: ImportJobState,
  jobId: string,
  reconciled: boolean,
  runningHere: string | null,
): boolean {
  return reconciled && (state.status === 'failed' || runningHere !== jobId);
}

/**
 * Pure: what a resume asked for answers before its file is read. `show_job`: the job's page, nothing
 * done (finished; running and recording, in this process or another; another tab resumed it a moment
 * ago). `open`: it has stopped and may be finished with its file.
 */
export function resumeGate(
  state: ImportJobState,
  jobId: string,
  nowMs: number,
  runningHere: string | null,
): 'show_job' | 'open' {
  if (!hasStopped(state, nowMs)) return 'show_job';
  return runningHere === jobId ? 'show_job' : 'open';
}

/** A resume refused, said on the job's page (its form stays there to try again). */
export interface ResumeRefusal {
  status: 400 | 409 | 413;
  code: 'no_file' | 'other_file' | 'file_refused' | 'form_refused' | 'import_running';
  message: string;
}

/** The file chosen to finish a job: its SHA-256, and why it is refused when the reader refuses it. */
export interface ResumeFile {
  sha256: string;
  /** The reader's refusal (not UTF-8, not CSV, a header refused), as a sentence; null when read. */
  refused: string | null;
}

const fileWords = (state: ImportJobState) => state.fileName ?? 'its CSV file';

/**
 * Pure: why this file cannot finish the job, or null when it can. `file`: null when none was chosen
 * (or it is empty). Another file (its SHA-256 differs) is said as such, whatever the reader made of it:
 * the very file is what the manager needs; the very file refused by the reader (the restaurant's
 * custom fields changed since, say) is refused with the reader's reason.
 */
export function resumeFileRefusal(state: ImportJobState, file: null): ResumeRefusal;
export function resumeFileRefusal(state: ImportJobState, file: ResumeFile): ResumeRefusal | null;
export function resumeFileRefusal(state: ImportJobState, file: ResumeFile | null): ResumeRefusal | null {
  if (file === null)
    return {
      status: 400,
      code: 'no_file',
      message: `Choose the file this import started with (${fileWords(state)}).`,
    };
  if (file.sha256 !== state.fileSha256)
    return {
      status: 400,
      code: 'other_file',
      message: `This is not the file this import started with. Choose that very file (${fileWords(state)}), unchanged: the import goes on from where it stopped.`,
    };
  if (file.refused !== null)
    return {
      status: 400,
      code: 'file_refused',
      message: file.refused,
    };
  return null;
}

/**
 * Pure: a resume form the multipart parser refused before its fields were read (`refused`: its status
 * and sentence). A file larger than the largest upload (`maxWords`, "50 MB") cannot be the file the job
 * started with, which was uploaded: said so, not the upload page's "split it into several files"
 * (a resume needs the very file). Two files, an unreadable upload: the parser's sentence.
 */
export function unreadFormRefusal(
  state: ImportJobState,
  refused: { status: number; message: string },
  maxWords: string,
): ResumeRefusal {
  if (refused.status === 413)
    return {
      status: 413,
      code: 'other_file',
      message: `This file is larger than ${maxWords}: it is not the file this import started with. Choose that very file (${fileWords(state)}), unchanged.`,
    };
  return { status: 400, code: 'form_refused', message: refused.message };
}

/**
 * Pure: the answer when this process already runs an import for the restaurant as the resume is about
 * to start (`runningHere`: its job id). The very job (another tab, or another manager, resumed it while
 * this file was read): its page, as for a job already being resumed. Another job: refused, 409, naming
 * it — one import at a time per restaurant (the slot, slot.ts, decides it on the write side too).
 */
export function whileRunningHere(jobId: string, runningHere: string | null): 'show_job' | ResumeRefusal {
  if (runningHere === jobId) return 'show_job';
  return {
    status: 409,
    code: 'import_running',
    message: `Another import is running for this restaurant${runningHere ? ` (${runningHere})` : ''}. Wait until it ends, then finish this one.`,
  };
}
