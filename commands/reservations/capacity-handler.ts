// Appends to a capacity stream (`capacity-<restaurant>-<day>`) with its expected revision: when another
// request (or process) got there first, the append fails, the stream is read again and the decision
// made again, so two bookings can never both take the last table.
//
// Two things make a busy day cheap, neither needed for correctness: requests for the same stream
// queue in-process (so they rarely conflict at all), and each stream's fold is kept, so a request
// reads only the events appended since the last one (like the catalog's loadCatalog). This is why it
// does not go through runCommand, which re-reads the whole stream every time.

import { trimOldest } from '../../src/core/bounded-map';
import type { CommandMeta } from '../../src/core/command-meta';
import { KeyedQueue } from '../../src/core/keyed-queue';
import type { WriteDeps } from '../../src/core/write-deps';
import {
  type EventStore,
  type NewEvent,
  NO_STREAM,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store';
import { Occupancy } from '../availability/capacity';
import { capacityStream, type EndReason } from '../availability/capacity-events';
import { serviceDaysMeeting } from '../availability/slots';
import {
  decideConfirmMove,
  decideDropMove,
  decideEnd,
  decideHoldAgain,
  decideRelease,
  decideResume,
  type ReleaseReason,
} from './capacity-decide';
import { type CapacityState, evolveCapacity, initialCapacity, occupancyExcept } from './capacity-state';

/**
 * Per store object, as runCommand's (src/core/command.ts): a test that runs a command from inside
 * another one's append (test/helpers/hooked-events.ts) does so through another object, and must not
 * wait for the append it interrupts.
 */
const queues = new WeakMap<EventStore, KeyedQueue>();
const queueOf = (events: EventStore): KeyedQueue => {
  let queue = queues.get(events);
  if (!queue) {
    queue = new KeyedQueue();
    queues.set(events, queue);
  }
  return queue;
};

interface Fold {
  revision: number;
  state: CapacityState;
}
/** Per store (tests run several), per stream; the oldest folds are dropped beyond the limit. */
const folds = new WeakMap<EventStore, Map<string, Fold>>();
const FOLD_LIMIT = 5000;

async function load(
  events: EventStore,
  stream: string,
): Promise<{ state: CapacityState; revision: number | typeof NO_STREAM }> {
  let perStore = folds.get(events);
  if (!perStore) {
    perStore = new Map();
    folds.set(events, perStore);
  }
  const known = perStore.get(stream);
  const fresh = await events.readStream(stream, { fromRevision: known ? known.revision + 1 : 0 });
  if (known && fresh.length === 0) return known;
  let state = known?.state ?? initialCapacity;
  for (const e of fresh) state = evolveCapacity(state, e);
  const last = fresh.at(-1);
  if (!last) return { state, revision: NO_STREAM };
  perStore.delete(stream);
  perStore.set(stream, { revision: last.revision, state });
  trimOldest(perStore, FOLD_LIMIT);
  return { state, revision: last.revision };
}

const MAX_ATTEMPTS = 20;

export function appendToCapacity(
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  decide: (state: CapacityState) => NewEvent[],
  meta: CommandMeta,
): Promise<{ appended: NewEvent[]; position: bigint | null }> {
  const stream = capacityStream(restaurantId, serviceDate);
  return queueOf(deps.events).run(stream, async () => {
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await load(deps.events, stream);
      const events = decide(state).map((e) => ({
        ...e,
        metadata: { ...meta, restaurant_id: restaurantId, ...e.metadata },
      }));
      if (events.length === 0) return { appended: [], position: null };
      try {
        const result = await deps.events.append(stream, events, revision);
        return { appended: events, position: result.position };
      } catch (err) {
        // Another process appended first: fold what it wrote and decide again.
        if (err instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) continue;
        throw err;
      }
    }
  });
}

/** appendToCapacity with a decision taken at the clock's now (the time its events record). */
const decideNow = (
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  meta: CommandMeta,
  decide: (state: CapacityState, now: Date) => NewEvent[],
) => appendToCapacity(deps, restaurantId, serviceDate, (s) => decide(s, deps.clock.now()), meta);

/** Frees the reservation's seating on that day; a no-op when it holds none there. */
export const releaseSeating = (
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  reason: ReleaseReason,
  meta: CommandMeta,
) =>
  decideNow(deps, restaurantId, serviceDate, meta, (s, now) =>
    decideRelease(s, restaurantId, serviceDate, reservationId, reason, now.toISOString()),
  );

/**
 * The guests left or never came at `endedAt`: the seating's tables are free from then (a no-op when
 * nothing changes). `endedAlready`: the stream, as this decision read it, has the seating ended at
 * `endedAt` or before (another writer ended it: a repeated status change, the repair run twice at once).
 */
export async function endSeating(
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  endedAt: string,
  reason: EndReason,
  meta: CommandMeta,
): Promise<{ appended: NewEvent[]; position: bigint | null; endedAlready: boolean }> {
  let endedAlready = false;
  const out = await decideNow(deps, restaurantId, serviceDate, meta, (s, now) => {
    const ended = s.held.get(reservationId)?.ended_at;
    endedAlready = ended !== undefined && Date.parse(ended) <= Date.parse(endedAt);
    return decideEnd(s, reservationId, endedAt, reason, now.toISOString());
  });
  return { ...out, endedAlready };
}

/**
 * A no-show seated after all: its ended seating is held to its end again, or 422 NO_TABLE
 * (decideResume), checked against the neighbouring service days' seatings too (a night seating past
 * midnight whose table the next morning's booking took after the no-show).
 */
export async function resumeSeating(
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  meta: CommandMeta,
) {
  const neighbours = await neighbourOccupancy(deps, restaurantId, serviceDate, reservationId);
  return decideNow(deps, restaurantId, serviceDate, meta, (s, now) =>
    decideResume(s, reservationId, now, neighbours),
  );
}

/** Guests seated on an ended seating: held to its end again, unchecked (decideHoldAgain; a no-op when not ended). */
export const holdAgain = (
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  meta: CommandMeta,
) => decideNow(deps, restaurantId, serviceDate, meta, (s, now) => decideHoldAgain(s, reservationId, now));

/** The move's update landed: its pending seating replaces the reservation's own that day. */
export const confirmMove = (
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  moveId: string,
  meta: CommandMeta,
) =>
  decideNow(deps, restaurantId, serviceDate, meta, (s, now) =>
    decideConfirmMove(s, reservationId, moveId, now.toISOString()),
  );

/** The move will not be recorded: its pending seating is let go; a no-op when it is gone already. */
export const dropMove = (
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  moveId: string,
  reason: ReleaseReason,
  meta: CommandMeta,
) =>
  decideNow(deps, restaurantId, serviceDate, meta, (s, now) =>
    decideDropMove(s, reservationId, moveId, reason, now.toISOString()),
  );

/**
 * The seatings of the service days around `serviceDate` that a seating of that day may meet on a
 * table (serviceDaysMeeting: D-2 to D+2, always, whatever the catalog says now), the reservation's
 * own (its seating and pending moves there, which a move gives up) left out. The streams are read
 * together; each read returns only the events since its kept fold, so an idle neighbour costs one
 * empty read.
 */
export async function neighbourOccupancy(
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
): Promise<Occupancy> {
  const days = serviceDaysMeeting(serviceDate).filter((d) => d !== serviceDate);
  const states = await Promise.all(days.map((d) => loadCapacity(deps, restaurantId, d)));
  return new Occupancy({ combine: states.map((s) => occupancyExcept(s, reservationId)) });
}

/** The day's seatings as the stream holds them now. */
export async function loadCapacity(deps: WriteDeps, restaurantId: string, serviceDate: string) {
  return (await load(deps.events, capacityStream(restaurantId, serviceDate))).state;
}
