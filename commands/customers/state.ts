// A customer as the write side knows it: the fold of its stream.
import type { RecordedEvent } from '../../src/ports/event-store';
import type { CustomerEvent, CustomerProfile, OptOutChannel } from './events';

export interface CustomerState {
  /** none: no such stream. merged and deleted are final: every later command answers 404. */
  status: 'none' | 'active' | 'merged' | 'deleted';
  customerId: string | null;
  restaurantId: string | null;
  profile: CustomerProfile | null;
  blacklisted: boolean;
  optOuts: OptOutChannel[];
  /** Created by a messaging channel and not yet published: hidden from partners. */
  draft: boolean;
  mergedInto: string | null;
  /** Customers folded into this one (a merge repeated after a crash appends nothing). */
  absorbed: string[];
}

export const initialCustomer: CustomerState = {
  status: 'none',
  customerId: null,
  restaurantId: null,
  profile: null,
  blacklisted: false,
  optOuts: [],
  draft: false,
  mergedInto: null,
  absorbed: [],
};

const ordered = (channels: Iterable<OptOutChannel>): OptOutChannel[] =>
  (['EMAIL', 'WHATSAPP'] as const).filter((c) => new Set(channels).has(c));

export function evolveCustomer(state: CustomerState, recorded: RecordedEvent): CustomerState {
  const event = { type: recorded.type, data: recorded.data } as unknown as CustomerEvent;
  switch (event.type) {
    case 'CustomerCreated':
      return {
        ...initialCustomer,
        status: 'active',
        customerId: event.data.customer_id,
        restaurantId: event.data.restaurant_id,
        profile: event.data.profile,
        draft: event.data.draft,
      };
    case 'CustomerUpdated':
      return { ...state, profile: { ...(state.profile as CustomerProfile), ...event.data.changes } };
    case 'CustomerBlacklisted':
      return { ...state, blacklisted: true };
    case 'CustomerBlacklistCleared':
      return { ...state, blacklisted: false };
    case 'MarketingOptOutAdded':
      return { ...state, optOuts: ordered([...state.optOuts, event.data.channel]) };
    case 'MarketingOptOutRemoved':
      return { ...state, optOuts: state.optOuts.filter((c) => c !== event.data.channel) };
    case 'CustomerMerged':
      return {
        ...state,
        profile: { ...(state.profile as CustomerProfile), ...event.data.changes },
        optOuts: ordered(event.data.marketing_opt_outs),
        blacklisted: event.data.blacklisted,
        absorbed: [...state.absorbed, event.data.merged_customer_id],
      };
    case 'CustomerMergedInto':
      return { ...state, status: 'merged', mergedInto: event.data.into_customer_id };
    case 'CustomerDeleted':
      return { ...state, status: 'deleted' };
    case 'CustomerDraftFlagged':
      return { ...state, draft: true };
    case 'CustomerDraftPublished':
      return { ...state, draft: false };
    default:
      return state;
  }
}
