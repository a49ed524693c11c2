// The rules of a missed-call follow-up, pure: the fold of a call's stream, the caller's cooldown, the
// template a call gets, and what a replayed external_call_id does.

import type { RecordedEvent } from '../../src/ports/event-store';
import type { MessageTemplate } from '../catalog/types';
import {
  CALLER_ERASED_EVENT,
  COOLDOWN_MS,
  type MissedCallEvent,
  type Outcome,
  type RecordOutcome,
  type SentMessage,
  type TemplateType,
} from './events';

export interface CallState {
  exists: boolean;
  id: string | null;
  restaurant_id: string | null;
  caller_phone_number: string | null;
  external_call_id: string | null;
  occurred_at: string | null;
  created_at: string | null;
  customer_id: string | null;
  customer_created: boolean;
  reservation_id: string | null;
  template_type: TemplateType | null;
  outcome: RecordOutcome;
  /** The last attempt asked of the provider, and when. */
  message: (SentMessage & { requested_at: string }) | null;
  attempts: number;
  /** Revision of the last event (for appends with an expected revision). */
  revision: number;
  updated_at: string | null;
}

export const initialCall: CallState = {
  exists: false,
  id: null,
  restaurant_id: null,
  caller_phone_number: null,
  external_call_id: null,
  occurred_at: null,
  created_at: null,
  customer_id: null,
  customer_created: false,
  reservation_id: null,
  template_type: null,
  outcome: 'PENDING',
  message: null,
  attempts: 0,
  revision: -1,
  updated_at: null,
};

export function evolveCall(state: CallState, recorded: RecordedEvent): CallState {
  const e = { type: recorded.type, data: recorded.data } as unknown as MissedCallEvent;
  // An erasure made the number unreadable (events.ts, CALLER_ERASED_EVENT): nothing else changes.
  if (recorded.type === CALLER_ERASED_EVENT)
    return {
      ...state,
      revision: recorded.revision,
      caller_phone_number: null,
      message: state.message
        ? ({ ...state.message, to: null, text: null, parameters: [] } as unknown as CallState['message'])
        : null,
    };
  const next = { ...state, revision: recorded.revision, updated_at: e.data.at };
  switch (e.type) {
    case 'MissedCallReported':
      return {
        ...next,
        exists: true,
        id: e.data.missed_call_id,
        restaurant_id: e.data.restaurant_id,
        caller_phone_number: e.data.caller_phone_number,
        external_call_id: e.data.external_call_id,
        occurred_at: e.data.occurred_at,
        created_at: e.data.at,
      };
    case 'MissedCallMatched':
      return {
        ...next,
        customer_id: e.data.customer_id,
        customer_created: e.data.customer_created,
        reservation_id: e.data.reservation_id,
      };
    case 'MissedCallSkipped':
      return { ...next, outcome: e.data.outcome };
    case 'MessageRequested': {
      // `erased`: the sealing layer's mark on an event read after its customer's erasure (not a field).
      const {
        missed_call_id: _m,
        restaurant_id: _r,
        at,
        erased: _x,
        ...message
      } = e.data as typeof e.data & {
        erased?: boolean;
      };
      return {
        ...next,
        outcome: 'PENDING',
        template_type: message.template_type,
        message: { ...message, requested_at: at },
        attempts: message.attempt,
      };
    }
    case 'MessageSent':
      return { ...next, outcome: 'SENT' };
    case 'MessageFailed':
      return { ...next, outcome: e.data.retryable ? 'FAILED' : (e.data.outcome as RecordOutcome) };
    case 'MessageUnconfirmed':
      return { ...next, outcome: 'SEND_UNCONFIRMED' };
    default:
      return state;
  }
}

/** Finished: nothing more will happen to the call (a replay answers SKIPPED_DUPLICATE). */
export const isFinal = (s: CallState) => s.exists && s.outcome !== 'PENDING' && s.outcome !== 'FAILED';

/** An attempt asked of the provider whose answer is not recorded. */
export const hasOpenAttempt = (s: CallState) => s.outcome === 'PENDING' && s.message !== null;

/**
 * How long a call may stay PENDING before a replay treats its processor as gone (a crash): longer than
 * any provider answer can take (the adapter's timeout plus its retries).
 */
export const IN_FLIGHT_MS = 60_000;

/** Older than IN_FLIGHT_MS on the service clock: whoever was working on it is gone. */
export const isStale = (at: string, now: Date) => now.getTime() - Date.parse(at) >= IN_FLIGHT_MS;

export type ReplayPlan =
  /** The call is finished: answer its record as a duplicate. */
  | { kind: 'duplicate' }
  /** Another request is processing it right now: wait for it. */
  | { kind: 'wait' }
  /** Carry on from where it stopped (nothing was asked of the provider yet, or the last attempt failed). */
  | { kind: 'resume' }
  /** An attempt was asked and its answer was never recorded, its processor gone. */
  | { kind: 'open_attempt' };

/** What a request replaying the external_call_id of `state` does, at `now`. Pure. */
export function planReplay(state: CallState, now: Date): ReplayPlan {
  if (isFinal(state)) return { kind: 'duplicate' };
  if (state.outcome === 'FAILED') return { kind: 'resume' };
  const last = state.updated_at ? Date.parse(state.updated_at) : Number.NEGATIVE_INFINITY;
  const stale = now.getTime() - last >= IN_FLIGHT_MS;
  if (!stale) return { kind: 'wait' };
  return hasOpenAttempt(state) ? { kind: 'open_attempt' } : { kind: 'resume' };
}

// --- the caller's cooldown (stream missed-call-caller-<restaurant>-<E.164>) ---

export interface CallerState {
  /** The call holding the caller's message slot, and since when; null when free. */
  holder: { missed_call_id: string; at: string } | null;
  revision: number;
}

export const initialCaller: CallerState = { holder: null, revision: -1 };

export function evolveCaller(state: CallerState, e: RecordedEvent): CallerState {
  const d = e.data as { missed_call_id: string; at: string };
  if (e.type === 'MessageSlotTaken')
    return { holder: { missed_call_id: d.missed_call_id, at: d.at }, revision: e.revision };
  if (e.type === 'MessageSlotFreed')
    return {
      holder: state.holder?.missed_call_id === d.missed_call_id ? null : state.holder,
      revision: e.revision,
    };
  return { ...state, revision: e.revision };
}

/**
 * The caller's slot as several streams hold it (the current period's first, then earlier ones): the
 * holder that took it last, with the first state's revision (the one a take appends to). Pure.
 */
export function latestHolder(states: readonly CallerState[]): CallerState {
  const [first = initialCaller, ...rest] = states;
  let holder = first.holder;
  for (const s of rest)
    if (s.holder && (holder === null || Date.parse(s.holder.at) > Date.parse(holder.at))) holder = s.holder;
  return { holder, revision: first.revision };
}

export type CooldownDecision =
  | { kind: 'take' }
  /** This call already holds the slot (a retry of the same call). */
  | { kind: 'held' }
  | { kind: 'cooldown'; until: string };

/**
 * A message to this caller is allowed unless another call took the slot less than COOLDOWN_MS ago
 * (on the service clock): at exactly COOLDOWN_MS the caller may be messaged again. `abandoned` names a
 * holder known to have died before asking for its message (it sent nothing): its slot is no cooldown.
 */
export function decideCooldown(
  state: CallerState,
  callId: string,
  now: Date,
  abandoned: string | null = null,
): CooldownDecision {
  const h = state.holder;
  if (!h) return { kind: 'take' };
  if (h.missed_call_id === callId) return { kind: 'held' };
  if (h.missed_call_id === abandoned) return { kind: 'take' };
  const until = Date.parse(h.at) + COOLDOWN_MS;
  return now.getTime() < until
    ? { kind: 'cooldown', until: new Date(until).toISOString() }
    : { kind: 'take' };
}

// --- which template ---

export type TemplateChoice =
  | { kind: 'template'; template: MessageTemplate; type: TemplateType }
  | { kind: 'none' };

const usable = (t: MessageTemplate, type: TemplateType) =>
  t.type === type && t.channel === 'WHATSAPP' && t.status === 'APPROVED';

/**
 * A guest with an upcoming reservation gets the restaurant's MISSED_CALL_WITH_RESERVATION template,
 * or, when it has none approved, the plain MISSED_CALL one; anyone else the MISSED_CALL template.
 * Only approved WhatsApp templates count; the first configured wins.
 */
export function chooseTemplate(
  templates: readonly MessageTemplate[],
  hasReservation: boolean,
): TemplateChoice {
  const order: TemplateType[] = hasReservation
    ? ['MISSED_CALL_WITH_RESERVATION', 'MISSED_CALL']
    : ['MISSED_CALL'];
  for (const type of order) {
    const template = templates.find((t) => usable(t, type));
    if (template) return { kind: 'template', template, type };
  }
  return { kind: 'none' };
}

/** The answer's outcome for a request that found the call finished under its external_call_id. */
export const replayOutcome = (): Outcome => 'SKIPPED_DUPLICATE';
