// One customer import at a time per restaurant, decided on the write side: before a job starts (or
// resumes) it takes the restaurant's import slot, the stream `customer-import-slot-<restaurant id>`,
// with an expected revision, so of two imports started together exactly one gets it. The slot is
// free again when its holder's own stream says it finished or failed, or, should its process have
// died mid-way, when the holder has recorded nothing for STALE_AFTER_MS (a running job records its rows
// every few hundred rows, i.e. every second or so). A crash never leaves the slot held forever; a job
// whose start failed (before its first event) frees it at once (freeUnstartedSlot, CustomerImportSlotFreed)
// rather than holding it for UNSTARTED_AFTER_MS.
import type { CommandMeta } from '../../src/core/command-meta';
import { conflict } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import {
  type NewEvent,
  NO_STREAM,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store';
import { customerImportStream } from './events';

/** A running job silent this long is taken for stopped (its process died): another may start. */
export const STALE_AFTER_MS = 10 * 60 * 1000;
/** The slot taken for a job whose first event never came (its start failed) is free after this. */
export const UNSTARTED_AFTER_MS = 2 * 60 * 1000;

export const importSlotStream = (restaurantId: string) => `customer-import-slot-${restaurantId}`;

export interface SlotHolder {
  jobId: string;
  takenAt: string;
}

/** What the holder's own stream says: its status and the time of its last event (service clock). */
export interface HolderJob {
  status: 'none' | 'running' | 'finished' | 'failed';
  lastAt: string | null;
  fileName: string | null;
  actor: string | null;
  processed: number;
  rowCount: number;
}

/** Pure: a running job whose last event is this old has stopped (its process died). */
export const silentTooLong = (lastAt: string, nowMs: number): boolean =>
  nowMs - Date.parse(lastAt) >= STALE_AFTER_MS;

/** Pure: is the holder still importing at `now`? */
export function holderActive(holder: SlotHolder, job: HolderJob, nowMs: number): boolean {
  if (job.status === 'finished' || job.status === 'failed') return false;
  if (job.status === 'none') return nowMs - Date.parse(holder.takenAt) < UNSTARTED_AFTER_MS;
  return !silentTooLong(job.lastAt ?? holder.takenAt, nowMs);
}

/**
 * Pure: the events that give job `jobId` the slot, [] when it already holds it, or a 409 naming the
 * running import (details.reason IMPORT_RUNNING, details.job_id).
 */
export function decideTakeSlot(
  holder: SlotHolder | null,
  job: HolderJob | null,
  cmd: { jobId: string; restaurantId: string },
  now: Date,
): NewEvent[] {
  if (holder?.jobId === cmd.jobId) return [];
  if (holder && job && holderActive(holder, job, now.getTime()))
    throw conflict(
      `An import is already running for this restaurant${job.fileName ? ` (${job.fileName}, ${job.processed.toLocaleString('en')} of ${job.rowCount.toLocaleString('en')} rows done)` : ''}. Wait until it ends, then start this one.`,
      { reason: 'IMPORT_RUNNING', job_id: holder.jobId },
    );
  return [
    {
      type: 'CustomerImportSlotTaken',
      data: {
        restaurant_id: cmd.restaurantId,
        job_id: cmd.jobId,
        previous_job_id: holder?.jobId ?? null,
        at: now.toISOString(),
      },
      metadata: { restaurant_id: cmd.restaurantId },
    },
  ];
}

/**
 * Pure: what the holder's stream says, from its first and last events. Its rows done: the last event's
 * running total, or, when the last event is its resume (nothing recorded since), the rows before the
 * one it resumed from (0 was said of a resumed job that had 20,000 rows done).
 */
export function holderJobOf(
  first: Pick<RecordedEvent, 'type' | 'data'> | undefined,
  last: Pick<RecordedEvent, 'type' | 'data'> | undefined,
): HolderJob {
  if (!first) return { status: 'none', lastAt: null, fileName: null, actor: null, processed: 0, rowCount: 0 };
  const d = (last ?? first).data as Record<string, unknown>;
  const f = first.data as Record<string, unknown>;
  const status =
    last?.type === 'CustomerImportFinished'
      ? 'finished'
      : last?.type === 'CustomerImportFailed'
        ? 'failed'
        : 'running';
  return {
    status,
    lastAt: typeof d.at === 'string' ? d.at : null,
    fileName: typeof f.file_name === 'string' ? f.file_name : null,
    actor: typeof f.actor === 'string' ? f.actor : null,
    processed:
      typeof d.processed === 'number'
        ? d.processed
        : typeof d.from_row === 'number'
          ? Math.max(0, d.from_row - 1)
          : 0,
    rowCount: typeof f.row_count === 'number' ? f.row_count : 0,
  };
}

async function holderJob(deps: WriteDeps, jobId: string): Promise<HolderJob> {
  const stream = customerImportStream(jobId);
  const [first] = await deps.events.readStream(stream, { limit: 1 });
  if (!first) return holderJobOf(undefined, undefined);
  const [last] = await deps.events.readStream(stream, { direction: 'backwards', limit: 1 });
  return holderJobOf(first, last);
}

const SLOT_FREED = 'CustomerImportSlotFreed';

/**
 * Frees the slot `jobId` took when its job never started (its stream holds no event): a start that
 * failed before its first event (the rows refused by the rules of now, a failed write) would otherwise
 * hold the slot UNSTARTED_AFTER_MS. Nothing when another job holds the slot or the job has started.
 * Best effort: a failure leaves the slot to its UNSTARTED_AFTER_MS.
 */
export async function freeUnstartedSlot(
  deps: WriteDeps,
  cmd: { jobId: string; restaurantId: string },
  meta: CommandMeta,
): Promise<void> {
  try {
    const stream = importSlotStream(cmd.restaurantId);
    const [last] = await deps.events.readStream(stream, { direction: 'backwards', limit: 1 });
    if (!last || last.type === SLOT_FREED || (last.data as { job_id?: unknown }).job_id !== cmd.jobId) return;
    if ((await deps.events.readStream(customerImportStream(cmd.jobId), { limit: 1 })).length) return;
    await deps.events.append(
      stream,
      [
        {
          type: SLOT_FREED,
          data: { restaurant_id: cmd.restaurantId, job_id: cmd.jobId, at: deps.clock.now().toISOString() },
          metadata: { ...meta, restaurant_id: cmd.restaurantId },
        },
      ],
      last.revision,
    );
  } catch {
    // Taken meanwhile by another, or the store failed: the slot's own rules free it.
  }
}

/** Takes the restaurant's import slot for `jobId` (409 while another import runs there). */
export async function takeImportSlot(
  deps: WriteDeps,
  cmd: { jobId: string; restaurantId: string },
  meta: CommandMeta,
): Promise<{ position: bigint | null }> {
  const stream = importSlotStream(cmd.restaurantId);
  for (let i = 0; ; i++) {
    const [last] = await deps.events.readStream(stream, { direction: 'backwards', limit: 1 });
    const holder =
      last && last.type !== SLOT_FREED
        ? { jobId: (last.data as { job_id: string }).job_id, takenAt: (last.data as { at: string }).at }
        : null;
    const job = holder && holder.jobId !== cmd.jobId ? await holderJob(deps, holder.jobId) : null;
    const events = decideTakeSlot(holder, job, cmd, deps.clock.now());
    if (!events.length) return { position: null };
    try {
      const r = await deps.events.append(
        stream,
        events.map((e) => ({ ...e, metadata: { ...meta, ...e.metadata } })),
        last ? last.revision : NO_STREAM,
      );
      return { position: r.position };
    } catch (err) {
      // Someone took it meanwhile: decide again against them.
      if (!(err instanceof WrongExpectedRevisionError) || i >= 4) throw err;
    }
  }
}
