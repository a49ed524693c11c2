// `seating_sync` version 3: version 2's document (seating-sync-v2.ts: the same in_sync and
// out_of_sync_since) plus what the end repair needs, so it reads the few reservations waiting for a
// `SeatingEnded` instead of every finished one. A DONE or NO_SHOW before its seating's planned end frees
// its tables by a SeatingEnded on its capacity stream, appended after the status change; a process
// dying in between leaves the seating held (docs/RESERVATIONS.md, "Finished reservations free their
// table"). Version 3 follows SeatingEnded as well and marks, with an indexed key, the reservations in
// that state; the repair job (src/jobs/reservation-jobs.ts, endFinishedSeatings) asks for those keys.
import type { SeatingEndedData } from '../commands/availability/capacity-events';
import { FINISHED_STATUSES, type ReservationStatus } from '../commands/reservations/events';
import type { Projection } from '../src/projection/projection';
import { SEATING_SYNC, seatingSyncProjection, seatingTarget } from './seating-sync';
import {
  nextSeatingSyncV2,
  type SeatingSyncDocV2,
  seatingOfText,
  serviceDateOfText,
  withEntry,
  without,
} from './seating-sync-v2';

/** Version 3's fields beside version 2's; each absent while it would be null (most documents). */
export interface EndFields {
  /**
   * The time of the status change (its event's `at`) of a DONE or NO_SHOW made before the planned
   * end of the reservation's seating: the instant its SeatingEnded frees the tables from.
   */
  finished_at?: string;
  /** Service day → `ended_at` of the holds a SeatingEnded ended (until that day's hold changes). */
  ended?: Record<string, string>;
  /**
   * Since when the reservation waits for its end (event time: the status change, or a later hold of
   * its seating, e.g. a no-show's seat held again by a seat whose status has not landed yet).
   */
  end_due_since?: string;
  /**
   * The key the repair asks for: the UTC day (YYYY-MM-DD) of the held seating's planned end, or
   * `END_DUE_LATER` when that end is more than a day after the status change (guests seated early and
   * gone long before their seating's end: rare). A no-show's seating ends at most a day after its
   * status change (a seating lasts at most a day), so the repair asks for today's and the next days'
   * keys and `END_DUE_LATER`, never the past days': a reservation whose end was never written and
   * whose planned end has passed (its tables are free anyway: logs from before SeatingEnded existed,
   * an end the repair could not write) is never read again.
   */
  end_due_day?: string;
}

export type SeatingSyncDocV3 = SeatingSyncDocV2 & EndFields;

export const END_DUE_LATER = 'later';
const DAY_MS = 24 * 60 * 60_000;

const isFinished = (status: ReservationStatus | null) =>
  (FINISHED_STATUSES as readonly string[]).includes(status as string);

/**
 * The end fields after one event, on the version 2 document `next` it produced (pure: the rule the
 * projection applies, tested directly). Waiting for its end: a DONE or NO_SHOW whose status change came
 * before its seating's planned end (`finished_at`), its seating on its own day held and not ended,
 * the status change before that hold's end: what `endIfFinished` would write an end for.
 */
export function evolveEnds(
  previous: EndFields,
  next: SeatingSyncDocV2,
  type: string,
  d: Record<string, unknown>,
): EndFields {
  let { finished_at, ended } = previous;
  switch (type) {
    case 'SeatingHeld':
    case 'SeatingMoveConfirmed':
    case 'SeatingReleased':
      // A new (or no) seating that day: whatever ended the previous one no longer applies.
      ended = without(ended ?? null, d.service_date as string) ?? undefined;
      break;
    case 'SeatingEnded': {
      const e = d as unknown as SeatingEndedData;
      // As the `bookings` read model: only a seating held is ended.
      if (next.holds?.[e.service_date] !== undefined)
        ended = withEntry(ended ?? null, e.service_date, e.ended_at);
      break;
    }
    case 'ReservationStatusChanged':
      finished_at =
        next.seat !== null &&
        isFinished(next.status) &&
        Date.parse(d.at as string) < Date.parse(seatingOfText(next.seat).end_at)
          ? (d.at as string)
          : undefined;
      break;
  }
  const out: EndFields = {};
  if (finished_at !== undefined) out.finished_at = finished_at;
  if (ended !== undefined) out.ended = ended;
  if (finished_at === undefined || next.seat === null || !isFinished(next.status)) return out;
  const day = serviceDateOfText(next.seat);
  const hold = next.holds?.[day];
  if (hold === undefined || ended?.[day] !== undefined) return out;
  const end = Date.parse(seatingOfText(hold).end_at);
  const finished = Date.parse(finished_at);
  if (!(finished < end)) return out;
  // Kept while it waits; from this event when it starts (the status change, or a hold of a seating
  // ended before: a no-show's seat holds it again, then writes its status).
  out.end_due_since = previous.end_due_since ?? (d.at as string);
  out.end_due_day = end - finished > DAY_MS ? END_DUE_LATER : new Date(end).toISOString().slice(0, 10);
  return out;
}

/** The keys the repair asks for at `now`: the UTC days from today to the day after tomorrow, and later. */
export function endDueKeys(now: number): string[] {
  const days = [0, 1, 2].map((n) => new Date(now + n * DAY_MS).toISOString().slice(0, 10));
  return [...days, END_DUE_LATER];
}

export const seatingSyncProjectionV3: Projection = {
  name: seatingSyncProjection.name,
  version: 3,
  collections: [SEATING_SYNC],
  eventTypes: [...seatingSyncProjection.eventTypes, 'SeatingEnded'],
  async setup(docs) {
    // One index for both passes of the repair: the out-of-sync scan pins in_sync (a range on
    // out_of_sync_since), the end scan pins in_sync, out_of_sync_since (null) and end_due_day. The
    // embedded store keys all three: documents in sync are keyed under [true, null, key], so the keys
    // cost no entry of their own per document, as a separate index on end_due_day would (every
    // document under null). A finished reservation out of sync waits for the out-of-sync repair
    // first, and is ended on the next run.
    await docs.collection(SEATING_SYNC).createIndex({
      keys: { in_sync: 1, out_of_sync_since: 1, end_due_day: 1 },
      name: 'out_of_sync_end_due',
    });
  },
  async apply(event, docs) {
    const col = docs.collection<SeatingSyncDocV3>(SEATING_SYNC);
    const target = await seatingTarget(event, col);
    if (target === null) return;
    const next = nextSeatingSyncV2(event.type, target);
    const ends = evolveEnds(target.current ?? {}, next, event.type, target.d);
    // Most documents have none of the fields: version 2's document as it is.
    const doc = ends.finished_at === undefined && ends.ended === undefined ? next : { ...next, ...ends };
    await col.replaceOne({ _id: target.id }, doc, { upsert: true });
  },
};
