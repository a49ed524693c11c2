// `seating_sync` version 3: version 2's document (seating-sync-v2.ts: the same in_sync and
// out_of_sync_since) plus what the end repair needs, so it reads the few reservations whose seating's
// end disagrees with their status instead of every finished one. A DONE or NO_SHOW before its
// seating's planned end frees its tables by a SeatingEnded on its capacity stream, appended after the
// status change; a process dying in between leaves the seating held. The other way round, guests
// seated on a seating a no-show's end ended around their seat hold it whole again by a SeatingHeld
// (`holdIfSeated`); a process dying before it leaves their tables free to be sold under them
// (docs/RESERVATIONS.md, "Finished reservations free their table"). Version 3 follows SeatingEnded as
// well and marks, with an indexed key, the reservations in either state; the repair job
// (src/jobs/reservation-jobs.ts, endFinishedSeatings) asks for those keys.
import type { SeatingEndedData } from '../commands/availability/capacity-events';
import { isFinished, type ReservationStatus } from '../commands/reservations/events';
import { SEATED_STATUSES } from '../commands/reservations/evolve';
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
   * Since when the reservation's seating disagrees with its status about its end (event time): a
   * finished one waits for its end since its status change, or a later hold of its seating (a
   * no-show's seat holds it again, then writes its status); seated guests wait for their seating to
   * be held whole again since its end or their status change, whichever came last.
   */
  end_repair_since?: string;
  /**
   * The key the repair asks for: the UTC day (YYYY-MM-DD) of the held seating's planned end, or
   * `END_REPAIR_LATER` when that end is more than a day after `end_repair_since` (guests seated early
   * and gone long before their seating's end: rare). Otherwise that end is at most a day after
   * `end_repair_since`, itself past, so the repair asks for today's and the next days' keys and
   * `END_REPAIR_LATER`, never the past days': a reservation whose end was never written and whose
   * planned end has passed (its tables are free anyway: logs from before SeatingEnded existed, an end
   * the repair could not write) is never read again.
   */
  end_repair_day?: string;
  /**
   * The held seating's planned end (ISO 8601, UTC, milliseconds: ordered as a string), set with
   * `end_repair_day`. Past it the repair has nothing to do (the tables are free anyway), so it asks
   * only for ends after now, within its index: a document whose repair never succeeded before its end
   * (a refusal remembered in memory only, lost on a restart; the job not running until after the end)
   * is not read again, whether keyed `later` or today, with no write to forget it.
   */
  end_repair_end_at?: string;
}

export type SeatingSyncDocV3 = SeatingSyncDocV2 & EndFields;

export const END_REPAIR_LATER = 'later';
const DAY_MS = 24 * 60 * 60_000;

/**
 * The end fields after one event, on the version 2 document `next` it produced (pure: the rule the
 * projection applies, tested directly). A repair is due, on the seating of the reservation's own day,
 * for a DONE or NO_SHOW whose status change came before that seating's planned end and whose seating
 * is held and not ended (what `endIfFinished` writes an end for), and for seated guests whose seating
 * is ended (what `holdIfSeated` holds whole again).
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
  if (next.seat === null) return out;
  const day = serviceDateOfText(next.seat);
  const hold = next.holds?.[day];
  if (hold === undefined) return out;
  const end = Date.parse(seatingOfText(hold).end_at);
  const isEnded = ended?.[day] !== undefined;
  const toEnd =
    finished_at !== undefined && isFinished(next.status) && !isEnded && Date.parse(finished_at) < end;
  const toHold = isEnded && SEATED_STATUSES.includes(next.status as ReservationStatus);
  if (!toEnd && !toHold) return out;
  // Kept while the repair is due; from this event when it becomes due.
  const since = previous.end_repair_since ?? (d.at as string);
  out.end_repair_since = since;
  out.end_repair_day =
    end - Date.parse(since) > DAY_MS ? END_REPAIR_LATER : new Date(end).toISOString().slice(0, 10);
  out.end_repair_end_at = new Date(end).toISOString();
  return out;
}

/** The keys the repair asks for at `now`: the UTC days from today to the day after tomorrow, and later. */
export function endRepairKeys(now: number): string[] {
  const days = [0, 1, 2].map((n) => new Date(now + n * DAY_MS).toISOString().slice(0, 10));
  return [...days, END_REPAIR_LATER];
}

export const seatingSyncProjectionV3: Projection = {
  name: seatingSyncProjection.name,
  version: 3,
  collections: [SEATING_SYNC],
  eventTypes: [...seatingSyncProjection.eventTypes, 'SeatingEnded'],
  async setup(docs) {
    // One index for both passes of the repair: the out-of-sync scan pins in_sync (a range on
    // out_of_sync_since), the end scan pins in_sync, out_of_sync_since (null) and end_repair_day, and
    // asks for end_repair_end_at after now (a range on the next field: both stores narrow by it). The
    // embedded store keys all three: documents in sync are keyed under [true, null, key], so the keys
    // cost no entry of their own per document, as a separate index on end_repair_day would (every
    // document under null). A finished reservation out of sync waits for the out-of-sync repair
    // first, and is ended on the next run.
    await docs.collection(SEATING_SYNC).createIndex({
      keys: { in_sync: 1, out_of_sync_since: 1, end_repair_day: 1, end_repair_end_at: 1 },
      name: 'out_of_sync_end_repair',
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
