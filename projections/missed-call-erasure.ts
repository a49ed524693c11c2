// Erasure in the missed-call read models (docs/AUDIT.md, right to erasure): when a customer is deleted,
// the caller's number of their calls and the number, text and parameters of the messages sent to them
// (what src/privacy/seal.ts seals in missed-call events) are blanked at once, as a replay after the
// key's destruction shows them. The missed-calls projection calls this on CustomerDeleted; idempotent
// through each document's _pos.
import type { CallState } from '../commands/missed-calls/decide';
import type { DocumentStore } from '../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../src/ports/event-store';
import { MESSAGES, type MessageDoc, MISSED_CALLS, type MissedCallDoc } from './missed-calls';

/** The message fields that say who it was for, as they read once erased. */
export const ERASED_MESSAGE_FIELDS = { to: null, text: null, parameters: [] } as const;

/** A call's state with its caller's number and its message's personal fields erased. */
export function erasedCallState(state: CallState): CallState {
  return {
    ...state,
    caller_phone_number: null,
    message: state.message
      ? ({ ...state.message, ...ERASED_MESSAGE_FIELDS } as unknown as CallState['message'])
      : null,
  };
}

export async function eraseCustomerMissedCalls(event: RecordedEvent, docs: DocumentStore): Promise<void> {
  const { customer_id: customerId, restaurant_id: restaurantId } = event.data as {
    customer_id?: unknown;
    restaurant_id?: unknown;
  };
  if (typeof customerId !== 'string' || typeof restaurantId !== 'string') return;
  const pos = positionToString(event.position);
  const calls = docs.collection<MissedCallDoc>(MISSED_CALLS);
  const erased: string[] = [];
  // The calls the customer was matched to, and those whose number only they had (feature off).
  for (const doc of await calls.find({
    restaurant_id: restaurantId,
    $or: [{ customer_id: customerId }, { _caller_customer: customerId }],
  })) {
    erased.push(doc._id);
    if (doc._pos >= pos) continue;
    await calls.updateOne(
      { _id: doc._id, _pos: doc._pos },
      { $set: { caller_phone_number: null, _state: erasedCallState(doc._state), _pos: pos } },
    );
  }
  if (!erased.length) return;
  const messages = docs.collection<MessageDoc>(MESSAGES);
  for (const m of await messages.find({ restaurant_id: restaurantId, missed_call_id: { $in: erased } })) {
    if (m._pos >= pos) continue;
    await messages.updateOne({ _id: m._id, _pos: m._pos }, { $set: { ...ERASED_MESSAGE_FIELDS, _pos: pos } });
  }
}

/**
 * A call whose number no customer owned, erased by number (MissedCallCallerErased, appended when a
 * customer with that number is erased: src/privacy/number-keys.ts): its number and its message's
 * personal fields blanked, as a replay shows them.
 */
export async function eraseCallerOfCall(event: RecordedEvent, docs: DocumentStore): Promise<void> {
  const callId = (event.data as { missed_call_id?: unknown }).missed_call_id;
  if (typeof callId !== 'string') return;
  const pos = positionToString(event.position);
  const calls = docs.collection<MissedCallDoc>(MISSED_CALLS);
  const doc = await calls.findOne({ _id: callId });
  if (doc && doc._pos < pos)
    await calls.updateOne(
      { _id: doc._id, _pos: doc._pos },
      { $set: { caller_phone_number: null, _state: erasedCallState(doc._state), _pos: pos } },
    );
  const messages = docs.collection<MessageDoc>(MESSAGES);
  for (const m of await messages.find({ missed_call_id: callId })) {
    if (m._pos >= pos) continue;
    await messages.updateOne({ _id: m._id, _pos: m._pos }, { $set: { ...ERASED_MESSAGE_FIELDS, _pos: pos } });
  }
}
