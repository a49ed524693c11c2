// POST /missed-calls, the write side: record the call, match or create the caller, pick and render
// the template, hold the caller's cooldown slot, record "message requested", send, record the answer.
//
// Every append to a call's stream carries the expected revision, so two requests working on the same
// call (a replayed external_call_id) never both ask the provider: the one that loses the append
// re-reads the call and answers from it. A message is asked of the provider only after
// MessageRequested is durable; the answer is recorded after. A process that dies in between leaves an
// open attempt: a later replay re-sends it only through an idempotent sender (the outbox, keyed by
// the attempt), and otherwise records MessageUnconfirmed and never sends it again.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { RESERVATIONS, type ReservationDoc } from '../../projections/reservations';
import { getCatalog } from '../../queries/catalog';
import { findMatch } from '../../queries/customers';
import { claim } from '../../src/core/claims';
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError, conflict } from '../../src/core/errors';
import { newId } from '../../src/core/ids';
import type { WriteDeps } from '../../src/core/write-deps';
import type { Logger } from '../../src/logger';
import type { DocumentStore } from '../../src/ports/document-store';
import { type NewEvent, NO_STREAM, WrongExpectedRevisionError } from '../../src/ports/event-store';
import { FINAL_REFUSALS, type MessageSender, type SendResult } from '../../src/ports/message-sender';
import type { CallerIds } from '../../src/privacy/caller-ids';
import { normalizePhone } from '../customers/contact';
import { followMerges } from '../customers/follow-merges';
import { createCustomer } from '../customers/handler';
import { type KeyWaitDeps, matchingInTurn } from '../customers/upsert';
import {
  type CallerState,
  type CallState,
  chooseTemplate,
  decideCooldown,
  evolveCall,
  evolveCaller,
  initialCall,
  initialCaller,
  isFinal,
  isStale,
  latestHolder,
  planReplay,
} from './decide';
import {
  callerStream,
  externalCallClaimStream,
  legacyExternalCallClaimStream,
  type MissedCallEvent,
  missedCallStream,
  type Outcome,
  type SkipReason,
} from './events';
import { refuseUnusableCall } from './input';
import { loadSettings, tooOldForFollowUp } from './settings';
import { renderTemplate, templateLanguage } from './template';

export const MISSED_CALLS_FEATURE = 'MISSED_CALLS';

/** What the handler needs of the restaurant (the authenticated one). */
export interface CallRestaurant {
  _id: string;
  name: string;
  country_code: string | null;
  timezone: string;
  features: readonly string[];
}

export interface MissedCallDeps extends WriteDeps, KeyWaitDeps {
  docs: DocumentStore;
  sender: MessageSender;
  logger?: Pick<Logger, 'info' | 'warn'>;
  /** Returns once the read models include `position` (the runtime's read-your-writes). */
  settle(position: bigint | null): Promise<void>;
  /**
   * What names a caller in their cooldown streams' ids: keyed hashes of the E.164 number with keys
   * that are destroyed once their period is over (`callerIdsFrom(rt.keys)`, src/privacy/caller-ids.ts),
   * never the number itself.
   */
  callers: CallerIds;
}

export interface ReportInput {
  caller_phone_number: string;
  external_call_id?: string;
  occurred_at?: string;
}

export interface Failure {
  reason:
    | 'PROVIDER_RATE_LIMITED'
    | 'PROVIDER_AUTH_FAILED'
    | 'PROVIDER_NOT_CONFIGURED'
    | 'PROVIDER_UNAVAILABLE';
  message: string;
  code: string | null;
}

export interface ReportResult {
  call: CallState;
  /** The answer's outcome (SKIPPED_DUPLICATE for a finished call replayed); null when the send failed. */
  outcome: Outcome | null;
  /** Set when the provider refused or could not be reached: answer 502, a retry may succeed. */
  failure: Failure | null;
  position: bigint | null;
}

/** Statuses of a reservation still to come (not canceled, rejected, seated, finished or no-show). */
export const UPCOMING_STATUSES = [
  'PENDING',
  'PENDING_PAYMENT',
  'CONFIRMED',
  'CONFIRMED_PENDING_PAYMENT',
  'MANUALLY_CONFIRMED',
  'DOUBLE_CONFIRMED',
] as const;

/** How long a replay waits for the request processing the same call before answering 409. */
const WAIT_FOR_OTHER_MS = 5_000;
const WAIT_STEP_MS = 50;

// Within one process, calls from the same number are matched one at a time, in the queue POST
// /customers and inline reservation customers take for that phone key (matchingInTurn), so two
// simultaneous calls from an unknown number, or a call and a POST /customers, create one customer. The
// cooldown itself is decided by the caller's stream, whatever the number of processes.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Reload extends Error {}

export async function loadCall(deps: WriteDeps, id: string): Promise<CallState> {
  const events = await deps.events.readStream(missedCallStream(id));
  return events.reduce(evolveCall, initialCall);
}

/**
 * Where the call's stream ends in the log. A duplicate answers the call as another request wrote it,
 * maybe a moment ago in this process: the read models must reach that before the answer is read.
 */
async function callHead(deps: WriteDeps, id: string): Promise<bigint | null> {
  const [last] = await deps.events.readStream(missedCallStream(id), { direction: 'backwards', limit: 1 });
  return last?.position ?? null;
}

export async function reportMissedCall(
  deps: MissedCallDeps,
  restaurant: CallRestaurant,
  input: ReportInput,
  meta: CommandMeta,
): Promise<ReportResult> {
  refuseUnusableCall(input, restaurant.country_code, deps.clock.now().getTime());
  const phone = normalizePhone(input.caller_phone_number, restaurant.country_code).phone_number;
  const fresh = newId('mc');
  const m: CommandMeta = { ...meta, restaurant_id: restaurant._id };
  let callId = fresh;
  let claimedAt: string | null = null;
  if (input.external_call_id !== undefined) {
    const earlier = await legacyClaimOwner(deps, restaurant._id, input.external_call_id);
    const stream = externalCallClaimStream(restaurant._id, input.external_call_id);
    const owner = earlier ?? (await claimOwner(deps, stream, fresh, m));
    callId = owner.owner;
    claimedAt = owner.at;
  }
  const occurredAt = input.occurred_at
    ? new Date(Date.parse(input.occurred_at)).toISOString()
    : deps.clock.now().toISOString();
  const reported = {
    missed_call_id: callId,
    restaurant_id: restaurant._id,
    caller_phone_number: phone,
    external_call_id: input.external_call_id ?? null,
    occurred_at: occurredAt,
  };
  const check: ReplayCheck = { reported, occurredGiven: input.occurred_at !== undefined };
  if (callId === fresh) return advance(deps, restaurant, callId, check, m);
  return replay(deps, restaurant, callId, check, claimedAt, m);
}

/**
 * A claim this restaurant made under the former, ambiguous stream name (events.ts). Another
 * restaurant's claim there is not this restaurant's call.
 */
async function legacyClaimOwner(
  deps: WriteDeps,
  restaurantId: string,
  externalCallId: string,
): Promise<{ owner: string; at: string | null } | null> {
  const legacy = legacyExternalCallClaimStream(restaurantId, externalCallId);
  const [last] = await deps.events.readStream(legacy, { direction: 'backwards', limit: 1 });
  const d = last?.data as { owner?: string; at?: string } | undefined;
  if (last?.type !== 'Claimed' || !d?.owner || last.metadata.restaurant_id !== restaurantId) return null;
  return { owner: d.owner, at: d.at ?? null };
}

/** Takes the external_call_id for `candidate`, or names the call that holds it. */
async function claimOwner(
  deps: WriteDeps,
  stream: string,
  candidate: string,
  meta: CommandMeta,
): Promise<{ owner: string; at: string | null }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await claim(deps, stream, candidate, meta, 'external_call_id');
      return { owner: candidate, at: null };
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
      const [last] = await deps.events.readStream(stream, { direction: 'backwards', limit: 1 });
      const d = last?.data as { owner?: string; at?: string } | undefined;
      if (last?.type === 'Claimed' && d?.owner) return { owner: d.owner, at: d.at ?? null };
    }
  }
  throw new ApiError(409, 'RESOURCE_CONFLICT', 'this external_call_id is being claimed concurrently; retry');
}

type Reported = Omit<Extract<MissedCallEvent, { type: 'MissedCallReported' }>['data'], 'at'>;

/** What a request reported, and whether its occurred_at was given (else it is "now", never compared). */
interface ReplayCheck {
  reported: Reported;
  occurredGiven: boolean;
}

/**
 * A request for an external_call_id another call holds is a replay of that call only if it reports
 * the same call: the same number (both read to E.164 with the restaurant's country) and, when it gives
 * one, the same occurred_at instant. Anything else is another call under a reused id: 409, naming the
 * fields, rather than answering the first call's record as SKIPPED_DUPLICATE (the partner would never
 * learn its second call was dropped). The numbers compared are the log's, read unsealed; once the
 * caller was erased the log holds none (nor any hash of it, by design: docs/AUDIT.md), and only
 * occurred_at can tell. The answer names neither number.
 */
function assertSameCall(state: CallState, callId: string, check: ReplayCheck): void {
  if (!state.exists) return;
  const { reported, occurredGiven } = check;
  const fields: string[] = [];
  if (state.caller_phone_number !== null && state.caller_phone_number !== reported.caller_phone_number)
    fields.push('caller_phone_number');
  if (
    occurredGiven &&
    state.occurred_at !== null &&
    Date.parse(state.occurred_at) !== Date.parse(reported.occurred_at)
  )
    fields.push('occurred_at');
  if (fields.length)
    throw conflict(
      `external_call_id is already held by another call (a different ${fields.join(' and ')}): a replay repeats the call it replays; give each call an id of its own`,
      { external_call_id: reported.external_call_id, missed_call_id: callId, fields },
    );
}

/** A request for an external_call_id another call holds: answer it, wait for it, or carry it on. */
async function replay(
  deps: MissedCallDeps,
  restaurant: CallRestaurant,
  callId: string,
  check: ReplayCheck,
  claimedAt: string | null,
  meta: CommandMeta,
): Promise<ReportResult> {
  const deadline = Date.now() + WAIT_FOR_OTHER_MS;
  for (;;) {
    const state = await loadCall(deps, callId);
    assertSameCall(state, callId, check);
    // Claimed and never reported: its request is still starting, or died before reporting.
    const probe = state.exists ? state : { ...state, updated_at: claimedAt };
    const plan = planReplay(probe, deps.clock.now());
    if (plan.kind === 'duplicate')
      return {
        call: state,
        outcome: 'SKIPPED_DUPLICATE',
        failure: null,
        position: await callHead(deps, callId),
      };
    if (plan.kind === 'resume') return advance(deps, restaurant, callId, check, meta);
    if (plan.kind === 'open_attempt') return settleOpenAttempt(deps, restaurant, state, meta);
    if (Date.now() >= deadline)
      throw new ApiError(
        409,
        'RESOURCE_CONFLICT',
        'Another request is processing this external_call_id; retry in a moment',
        { missed_call_id: callId },
      );
    await sleep(WAIT_STEP_MS);
  }
}

/** Appends to the call's stream at the revision `state` was read at; a lost race means reload. */
async function appendCall(
  deps: WriteDeps,
  state: CallState,
  events: NewEvent[],
  meta: CommandMeta,
): Promise<{ state: CallState; position: bigint }> {
  const stream = missedCallStream(state.id as string);
  try {
    const r = await deps.events.append(
      stream,
      events.map((e) => ({ ...e, metadata: meta })),
      state.revision < 0 ? NO_STREAM : state.revision,
    );
    const next = await loadCall(deps, state.id as string);
    return { state: next, position: r.position };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) throw new Reload();
    throw err;
  }
}

/** Runs the call forward from wherever it stands. A lost race on its stream starts over from the log. */
async function advance(
  deps: MissedCallDeps,
  restaurant: CallRestaurant,
  callId: string,
  check: ReplayCheck,
  meta: CommandMeta,
): Promise<ReportResult> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await step(deps, restaurant, callId, check.reported, meta);
    } catch (err) {
      if (!(err instanceof Reload)) throw err;
      const state = await loadCall(deps, callId);
      // Another request may have reported the call meanwhile (a claim whose request was given up).
      assertSameCall(state, callId, check);
      const plan = planReplay(state, deps.clock.now());
      // Another request moved the call on: answer as a replay does.
      if (plan.kind !== 'resume') return replay(deps, restaurant, callId, check, state.updated_at, meta);
    }
  }
  throw new ApiError(409, 'RESOURCE_CONFLICT', 'this missed call is being processed concurrently; retry');
}

async function step(
  deps: MissedCallDeps,
  restaurant: CallRestaurant,
  callId: string,
  reported: Reported,
  meta: CommandMeta,
): Promise<ReportResult> {
  const at = () => deps.clock.now().toISOString();
  const base = () => ({ missed_call_id: callId, restaurant_id: restaurant._id, at: at() });
  // A call not reported yet has no id in its state: name it, so the first append goes to its stream.
  let state: CallState = { ...(await loadCall(deps, callId)), id: callId };
  let position: bigint | null = null;
  // Events decided but not yet appended: the report and the match go out with the call's next decision
  // (a skip, or the message requested), one durable append instead of three.
  let pending: NewEvent[] = [];
  const write = async (events: NewEvent[]) => {
    const r = await appendCall(deps, state, [...pending, ...events], meta);
    pending = [];
    state = r.state;
    position = r.position;
  };
  const skip = async (outcome: SkipReason, detail: string | null = null): Promise<ReportResult> => {
    await write([{ type: 'MissedCallSkipped', data: { ...base(), outcome, detail } }]);
    return { call: state, outcome, failure: null, position };
  };
  if (!state.exists) pending.push({ type: 'MissedCallReported', data: { ...reported, at: at() } });
  else if (isFinal(state))
    return {
      call: state,
      outcome: 'SKIPPED_DUPLICATE',
      failure: null,
      position: await callHead(deps, callId),
    };
  // The caller's number as the log has it; null once their customer was erased (a retry then goes on
  // with the number the retry reports).
  const phone = state.caller_phone_number ?? reported.caller_phone_number;
  /** The report, still to append, is sealed with this customer's key (events.ts, SealedFor). */
  const sealReportFor = (customerId: string) => {
    pending = pending.map((e) =>
      e.type === 'MissedCallReported' ? { ...e, data: { ...e.data, customer_id: customerId } } : e,
    );
  };

  if (!restaurant.features.includes(MISSED_CALLS_FEATURE)) {
    // Nobody is matched or created; a customer who already has the number still owns it: their key
    // seals it, so erasing them erases it here too. A number nobody has is sealed by the sealing layer
    // with a key of its own, which erasing a later customer with that number destroys
    // (src/privacy/number-keys.ts).
    if (pending.length) {
      const known = await findMatch(deps.docs, restaurant, { phone_number: phone }, ['phone']);
      if (known) sealReportFor(known.doc._id);
    }
    return skip('SKIPPED_FEATURE_DISABLED');
  }

  // A call reported (or retried) long after it rang: recorded, but a follow-up days later is not one.
  // Nobody is matched or created, as with the feature off.
  const settings = await loadSettings(deps, restaurant._id);
  const occurredAt = state.occurred_at ?? reported.occurred_at;
  if (tooOldForFollowUp(occurredAt, deps.clock.now(), settings.follow_up_max_age_hours)) {
    if (pending.length && state.customer_id === null) {
      const known = await findMatch(deps.docs, restaurant, { phone_number: phone }, ['phone']);
      if (known) sealReportFor(known.doc._id);
    }
    return skip(
      'SKIPPED_TOO_OLD',
      `the call occurred more than ${settings.follow_up_max_age_hours} h ago (follow_up_max_age_hours)`,
    );
  }

  let customerId = state.customer_id;
  let customerCreated = state.customer_created;
  let reservationId = state.reservation_id;
  if (customerId === null) {
    const found = await matchingInTurn(deps, restaurant, { phone_number: phone }, ['phone'], false, () =>
      matchOrCreateCustomer(deps, restaurant, phone, meta),
    );
    customerId = found.customerId;
    customerCreated = found.created;
    reservationId = await nextReservationId(deps, restaurant._id, customerId);
    sealReportFor(customerId);
    pending.push({
      type: 'MissedCallMatched',
      data: {
        ...base(),
        customer_id: customerId,
        customer_created: customerCreated,
        reservation_id: reservationId,
      },
    });
  }
  // A retry after the call's customer was merged into another: the surviving record is the guest now
  // (their opt-outs, blacklist and erasure are the ones to honour, not the closed record's).
  const customer = await survivingCustomer(deps, customerId);
  // A retry after the call's customer was deleted (erased): nothing is sent to someone forgotten.
  if (customer.status === 'deleted') return skip('SKIPPED_CUSTOMER_DELETED');
  if (customer.blacklisted) return skip('SKIPPED_BLACKLISTED');
  if (customer.optOuts.includes('WHATSAPP')) return skip('SKIPPED_OPTED_OUT');

  const catalog = await getCatalog(deps.docs, restaurant._id);
  const reservation = reservationId ? await upcomingReservation(deps, restaurant._id, reservationId) : null;
  const choice = chooseTemplate(catalog.message_templates, reservation !== null);
  if (choice.kind === 'none')
    return skip('SKIPPED_NO_TEMPLATE', 'no approved WhatsApp template of this type');
  const language = templateLanguage(choice.template.language, restaurant.country_code);
  const rendered = renderTemplate({
    body: choice.template.body,
    language,
    // The guest as they stand now: a record the call created and that was since merged into a named
    // guest is greeted by the survivor's name (the survivor was not created by the call).
    guestName:
      (customerCreated && customer.customerId === customerId) ||
      isPlaceholderName(customer.profile?.name, phone)
        ? null
        : (customer.profile?.name ?? null),
    restaurantName: restaurant.name,
    timezone: restaurant.timezone,
    reservationStart: choice.type === 'MISSED_CALL_WITH_RESERVATION' ? (reservation?.start_at ?? null) : null,
    bookingLink: settings.booking_url,
  });
  if (rendered.missing.length)
    return skip(
      'SKIPPED_NO_TEMPLATE',
      `template ${choice.template.id} needs ${rendered.missing.join(', ')}, which this restaurant does not provide`,
    );

  // The caller's slot: at most one message per caller per cooldown, decided on the caller's streams
  // (src/privacy/caller-ids.ts: this period's, where the slot is taken, and the earlier ones still read).
  const slots = await deps.callers.slots(restaurant._id, phone, deps.clock.now());
  const earlier = await Promise.all(
    slots.earlier.map((id) => foldCaller(deps, callerStream(restaurant._id, id))),
  );
  const matched = customerId;
  const takeSlot = (stream: string, alsoEarlier: readonly CallerState[], abandoned: string | null) =>
    runCommand(deps.events, {
      stream,
      initial: initialCaller,
      evolve: evolveCaller,
      decide: (s) => {
        const d = decideCooldown(latestHolder([s, ...alsoEarlier]), callId, deps.clock.now(), abandoned);
        return d.kind === 'take'
          ? [{ type: 'MessageSlotTaken', data: { ...base(), caller: phone, customer_id: matched } }]
          : [];
      },
      metadata: meta,
      clock: deps.clock,
    });
  const current = callerStream(restaurant._id, slots.take);
  let holder = latestHolder([(await takeSlot(current, earlier, null)).state, ...earlier]).holder;
  // A holder that never asked for its message long after taking the slot died in between: nothing was
  // sent, so the slot is not a cooldown.
  if (holder && holder.missed_call_id !== callId && isStale(holder.at, deps.clock.now())) {
    const other = await loadCall(deps, holder.missed_call_id);
    if (other.message === null)
      holder = latestHolder([
        (await takeSlot(current, earlier, holder.missed_call_id)).state,
        ...earlier,
      ]).holder;
  }
  if (holder?.missed_call_id !== callId) return skip('SKIPPED_COOLDOWN');
  // Just before the period turns, the slot is claimed in the next period's stream too: a call from the
  // same number just after the turn takes its slot there, so exactly one of the two gets it.
  if (slots.next !== null) {
    const claimed = await takeSlot(callerStream(restaurant._id, slots.next), [], null);
    if (claimed.state.holder?.missed_call_id !== callId) {
      await freeSlot(deps, restaurant._id, callId, [slots.take, ...slots.earlier], meta);
      return skip('SKIPPED_COOLDOWN');
    }
  }

  const attempt = state.attempts + 1;
  const idempotencyKey = `${callId}.${attempt}`;
  await write([
    {
      type: 'MessageRequested',
      data: {
        ...base(),
        message_id: `msg_${callId.replace(/^mc_/, '')}_${attempt}`,
        attempt,
        idempotency_key: idempotencyKey,
        to: phone,
        template_id: choice.template.id,
        template_name: choice.template.name ?? choice.template.id,
        template_type: choice.type,
        language,
        form: rendered.form,
        parameters: rendered.parameters,
        text: rendered.text,
        sender: deps.sender.name,
        customer_id: customerId,
      },
    },
  ]);
  return send(deps, restaurant, state, settings.whatsapp_phone_number_id, meta);
}

/** Asks the provider for the call's open attempt and records its answer. */
async function send(
  deps: MissedCallDeps,
  restaurant: CallRestaurant,
  requested: CallState,
  fromPhoneNumberId: string | null,
  meta: CommandMeta,
): Promise<ReportResult> {
  const message = requested.message;
  if (!message) throw new Error('no message to send');
  const result: SendResult = await deps.sender.send({
    idempotency_key: message.idempotency_key,
    restaurant_id: restaurant._id,
    from_phone_number_id: fromPhoneNumberId,
    to: message.to,
    template: {
      name: message.template_name,
      language: message.language,
      form: message.form,
      parameters: message.parameters,
    },
    text: message.text,
    customer_id: requested.customer_id,
  });
  return recordResult(deps, restaurant, requested, result, meta);
}

async function recordResult(
  deps: MissedCallDeps,
  restaurant: CallRestaurant,
  requested: CallState,
  result: SendResult,
  meta: CommandMeta,
): Promise<ReportResult> {
  const message = requested.message as NonNullable<CallState['message']>;
  const base = {
    missed_call_id: requested.id as string,
    restaurant_id: restaurant._id,
    at: deps.clock.now().toISOString(),
    message_id: message.message_id,
    attempt: message.attempt,
  };
  if (result.status === 'accepted') {
    const r = await appendCall(
      deps,
      requested,
      [
        {
          type: 'MessageSent',
          data: {
            ...base,
            provider: result.provider,
            provider_message_id: result.provider_message_id,
            left_machine: result.left_machine,
          },
        },
      ],
      meta,
    );
    return { call: r.state, outcome: 'SENT', failure: null, position: r.position };
  }
  if (result.status === 'unknown') {
    deps.logger?.warn(
      { missed_call_id: requested.id, attempt: message.attempt },
      'missed call: the provider did not answer; the message may have left and will not be sent again',
    );
    const r = await appendCall(
      deps,
      requested,
      [{ type: 'MessageUnconfirmed', data: { ...base, reason: result.message } }],
      meta,
    );
    return { call: r.state, outcome: 'SEND_UNCONFIRMED', failure: null, position: r.position };
  }
  const final = FINAL_REFUSALS.includes(result.kind);
  const outcome: Outcome | null = final
    ? result.kind === 'invalid_recipient'
      ? 'SKIPPED_INVALID_RECIPIENT'
      : 'SKIPPED_TEMPLATE_UNAVAILABLE'
    : null;
  const r = await appendCall(
    deps,
    requested,
    [
      {
        type: 'MessageFailed',
        data: {
          ...base,
          kind: result.kind,
          code: result.code,
          error: result.message,
          retryable: !final,
          outcome,
        },
      },
    ],
    meta,
  );
  // Nothing was sent: the caller's slot is free again (a retry takes it anew, unless another call did).
  // (A number erased meanwhile names no stream: its slot then lapses with the cooldown.)
  const to = message.to ?? requested.caller_phone_number;
  if (to && requested.id)
    await freeSlot(
      deps,
      restaurant._id,
      requested.id,
      await deps.callers.held(restaurant._id, to, deps.clock.now()),
      meta,
    );
  if (final) return { call: r.state, outcome, failure: null, position: r.position };
  const reason: Failure['reason'] =
    result.kind === 'rate_limited'
      ? 'PROVIDER_RATE_LIMITED'
      : result.kind === 'auth'
        ? 'PROVIDER_AUTH_FAILED'
        : result.kind === 'not_configured'
          ? 'PROVIDER_NOT_CONFIGURED'
          : 'PROVIDER_UNAVAILABLE';
  return {
    call: r.state,
    outcome: null,
    failure: { reason, message: result.message, code: result.code },
    position: r.position,
  };
}

/** An attempt asked of the provider whose answer was never recorded (its process died). */
async function settleOpenAttempt(
  deps: MissedCallDeps,
  restaurant: CallRestaurant,
  state: CallState,
  meta: CommandMeta,
): Promise<ReportResult> {
  try {
    if (deps.sender.idempotent) {
      // The same key again: the sender sends it once, whoever asked first.
      const settings = await loadSettings(deps, restaurant._id);
      return await send(deps, restaurant, state, settings.whatsapp_phone_number_id, meta);
    }
    deps.logger?.warn(
      { missed_call_id: state.id, attempt: state.message?.attempt },
      'missed call: an attempt was asked of the provider and its answer never recorded; it is not sent again',
    );
    const r = await appendCall(
      deps,
      state,
      [
        {
          type: 'MessageUnconfirmed',
          data: {
            missed_call_id: state.id as string,
            restaurant_id: restaurant._id,
            at: deps.clock.now().toISOString(),
            message_id: state.message?.message_id as string,
            attempt: state.message?.attempt as number,
            reason: 'the process stopped between asking the provider and recording its answer',
          },
        },
      ],
      meta,
    );
    return { call: r.state, outcome: 'SKIPPED_DUPLICATE', failure: null, position: r.position };
  } catch (err) {
    if (!(err instanceof Reload)) throw err;
    const now = await loadCall(deps, state.id as string);
    return {
      call: now,
      outcome: 'SKIPPED_DUPLICATE',
      failure: null,
      position: await callHead(deps, state.id as string),
    };
  }
}

/**
 * The customer as the guest stands now: a record merged into another is followed to the one that
 * absorbed it (merges may chain; `followMerges` bounds the walk, as a cycle cannot be written but
 * must not hang).
 */
async function survivingCustomer(deps: WriteDeps, customerId: string) {
  return (await followMerges(deps, customerId)).state;
}

/** The caller's slot as one of their streams holds it. */
async function foldCaller(deps: MissedCallDeps, stream: string): Promise<CallerState> {
  let state = initialCaller;
  for (const e of await deps.events.readStream(stream)) state = evolveCaller(state, e);
  return state;
}

/** Frees the slot `callId` holds in any of the caller's streams `ids` (nothing where another call holds it). */
async function freeSlot(
  deps: MissedCallDeps,
  restaurantId: string,
  callId: string,
  ids: readonly string[],
  meta: CommandMeta,
): Promise<void> {
  for (const id of ids)
    await runCommand(deps.events, {
      stream: callerStream(restaurantId, id),
      initial: initialCaller,
      evolve: evolveCaller,
      decide: (s) =>
        s.holder?.missed_call_id === callId
          ? [
              {
                type: 'MessageSlotFreed',
                data: {
                  missed_call_id: callId,
                  restaurant_id: restaurantId,
                  at: deps.clock.now().toISOString(),
                },
              },
            ]
          : [],
      metadata: meta,
      clock: deps.clock,
    });
}

async function matchOrCreateCustomer(
  deps: MissedCallDeps,
  restaurant: CallRestaurant,
  phone: string,
  meta: CommandMeta,
): Promise<{ customerId: string; created: boolean; position: bigint | null }> {
  const match = await findMatch(deps.docs, restaurant, { phone_number: phone }, ['phone']);
  if (match) return { customerId: match.doc._id, created: false, position: null };
  const created = await createCustomer(
    deps,
    { _id: restaurant._id, country_code: restaurant.country_code, customer_matching: true },
    { name: displayNumber(phone), phone_number: phone },
    meta,
    { origin: 'MISSED_CALL' },
  );
  // The next call from this number must find this customer: matchingInTurn settles on its position.
  return { customerId: created.customerId, created: true, position: created.position };
}

/** How a customer created from a call is named: the number, as people write it. */
export function displayNumber(e164: string): string {
  return parsePhoneNumberFromString(e164)?.formatInternational() ?? e164;
}

/** A customer still named after their number (created by a call) has no name to greet them by. */
const isPlaceholderName = (name: string | undefined, phone: string) =>
  name === undefined || name === displayNumber(phone) || name.replace(/\s+/g, '') === phone;

async function nextReservationId(
  deps: MissedCallDeps,
  restaurantId: string,
  customerId: string,
): Promise<string | null> {
  const [next] = await deps.docs.collection<ReservationDoc>(RESERVATIONS).find(
    {
      restaurant_id: restaurantId,
      customer_id: customerId,
      status: { $in: [...UPCOMING_STATUSES] },
      start_at_utc: { $gte: deps.clock.now().toISOString() },
    },
    { sort: { start_at_utc: 1 }, limit: 1 },
  );
  return next?._id ?? null;
}

/** The call's reservation, while it is still to come (a retry after it was canceled sends the plain template). */
async function upcomingReservation(deps: MissedCallDeps, restaurantId: string, id: string) {
  return deps.docs.collection<ReservationDoc>(RESERVATIONS).findOne({
    _id: id,
    restaurant_id: restaurantId,
    status: { $in: [...UPCOMING_STATUSES] },
    start_at_utc: { $gte: deps.clock.now().toISOString() },
  });
}
