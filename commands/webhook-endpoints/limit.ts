// At most MAX_ENDPOINTS_PER_RESTAURANT webhook endpoints per restaurant, decided on the write side (pure
// rules; the reads and appends are in limit-handler.ts). Every endpoint holds a slot on its
// restaurant's stream `webhook-slots-<restaurant id>`: a creation takes one (appended with the expected
// revision, so of two creates competing for the last slot exactly one gets it) before it appends
// WebhookEndpointCreated, and a deletion releases it after WebhookEndpointDeleted.
//
// Two appends on two streams, so a process can die between them (EventStoreDB has no transaction
// across streams). Neither gap can refuse a create for good, and none can let a 21st endpoint in:
// - died after the deletion, before the release: the slot names a deleted endpoint;
// - died after taking the slot, before the creation: the slot names an endpoint that never came.
// A slot only ever counts too much, never too little, and only a create that would be refused looks
// at what the holders' own streams say: a deleted (or another restaurant's) endpoint's slot is
// released there and then; a creation silent for ABANDONED_AFTER_MS is fenced (WebhookEndpointAbandoned
// on its stream, appended against the revision that shows no creation, so a late Created of that
// attempt can never land: decideCreateEndpoint refuses it) and its slot released.
//
// A store written before these streams existed: the first take that finds its stream missing seeds
// the log once (limit-handler.ts): one pass over the endpoints' own events, and every restaurant with
// live endpoints gets its stream started with WebhookEndpointSlotsSeeded naming them, so existing
// endpoints count; `webhook-slot-seeding` then says it is done.
import { BusinessRuleError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import type { EndpointState } from './decide';

/** Per restaurant (the spec leaves it open). */
export const MAX_ENDPOINTS_PER_RESTAURANT = 20;
/** A slot whose endpoint has not been created after this long is taken for abandoned (its create died). */
export const ABANDONED_AFTER_MS = 2 * 60 * 1000;

export const endpointSlotsStream = (restaurantId: string) => `webhook-slots-${restaurantId}`;

export const SLOT_EVENT_TYPES = [
  'WebhookEndpointSlotsSeeded',
  'WebhookEndpointSlotTaken',
  'WebhookEndpointSlotReleased',
] as const;

/** Why a slot was given back. */
export type SlotReleaseReason = 'DELETED' | 'ENDPOINT_DELETED' | 'ABANDONED' | 'OTHER_RESTAURANT';

export interface SlotHolder {
  /** When the slot was taken (the service clock). */
  takenAt: string;
  /** Revision of the event that gave it: a fence names it (WebhookEndpointAbandoned.slot_revision). */
  revision: number;
}

export interface SlotsState {
  holders: ReadonlyMap<string, SlotHolder>;
}
export const initialSlots: SlotsState = { holders: new Map() };

export function evolveSlots(state: SlotsState, event: RecordedEvent): SlotsState {
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'WebhookEndpointSlotsSeeded': {
      const holders = new Map(state.holders);
      for (const id of d.endpoint_ids as string[])
        holders.set(id, { takenAt: d.at as string, revision: event.revision });
      return { holders };
    }
    case 'WebhookEndpointSlotTaken': {
      const holders = new Map(state.holders);
      holders.set(d.endpoint_id as string, { takenAt: d.at as string, revision: event.revision });
      return { holders };
    }
    case 'WebhookEndpointSlotReleased': {
      if (!state.holders.has(d.endpoint_id as string)) return state;
      const holders = new Map(state.holders);
      holders.delete(d.endpoint_id as string);
      return { holders };
    }
    default:
      return state;
  }
}

/** What a slot's endpoint is, from its own stream. */
export type HolderStatus = 'live' | 'deleted' | 'other_restaurant' | 'pending' | 'abandoned';

/** Pure: the state of the endpoint holding `holder`, as its own stream shows it. */
export function holderStatus(
  endpoint: EndpointState,
  holder: SlotHolder,
  restaurantId: string,
): HolderStatus {
  if (endpoint.endpoint) {
    if (endpoint.endpoint.restaurant_id !== restaurantId) return 'other_restaurant';
    return endpoint.deleted ? 'deleted' : 'live';
  }
  return endpoint.abandoned.includes(holder.revision) ? 'abandoned' : 'pending';
}

/** Pure: a creation not seen this long after its slot was taken is abandoned (to be fenced). */
export const silentTooLong = (holder: SlotHolder, nowMs: number): boolean =>
  nowMs - Date.parse(holder.takenAt) >= ABANDONED_AFTER_MS;

const RELEASED: Partial<Record<HolderStatus, SlotReleaseReason>> = {
  deleted: 'ENDPOINT_DELETED',
  other_restaurant: 'OTHER_RESTAURANT',
  abandoned: 'ABANDONED',
};

export const endpointLimitReached = () =>
  new BusinessRuleError(
    'ENDPOINT_LIMIT_REACHED',
    `A restaurant has at most ${MAX_ENDPOINTS_PER_RESTAURANT} webhook endpoints; delete one first`,
  );

export interface TakeSlot {
  restaurantId: string;
  endpointId: string;
  /** null: counted but never refused (the bootstrap file's endpoints, as before the limit was kept here). */
  limit: number | null;
  at: string;
}

/**
 * Pure: the events that give `endpointId` a slot ([] when it holds one already, unless `statuses`
 * says that one's creation was abandoned), releasing first the slots `statuses` shows free (deleted,
 * another restaurant's, abandoned); 422 ENDPOINT_LIMIT_REACHED when `limit` slots would still be held.
 * `statuses` holds what the handler read of the holders' streams (all of them when the stream is full,
 * else at most the endpoint's own); a holder it does not name counts.
 */
export function decideTakeSlot(
  state: SlotsState,
  cmd: TakeSlot,
  statuses: ReadonlyMap<string, HolderStatus> = new Map(),
): NewEvent[] {
  // Held already, unless by a creation fenced as abandoned: then released and taken anew.
  if (state.holders.has(cmd.endpointId) && statuses.get(cmd.endpointId) !== 'abandoned') return [];
  const releases: NewEvent[] = [];
  for (const id of state.holders.keys()) {
    const status = statuses.get(id);
    const reason = status && RELEASED[status];
    if (reason) releases.push(releasedEvent(cmd.restaurantId, id, reason, cmd.at));
  }
  if (cmd.limit !== null && state.holders.size - releases.length >= cmd.limit) throw endpointLimitReached();
  return [
    ...releases,
    {
      type: 'WebhookEndpointSlotTaken',
      data: { restaurant_id: cmd.restaurantId, endpoint_id: cmd.endpointId, at: cmd.at },
    },
  ];
}

/** Pure: the endpoint's slot given back; [] when it holds none. */
export function decideReleaseSlot(
  state: SlotsState,
  restaurantId: string,
  endpointId: string,
  reason: SlotReleaseReason,
  at: string,
): NewEvent[] {
  return state.holders.has(endpointId) ? [releasedEvent(restaurantId, endpointId, reason, at)] : [];
}

/** The first event of a restaurant's slot stream: the endpoints live before it existed. */
export const seededEvent = (
  restaurantId: string,
  endpointIds: readonly string[],
  throughPosition: bigint | null,
  at: string,
): NewEvent => ({
  type: 'WebhookEndpointSlotsSeeded',
  data: {
    restaurant_id: restaurantId,
    endpoint_ids: [...endpointIds],
    // The log read to find them, up to this position (null: an empty log).
    through_position: throughPosition === null ? null : throughPosition.toString(),
    at,
  },
});

const releasedEvent = (
  restaurantId: string,
  endpointId: string,
  reason: SlotReleaseReason,
  at: string,
): NewEvent => ({
  type: 'WebhookEndpointSlotReleased',
  data: { restaurant_id: restaurantId, endpoint_id: endpointId, reason, at },
});
