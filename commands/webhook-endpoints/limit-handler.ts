// Takes and releases a restaurant's endpoint slots (rules in limit.ts): read the slot stream, decide,
// append with its expected revision, and on a conflict read and decide again. Only a take that would
// be refused reads the holders' own streams (at most the limit's number of short streams).
import { type CommandMeta, systemMeta } from '../../src/core/command-meta';
import { conflict } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import {
  type EventStore,
  type NewEvent,
  NO_STREAM,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store';
import { storedEvents } from '../../src/privacy/sealing-event-store';
import { decideAbandon, type EndpointState, evolveEndpoint, initialEndpoint } from './decide';
import { webhookEndpointStream } from './events';
import {
  decideReleaseSlot,
  decideTakeSlot,
  endpointSlotsStream,
  evolveSlots,
  type HolderStatus,
  holderStatus,
  initialSlots,
  MAX_ENDPOINTS_PER_RESTAURANT,
  type SlotReleaseReason,
  type SlotsState,
  seededEvent,
  silentTooLong,
} from './limit';

/**
 * More than the limit: every successful take is one more held slot, so creates alone can make a take
 * conflict at most `limit` times before it sees the stream full (deletions racing with it add more).
 */
const MAX_ATTEMPTS = MAX_ENDPOINTS_PER_RESTAURANT + 10;

interface Loaded {
  state: SlotsState;
  revision: number | typeof NO_STREAM;
}

/**
 * The last fold of each restaurant's slot stream, per store: a take reads only the events appended
 * since (the stream grows by two events with every endpoint created and deleted, for good). The
 * states are never changed (evolveSlots copies), so a fold can be handed out and built on.
 */
const folds = new WeakMap<EventStore, Map<string, { state: SlotsState; revision: number }>>();
const FOLDS_LIMIT = 10_000;

async function loadSlots(deps: WriteDeps, restaurantId: string, seed = true): Promise<Loaded> {
  const stream = endpointSlotsStream(restaurantId);
  let known = folds.get(deps.events);
  if (!known) {
    known = new Map();
    folds.set(deps.events, known);
  }
  const cached = known.get(restaurantId);
  let events = await deps.events.readStream(stream, { fromRevision: cached ? cached.revision + 1 : 0 });
  if (cached) {
    if (!events.length) return cached;
    const next = {
      state: events.reduce(evolveSlots, cached.state),
      revision: (events.at(-1) as RecordedEvent).revision,
    };
    known.set(restaurantId, next);
    return next;
  }
  // No stream: the restaurant has had no endpoint since the log was seeded, or the log was written
  // before slots existed and is seeded now (then this restaurant's stream may start with its seed).
  if (!events.length && seed && !(await seededAlready(deps.events))) {
    await seedEveryRestaurant(deps);
    events = await deps.events.readStream(stream);
  }
  const last = events.at(-1);
  if (!last) return { state: initialSlots, revision: NO_STREAM };
  const loaded = { state: events.reduce(evolveSlots, initialSlots), revision: last.revision };
  if (known.size >= FOLDS_LIMIT) known.clear();
  known.set(restaurantId, loaded);
  return loaded;
}

export interface TakenSlot {
  /** Revision of the event that gave the slot (a fence of this attempt names it). */
  revision: number;
  position: bigint | null;
}

/** Gives `endpointId` a slot of its restaurant (422 ENDPOINT_LIMIT_REACHED when `limit` are held). */
export async function takeEndpointSlot(
  deps: WriteDeps,
  restaurantId: string,
  endpointId: string,
  limit: number | null,
  meta: CommandMeta,
): Promise<TakenSlot> {
  const stream = endpointSlotsStream(restaurantId);
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await loadSlots(deps, restaurantId);
    const held = state.holders.get(endpointId);
    let own: Map<string, HolderStatus> | undefined;
    if (held) {
      // Held already (a retried creation, or one the seed counted): nothing to append. Unless that
      // slot's creation was fenced as abandoned and the release that goes with the fence never landed
      // (the fencing take lost its race or died): the creation would then be refused with that slot
      // for good (a bootstrap file's or the demo's fixed id, at every start), so it is released and
      // taken anew, in one append.
      const status = holderStatus((await loadEndpoint(deps.events, endpointId)).state, held, restaurantId);
      if (status !== 'abandoned') return { revision: held.revision, position: null };
      own = new Map([[endpointId, status]]);
    }
    const full = limit !== null && state.holders.size >= limit;
    const statuses = full ? await inspectHolders(deps, restaurantId, state, meta) : own;
    const decided = decideTakeSlot(
      state,
      { restaurantId, endpointId, limit, at: deps.clock.now().toISOString() },
      statuses,
    );
    const events = decided.map((e) => ({
      ...e,
      metadata: { ...meta, restaurant_id: restaurantId, ...e.metadata },
    }));
    try {
      const result = await deps.events.append(stream, events, revision);
      // The take is the last event appended.
      return { revision: result.nextRevision, position: result.position };
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) continue;
      if (err instanceof WrongExpectedRevisionError)
        throw conflict('Webhook endpoints of this restaurant are changing concurrently; retry');
      throw err;
    }
  }
}

/**
 * Gives the endpoint's slot back (nothing when it holds none). Never fails the deletion that calls it:
 * a release that keeps losing races is left to the next take that finds the stream full.
 */
export async function releaseEndpointSlot(
  deps: WriteDeps,
  restaurantId: string,
  endpointId: string,
  reason: SlotReleaseReason,
  meta: CommandMeta,
): Promise<bigint | null> {
  const stream = endpointSlotsStream(restaurantId);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    // A stream not started yet is left so: the seed, made when first needed, reads the deletion.
    const { state, revision } = await loadSlots(deps, restaurantId, false);
    const decided = decideReleaseSlot(
      state,
      restaurantId,
      endpointId,
      reason,
      deps.clock.now().toISOString(),
    );
    if (!decided.length) return null;
    const events = decided.map((e) => ({
      ...e,
      metadata: { ...meta, restaurant_id: restaurantId, ...e.metadata },
    }));
    try {
      return (await deps.events.append(stream, events, revision)).position;
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
    }
  }
  return null;
}

async function loadEndpoint(
  events: EventStore,
  id: string,
): Promise<{ state: EndpointState; revision: number | typeof NO_STREAM }> {
  const stream = await events.readStream(webhookEndpointStream(id));
  const last = stream.at(-1);
  return {
    state: stream.reduce(evolveEndpoint, initialEndpoint),
    revision: last ? last.revision : NO_STREAM,
  };
}

/**
 * What each holder's own stream says, fencing the creations silent for too long first (so they can
 * never land after their slot is given back). A fence that loses to the creation reads it live.
 */
async function inspectHolders(
  deps: WriteDeps,
  restaurantId: string,
  state: SlotsState,
  meta: CommandMeta,
): Promise<Map<string, HolderStatus>> {
  const nowMs = deps.clock.now().getTime();
  const entries = await Promise.all(
    [...state.holders].map(async ([id, holder]): Promise<[string, HolderStatus]> => {
      const loaded = await loadEndpoint(deps.events, id);
      const status = holderStatus(loaded.state, holder, restaurantId);
      if (status !== 'pending' || !silentTooLong(holder, nowMs)) return [id, status];
      const fence = decideAbandon(
        loaded.state,
        id,
        restaurantId,
        holder.revision,
        deps.clock.now().toISOString(),
      );
      try {
        await deps.events.append(
          webhookEndpointStream(id),
          fence.map((e) => ({ ...e, metadata: { ...meta, restaurant_id: restaurantId } })),
          loaded.revision,
        );
        return [id, 'abandoned'];
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        // Something landed meanwhile (the creation, most likely): it decides.
        return [id, holderStatus((await loadEndpoint(deps.events, id)).state, holder, restaurantId)];
      }
    }),
  );
  return new Map(entries);
}

// --- The seed: endpoints live before slot streams existed, from the endpoints' own events ---------
//
// Once per log, by the first take that finds its restaurant's stream missing: one pass over the log
// as stored (endpoint events hold no sealed field, so nothing is decrypted) folds the live endpoints
// of every restaurant; each restaurant that has some gets its stream started with
// WebhookEndpointSlotsSeeded (against "no stream": a stream already started by a take is left as it
// is), then `webhook-slot-seeding` records that the log is seeded. From then on a missing stream
// means a restaurant without endpoints, and nothing scans the log again. Seeds racing (two
// processes): each append expects no stream, the loser's is dropped.
//
// What this cannot count: endpoints an older version of the service creates after the seeding (a
// rolling deploy, scaled out): they hold no slot until deleted. A deletion racing with the pass (its
// release finds no stream) leaves a slot to a deleted endpoint, which the next take at the limit
// releases.

export const SEEDING_STREAM = 'webhook-slot-seeding';
/** Per store: the pass of this process (running or done); a store whose log is seeded maps to null. */
const seeding = new WeakMap<EventStore, Promise<void> | null>();
const seedingMeta: CommandMeta = systemMeta('webhook-endpoint-limit');

async function seededAlready(events: EventStore): Promise<boolean> {
  if (seeding.get(events) === null) return true;
  if (!(await events.readStream(SEEDING_STREAM, { limit: 1 })).length) return false;
  seeding.set(events, null);
  return true;
}

async function seedEveryRestaurant(deps: WriteDeps): Promise<void> {
  let pass = seeding.get(deps.events);
  if (pass === null) return;
  if (!pass) {
    pass = seedPass(deps);
    seeding.set(deps.events, pass);
  }
  try {
    await pass;
    seeding.set(deps.events, null);
  } catch (err) {
    // The next take tries again.
    if (seeding.get(deps.events) === pass) seeding.delete(deps.events);
    throw err;
  }
}

async function seedPass(deps: WriteDeps): Promise<void> {
  if ((await deps.events.readStream(SEEDING_STREAM, { limit: 1 })).length) return;
  const live = new Map<string, Set<string>>();
  let through: bigint | null = null;
  for await (const e of storedEvents(deps.events).readAll({ batchSize: 5000 })) {
    if (e.stream.startsWith(ENDPOINT_PREFIX)) foldLive(live, e);
    through = e.position;
  }
  const at = deps.clock.now().toISOString();
  for (const [restaurantId, ids] of live) {
    if (!ids.size) continue;
    await appendOnce(deps.events, endpointSlotsStream(restaurantId), {
      ...seededEvent(restaurantId, [...ids], through, at),
      metadata: { ...seedingMeta, restaurant_id: restaurantId },
    });
  }
  await appendOnce(deps.events, SEEDING_STREAM, {
    type: 'WebhookEndpointSlotsSeedingDone',
    data: {
      through_position: through === null ? null : through.toString(),
      restaurants: [...live.values()].filter((ids) => ids.size > 0).length,
      at,
    },
    metadata: { ...seedingMeta, restaurant_id: null },
  });
}

/** Appends to a stream that must not exist yet; a stream started meanwhile is left as it is. */
async function appendOnce(events: EventStore, stream: string, event: NewEvent): Promise<void> {
  try {
    await events.append(stream, [event], NO_STREAM);
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
  }
}

const ENDPOINT_PREFIX = webhookEndpointStream('');

function foldLive(live: Map<string, Set<string>>, e: RecordedEvent): void {
  const d = e.data as { endpoint_id?: string; restaurant_id?: string };
  if (!d.endpoint_id || !d.restaurant_id) return;
  if (e.type === 'WebhookEndpointCreated') {
    let ids = live.get(d.restaurant_id);
    if (!ids) {
      ids = new Set();
      live.set(d.restaurant_id, ids);
    }
    ids.add(d.endpoint_id);
  } else if (e.type === 'WebhookEndpointDeleted') live.get(d.restaurant_id)?.delete(d.endpoint_id);
}
