// Two read models of missed calls, folded with the write side's own evolve function:
//   `missed_calls`: one document per call (GET /missed-calls, `missed-calls list`);
//   `messages`: one document per attempt to send (`messages list`), whichever sender was asked.
// On CustomerDeleted, the caller's number and the messages' personal fields of that customer's calls
// are blanked (./missed-call-erasure.ts), as a replay shows them once the key is destroyed.
import { type CallState, evolveCall, initialCall } from '../commands/missed-calls/decide';
import {
  CALLER_ERASED_EVENT,
  MISSED_CALL_EVENT_TYPES,
  type SentMessage,
} from '../commands/missed-calls/events';
import { positionToString } from '../src/ports/event-store';
import type { Projection } from '../src/projection/projection';
import { eraseCallerOfCall, eraseCustomerMissedCalls } from './missed-call-erasure';

export const MISSED_CALLS = 'missed_calls';
export const MESSAGES = 'messages';

export interface MissedCallDoc extends Omit<CallState, 'exists' | 'id' | 'message' | 'revision'> {
  _id: string;
  restaurant_id: string;
  /** `<occurred_at UTC>|<id>`: the list order (newest first) in one field. */
  sort_key: string;
  message_id: string | null;
  /**
   * The customer whose key seals the caller's number (the matched one, or the one a call with the
   * feature off found by the number): whose erasure blanks it. Null when no customer had it.
   */
  _caller_customer: string | null;
  _state: CallState;
  _pos: string;
  [k: string]: unknown;
}

export interface MessageDoc extends Omit<SentMessage, 'parameters'> {
  _id: string;
  restaurant_id: string;
  missed_call_id: string;
  parameters: { name: string; value: string }[];
  status: 'REQUESTED' | 'SENT' | 'FAILED' | 'UNCONFIRMED';
  provider: string | null;
  provider_message_id: string | null;
  left_machine: boolean | null;
  error: string | null;
  requested_at: string;
  updated_at: string;
  _pos: string;
  [k: string]: unknown;
}

/**
 * Version 1 writes `missed_calls` and `messages`; version 2 (below, the same code) writes them with
 * `_v2`. Version 2 exists because a refusal recorded before 2026-11-27 (sixth pass) kept WhatsApp's
 * own error text, which may echo the number or the message, and a store built before (MongoDB keeps
 * its read models across restarts) holds it in `messages.error` even once the customer is erased;
 * the log now reads it summarised (commands/missed-calls/legacy-provider-errors.ts), so version 2,
 * rebuilt from the whole log beside version 1, holds only the summary. An embedded store is rebuilt at
 * every start: version 2 is active at once there. Remove version 1 once every store has switched.
 */
export const missedCallsProjectionV1: Projection = {
  name: 'missed-calls',
  collections: [MISSED_CALLS, MESSAGES],
  eventTypes: [...MISSED_CALL_EVENT_TYPES, CALLER_ERASED_EVENT, 'CustomerDeleted'],
  async setup(docs) {
    await docs
      .collection(MISSED_CALLS)
      .createIndex({ keys: { restaurant_id: 1, sort_key: -1 }, name: 'restaurant_sort' });
    await docs
      .collection(MESSAGES)
      .createIndex({ keys: { restaurant_id: 1, requested_at: -1 }, name: 'restaurant_requested' });
  },
  async apply(event, docs) {
    if (event.type === 'CustomerDeleted') return eraseCustomerMissedCalls(event, docs);
    if (event.type === CALLER_ERASED_EVENT) return eraseCallerOfCall(event, docs);
    const d = event.data as { missed_call_id: string; restaurant_id: string; at: string };
    const pos = positionToString(event.position);
    const calls = docs.collection<MissedCallDoc>(MISSED_CALLS);
    const current = await calls.findOne({ _id: d.missed_call_id });
    if (!current || current._pos < pos) {
      const state = evolveCall(current?._state ?? initialCall, event);
      const { exists: _e, id: _i, message, revision: _r, ...fields } = state;
      const reportedFor =
        event.type === 'MissedCallReported' && typeof event.data.customer_id === 'string'
          ? event.data.customer_id
          : null;
      await calls.replaceOne(
        { _id: d.missed_call_id },
        {
          ...fields,
          _id: d.missed_call_id,
          restaurant_id: d.restaurant_id,
          sort_key: `${new Date(state.occurred_at ?? d.at).toISOString()}|${d.missed_call_id}`,
          message_id: message?.message_id ?? null,
          _caller_customer: reportedFor ?? current?._caller_customer ?? state.customer_id ?? null,
          _state: state,
          _pos: pos,
        },
        { upsert: true },
      );
    }
    const messages = docs.collection<MessageDoc>(MESSAGES);
    const m = event.data as Record<string, unknown>;
    if (event.type === 'MessageRequested') {
      // `erased` is the sealing layer's mark on an event of an erased customer, not a message field.
      const {
        at,
        erased: _x,
        ...rest
      } = m as unknown as SentMessage & {
        erased?: boolean;
        at: string;
        missed_call_id: string;
        restaurant_id: string;
      };
      const existing = await messages.findOne({ _id: rest.message_id });
      if (existing && existing._pos >= pos) return;
      await messages.replaceOne(
        { _id: rest.message_id },
        {
          ...rest,
          _id: rest.message_id,
          status: 'REQUESTED',
          provider: null,
          provider_message_id: null,
          left_machine: null,
          error: null,
          requested_at: at,
          updated_at: at,
          _pos: pos,
        },
        { upsert: true },
      );
      return;
    }
    const set: Partial<MessageDoc> | null =
      event.type === 'MessageSent'
        ? {
            status: 'SENT',
            provider: m.provider as string,
            provider_message_id: m.provider_message_id as string,
            left_machine: m.left_machine as boolean,
          }
        : event.type === 'MessageFailed'
          ? { status: 'FAILED', error: `${m.kind}${m.code ? ` ${m.code}` : ''}: ${m.error}` }
          : event.type === 'MessageUnconfirmed'
            ? { status: 'UNCONFIRMED', error: m.reason as string }
            : null;
    if (!set) return;
    await messages.updateOne(
      { _id: m.message_id as string, _pos: { $lt: pos } },
      { $set: { ...set, updated_at: d.at, _pos: pos } },
    );
  },
};

/** The served version (see version 1 above). */
export const missedCallsProjection: Projection = { ...missedCallsProjectionV1, version: 2 };
