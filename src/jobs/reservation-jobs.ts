// Time-driven reservation changes (DESIGN.md §1, spec §3 "automatic status changes"): each is an
// ordinary command, decided on the write side; the read models only say where to look.
import type { ReservationStatus } from '../../commands/reservations/events';
import { AWAITING_ARRIVAL, SEATED_STATUSES } from '../../commands/reservations/evolve';
import {
  endIfFinished,
  FINISHED_STATUSES,
  holdIfSeated,
  loadReservation,
} from '../../commands/reservations/handler-common';
import { changeStatus } from '../../commands/reservations/handler-status';
import { repairSeating } from '../../commands/reservations/repair';
import { BOOKINGS, type BookingDayDoc, bookingDayId, seatingKey } from '../../projections/bookings';
import { RESERVATIONS, type ReservationDoc } from '../../projections/reservations';
import { SEATING_SYNC, type SeatingSyncDoc } from '../../projections/seating-sync';
import { type SeatingSyncDocV2, seatingOfText, seatingSyncParts } from '../../projections/seating-sync-v2';
import {
  endRepairKeys,
  type SeatingSyncDocV3,
  seatingSyncProjectionV3,
} from '../../projections/seating-sync-v3';
import { reservationJobSettings } from '../config';
import { systemMeta } from '../core/command-meta';
import { ApiError } from '../core/errors';
import type { Runtime } from '../runtime';
import type { Env, ScheduledJob } from '../scheduler';

// The settings live with the configuration, checked at every start whatever ROLES says.
export { type ReservationJobSettings, reservationJobSettings } from '../config';

/** At most this many reservations per run: a backlog drains over the next runs, never in one burst. */
const BATCH = 500;
const meta = systemMeta('scheduler');

export interface JobResult {
  changed: string[];
  skipped: number;
}

/**
 * Seated (or arrived) reservations whose seating has ended become DONE. The read model orders them
 * by start, not end: seatings still running (a longer one that started earlier, in any restaurant)
 * are read past, page by page, so they never hold back those that ended after them.
 */
export async function finishSeatedReservations(rt: Runtime): Promise<JobResult> {
  await rt.refresh();
  const now = rt.clock.now();
  const col = rt.docs.collection<ReservationDoc>(RESERVATIONS);
  const filter = { status: { $in: [...SEATED_STATUSES] }, start_at_utc: { $lte: now.toISOString() } };
  const ended: ReservationDoc[] = [];
  for (let skip = 0; ended.length < BATCH; skip += BATCH) {
    const page = await col.find(filter, { sort: { start_at_utc: 1, _id: 1 }, limit: BATCH, skip });
    for (const r of page) if (ended.length < BATCH && Date.parse(r.end_at) <= now.getTime()) ended.push(r);
    if (page.length < BATCH) break;
  }
  return applyAll(rt, ended, (r) => changeStatus(rt, null, r._id, { kind: 'finish' }, meta));
}

/** Booked reservations nobody came for, `graceMinutes` after their start, become NO_SHOW. */
export async function markNoShows(rt: Runtime, graceMinutes: number): Promise<JobResult> {
  await rt.refresh();
  const cutoff = new Date(rt.clock.now().getTime() - graceMinutes * 60_000).toISOString();
  const candidates = await rt.docs
    .collection<ReservationDoc>(RESERVATIONS)
    .find(
      { status: { $in: [...AWAITING_ARRIVAL] }, start_at_utc: { $lte: cutoff } },
      { sort: { start_at_utc: 1 }, limit: BATCH },
    );
  return applyAll(rt, candidates, (r) =>
    changeStatus(rt, null, r._id, { kind: 'no_show', graceMinutes }, meta),
  );
}

/**
 * Reservations the repair left for an operator (an active one holding no seating), per runtime, and
 * when they were reported: looked at again after REPORT_AGAIN_MS. Without it the same ones came first
 * in every run (no order, at most BATCH), so BATCH of them kept every later one from being repaired,
 * and each was logged again every minute.
 */
const reported = new WeakMap<Runtime, Map<string, number>>();
const REPORT_AGAIN_MS = 60 * 60_000;

/**
 * Reservations whose seatings or external_id claims have disagreed with them for `afterMinutes`:
 * abandoned claims and holds (the create died before ReservationCreated), cancellations whose release
 * never ran, interrupted moves.
 */
export async function repairSeatings(rt: Runtime, afterMinutes: number, batch = BATCH): Promise<JobResult> {
  await rt.refresh();
  const now = rt.clock.now().getTime();
  const cutoff = new Date(now - afterMinutes * 60_000).toISOString();
  let left = reported.get(rt);
  if (!left) {
    left = new Map();
    reported.set(rt, left);
  }
  for (const [id, at] of left) if (now - at >= REPORT_AGAIN_MS) left.delete(id);
  const col = rt.docs.collection<SeatingSyncDoc | SeatingSyncDocV2>(SEATING_SYNC);
  const filter = { in_sync: false, out_of_sync_since: { $lte: cutoff } };
  // Oldest first, past those left for an operator.
  const candidates: (SeatingSyncDoc | SeatingSyncDocV2)[] = [];
  for (let skip = 0; candidates.length < batch; skip += batch) {
    const page = await col.find(filter, { sort: { out_of_sync_since: 1, _id: 1 }, limit: batch, skip });
    for (const doc of page) if (!left.has(doc._id) && candidates.length < batch) candidates.push(doc);
    if (page.length < batch) break;
  }
  const synced = await applyAll(rt, candidates, async (doc) => {
    // Either layout: version 1 while version 2 is rebuilt beside it (projections/seating-sync-v2.ts).
    const { days, claims } = seatingSyncParts(doc);
    const out = await repairSeating(rt, doc.restaurant_id, doc._id, days, meta, claims);
    for (const step of out.steps)
      if (step.kind === 'report_missing_seating') {
        left.set(doc._id, now);
        rt.logger.error(
          { reservation_id: doc._id, service_date: step.serviceDate },
          'an active reservation holds no seating on its day; an operator must look at it (reported again in an hour)',
        );
      }
    return out;
  }).catch((err: unknown) => err as Error);
  // Then the ends a crash skipped (DONE, NO_SHOW without SeatingEnded), whatever the first pass did.
  const ended = await endFinishedSeatings(rt, afterMinutes, batch).catch((err: unknown) => err as Error);
  if (synced instanceof Error) throw synced;
  if (ended instanceof Error) throw ended;
  return { changed: [...synced.changed, ...ended.changed], skipped: synced.skipped + ended.skipped };
}

/** A seating lasts at most a day (a shift's duration_minutes is at most 1440: commands/catalog/items.ts). */
const LONGEST_SEATING_MS = 24 * 60 * 60_000;

/**
 * Finished reservations whose end the repair could not write (nothing to end on the write side
 * while the read model shows the seating held, or refused), per runtime, with their planned end:
 * logged once and not tried again; dropped once that end has passed (the tables are free then anyway).
 */
const unended = new WeakMap<Runtime, Map<string, number>>();

/** What the end repair needs of a finished reservation, from either read model it asks. */
interface EndCandidate {
  _id: string;
  reservation_id: string;
  restaurant_id: string;
  service_date: string;
  status: ReservationStatus;
  /** The planned end of its held seating. */
  end_at: string;
}

/**
 * DONE and NO_SHOW reservations whose SeatingEnded was never written (the process died between the
 * status change and the end): their tables stay held to the seating's planned end. And the other
 * way round (`seating_sync` version 3 only): seated guests whose seating a no-show's end ended
 * around their seat, the process gone before it held the seating whole again (`holdIfSeated`): their
 * tables could be sold under them; they are held again, as that process would have. The end is
 * written as the status change would have written it (`endIfFinished`: from the status event's
 * time, so a replay agrees; a no-op when it is there), once the reservation has waited for it
 * `afterMinutes` (a request still writing it is left alone: measured from the status change, or
 * from a later hold of its seating, a no-show's seat whose status has not landed yet). Only seatings
 * whose planned end is still ahead matter (past it, the tables are free anyway). The candidates come
 * from `seating_sync` (version 3 keys exactly those reservations, by the day of their planned end:
 * projections/seating-sync-v3.ts), so a run reads them and nothing else. The write side re-reads
 * both streams. One it cannot end is logged once and left (`unended`).
 */
export async function endFinishedSeatings(
  rt: Runtime,
  afterMinutes: number,
  batch = BATCH,
): Promise<JobResult> {
  await rt.refresh();
  const now = rt.clock.now().getTime();
  const cutoff = now - afterMinutes * 60_000;
  let left = unended.get(rt);
  if (!left) {
    left = new Map();
    unended.set(rt, left);
  }
  for (const [id, end] of left) if (end <= now) left.delete(id);
  const keyed = (rt.versions.activeVersion(seatingSyncProjectionV3.name) ?? 0) >= 3;
  const candidates = keyed
    ? await endsDue(rt, left, now, cutoff, batch)
    : await endsDueBeforeVersion3(rt, left, now, cutoff, batch);
  return applyAll(rt, candidates, async (r) => {
    const leave = (why: string, refused: boolean) => {
      left.set(r._id, Date.parse(r.end_at));
      const fields = { reservation_id: r._id, service_date: r.service_date, reason: why };
      // Nothing to end is also what a read model behind the log shows (the guests seated again):
      // worth a line, not an operator's alarm. A refusal is.
      if (refused)
        rt.logger.error(
          fields,
          'a finished reservation still holds its seating and the repair cannot end it; an operator must look at it (reported once)',
        );
      else
        rt.logger.warn(
          fields,
          'the read models show a finished reservation holding its seating, but its log has nothing to end (a read model behind the log, or out of step with it: `audit verify` says which); not retried until its planned end',
        );
    };
    if (SEATED_STATUSES.includes(r.status)) {
      // Guests seated on a seating a no-show's end ended around their seat, the process that should
      // have held it whole again gone: held again as it would have (read again, a no-op when the
      // reservation is not seated or its seating not ended any more: another process did it).
      const out = await holdIfSeated(rt, (await loadReservation(rt, r._id)).r, meta);
      if (out === null || out.position === null) left.set(r._id, Date.parse(r.end_at));
      return out ?? { position: null };
    }
    try {
      const out = await endIfFinished(rt, r, meta);
      // Ended already, from this status change or before: by another process running this job at
      // the same time (the CLI's `reservations run-jobs` beside the server, two schedulers during a
      // deploy), or by a repeated leave, after this run read its candidates. Nothing to report: not an
      // operator's matter, and the read model shows it too once it has caught up.
      if (out !== null && out.position === null && out.endedAlready) {
        left.set(r._id, Date.parse(r.end_at));
        return out;
      }
      if (out === null || out.position === null) leave('nothing to end on its capacity stream', false);
      return out ?? { position: null };
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) leave(err.message, true);
      throw err;
    }
  });
}

/**
 * The reservations `seating_sync` version 3 keys as having an end to write or to undo (in sync,
 * `end_repair_day` among today's and the next days' keys, `end_repair_end_at` after now), those due for
 * `afterMinutes`, longest first.
 */
async function endsDue(
  rt: Runtime,
  left: Map<string, number>,
  now: number,
  cutoff: number,
  batch: number,
): Promise<EndCandidate[]> {
  const col = rt.docs.collection<SeatingSyncDocV3>(SEATING_SYNC);
  // Only ends still ahead: a document whose end passed unrepaired is not read again (seating-sync-v3.ts).
  const filter = {
    in_sync: true,
    out_of_sync_since: null,
    end_repair_day: { $in: endRepairKeys(now) },
    end_repair_end_at: { $gt: new Date(now).toISOString() },
  };
  const out: EndCandidate[] = [];
  // Longest waiting first: past the first one waiting less than `afterMinutes`, so are the rest.
  let recent = false;
  for (let skip = 0; out.length < batch && !recent; skip += batch) {
    const page = await col.find(filter, { sort: { end_repair_since: 1, _id: 1 }, limit: batch, skip });
    for (const doc of page) {
      if (Date.parse(doc.end_repair_since ?? '') > cutoff) recent = true;
      if (recent || out.length >= batch || left.has(doc._id) || doc.seat === null || doc.status === null)
        continue;
      const seat = seatingOfText(doc.seat);
      const hold = doc.holds?.[seat.service_date];
      if (hold === undefined) continue;
      const end = seatingOfText(hold).end_at;
      if (Date.parse(end) <= now) continue;
      out.push({
        _id: doc._id,
        reservation_id: doc._id,
        restaurant_id: doc.restaurant_id,
        service_date: seat.service_date,
        status: doc.status,
        end_at: end,
      });
    }
    if (page.length < batch) break;
  }
  return out;
}

/**
 * While an older `seating_sync` serves (a store built before version 3, which is rebuilt beside it:
 * src/projection/versions.ts), the candidates as before: the `reservations` read model's DONE and
 * NO_SHOW reservations that started less than a day ago or later (index `status_start`; a seating
 * lasts at most a day), their planned end ahead, then the `bookings` documents of those
 * reservations' days alone, for the ones whose seating is not ended there. Remove with version 2.
 */
async function endsDueBeforeVersion3(
  rt: Runtime,
  left: Map<string, number>,
  now: number,
  cutoff: number,
  batch: number,
): Promise<EndCandidate[]> {
  const col = rt.docs.collection<ReservationDoc>(RESERVATIONS);
  const filter = {
    status: { $in: [...FINISHED_STATUSES] },
    start_at_utc: { $gt: new Date(now - LONGEST_SEATING_MS).toISOString() },
    updated_at: { $lte: new Date(cutoff).toISOString() },
  };
  const candidates: ReservationDoc[] = [];
  for (let skip = 0; candidates.length < batch; skip += batch) {
    const page = await col.find(filter, { sort: { start_at_utc: 1, _id: 1 }, limit: batch, skip });
    const ahead = page.filter((r) => !left.has(r._id) && Date.parse(r.end_at) > now);
    candidates.push(...(await notEnded(rt, ahead, now)).slice(0, batch - candidates.length));
    if (page.length < batch) break;
  }
  return candidates;
}

/** Those of `reservations` whose seating the `bookings` read model shows not ended and still ahead. */
async function notEnded(rt: Runtime, reservations: ReservationDoc[], now: number): Promise<ReservationDoc[]> {
  if (reservations.length === 0) return [];
  const ids = [...new Set(reservations.map((r) => bookingDayId(r.restaurant_id, r.service_date)))];
  const days = new Map(
    (await rt.docs.collection<BookingDayDoc>(BOOKINGS).find({ _id: { $in: ids } })).map((d) => [d._id, d]),
  );
  return reservations.filter((r) => {
    const s = days.get(bookingDayId(r.restaurant_id, r.service_date))?.seatings?.[seatingKey(r._id)];
    return s !== undefined && s.ended_ms === undefined && s.end_ms > now;
  });
}

async function applyAll<T extends { _id: string }>(
  rt: Runtime,
  candidates: T[],
  command: (c: T) => Promise<{ position: bigint | null }>,
): Promise<JobResult> {
  const result: JobResult = { changed: [], skipped: 0 };
  let last: bigint | null = null;
  const failed: { id: string; err: unknown }[] = [];
  for (const c of candidates) {
    try {
      const out = await command(c);
      if (out.position !== null) {
        result.changed.push(c._id);
        if (last === null || out.position > last) last = out.position;
      }
    } catch (err) {
      // The reservation moved on since the read model saw it (seated, canceled…): nothing to do.
      if (err instanceof ApiError && err.status < 500) result.skipped++;
      // Anything else fails this one, not the others: a reservation that always fails came first in
      // every run and held back the rest. The run still fails, after the others, naming it.
      else failed.push({ id: c._id, err });
    }
  }
  await rt.settle(last);
  if (failed.length) {
    const first = failed[0] as { id: string; err: unknown };
    throw new Error(
      `${failed.length} of ${candidates.length} reservation(s) failed (${result.changed.length} changed); the first, ${first.id}: ${first.err instanceof Error ? first.err.message : String(first.err)}`,
      { cause: first.err },
    );
  }
  return result;
}

const summary = (what: string) => (r: JobResult) =>
  r.changed.length ? `${what}: ${r.changed.length} reservation(s) (${r.skipped} skipped)` : null;

export const reservationJobs: ScheduledJob[] = [
  {
    name: 'reservations-finish',
    schedule: '* * * * *',
    run: (rt: Runtime) => finishSeatedReservations(rt).then(summary('finished')),
  },
  {
    name: 'reservations-no-show',
    schedule: '* * * * *',
    checkConfig: reservationJobSettings,
    run: (rt: Runtime, env: Env) =>
      markNoShows(rt, reservationJobSettings(env).noShowGraceMinutes).then(summary('no-show')),
  },
  {
    name: 'reservations-repair-seatings',
    schedule: '* * * * *',
    checkConfig: reservationJobSettings,
    run: (rt: Runtime, env: Env) =>
      repairSeatings(rt, reservationJobSettings(env).repairAfterMinutes).then(summary('seatings repaired')),
  },
];
