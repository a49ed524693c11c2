// The fold of one capacity stream (`capacity-<restaurant>-<day>`): the seatings that hold tables that
// day, at most one per reservation (a later SeatingHeld replaces the earlier one).
//
// A busy day holds a thousand seatings and more, and a create folds one event into it and rechecks a
// slot against all of them: copying the seatings at every event and rebuilding the tables' busy
// intervals at every recheck made a create cost O(seatings of the day), and throughput fell as days
// filled. So the states of one stream share a timeline: every seating version is recorded once
// with the version (state) that made it, a state is a version number on it, and the newest state
// also keeps the day's occupancy index up to date (BookingIndex). Folding an event onto the newest
// state costs O(the seating's tables' bookings); a lookup by reservation costs O(that reservation's
// versions). A state stays valid forever (it reads its own version); folding onto an older one
// (two folds from one cached state) copies its seatings to a new timeline first, so it is correct,
// only not cheap. States are immutable to their users.
//
// A seating whose guests left (DONE) or never came (NO_SHOW) before its end (SeatingEnded) stays held
// with its `ended_at`: its tables count as taken up to then only (Booking.ended_ms, heldEnd).
//
// A move's seating (SeatingMoveHeld) is held beside the reservation's own until the move is confirmed
// or dropped: it lives on the same timeline under its own key (`pendingKey`), so the index counts it
// as taken for everyone else, while `held` shows only the reservations' own seatings.

import type { RecordedEvent } from '../../src/ports/event-store';
import { type Booking, BookingIndex, bookingFromSeating, Occupancy } from '../availability/capacity';
import type { SeatingEndedData, SeatingHeldData, SeatingMoveHeldData } from '../availability/capacity-events';

const MOVE = '#move:';
/** The timeline key of a pending move's seating (reservation ids never contain '#'). */
export const pendingKey = (reservationId: string, moveId: string) => `${reservationId}${MOVE}${moveId}`;
export const isPendingKey = (key: string) => key.includes(MOVE);

interface Version {
  v: number;
  /** null: released at version v. */
  seating: SeatingHeldData | null;
  booking: Booking | null;
}

class Timeline {
  /** Version of the newest state on this timeline. */
  head = 0;
  /** Every version of every reservation's seating, ascending. */
  readonly versions = new Map<string, Version[]>();
  /** The seatings held at `head`. */
  readonly index = new BookingIndex();
  constructor(readonly sealed = false) {}
}

function versionAt(list: readonly Version[] | undefined, v: number): Version | undefined {
  if (!list) return undefined;
  for (let i = list.length - 1; i >= 0; i--) if ((list[i] as Version).v <= v) return list[i];
  return undefined;
}

/** The seatings of one state, read at its version. */
class HeldAt implements ReadonlyMap<string, SeatingHeldData> {
  constructor(
    private readonly timeline: Timeline,
    private readonly v: number,
    readonly size: number,
  ) {}

  get(id: string): SeatingHeldData | undefined {
    return versionAt(this.timeline.versions.get(id), this.v)?.seating ?? undefined;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** The reservations' own seatings (pending moves left out). */
  *entries(): MapIterator<[string, SeatingHeldData]> {
    for (const [id, list] of this.timeline.versions) {
      if (isPendingKey(id)) continue;
      const seating = versionAt(list, this.v)?.seating;
      if (seating) yield [id, seating];
    }
  }

  /** Every seating that takes capacity at this version, pending moves included, by timeline key. */
  *slots(): Generator<[string, SeatingHeldData]> {
    for (const [id, list] of this.timeline.versions) {
      const seating = versionAt(list, this.v)?.seating;
      if (seating) yield [id, seating];
    }
  }

  *keys(): MapIterator<string> {
    for (const [id] of this.entries()) yield id;
  }

  *values(): MapIterator<SeatingHeldData> {
    for (const [, s] of this.entries()) yield s;
  }

  [Symbol.iterator](): MapIterator<[string, SeatingHeldData]> {
    return this.entries();
  }

  forEach(
    fn: (value: SeatingHeldData, key: string, map: ReadonlyMap<string, SeatingHeldData>) => void,
  ): void {
    for (const [id, s] of this.entries()) fn(s, id, this);
  }

  /** The booking of `id`'s seating at this version. */
  booking(id: string): Booking | undefined {
    return versionAt(this.timeline.versions.get(id), this.v)?.booking ?? undefined;
  }

  /** Whether this is the newest state of its timeline (its index describes it). */
  get isHead(): boolean {
    return this.timeline.head === this.v && !this.timeline.sealed;
  }

  get index(): BookingIndex {
    return this.timeline.index;
  }

  /** The next state: `id` holds `seating` (null: releases it). */
  with(id: string, seating: SeatingHeldData | null): HeldAt {
    const previous = this.booking(id);
    let timeline = this.timeline;
    if (!this.isHead) {
      // Folding onto an older state (or the shared initial one): start a timeline of its own.
      timeline = new Timeline();
      for (const [rid, s] of this.slots())
        timeline.versions.set(rid, [{ v: 0, seating: s, booking: this.booking(rid) ?? null }]);
      for (const list of timeline.versions.values())
        timeline.index.add((list[0] as Version).booking as Booking);
      timeline.head = 0;
      return new HeldAt(timeline, 0, this.size).with(id, seating);
    }
    const v = timeline.head + 1;
    // Keyed by slot in the index, so a reservation's pending move is added and removed on its own.
    const booking = seating ? { ...bookingFromSeating(seating), reservation_id: id } : null;
    const list = timeline.versions.get(id);
    if (list) list.push({ v, seating, booking });
    else timeline.versions.set(id, [{ v, seating, booking }]);
    if (previous) timeline.index.remove(previous);
    if (booking) timeline.index.add(booking);
    timeline.head = v;
    const counted = isPendingKey(id) ? 0 : 1;
    return new HeldAt(timeline, v, this.size + counted * ((booking ? 1 : 0) - (previous ? 1 : 0)));
  }
}

export interface CapacityState {
  /** Active seatings by reservation id (a reservation's own seating that day). */
  held: ReadonlyMap<string, SeatingHeldData>;
  /** Moves held but not yet confirmed or dropped: by reservation id, then move id. */
  pending: ReadonlyMap<string, ReadonlyMap<string, SeatingMoveHeldData>>;
}

const NO_PENDING: ReadonlyMap<string, ReadonlyMap<string, SeatingMoveHeldData>> = new Map();

export const initialCapacity: CapacityState = {
  held: new HeldAt(new Timeline(true), 0, 0),
  pending: NO_PENDING,
};

const heldOf = (state: CapacityState): HeldAt =>
  state.held instanceof HeldAt ? state.held : fromMap(state.held);

function fromMap(map: ReadonlyMap<string, SeatingHeldData>): HeldAt {
  let held = initialCapacity.held as HeldAt;
  for (const [id, s] of map) held = held.with(id, s);
  return held;
}

/** The pending map with `move` of `id` set (`seating`) or removed (null). */
function withPending(
  pending: CapacityState['pending'],
  id: string,
  move: string,
  seating: SeatingMoveHeldData | null,
): CapacityState['pending'] {
  const out = new Map(pending);
  const moves = new Map(pending.get(id));
  if (seating) moves.set(move, seating);
  else moves.delete(move);
  if (moves.size) out.set(id, moves);
  else out.delete(id);
  return out;
}

/** The seating a confirmed move leaves: the move's, without its move id. */
function ownSeating(data: SeatingMoveHeldData): SeatingHeldData {
  const { move_id: _, ...seating } = data;
  return seating;
}

export function evolveCapacity(state: CapacityState, event: RecordedEvent): CapacityState {
  const pending = state.pending ?? NO_PENDING;
  switch (event.type) {
    case 'SeatingHeld': {
      const data = event.data as unknown as SeatingHeldData;
      return { held: heldOf(state).with(data.reservation_id, data), pending };
    }
    case 'SeatingReleased': {
      const id = (event.data as { reservation_id: string }).reservation_id;
      if (!state.held.has(id)) return state;
      return { held: heldOf(state).with(id, null), pending };
    }
    case 'SeatingEnded': {
      // The guests left or never came: the seating stays, its tables free from ended_at.
      const { reservation_id: id, ended_at } = event.data as unknown as SeatingEndedData;
      const current = state.held.get(id);
      if (!current || current.ended_at === ended_at) return state;
      return { held: heldOf(state).with(id, { ...current, ended_at }), pending };
    }
    case 'SeatingMoveHeld': {
      const data = event.data as unknown as SeatingMoveHeldData;
      const id = data.reservation_id;
      return {
        held: heldOf(state).with(pendingKey(id, data.move_id), data),
        pending: withPending(pending, id, data.move_id, data),
      };
    }
    case 'SeatingMoveConfirmed': {
      const data = event.data as unknown as SeatingMoveHeldData;
      const id = data.reservation_id;
      let held = heldOf(state);
      if (pending.get(id)?.has(data.move_id)) held = held.with(pendingKey(id, data.move_id), null);
      return {
        held: held.with(id, ownSeating(data)),
        pending: withPending(pending, id, data.move_id, null),
      };
    }
    case 'SeatingMoveDropped': {
      const { reservation_id: id, move_id: move } = event.data as { reservation_id: string; move_id: string };
      if (!pending.get(id)?.has(move)) return state;
      return {
        held: heldOf(state).with(pendingKey(id, move), null),
        pending: withPending(pending, id, move, null),
      };
    }
    default:
      return state;
  }
}

/**
 * The other seatings of the day, pending moves included: what a reservation's own (re)check must
 * fit beside. Its own seating and its own pending moves are not in its way.
 */
export const seatingsExcept = (state: CapacityState, reservationId: string): SeatingHeldData[] =>
  [...heldOf(state).slots()].map(([, s]) => s).filter((s) => s.reservation_id !== reservationId);

/**
 * The other seatings of the day as an occupancy index, for the recheck. From the newest state of a
 * stream it costs O(tables); from an older one, or for a reservation with a move pending (rare: two
 * moves at once, or one a crash left behind), O(seatings of the day).
 */
export function occupancyExcept(state: CapacityState, reservationId: string): Occupancy {
  const held = heldOf(state);
  if (held.isHead && !state.pending?.has(reservationId))
    return held.index.occupancy(held.booking(reservationId));
  return new Occupancy(seatingsExcept(state, reservationId).map(bookingFromSeating));
}
