// Changes to an existing reservation (spec §4 PATCH /reservations/{id}, POS locks, waiter). Pure:
// what changes, what it was, and whether a POS service lock forbids it.
import { BusinessRuleError, conflict } from '../../src/core/errors';
import type { NewEvent } from '../../src/ports/event-store';
import type { Seating } from './decide-create';
import { asPartnerSees } from './distinct-lists';
import type { ActorKind, ReservationSnapshot } from './events';
import { CANCELED_STATUSES, SEATED_STATUSES } from './evolve';
import { type DepositRule, depositApplies } from './payments';

/** Fields the partner API may change; a POS service lock names them (plus `status`, for cancel). */
export const LOCKABLE_FIELDS = [
  'start_at',
  'party_size',
  'shift_id',
  'room_id',
  'table_ids',
  'customer',
  'external_id',
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
  'status',
] as const;
export type LockableField = (typeof LOCKABLE_FIELDS)[number];

/** A patch with every reference already resolved: only present keys change. */
export interface ReservationPatch {
  seating?: Seating;
  customer_id?: string | null;
  external_id?: string | null;
  source?: ReservationSnapshot['source'];
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

/** Snapshot field → the API field a lock names. */
const LOCK_NAME: Partial<Record<keyof ReservationSnapshot, LockableField>> = {
  start_at: 'start_at',
  end_at: 'start_at',
  duration_minutes: 'start_at',
  service_date: 'start_at',
  customer_id: 'customer',
};

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export interface PatchDiff {
  changes: Partial<ReservationSnapshot>;
  previous: Partial<ReservationSnapshot>;
}

/** The fields whose value actually changes; sending a field's current value is not a change. */
export function diffPatch(r: ReservationSnapshot, patch: ReservationPatch): PatchDiff {
  const { seating, ...rest } = patch;
  const wanted: Record<string, unknown> = { ...(seating ?? {}), ...rest };
  const changes: Record<string, unknown> = {};
  const previous: Record<string, unknown> = {};
  const current = r as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(wanted)) {
    // The list the reservation shows, not a repeat an older one still stores: resending it is no change.
    if (v === undefined || same(asPartnerSees(k, current[k]), v)) continue;
    changes[k] = v;
    previous[k] = current[k];
  }
  return {
    changes: changes as Partial<ReservationSnapshot>,
    previous: previous as Partial<ReservationSnapshot>,
  };
}

/** Throws 409 RESOURCE_CONFLICT naming the locked fields the change would touch. */
export function assertUnlocked(r: ReservationSnapshot, changes: Partial<ReservationSnapshot>): void {
  const touched = new Set(
    Object.keys(changes).map((k) => LOCK_NAME[k as keyof ReservationSnapshot] ?? (k as LockableField)),
  );
  const locked = r.locked_fields.filter((f) => touched.has(f as LockableField));
  if (locked.length)
    throw conflict('The point of sale has locked these fields of the reservation', { locked_fields: locked });
}

/** Snapshot fields that make up the seating (what a move changes on the capacity stream). */
const SEATING_FIELDS = new Set([
  'start_at',
  'end_at',
  'duration_minutes',
  'service_date',
  'party_size',
  'shift_id',
  'room_id',
  'table_ids',
]);
/** The seating fields that say when it is: the guests at their table cannot be moved in time. */
const WHEN_FIELDS = new Set(['start_at', 'service_date', 'shift_id']);

/**
 * Which reservations may still change their seating (`changed`: the snapshot or API fields the
 * request changes). Guests still to come may be moved freely (checked like a booking). Guests who
 * are there (SHOWED_UP, the seated statuses) may change party, room and tables, not the start or
 * shift: their evening is now. A canceled, rejected, finished or no-show reservation takes no table
 * any more: its time, party and tables cannot change (a move would hold capacity again). 422 with
 * the reason, before anything is held.
 */
export function assertMovable(r: ReservationSnapshot, changed: readonly string[]): void {
  const seating = changed.filter((k) => SEATING_FIELDS.has(k));
  if (seating.length === 0) return;
  if (CANCELED_STATUSES.includes(r.status) || r.status === 'REJECTED')
    throw new BusinessRuleError(
      'RESERVATION_CANCELED',
      'a canceled or rejected reservation holds no table: its time, party and tables cannot change',
      { status: r.status },
    );
  if (r.status === 'DONE' || r.status === 'NO_SHOW')
    throw new BusinessRuleError(
      'RESERVATION_FINISHED',
      `a ${r.status} reservation is over: its time, party and tables cannot change (book the guests again with a new reservation)`,
      { status: r.status },
    );
  if (SEATED_STATUSES.includes(r.status) && seating.some((k) => WHEN_FIELDS.has(k)))
    throw new BusinessRuleError(
      'RESERVATION_SEATED',
      `the guests are at the restaurant (${r.status}): the reservation's start_at and shift cannot change; its party size, room and tables can`,
      { status: r.status, fields: seating.filter((k) => WHEN_FIELDS.has(k)) },
    );
}

/**
 * Whether a move of `r` to this seating is held to the shift's minimum notice and booking window.
 * Those are rules for choosing a start, so they apply when the move chooses one (another start or
 * another shift) or asks more of its own (a larger party: the guests it adds are a booking made now).
 * They do not apply to guests already there (a seated status: their start is past by then), nor to a
 * change that keeps the start and the shift and does not grow the party (fewer guests, another table
 * or room): that start was accepted when booked, and refusing the change near it (TOO_LATE) would keep
 * a larger party or a worse table held, as for late guests given another table at their arrival.
 */
export function moveTimeLimits(
  r: ReservationSnapshot,
  to: { startMs: number; shiftId: string; partySize: number },
): boolean {
  if (SEATED_STATUSES.includes(r.status)) return false;
  return to.startMs !== Date.parse(r.start_at) || to.shiftId !== r.shift_id || to.partySize > r.party_size;
}

/** What a shift asks of a booking on creation (DESIGN.md §3), as the catalog says now. */
export interface ShiftRequirements {
  id: string;
  requires_approval: boolean;
  deposit: DepositRule | null;
}

/** The exemptions the caller's scopes allow, as bypass_approval and bypass_payments on creation. */
export interface Exemptions {
  /** RESERVATIONS_FORCE_CONFIRM. */
  approval: boolean;
  /** RESERVATIONS_FORCE_INSERT. */
  payments: boolean;
}

/**
 * A move must not give a reservation what only the privileged creation options give: a booking on
 * a shift that requires approval confirmed without it (bypass_approval, RESERVATIONS_FORCE_CONFIRM),
 * a party the shift asks a deposit of with none (bypass_payments, RESERVATIONS_FORCE_INSERT). A PATCH
 * never sets the status nor adds a payment (it only carries a pending deposit along: deposit-follow.ts),
 * so a move that newly brings such a requirement (the seating it leaves, `from`, did not have it;
 * `from` is undefined for a shift since removed) is refused with 422 unless the caller holds that
 * scope: APPROVAL_REQUIRED for a reservation not PENDING moved onto a shift that requires approval;
 * DEPOSIT_REQUIRED when the new shift asks a deposit of the new party and the reservation holds no
 * live DEPOSIT row (pending, authorized, paid or refunded: whatever became of it is the restaurant's
 * business). A voided or failed row is none: a PATCH voids the deposit of a party cut below the
 * threshold, and growing it again must not shed the deposit that way. Guests already there are past
 * both. A requirement the old seating already had was settled on creation (an exemption then is not
 * recorded, so it is kept).
 */
export function assertNoNewRequirement(
  r: ReservationSnapshot,
  from: ShiftRequirements | undefined,
  to: ShiftRequirements,
  toParty: number,
  may: Exemptions,
): void {
  if (SEATED_STATUSES.includes(r.status)) return;
  if (!may.approval && to.requires_approval && !from?.requires_approval && r.status !== 'PENDING')
    throw new BusinessRuleError(
      'APPROVAL_REQUIRED',
      "the shift this change moves the reservation to requires the restaurant's approval, which a change does not ask for: create a new reservation (it starts PENDING) and cancel this one",
      { status: r.status, shift_id: to.id },
    );
  if (
    !may.payments &&
    depositApplies(to.deposit, toParty) &&
    !depositApplies(from?.deposit, r.party_size) &&
    !r.payments.some((p) => p.payment_type === 'DEPOSIT' && p.status !== 'VOIDED' && p.status !== 'FAILED')
  )
    throw new BusinessRuleError(
      'DEPOSIT_REQUIRED',
      `the shift asks a deposit of parties of ${to.deposit.min_party_size} or more, which a change does not add: create a new reservation (it carries the deposit) and cancel this one`,
      { shift_id: to.id, party_size: toParty, min_party_size: to.deposit.min_party_size },
    );
}

/** Checks a partner patch against the current state: the diff, or a 409 / 422. */
export function checkPatch(r: ReservationSnapshot, patch: ReservationPatch): PatchDiff {
  const diff = diffPatch(r, patch);
  assertUnlocked(r, diff.changes);
  assertMovable(r, Object.keys(diff.changes));
  return diff;
}

/** What the guest wrote on a reservation: sealed with its customer's key (src/privacy/seal.ts). */
const GUEST_TEXT = ['allergies', 'custom_message', 'metadata', 'cancellation_reason'] as const;

/**
 * A reservation given to another customer takes its guest text along: each field that holds something
 * is restated in the change (from and to the same value), which is sealed with the new customer's
 * key. Without it the text stayed in the first customer's boxes: erasing them blanked it in a replay
 * but not in the read model (which blanks the erased customer's reservations), and erasing the new
 * one the other way round. Not when the reservation loses its customer: a reservation without one
 * is written in clear, and the text stays sealed where it is (the read model notes whose box holds
 * it: projections/reservation-erasure.ts); nor the feedback, which stays with the customer it was
 * given under.
 */
function withGuestText(r: ReservationSnapshot, diff: PatchDiff): PatchDiff & { restated?: string[] } {
  if (typeof diff.changes.customer_id !== 'string') return diff;
  const changes: Record<string, unknown> = { ...diff.changes };
  const previous: Record<string, unknown> = { ...diff.previous };
  const restated: string[] = [];
  const current = r as unknown as Record<string, unknown>;
  for (const field of GUEST_TEXT) {
    const value = current[field];
    if (field in changes || value === null || value === undefined) continue;
    if (typeof value === 'object' && Object.keys(value).length === 0) continue;
    changes[field] = value;
    previous[field] = value;
    restated.push(field);
  }
  // Which fields are restated, by name (none: []): once a customer is erased, a restated value and
  // a text the same PATCH set both read erased on both sides, and only this tells them apart
  // (src/audit/changes.ts). Written on every change of customer since 2026-11-28.
  return { changes, previous, restated };
}

export function decidePatch(
  r: ReservationSnapshot,
  patch: ReservationPatch,
  actor: ActorKind,
  at: string,
): NewEvent[] {
  return updated(r, withGuestText(r, checkPatch(r, patch)), actor, at);
}

function updated(
  r: ReservationSnapshot,
  { changes, previous, restated }: PatchDiff & { restated?: string[] },
  actor: ActorKind,
  at: string,
): NewEvent[] {
  if (Object.keys(changes).length === 0) return [];
  return [
    {
      type: 'ReservationUpdated',
      data: {
        reservation_id: r.reservation_id,
        restaurant_id: r.restaurant_id,
        at,
        changes,
        previous,
        actor_kind: actor,
        ...(restated ? { restated } : {}),
      },
    },
  ];
}

/** The guest text a patch sets (GUEST_TEXT), apart from the rest of it. */
export function splitGuestText(patch: ReservationPatch): { text: ReservationPatch; rest: ReservationPatch } {
  const text: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(patch))
    ((GUEST_TEXT as readonly string[]).includes(k) ? text : rest)[k] = v;
  return { text: text as ReservationPatch, rest: rest as ReservationPatch };
}

/**
 * The last write of a PATCH that wrote a customer for its inline details (PATCH /reservations/{id},
 * handler-update.ts): connect that customer, with the guest text the PATCH sets (`text`), so the text
 * is sealed with that customer's key as it would have been in one event, never written in clear or in
 * the box of the customer it replaces. The PATCH was decided and checked on the reservation as it was,
 * and the customer is written: this completes it and is never refused. A cancel, a status change or a
 * POS lock landing since came after the PATCH, and a lock holds from then on: none of them undoes it.
 * Only a change of customer landing since (another PATCH, another process) is later than ours and
 * stands: the text is set and nobody is connected, as if ours had been replaced right after. `since`:
 * the reservation's events that landed after the PATCH's own (or after the revision it was decided on,
 * when it appended nothing before): a change of customer is looked for there, not by comparing ids, as
 * one and its undoing (another customer, then none again) leave the id as we decided on. The
 * reservation's other guest text moves to the customer's key as with any change of customer
 * (withGuestText). Pure.
 */
export function decideLinkCustomer(
  r: ReservationSnapshot,
  since: readonly { type: string; data: unknown }[],
  customerId: string,
  text: ReservationPatch,
  actor: ActorKind,
  at: string,
): NewEvent[] {
  const connects = !since.some(changesCustomer) && r.customer_id !== customerId;
  const patch = connects ? { ...text, customer_id: customerId } : text;
  return updated(r, withGuestText(r, diffPatch(r, patch)), actor, at);
}

/** Only a ReservationUpdated changes the reservation's customer (evolve.ts). */
const changesCustomer = (e: { type: string; data: unknown }) =>
  e.type === 'ReservationUpdated' &&
  'customer_id' in ((e.data as { changes?: Record<string, unknown> }).changes ?? {});

/** The POS sets or clears its service lock: the fields the partner API may no longer change. */
export function decideLocks(r: ReservationSnapshot, fields: LockableField[], at: string): NewEvent[] {
  const locked_fields = [...new Set(fields)].sort();
  if (same([...r.locked_fields].sort(), locked_fields)) return [];
  return [
    {
      type: 'ReservationUpdated',
      data: {
        reservation_id: r.reservation_id,
        restaurant_id: r.restaurant_id,
        at,
        changes: { locked_fields },
        previous: { locked_fields: r.locked_fields },
        actor_kind: 'POS',
      },
    },
  ];
}

/** Staff assign (or clear) the waiter serving the table. */
export function decideWaiter(
  r: ReservationSnapshot,
  waiter: { id: string; name: string } | null,
  at: string,
): NewEvent[] {
  const changes = { waiter_id: waiter?.id ?? null, waiter_name: waiter?.name ?? null };
  if (r.waiter_id === changes.waiter_id && (r.waiter_name ?? null) === changes.waiter_name) return [];
  return [
    {
      type: 'ReservationUpdated',
      data: {
        reservation_id: r.reservation_id,
        restaurant_id: r.restaurant_id,
        at,
        changes,
        previous: { waiter_id: r.waiter_id, waiter_name: r.waiter_name ?? null },
        actor_kind: 'STAFF',
      },
    },
  ];
}
