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
import {
  capacityStream,
  type EndReason,
  type NightSeatingNotedData,
  type SeatingHeldData,
} from '../availability/capacity-events';
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
import { nightFact, recordCrossing, spillDays } from './night-seatings';

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

/** Events that make a seating take tables (a new one, or a pending move becoming the reservation's). */
const TAKING = new Set(['SeatingHeld', 'SeatingMoveHeld', 'SeatingMoveConfirmed']);

/** Whether one of `events` takes a seating past its service day's calendar day (night-seatings.ts). */
function takesPastMidnight(events: readonly NewEvent[]): boolean {
  for (const e of events) {
    if (!TAKING.has(e.type)) continue;
    const d = e.data as unknown as SeatingHeldData;
    if (spillDays(d.service_date, d.end_at).length) return true;
  }
  return false;
}

const withMeta = (events: NewEvent[], meta: CommandMeta, restaurantId: string): NewEvent[] =>
  events.map((e) => ({ ...e, metadata: { ...meta, restaurant_id: restaurantId, ...e.metadata } }));

/**
 * An unchecked change of one day's seatings (a release, an end, a confirmation, a repair's restore,
 * guests seated on an ended seating): decided on the stream's fold, appended with its revision. A
 * seating it takes past midnight is recorded as crossing first (night-seatings.ts), so no hold of a
 * neighbouring day skips reading it.
 */
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
      const events = withMeta(decide(state), meta, restaurantId);
      if (events.length === 0) return { appended: [], position: null };
      if (takesPastMidnight(events))
        await recordCrossing(deps.events, restaurantId, 'SEATING', meta, deps.clock.now().toISOString());
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

/** What a checked decision holds: its events, and the seating it relies on (new or already held). */
export interface CheckedDecision {
  events: NewEvent[];
  /** The seating this reservation holds on the day once the events land (null: none to protect). */
  seating: (Pick<SeatingHeldData, 'service_date' | 'end_at'> & { move_id?: string }) | null;
}

/** A neighbouring day's fold and the revision it was read at (what a NightSeatingNoted expects). */
interface Neighbour {
  day: string;
  state: CapacityState;
  revision: number | typeof NO_STREAM;
}

/**
 * A hold checked against the day's seatings and the neighbouring days' (a create, a move, a no-show
 * seated again), closing the race between two days (night-seatings.ts):
 *   1. read the day's stream, then the restaurant's night fact, then — when a seating may have
 *      crossed midnight — the neighbouring days' streams (serviceDaysMeeting), keeping their revisions;
 *   2. decide; a seating that would cross midnight while the fact says none ever did records the
 *      crossing first and decides again with the neighbours read;
 *   3. append to the day's stream (its revision), then a NightSeatingNoted to every later day the
 *      seating lasts into, expecting the revision read in 1.
 * A conflict on any of them starts again at 1, the reservation's own seating (appended by an earlier
 * attempt) left out of its way; a refusal then gives that seating back (`undo`) before it is thrown.
 * Why it is sound: a booking of day Y decided without our seating read Y before our note landed and
 * appends to Y expecting that revision, so only one of the two appends lands; one that read Y after
 * the note read the night fact after it (recorded before our seating) and our day after it, so it
 * saw our seating. Ordering 1 (the day, then the fact, then the neighbours) is what makes that hold.
 */
export function appendChecked(
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  decide: (state: CapacityState, neighbours: Occupancy | undefined) => CheckedDecision,
  undo: (state: CapacityState, now: Date) => NewEvent[],
  meta: CommandMeta,
): Promise<{ appended: NewEvent[]; position: bigint | null }> {
  const stream = capacityStream(restaurantId, serviceDate);
  return queueOf(deps.events).run(stream, async () => {
    // This call's own append of an earlier attempt (its seating stays held while it decides again).
    let mine: { appended: NewEvent[]; position: bigint } | null = null;
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await load(deps.events, stream);
      const fact = await nightFact(deps.events, restaurantId);
      const near = fact === 'maybe' ? await loadNeighbours(deps, restaurantId, serviceDate) : null;
      let decision: CheckedDecision;
      try {
        decision = decide(
          state,
          near
            ? new Occupancy({ combine: near.map((n) => occupancyExcept(n.state, reservationId)) })
            : undefined,
        );
      } catch (err) {
        if (mine) await giveBack(deps, stream, restaurantId, undo, meta);
        throw err;
      }
      const later = decision.seating ? spillDays(decision.seating.service_date, decision.seating.end_at) : [];
      if (later.length) {
        // A seating past midnight is recorded before it exists (a no-op, read-free, once the stream is
        // known to hold a crossing; written on a restaurant read as 'maybe' for want of tracking too, so
        // a creation under way cannot start tracking after it). The first: decided again with every
        // day read.
        await recordCrossing(deps.events, restaurantId, 'SEATING', meta, deps.clock.now().toISOString());
        if (!near) continue;
      }
      const events = withMeta(decision.events, meta, restaurantId);
      try {
        if (events.length) {
          const result = await deps.events.append(stream, events, revision);
          mine = { appended: events, position: result.position };
        }
        if (mine && decision.seating) {
          for (const day of later) {
            const n = (near as Neighbour[]).find((x) => x.day === day) as Neighbour;
            const note: NightSeatingNotedData = {
              restaurant_id: restaurantId,
              service_date: day,
              from_service_date: serviceDate,
              reservation_id: reservationId,
              ...(decision.seating.move_id ? { move_id: decision.seating.move_id } : {}),
              at: deps.clock.now().toISOString(),
            };
            await deps.events.append(
              capacityStream(restaurantId, day),
              withMeta(
                [{ type: 'NightSeatingNoted', data: note as unknown as Record<string, unknown> }],
                meta,
                restaurantId,
              ),
              n.revision,
            );
          }
        }
        return mine ?? { appended: [], position: null };
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) continue;
        if (mine) await giveBack(deps, stream, restaurantId, undo, meta);
        throw err;
      }
    }
  });
}

/**
 * Undoes this call's own append after a refusal (a release, a dropped move, an end again). Never
 * throws: the refusal being answered stays the answer; an undo that fails is logged (stream and
 * error only, no personal data), the seating it held left as it is.
 */
async function giveBack(
  deps: WriteDeps,
  stream: string,
  restaurantId: string,
  undo: (state: CapacityState, now: Date) => NewEvent[],
  meta: CommandMeta,
): Promise<void> {
  try {
    await undoOwn(deps, stream, restaurantId, undo, meta);
  } catch (err) {
    const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const line = { stream, request_id: meta.request_id ?? null, error };
    if (deps.logger) deps.logger.warn(line, 'capacity: giving back a refused hold failed');
    else console.warn('capacity: giving back a refused hold failed', line);
  }
}

async function undoOwn(
  deps: WriteDeps,
  stream: string,
  restaurantId: string,
  undo: (state: CapacityState, now: Date) => NewEvent[],
  meta: CommandMeta,
) {
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await load(deps.events, stream);
    const events = withMeta(undo(state, deps.clock.now()), meta, restaurantId);
    if (events.length === 0) return;
    try {
      await deps.events.append(stream, events, revision);
      return;
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) continue;
      throw err;
    }
  }
}

/** The neighbouring service days' folds (serviceDaysMeeting), read together, with their revisions. */
async function loadNeighbours(
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
): Promise<Neighbour[]> {
  const days = serviceDaysMeeting(serviceDate).filter((d) => d !== serviceDate);
  return Promise.all(
    days.map(async (day) => ({ day, ...(await load(deps.events, capacityStream(restaurantId, day))) })),
  );
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
export function resumeSeating(
  deps: WriteDeps,
  restaurantId: string,
  serviceDate: string,
  reservationId: string,
  meta: CommandMeta,
) {
  // When it ended: a later attempt finds the seating held again by an earlier one, checks it again
  // from then, and a refusal ends it there again.
  let endedAt: string | undefined;
  return appendChecked(
    deps,
    restaurantId,
    serviceDate,
    reservationId,
    (s, neighbours) => {
      const held = s.held.get(reservationId);
      if (held?.ended_at !== undefined) endedAt = held.ended_at;
      const events = decideResume(s, reservationId, deps.clock.now(), neighbours, endedAt);
      return { events, seating: held && endedAt !== undefined ? held : null };
    },
    (s, now) =>
      endedAt === undefined ? [] : decideEnd(s, reservationId, endedAt, 'NO_SHOW', now.toISOString()),
    meta,
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

/** The day's seatings as the stream holds them now. */
export async function loadCapacity(deps: WriteDeps, restaurantId: string, serviceDate: string) {
  return (await load(deps.events, capacityStream(restaurantId, serviceDate))).state;
}
