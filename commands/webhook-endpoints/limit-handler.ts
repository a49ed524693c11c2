// Takes and releases a restaurant's endpoint slots (rules in limit.ts): read the slot stream, decide,
// append with its expected revision, and on a conflict read and decide again. Only a take that would
// be refused reads the holders' own streams (at most the limit's number of short streams).
import type { CommandMeta } from '../../src/core/command-meta';
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
  /** The first event(s) to append when the stream does not exist yet (its seed). */
  seed: NewEvent[];
}

async function loadSlots(deps: WriteDeps, restaurantId: string, seeding = true): Promise<Loaded> {
  const events = await deps.events.readStream(endpointSlotsStream(restaurantId));
  const last = events.at(-1);
  if (last) return { state: events.reduce(evolveSlots, initialSlots), revision: last.revision, seed: [] };
  if (!seeding) return { state: initialSlots, revision: NO_STREAM, seed: [] };
  const live = await liveEndpointsOf(deps.events, restaurantId);
  // None (a restaurant's first endpoint): the stream starts with the first take, which says as much.
  if (!live.ids.length) return { state: initialSlots, revision: NO_STREAM, seed: [] };
  const seed = seededEvent(restaurantId, live.ids, live.through, deps.clock.now().toISOString());
  return { state: evolveSlots(initialSlots, asRecorded(seed, 0)), revision: NO_STREAM, seed: [seed] };
}

const asRecorded = (e: NewEvent, revision: number): RecordedEvent => ({
  id: '',
  type: e.type,
  data: e.data,
  metadata: {},
  created: '',
  stream: '',
  revision,
  position: 0n,
});

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
    const { state, revision, seed } = await loadSlots(deps, restaurantId);
    const held = state.holders.get(endpointId);
    const full = limit !== null && !held && state.holders.size >= limit;
    const statuses = full ? await inspectHolders(deps, restaurantId, state, meta) : undefined;
    const decided = decideTakeSlot(
      state,
      { restaurantId, endpointId, limit, at: deps.clock.now().toISOString() },
      statuses,
    );
    const events = [...seed, ...decided].map((e) => ({
      ...e,
      metadata: { ...meta, restaurant_id: restaurantId, ...e.metadata },
    }));
    if (events.length === 0 && held) return { revision: held.revision, position: null };
    try {
      const result = await deps.events.append(stream, events, revision);
      // The take is the last event appended (or the seed named it already).
      return {
        revision: decided.length ? result.nextRevision : (held?.revision ?? 0),
        position: result.position,
      };
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
    // A stream not started yet is left so: its seed, made when first needed, reads the deletion.
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

// --- The seed: endpoints live before the slot stream existed, from the endpoints' own events -------
//
// One pass over the log per process and store (then only what was appended since), kept as the live
// endpoint ids per restaurant. It reads the log as stored (endpoint events hold no sealed field), so
// nothing is decrypted. A restaurant's stream is seeded once, by the first take or release that finds
// it missing (appended against "no stream": of two seeds, one lands and the other reads it).

interface SeedIndex {
  after: bigint | null;
  live: Map<string, Set<string>>;
  /** The pass in progress: one at a time. */
  busy: Promise<void>;
}
const seedIndexes = new WeakMap<EventStore, SeedIndex>();
const ENDPOINT_PREFIX = webhookEndpointStream('');

async function liveEndpointsOf(
  events: EventStore,
  restaurantId: string,
): Promise<{ ids: string[]; through: bigint | null }> {
  let index = seedIndexes.get(events);
  if (!index) {
    index = { after: null, live: new Map(), busy: Promise.resolve() };
    seedIndexes.set(events, index);
  }
  const idx = index;
  const pass = idx.busy.then(async () => {
    for await (const e of storedEvents(events).readAll({ after: idx.after, batchSize: 5000 })) {
      if (e.stream.startsWith(ENDPOINT_PREFIX)) foldLive(idx.live, e);
      idx.after = e.position;
    }
  });
  idx.busy = pass.catch(() => undefined);
  await pass;
  return { ids: [...(idx.live.get(restaurantId) ?? [])], through: idx.after };
}

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
