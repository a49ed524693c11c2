// PATCH /reservations/{id} (spec §4). Omitted fields stay as they are. Order, so that a refusal
// changes nothing (no seating, no external_id, no customer), the seating a reservation shows is held at
// every instant (a crash between any two appends included), and a crash leaves nothing held for good:
//   1. load; POS locks on what the request changes (409); references, the discount's rules; customer
//      checks (no writes);
//   2. when time, party, shift, room or tables change: hold the new seating as a *pending move*
//      (SeatingMoveHeld, on the day it moves to) beside the reservation's own seating, which keeps
//      its tables: others see both as taken;
//   3. claim a new external_id; append ReservationUpdated (every change but a customer to write) with
//      the revision loaded in 1. If someone else changed the reservation meanwhile (another process:
//      within this one the commands of a reservation queue), drop our move and start again from 1
//      with the new state. No customer was written yet, so a refusal then leaves none behind;
//   4. the reservation's change has landed: confirm the move (SeatingMoveConfirmed: its seating
//      replaces the old one that day); a move to another day then releases the old day; an old
//      external_id is released. Before the customer, which none of it needs: a customer that cannot
//      be written then (an error, a crash) leaves the seating and external_id settled;
//   5. write the customer (update the linked one, or find or create one for inline details), then
//      connect it with the guest text the request sets, sealed with its key (decideLinkCustomer:
//      never refused; only a change of customer landing since stands instead). Until 3 lands the
//      request could be refused anywhere and nothing of the customer's was written; from then on
//      nothing refuses it. When 3 appended nothing, the customer is the first write: a reservation
//      changed since 1 (read again just before it) starts the request again from 1, as in 3.
//   A refusal in 3 drops the pending move (SeatingMoveDropped): nothing was given up, so nothing
//   has to be taken back. A crash is settled by the scheduler (repair.ts): a pending move equal to
//   what the reservation shows is confirmed, any other is dropped; a reservation is never moved.
import { loadStream, runOnStream } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError, BusinessRuleError } from '../../src/core/errors';
import { newId } from '../../src/core/ids';
import { distinctInOrder } from '../../src/core/text';
import type { WriteDeps } from '../../src/core/write-deps';
import { type NewEvent, type RecordedEvent, WrongExpectedRevisionError } from '../../src/ports/event-store';
import { loadCatalog } from '../catalog/handler';
import type { Catalog } from '../catalog/types';
import { confirmMove, dropMove, releaseSeating } from './capacity-handler';
import {
  planCustomerChange,
  type ReservationCustomerInput,
  type ReservationDeps,
  type ReservationRestaurant,
  writeCustomerChange,
} from './customer-link';
import { existing } from './decide-status';
import {
  assertMovable,
  assertNoNewRequirement,
  assertUnlocked,
  checkPatch,
  decideLinkCustomer,
  decidePatch,
  type Exemptions,
  moveTimeLimits,
  type ReservationPatch,
  splitGuestText,
} from './decide-update';
import { followDeposit } from './deposit-follow';
import { assertDiscountApplies } from './discount-rules';
import { type ReservationSnapshot, type ReservationSource, reservationStream } from './events';
import { applyToSnapshot, evolveReservation, initialReservation, type ReservationState } from './evolve';
import { assertExternalIdFree, claimExternalId, releaseExternalId } from './external-id';
import { loadReservation, settleSeating } from './handler-common';
import { checkReferences } from './handler-create';
import { maxPosition } from './handler-status';
import { type HeldSeating, holdSeating } from './hold';

export interface PatchReservationRequest {
  party_size?: number;
  start_at?: string;
  shift_id?: string;
  room_id?: string | null;
  table_ids?: string[];
  external_id?: string | null;
  source?: ReservationSource;
  customer?: ReservationCustomerInput | null;
  custom_message?: string | null;
  allergies?: string | null;
  metadata?: Record<string, unknown>;
  tags?: string[];
  attached_files?: string[];
  discount_id?: string | null;
  prescriber_id?: string | null;
  is_table_definitive?: boolean;
  send_followup_email?: boolean;
  total_amount_paid?: number;
}

const SEATING_KEYS = ['party_size', 'start_at', 'shift_id', 'room_id', 'table_ids'] as const;
const DETAIL_KEYS = [
  'source',
  'custom_message',
  'allergies',
  'metadata',
  'tags',
  'attached_files',
  'discount_id',
  'prescriber_id',
  'is_table_definitive',
  'send_followup_email',
  'total_amount_paid',
] as const;

/** The API fields this request would change, as a lock names them (checked before anything is held). */
export function requestedChanges(
  r: ReservationSnapshot,
  req: PatchReservationRequest,
): Partial<ReservationSnapshot> {
  const out: Record<string, unknown> = {};
  const current = r as unknown as Record<string, unknown>;
  for (const k of [...SEATING_KEYS, ...DETAIL_KEYS, 'external_id'] as const) {
    const v = req[k];
    if (v === undefined) continue;
    const differs =
      k === 'start_at'
        ? Date.parse(v as string) !== Date.parse(r.start_at)
        : JSON.stringify(v) !== JSON.stringify(current[k]);
    if (differs) out[k] = v;
  }
  if (req.customer !== undefined && (req.customer === null || req.customer.id !== undefined)) {
    const wanted = req.customer?.id ?? null;
    if (wanted !== r.customer_id) out.customer_id = wanted;
  }
  return out as Partial<ReservationSnapshot>;
}

export interface UpdateOptions {
  /**
   * The caller may bypass availability (RESERVATIONS_FORCE_INSERT). A forced reservation's new
   * seating is forced only then; otherwise it is checked like any booking (a partner without the
   * scope must not move a forced reservation into a full slot).
   */
  mayForce?: boolean;
  /**
   * The exemptions from the shift's approval and deposit the caller's scopes allow (RESERVATIONS_FORCE_CONFIRM,
   * RESERVATIONS_FORCE_INSERT: bypass_approval and bypass_payments on creation). Without them a move that
   * newly brings either is refused (assertNoNewRequirement in decide-update.ts).
   */
  exempt?: Partial<Exemptions>;
}

export async function updateReservation(
  deps: ReservationDeps,
  restaurant: ReservationRestaurant,
  id: string,
  req: PatchReservationRequest,
  meta: CommandMeta,
  options: UpdateOptions = {},
) {
  // Tags and files keep one of each, as a customer's tags do: a repeat is no change.
  if (req.tags !== undefined) req = { ...req, tags: distinctInOrder(req.tags) };
  if (req.attached_files !== undefined) req = { ...req, attached_files: distinctInOrder(req.attached_files) };
  const mayForce = options.mayForce === true;
  const exempt: Exemptions = {
    approval: options.exempt?.approval === true,
    payments: options.exempt?.payments === true,
  };
  // In this process, one command on the reservation at a time (PATCHes, cancels, status changes): a
  // conflict then comes from another process only. Twelve concurrent PATCHes of one reservation used to
  // lose several of theirs to 409 "a concurrent change conflicted" after five rounds of retries.
  return runOnStream(deps.events, reservationStream(id), async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await attemptUpdate(deps, restaurant, id, req, meta, mayForce, exempt);
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError && err.stream === reservationStream(id) && attempt < 5)
          continue;
        throw err;
      }
    }
  });
}

async function attemptUpdate(
  deps: ReservationDeps,
  restaurant: ReservationRestaurant,
  id: string,
  req: PatchReservationRequest,
  meta: CommandMeta,
  mayForce: boolean,
  exempt: Exemptions,
) {
  const rmeta = { ...meta, restaurant_id: restaurant._id };
  const now = deps.clock.now();
  const loaded = await loadStream<ReservationState>(
    deps.events,
    reservationStream(id),
    initialReservation,
    evolveReservation,
  );
  const r = existing(loaded.state, id, restaurant._id);
  // 1. Checks, no writes.
  assertUnlocked(r, requestedChanges(r, req));
  const seatingChanges = Object.keys(requestedChanges(r, pick(req, SEATING_KEYS)));
  const movesSeating = seatingChanges.length > 0;
  assertMovable(r, seatingChanges);
  const catalog = await loadCatalog(deps, restaurant._id);
  checkReferences(catalog, req);
  checkDiscount(catalog, restaurant.timezone, r, req);
  const customerChange = await planCustomerChange(deps, restaurant, r, req.customer);
  // A POS lock on the customer holds the reservation's customer as it is: which customer (checked
  // above), and their details edited through the reservation (`update_linked`: the spec's "customer
  // fields without id update the linked customer itself"), and inline details with nobody linked,
  // which connect a customer found or created for them. Refused here, before the customer is written.
  if (customerChange.kind === 'create' || customerChange.kind === 'update_linked')
    assertUnlocked(r, { customer_id: null });
  // The reservation's own claim is no conflict: a retried PATCH may find the first one's in flight.
  if (req.external_id && req.external_id !== r.external_id)
    await assertExternalIdFree(deps, restaurant._id, req.external_id, id);

  const patch: ReservationPatch = {};
  for (const k of DETAIL_KEYS) if (req[k] !== undefined) (patch as Record<string, unknown>)[k] = req[k];
  if (req.external_id !== undefined) patch.external_id = req.external_id;
  if (customerChange.kind === 'connect' || customerChange.kind === 'disconnect')
    patch.customer_id = customerChange.customerId;

  // 2. Capacity: the new seating, pending beside the old one.
  let position: bigint | null = null;
  let moved: HeldSeating | null = null;
  if (movesSeating) {
    moved = await holdMoved(deps, restaurant, catalog, r, req, loaded.revision, now, rmeta, mayForce);
    patch.seating = moved.seating;
    position = maxPosition(position, moved.position);
  }
  // Our move only: a concurrent move of the same reservation holds its own, under its own id.
  const dropOurMove = async () => {
    if (moved?.moveId)
      await dropMove(
        deps,
        restaurant._id,
        moved.seating.service_date,
        id,
        moved.moveId,
        'UPDATE_REFUSED',
        rmeta,
      );
  };

  // The patch as far as it is known, the new seating included: a lock it touches refuses it here,
  // before the external_id is written (a party size that changes the seating's length moves its end,
  // which a lock on start_at holds). appendUpdate checks it again.
  // The new seating's shift is known once held (a start alone may change it): a move that newly brings
  // the shift's approval or deposit is refused here too, its pending move dropped.
  try {
    checkPatch(r, patch);
    if (moved) {
      const from = catalog.shifts.find((s) => s.id === r.shift_id);
      assertNoNewRequirement(r, from, moved.shift, moved.seating.party_size, exempt);
    }
  } catch (err) {
    await dropOurMove();
    throw err;
  }

  // 3: the external_id, then the reservation with the revision everything was decided on. No customer
  // is written before it lands: overtaken by another process here, the request starts again, and may
  // then be refused, with nothing of the customer's written.
  // A customer to find or create for inline details: the guest text the PATCH sets goes with its
  // connection (4), sealed with that customer's key as in one event (decideLinkCustomer).
  const customerText = customerChange.kind === 'create' ? splitGuestText(patch) : { text: {}, rest: patch };
  let claimed = false;
  let outcome: Awaited<ReturnType<typeof appendUpdate>>;
  try {
    if (req.external_id && req.external_id !== r.external_id)
      claimed = (await claimExternalId(deps, restaurant._id, req.external_id, id, meta)).taken;
    // The pending deposit follows the new party and shift, in the same append as the change. The
    // catalog's rule now is passed; on its current shift (this PATCH keeps shift_id) followDeposit keeps
    // a grown party's deposit whatever that rule says (the restaurant may have changed it since).
    const depositRule = (after: ReservationSnapshot) =>
      catalog.shifts.find((s) => s.id === after.shift_id)?.deposit ?? null;
    outcome = await appendUpdate(deps, r, customerText.rest, loaded.revision, rmeta, now, (after, at) =>
      followDeposit(r, after, depositRule(after), restaurant.currency, at),
    );
  } catch (err) {
    // Refused or overtaken (the update then starts again from the new state): nothing of ours stays.
    // Any other error leaves the outcome unknown; the repair job settles it from the streams.
    if (err instanceof ApiError || err instanceof WrongExpectedRevisionError) {
      // The claim is the reservation's, not this request's: a concurrent PATCH setting the same value
      // (a retry) relied on it and may be the update that overtook ours. Kept when the reservation
      // shows the value now.
      if (claimed && req.external_id) {
        const latest = await loadReservation(deps, id);
        if (!latest.exists || latest.r?.external_id !== req.external_id)
          await releaseExternalId(deps, restaurant._id, req.external_id, id, meta);
      }
      await dropOurMove();
    }
    throw err;
  }
  position = maxPosition(position, outcome.position);
  const after = outcome.state.r as ReservationSnapshot;
  // Relying on the claim another request of this reservation took, which that request may have given
  // back since (it was overtaken, and the reservation did not show the value yet): take it again. The
  // update has landed: should someone else have taken the value meanwhile, it is not undone here.
  if (
    req.external_id &&
    req.external_id !== r.external_id &&
    !claimed &&
    after.external_id === req.external_id
  )
    await claimExternalId(deps, restaurant._id, req.external_id, id, meta).catch((err: unknown) => {
      if (!(err instanceof ApiError)) throw err;
    });
  // 4. After the update only: the move's seating becomes the reservation's own, and the old day's
  // seating and the old external_id are free now. Before the customer, which none of it needs: a
  // customer that then cannot be written leaves nothing of the reservation's for the repair job.
  if (moved?.moveId)
    position = maxPosition(
      position,
      (await confirmMove(deps, restaurant._id, moved.seating.service_date, id, moved.moveId, rmeta)).position,
    );
  if (moved && moved.seating.service_date !== r.service_date)
    position = maxPosition(
      position,
      (await releaseSeating(deps, restaurant._id, r.service_date, id, 'MOVED', rmeta)).position,
    );
  // A cancel (or rejection) that landed after our update and released before our confirmation found
  // only the pending move, which the confirmation then made the reservation's own: free it now (a
  // DONE or NO_SHOW that landed so: end it from its status change). Read after confirming, so one of
  // the two always sees the seating held.
  if (moved?.moveId) {
    const latest = await loadReservation(deps, id);
    const released = await settleSeating(deps, latest.exists ? latest.r : null, rmeta);
    position = maxPosition(position, released?.position ?? null);
  }
  if (req.external_id !== undefined && r.external_id && after.external_id !== r.external_id)
    await releaseExternalId(deps, restaurant._id, r.external_id, id, meta);
  // 5: the customer. When 3 appended nothing (the customer is all the request changes) nothing is
  // settled yet and the customer's own refusal (a match blacklisted since, a customer gone) is the
  // answer; there is then no move and no claim to give back.
  const settled = outcome.appended.length > 0;
  // Nothing appended yet: the customer is the PATCH's first write, and what landed since the checks
  // (another process: a POS lock on the text or the customer, a cancel, another customer connected or
  // none) came before the PATCH, which is decided again on it: overtaken, as an append would be (the
  // retry in updateReservation), nothing written. The plan went from the reservation as first read: a
  // customer connected since would otherwise be replaced by the one found or created for the details,
  // or the details written to a customer no longer linked. Only what lands once the customer is
  // written comes after the PATCH (linkCustomer).
  if (!settled && customerChange.kind !== 'none') {
    const again = await loadStream<ReservationState>(
      deps.events,
      reservationStream(id),
      initialReservation,
      evolveReservation,
    );
    if (again.revision !== loaded.revision)
      throw new WrongExpectedRevisionError(reservationStream(id), loaded.revision, again.revision);
  }
  const decidedAt = outcome.revision;
  try {
    const written = await writeCustomerChange(deps, customerChange, meta, settled);
    position = maxPosition(position, written.position);
    if (written.customerId !== undefined)
      position = maxPosition(
        position,
        await linkCustomer(deps, id, {
          customerId: written.customerId,
          decidedAt,
          text: customerText.text,
          meta: rmeta,
          now,
        }),
      );
  } catch (err) {
    if (!settled) throw err;
    throw customerNotConnected(id, err);
  }
  return { ...outcome, position };
}

/**
 * The reservation's change has landed, its customer could not be written or connected (an error of
 * the log, a connection losing every round, a match given up): whatever error was met, the request
 * did not do nothing, as a 404 or 422 would say. Nothing completes it later (docs/RESERVATIONS.md,
 * "A PATCH whose customer fails"): the partner reads the reservation and sends the customer again.
 * The error met is its cause (a full disk is then answered 503 STORAGE_FULL), and its stack goes to
 * the log with ours, which keeps the stack only.
 */
function customerNotConnected(id: string, cause: unknown): ApiError {
  const err = new ApiError(
    500,
    'INTERNAL_ERROR',
    "The reservation's other changes were recorded, but its customer could not be written or connected: read the reservation, then send the customer again",
    { reason: 'CUSTOMER_NOT_CONNECTED', reservation_id: id },
  );
  if (cause instanceof Error) err.stack = `${err.stack}\nCaused by: ${cause.stack ?? cause.message}`;
  return Object.assign(err, { cause });
}

/**
 * A discount newly attached, or kept while the start moves, must apply to the (new) start. Sending
 * the discount the reservation already has, at the same start, is no change and is not rechecked.
 */
function checkDiscount(
  catalog: Catalog,
  timezone: string,
  r: ReservationSnapshot,
  req: PatchReservationRequest,
): void {
  const discountId = req.discount_id !== undefined ? req.discount_id : r.discount_id;
  if (!discountId) return;
  const startMs = Date.parse(req.start_at ?? r.start_at);
  if (discountId === r.discount_id && startMs === Date.parse(r.start_at)) return;
  assertDiscountApplies(catalog.discounts, discountId, startMs, timezone);
}

const pick = <T extends object, K extends keyof T>(o: T, keys: readonly K[]) =>
  Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as Pick<T, K>;

/**
 * Holds the seating the request asks for. Tables the request does not name: the current ones when
 * they still fit (guests keep their table), else the best free fit — unless the table is definitive
 * or locked, which keeps it or refuses. A forced reservation's seating is forced again only for a
 * caller that may force (`mayForce`); for anyone else it is checked as a booking would be.
 */
async function holdMoved(
  deps: ReservationDeps,
  restaurant: ReservationRestaurant,
  catalog: Catalog,
  r: ReservationSnapshot,
  req: PatchReservationRequest,
  revision: number | string,
  now: Date,
  meta: CommandMeta,
  mayForce: boolean,
): Promise<HeldSeating> {
  const startChanged = req.start_at !== undefined && Date.parse(req.start_at) !== Date.parse(r.start_at);
  const keepShift = req.shift_id === undefined && (!startChanged || r.locked_fields.includes('shift_id'));
  const roomGiven = req.room_id !== undefined;
  const keepTables = r.is_table_definitive || r.locked_fields.includes('table_ids');
  const base = {
    restaurantId: restaurant._id,
    timezone: restaurant.timezone,
    catalog,
    reservationId: r.reservation_id,
    externalId: req.external_id === undefined ? r.external_id : req.external_id,
    startMs: Date.parse(req.start_at ?? r.start_at),
    partySize: req.party_size ?? r.party_size,
    shiftId: req.shift_id ?? (keepShift ? r.shift_id : null),
    roomId: roomGiven ? (req.room_id ?? null) : keepRoom(catalog, r, req) ? r.room_id : null,
    force: r.is_force_inserted && mayForce,
    purpose: `update@${revision}`,
    // One per attempt: two PATCHes of one revision hold two moves, each confirmed or dropped alone.
    moveId: newId('move'),
    // The minimum notice and the booking window are rules for choosing a start: a move that chooses
    // none (guests already there; fewer guests, or another table or room, at the same start and shift)
    // is not held to them (moveTimeLimits).
    // The start and shift kept: held on the reservation's own service day, even off the shift's grid
    // as the catalog now draws it (a party or table change of a booking made under earlier hours).
    ...(!startChanged && (req.shift_id ?? r.shift_id) === r.shift_id
      ? { ownServiceDate: r.service_date }
      : {}),
    ...(moveTimeLimits(r, {
      startMs: Date.parse(req.start_at ?? r.start_at),
      shiftId: req.shift_id ?? r.shift_id,
      partySize: req.party_size ?? r.party_size,
    })
      ? {}
      : { timeLimits: false }),
    now,
  };
  if (req.table_ids) return holdSeating(deps, { ...base, tableIds: req.table_ids }, meta);
  const stayInRoom = !roomGiven || req.room_id === r.room_id;
  if (r.table_ids.length && stayInRoom) {
    try {
      return await holdSeating(deps, { ...base, tableIds: r.table_ids }, meta);
    } catch (err) {
      if (!(err instanceof BusinessRuleError) || keepTables) throw err;
    }
  }
  // A purpose of its own: the try on the reservation's tables may have held this very seating under
  // the same move id and given it back (a race with another day: appendChecked), and an event id
  // seen before would be taken for a retry of that append and not written again.
  return holdSeating(deps, { ...base, tableIds: null, purpose: `${base.purpose}:any-table` }, meta);
}

/**
 * Without a room in the request, the reservation stays in its room when the room is locked, or when
 * it was chosen (its shift requires room selection) and the shift it goes to requires one too.
 * Otherwise the room is wherever the table is; a move onto a room-selection shift from a shift
 * without one then needs a room_id (the room its table happened to be in was nobody's choice).
 */
function keepRoom(catalog: Catalog, r: ReservationSnapshot, req: PatchReservationRequest): boolean {
  if (r.locked_fields.includes('room_id')) return true;
  const selects = (id: string) => catalog.shifts.find((s) => s.id === id)?.requires_room_selection === true;
  return r.room_id !== null && selects(r.shift_id) && selects(req.shift_id ?? r.shift_id);
}

async function appendUpdate(
  deps: WriteDeps,
  r: ReservationSnapshot,
  patch: ReservationPatch,
  revision: number | 'no_stream',
  meta: CommandMeta,
  now: Date,
  /** Events that follow from the change (the deposit), decided on the reservation as it changed. */
  follow?: (after: ReservationSnapshot, at: string) => NewEvent[],
) {
  const at = now.toISOString();
  const decided = decidePatch(r, patch, 'PARTNER', at);
  if (follow && decided.length > 0) {
    let changed = r;
    for (const e of decided) changed = applyToSnapshot(changed, e as RecordedEvent);
    decided.push(...follow(changed, at));
  }
  const events = decided.map((e) => ({
    ...e,
    metadata: { ...meta, ...e.metadata },
  }));
  if (events.length === 0)
    return {
      state: { exists: true, abandoned: false, r } as ReservationState,
      appended: [],
      position: null,
      revision,
    };
  // The expected revision is the one every check above was made on.
  const result = await deps.events.append(reservationStream(r.reservation_id), events, revision);
  // The PATCH's own event: what lands after it is later than the PATCH (linkCustomer).
  let state: ReservationState = { exists: true, abandoned: false, r };
  for (const e of events)
    state = evolveReservation(state, {
      ...e,
      id: e.id ?? '',
      metadata: e.metadata,
      created: now.toISOString(),
      stream: reservationStream(r.reservation_id),
      revision: result.nextRevision,
      position: result.position,
    });
  return {
    state,
    appended: events,
    position: result.position as bigint | null,
    revision: result.nextRevision as number | 'no_stream',
  };
}

/**
 * Connects the customer a PATCH wrote, with the guest text it sets (decideLinkCustomer): the PATCH
 * landed (or was decided on) at revision `decidedAt`, and is completed whatever else landed since,
 * unless a change of customer did. Another process appending meanwhile only makes it read the
 * reservation again.
 */
async function linkCustomer(
  deps: WriteDeps,
  id: string,
  link: {
    customerId: string;
    /** The PATCH's ReservationUpdated, or the revision it was decided on when it appended none. */
    decidedAt: number | 'no_stream';
    text: ReservationPatch;
    meta: CommandMeta;
    now: Date;
  },
): Promise<bigint | null> {
  for (let attempt = 1; ; attempt++) {
    const loaded = await loadStream<ReservationState>(
      deps.events,
      reservationStream(id),
      initialReservation,
      evolveReservation,
    );
    const r = loaded.state.r;
    if (!r) return null;
    const at = link.now.toISOString();
    const since = loaded.events.filter((e) => link.decidedAt === 'no_stream' || e.revision > link.decidedAt);
    const events = decideLinkCustomer(r, since, link.customerId, link.text, 'PARTNER', at).map((e) => ({
      ...e,
      metadata: { ...link.meta, ...e.metadata },
    }));
    if (events.length === 0) return null;
    try {
      return (await deps.events.append(reservationStream(id), events, loaded.revision)).position;
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
      // Not the update's conflict (which starts the whole request again, updateReservation): the
      // update has landed. Losing this many rounds in a row leaves the outcome to be told as unknown.
      if (attempt >= LINK_ATTEMPTS)
        throw new Error(`reservation ${id}: its customer could not be connected (${err.message})`);
    }
  }
}

const LINK_ATTEMPTS = 10;
