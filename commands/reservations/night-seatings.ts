// Seatings past midnight (docs/RESERVATIONS.md, "Seatings of neighbouring service days").
//
// A seating of service day X whose end falls on a later calendar day (a night shift's 00:30, a
// 23:30 start of 2 hours, a forced insert, a move…) "spills" onto the service days X+1 and X+2 up to
// that day: it may share a table with their seatings. Two facts keep that sound and cheap:
//
// 1. The race between two days (a spilling seating of X and a seating of Y = X+1 decided at the same
//    instant, each appended to its own day's stream). A checked hold appends its seating to X, then a
//    `NightSeatingNoted` to each day it spills onto, with the revision of that day's stream it read
//    before deciding. The other booking appends to Y with the revision it read. Both cannot land: on
//    Y one of the two expected a revision the other moved. The loser decides again (capacity-handler).
//
// 2. The monotonic fact "a seating of this restaurant may ever have crossed midnight" (stream
//    `night-seatings-<restaurant>`): `NightSeatingsTracked` is written when the restaurant is
//    created (expecting no stream), `SeatingsCrossMidnight` before the first spilling seating is
//    appended (and before a time-zone change, which moves every calendar day). Tracked and never
//    crossed: no seating of another service day can reach a day's tables, so a hold that does not
//    spill itself reads no neighbouring day. A restaurant created before this stream existed (no
//    `NightSeatingsTracked` first) is read as "may have crossed": every neighbouring day is read.
import type { CommandMeta } from '../../src/core/command-meta';
import { deterministicUuid } from '../../src/core/ids';
import { ANY, type EventStore, NO_STREAM, WrongExpectedRevisionError } from '../../src/ports/event-store';
import { addDays } from '../availability/zone-time';

/** The restaurant id is the whole rest of the name: nothing follows it, so no escaping is needed. */
export const nightSeatingsStream = (restaurantId: string) => `night-seatings-${restaurantId}`;

/** Why a restaurant's seatings may cross midnight (SeatingsCrossMidnight.reason). */
export type CrossingReason = 'SEATING' | 'TIMEZONE_CHANGED';

/**
 * 'none': tracked since the restaurant was created and no seating ever crossed midnight.
 * 'maybe': one did (or is about to), the time zone changed, or the restaurant predates tracking.
 */
export type NightFact = 'none' | 'maybe';

interface Known {
  revision: number;
  fact: NightFact;
  /** The stream holds a SeatingsCrossMidnight (never goes back). */
  crossed: boolean;
}
/** Per store, per restaurant. 'maybe' never goes back, so it is never read again. */
const known = new WeakMap<EventStore, Map<string, Known>>();
const KNOWN_LIMIT = 10_000;

function perStore(events: EventStore): Map<string, Known> {
  let map = known.get(events);
  if (!map) {
    map = new Map();
    known.set(events, map);
  }
  return map;
}

/** The fact as the log holds it now (a read of the events since the last one, unless already 'maybe'). */
export async function nightFact(events: EventStore, restaurantId: string): Promise<NightFact> {
  const kept = perStore(events).get(restaurantId);
  if (kept?.fact === 'maybe') return 'maybe';
  return (await refresh(events, restaurantId)).fact;
}

/** The stream's events since the last read folded into what is kept (no read once it holds a crossing). */
async function refresh(events: EventStore, restaurantId: string): Promise<Known> {
  const map = perStore(events);
  const kept = map.get(restaurantId);
  if (kept?.crossed) return kept;
  const fresh = await events.readStream(nightSeatingsStream(restaurantId), {
    fromRevision: kept ? kept.revision + 1 : 0,
  });
  if (kept && fresh.length === 0) return kept;
  // An empty stream is a restaurant that predates tracking (or one whose creation is not done yet):
  // 'maybe', kept (the conservative answer; it costs reads, never a double booking). It is not
  // "crossed" though: a crossing is still recorded (recordCrossing), so a creation that has not
  // started tracking yet cannot start it after a crossing seating exists.
  let fact: NightFact = kept?.fact ?? (fresh[0]?.type === 'NightSeatingsTracked' ? 'none' : 'maybe');
  const crossed = (kept?.crossed ?? false) || fresh.some((e) => e.type === 'SeatingsCrossMidnight');
  if (crossed) fact = 'maybe';
  const last = fresh.at(-1);
  if (map.size >= KNOWN_LIMIT && !kept) map.clear();
  const now: Known = { revision: last ? last.revision : (kept?.revision ?? -1), fact, crossed };
  map.set(restaurantId, now);
  return now;
}

/** Written with the restaurant's creation: from here on every crossing is recorded. */
export async function startTracking(events: EventStore, restaurantId: string, meta: CommandMeta) {
  try {
    await events.append(
      nightSeatingsStream(restaurantId),
      [
        {
          id: deterministicUuid(`night-seatings-tracked|${restaurantId}`),
          type: 'NightSeatingsTracked',
          data: { restaurant_id: restaurantId },
          metadata: { ...meta, restaurant_id: restaurantId },
        },
      ],
      NO_STREAM,
    );
  } catch (err) {
    // A crossing recorded first (a seating past midnight held while the creation was under way: the
    // stream then starts with its SeatingsCrossMidnight), or a restaurant recreated: not an error of
    // the creation; it stays untracked, read as 'maybe', which is what it is.
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
  }
}

/**
 * Records that a seating may cross midnight from now on (before that seating is appended). Written
 * unless the stream is known to hold a crossing already: also on an empty stream (a restaurant whose
 * creation has not started tracking yet), so that startTracking's append, expecting no stream, then
 * fails and the restaurant is never read as 'none' while a crossing seating exists.
 */
export async function recordCrossing(
  events: EventStore,
  restaurantId: string,
  reason: CrossingReason,
  meta: CommandMeta,
  at: string,
) {
  if ((await refresh(events, restaurantId)).crossed) return;
  await events.append(
    nightSeatingsStream(restaurantId),
    [
      {
        type: 'SeatingsCrossMidnight',
        data: { restaurant_id: restaurantId, reason, at },
        metadata: { ...meta, restaurant_id: restaurantId },
      },
    ],
    ANY,
  );
  perStore(events).set(restaurantId, { revision: Number.MAX_SAFE_INTEGER, fact: 'maybe', crossed: true });
}

/**
 * The last calendar day a seating holds its tables on, in the restaurant's calendar when it was
 * taken: the local date of its end (written with its offset), the day before when it ends at 00:00
 * exactly (the end is not part of the seating).
 */
export function lastDayOf(endAt: string): string {
  const date = endAt.slice(0, 10);
  return endAt.slice(11, 19) === '00:00:00' ? addDays(date, -1) : date;
}

/**
 * The later service days (X+1, X+2) whose seatings a seating of `serviceDate` ending at `endAt` may
 * meet: a seating of day Y starts on calendar day Y or later, so only one that lasts into day Y can
 * (serviceDaysMeeting bounds them to two days).
 */
export function spillDays(serviceDate: string, endAt: string): string[] {
  const last = lastDayOf(endAt);
  const out: string[] = [];
  for (let n = 1; n <= 2; n++) {
    const day = addDays(serviceDate, n);
    if (day <= last) out.push(day);
  }
  return out;
}
