// Tracking for a restaurant created before the `night-seatings-<restaurant>` stream existed
// (docs/RESERVATIONS.md, "Seatings of neighbouring service days"). Such a restaurant has an empty
// stream and is read as "may have crossed midnight": every hold reads the four neighbouring days, for
// ever. This looks through its whole history once and starts tracking it when nothing ever crossed.
//
// Why it is sound without a lock: since tracking exists, a seating past midnight is recorded in the
// stream (SeatingsCrossMidnight, appended on an empty stream too) before the seating itself is
// appended, and NightSeatingsTracked is appended expecting no stream. So a crossing held after the
// scan has read the log makes that append fail; one held before it is in the log the scan reads.
// Seatings written by a version older than the stream carry no record: the scan is what finds them,
// which is why every process writing to the log must run a version that records crossings first.

import type { CommandMeta } from '../../src/core/command-meta';
import { deterministicUuid } from '../../src/core/ids';
import { type EventStore, NO_STREAM, WrongExpectedRevisionError } from '../../src/ports/event-store';
import type { SeatingHeldData } from '../availability/capacity-events';
import { type CrossingReason, nightSeatingsStream, recordCrossing, spillDays } from './night-seatings';

/** The capacity events that take tables with a seating of their own. */
const TAKING = new Set(['SeatingHeld', 'SeatingMoveHeld', 'SeatingMoveConfirmed']);

export type BackfillOutcome =
  /** The stream already says something (tracked from creation, or a crossing recorded): nothing done. */
  | 'ALREADY_KNOWN'
  /** Nothing ever crossed midnight: NightSeatingsTracked written, holds read no neighbouring day. */
  | 'TRACKED'
  /** A seating crossed midnight, or the time zone changed: recorded, so no later run scans again. */
  | 'CROSSED';

/** Why the restaurant's history says its seatings may cross midnight, or null when nothing does. */
export async function crossingInHistory(
  events: EventStore,
  restaurantId: string,
): Promise<CrossingReason | null> {
  let zone: string | null = null;
  for await (const e of events.readAll()) {
    const d = e.data as { restaurant_id?: string };
    if (d.restaurant_id !== restaurantId) continue;
    if (TAKING.has(e.type)) {
      const s = e.data as unknown as SeatingHeldData;
      if (s.service_date && s.end_at && spillDays(s.service_date, s.end_at).length) return 'SEATING';
    } else if (e.type === 'RestaurantCreated') {
      zone = (e.data as { timezone?: string }).timezone ?? zone;
    } else if (e.type === 'RestaurantUpdated') {
      const next = (e.data as { changes?: { timezone?: string } }).changes?.timezone;
      // A new zone moved every calendar day seatings were placed by (as updateRestaurant records it).
      if (next !== undefined && zone !== null && next !== zone) return 'TIMEZONE_CHANGED';
      if (next !== undefined) zone = next;
    }
  }
  return null;
}

export async function backfillNightSeatings(
  events: EventStore,
  restaurantId: string,
  meta: CommandMeta,
  at: string,
): Promise<BackfillOutcome> {
  const stream = nightSeatingsStream(restaurantId);
  if ((await events.readStream(stream, { limit: 1 })).length > 0) return 'ALREADY_KNOWN';
  const reason = await crossingInHistory(events, restaurantId);
  if (reason) {
    await recordCrossing(events, restaurantId, reason, { ...meta, restaurant_id: restaurantId }, at);
    return 'CROSSED';
  }
  try {
    await events.append(
      stream,
      [
        {
          // The id a creation would have used: the event means the same, written late.
          id: deterministicUuid(`night-seatings-tracked|${restaurantId}`),
          type: 'NightSeatingsTracked',
          data: { restaurant_id: restaurantId, backfilled_at: at },
          metadata: { ...meta, restaurant_id: restaurantId },
        },
      ],
      NO_STREAM,
    );
    return 'TRACKED';
  } catch (err) {
    // A crossing recorded since the stream was read: it stays "may have crossed", as it should.
    if (err instanceof WrongExpectedRevisionError) return 'ALREADY_KNOWN';
    throw err;
  }
}
