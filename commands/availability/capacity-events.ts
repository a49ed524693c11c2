// Capacity is decided on the write side: one stream per restaurant and service day holds every seating
// that takes a table, appended with an expected revision so two bookings can never take the same table.
// The read side (availability) projects these same events into `bookings` keyed by restaurant and day.

export interface SeatingHeldData {
  restaurant_id: string;
  /** The service day in the restaurant's calendar (the shift's day, even past midnight). */
  service_date: string;
  reservation_id: string;
  shift_id: string;
  room_id: string | null;
  table_ids: string[];
  /** ISO instants; the seating occupies [start_at, end_at). */
  start_at: string;
  end_at: string;
  party_size: number;
  at: string;
  /**
   * Added after the first contract: the reservation's external_id when it has one, so the job that
   * releases an abandoned hold can free the external_id claim taken with it.
   */
  external_id?: string | null;
  /** Added after the first contract: held with bypass_availability (no capacity check was made). */
  force_inserted?: boolean;
  /**
   * Never written in a SeatingHeld: the folds (capacity stream, `bookings`) set it from a later
   * SeatingEnded. The seating keeps its tables for [start_at, min(end_at, ended_at)) only.
   */
  ended_at?: string;
}

/** Why a seating stopped holding its tables before its end (SeatingEnded.reason). */
export type EndReason = 'DONE' | 'NO_SHOW';

export interface SeatingEndedData {
  restaurant_id: string;
  service_date: string;
  reservation_id: string;
  /**
   * The time of the reservation's status change to DONE or NO_SHOW (its event's `at`, so a replay
   * gives the same answer): the seating's tables are free from then on; before it, they stay held.
   */
  ended_at: string;
  reason: EndReason;
  at: string;
}

/**
 * A later SeatingHeld for the same reservation in the same stream replaces the earlier one; at most
 * one seating per reservation is its own per day (a move holds its new seating beside it as a
 * MoveEvent until it is confirmed; logs of older versions moved within the day with one SeatingHeld).
 */
export type CapacityEvent =
  | { type: 'SeatingHeld'; data: SeatingHeldData }
  /** The seating no longer holds capacity (canceled, rejected, moved to another day, abandoned hold). */
  | {
      type: 'SeatingReleased';
      data: {
        restaurant_id: string;
        service_date: string;
        reservation_id: string;
        reason: string;
        at: string;
      };
    }
  /**
   * Added after the first contract: the guests left (DONE) or never came (NO_SHOW) before the
   * seating's end: its tables are free from `ended_at`, its covers stay counted, and the part before
   * stays held. A later SeatingHeld (a no-show seated after all) holds the whole seating again.
   */
  | { type: 'SeatingEnded'; data: SeatingEndedData };

/**
 * A move's seating, held beside the reservation's own until the move is recorded (or given up): it
 * takes its tables and covers like any seating, so the reservation's old seating is never freed
 * before ReservationUpdated lands. Several may be pending for one reservation (concurrent PATCHes),
 * each under its `move_id`.
 */
export type SeatingMoveHeldData = SeatingHeldData & { move_id: string };

export type MoveEvent =
  | { type: 'SeatingMoveHeld'; data: SeatingMoveHeldData }
  /** The update landed: the move's seating replaces the reservation's seating that day. */
  | { type: 'SeatingMoveConfirmed'; data: SeatingMoveHeldData }
  /** The update was refused, overtaken, or (the repair) never landed: the move's seating is let go. */
  | {
      type: 'SeatingMoveDropped';
      data: {
        restaurant_id: string;
        service_date: string;
        reservation_id: string;
        move_id: string;
        reason: string;
        at: string;
      };
    };

/**
 * Added after the first contract: a seating of an earlier service day (`from_service_date`) that lasts
 * into this day was held, checked against this day's seatings as of the revision this event expected
 * (commands/reservations/night-seatings.ts). It holds nothing itself: folds and read models skip it;
 * it only makes a concurrent booking of this day, decided without that seating, fail its append and
 * decide again.
 */
export interface NightSeatingNotedData {
  restaurant_id: string;
  service_date: string;
  from_service_date: string;
  reservation_id: string;
  /** The pending move's id when the seating is a move's (SeatingMoveHeld). */
  move_id?: string;
  at: string;
}

export const MOVE_EVENT_TYPES = ['SeatingMoveHeld', 'SeatingMoveConfirmed', 'SeatingMoveDropped'] as const;

export const capacityStream = (restaurantId: string, serviceDate: string) =>
  `capacity-${restaurantId}-${serviceDate}`;
