// Pure decisions on one customer stream: given its state, the events a command produces, or a thrown
// ApiError. A command that would change nothing produces no event (repeating it is safe).
import { conflict, notFound } from '../../src/core/errors';
import type { NewEvent } from '../../src/ports/event-store';
import type { ProfileInput } from './bounds';
import type { CustomerEvent, CustomerOrigin, CustomerProfile, OptOutChannel } from './events';
import { prepareChanges, prepareProfile, type WriteContext } from './prepare';
import type { CustomerState } from './state';

/** Who may see the customer: partners never see drafts; operators and channels do. */
export type Viewer = 'partner' | 'internal';

type Out = NewEvent[];
/** Events carry their restaurant in the metadata too (tenancy, DESIGN.md §1), known only once loaded. */
export const event = (e: CustomerEvent): NewEvent => ({
  type: e.type,
  data: e.data as unknown as Record<string, unknown>,
  metadata: { restaurant_id: e.data.restaurant_id },
});

/** The customer exists in `restaurantId` and `viewer` may act on it; otherwise 404 (spec §2.9 tenancy). */
export function assertVisible(
  state: CustomerState,
  restaurantId: string | null,
  viewer: Viewer,
  id: string,
): asserts state is CustomerState & { profile: CustomerProfile; customerId: string; restaurantId: string } {
  const visible =
    state.status === 'active' &&
    (restaurantId === null || state.restaurantId === restaurantId) &&
    (viewer === 'internal' || !state.draft);
  if (!visible) throw notFound(`customer ${id}`);
}

const base = (s: { customerId: string; restaurantId: string }, at: string) => ({
  customer_id: s.customerId,
  restaurant_id: s.restaurantId,
  at,
});

export function decideCreate(
  state: CustomerState,
  customerId: string,
  input: ProfileInput & { name: string },
  ctx: WriteContext,
  options: { draft: boolean; origin: CustomerOrigin },
  at: string,
  /** The profile prepareProfile made of this input with this context already (a CSV import's worker). */
  prepared?: CustomerProfile,
): Out {
  const profile = prepared ?? prepareProfile(input, ctx);
  if (state.status !== 'none') throw conflict(`customer ${customerId} already exists`);
  return [
    event({
      type: 'CustomerCreated',
      data: { customer_id: customerId, restaurant_id: ctx.restaurantId, at, profile, ...options },
    }),
  ];
}

export function decideUpdate(
  state: CustomerState,
  id: string,
  input: ProfileInput,
  ctx: WriteContext,
  viewer: Viewer,
  at: string,
): Out {
  assertVisible(state, ctx.restaurantId, viewer, id);
  const { changes, previous } = prepareChanges(state.profile, input, ctx);
  if (Object.keys(changes).length === 0) return [];
  return [event({ type: 'CustomerUpdated', data: { ...base(state, at), changes, previous } })];
}

export function decideBlacklist(
  state: CustomerState,
  id: string,
  reason: string | null,
  at: string,
  atCreation = false,
): Out {
  assertVisible(state, null, 'internal', id);
  return state.blacklisted
    ? []
    : [
        event({
          type: 'CustomerBlacklisted',
          data: { ...base(state, at), reason, ...(atCreation ? { at_creation: true as const } : {}) },
        }),
      ];
}

export function decideClearBlacklist(state: CustomerState, id: string, at: string): Out {
  assertVisible(state, null, 'internal', id);
  return state.blacklisted ? [event({ type: 'CustomerBlacklistCleared', data: base(state, at) })] : [];
}

export function decideAddOptOut(
  state: CustomerState,
  id: string,
  channel: OptOutChannel,
  reason: string | null,
  at: string,
): Out {
  assertVisible(state, null, 'internal', id);
  if (state.optOuts.includes(channel)) return [];
  return [event({ type: 'MarketingOptOutAdded', data: { ...base(state, at), channel, reason } })];
}

export function decideRemoveOptOut(
  state: CustomerState,
  id: string,
  channel: OptOutChannel,
  at: string,
): Out {
  assertVisible(state, null, 'internal', id);
  if (!state.optOuts.includes(channel)) return [];
  return [event({ type: 'MarketingOptOutRemoved', data: { ...base(state, at), channel } })];
}

export function decideDelete(state: CustomerState, id: string, reason: string | null, at: string): Out {
  if (state.status === 'deleted') return [];
  assertVisible(state, null, 'internal', id);
  return [event({ type: 'CustomerDeleted', data: { ...base(state, at), reason, relinks: true } })];
}

/**
 * A customer merged into `into`, which is being deleted: deleted with it (a merge joins two records
 * of one person, so the erasure of one is the erasure of both). Only while merged into `into`; a
 * customer already deleted appends nothing.
 */
export function decideDeleteAbsorbed(state: CustomerState, into: string, at: string): Out {
  if (state.status !== 'merged' || state.mergedInto !== into) return [];
  const s = state as CustomerState & { customerId: string; restaurantId: string };
  return [
    event({
      type: 'CustomerDeleted',
      data: { ...base(s, at), reason: null, into_customer_id: into, relinks: true },
    }),
  ];
}

export function decideFlagDraft(state: CustomerState, id: string, channel: string, at: string): Out {
  assertVisible(state, null, 'internal', id);
  return state.draft ? [] : [event({ type: 'CustomerDraftFlagged', data: { ...base(state, at), channel } })];
}

export function decidePublishDraft(state: CustomerState, id: string, at: string): Out {
  assertVisible(state, null, 'internal', id);
  return state.draft ? [event({ type: 'CustomerDraftPublished', data: base(state, at) })] : [];
}
